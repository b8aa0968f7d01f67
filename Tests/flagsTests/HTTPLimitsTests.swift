import FlagRules
import Foundation
import Testing

@testable import FlagRulesServer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The HTTP server's limits, each made small so that it is reached in a second: the idle
/// and busy idle closes, the 503 beyond the connections and beyond the subscribers (each
/// counted by the status sent), the bound on a connection's answers waiting (a client that
/// pipelines and never reads), the write deadline (a client that takes its answers a byte at
/// a time), the half-closed client; and the defaults, which are the figures the OFREP
/// article's Limits section gives.
@Suite struct HTTPLimitsTests {
    static let health = "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n"

    /// A server with a file of about 60 KB (`/rules/app.flags`) and the given limits.
    static func running(_ limits: HTTPServer.Limits) throws -> RunningServer {
        let service = OFREPService()
        let text = "flag f = true\n" + (0..<3_000).map { "value v\($0): int = \($0)\n" }.joined()
        service.install([.init(name: "app.flags", rules: try RuleSet(source: text, name: "app.flags"))])
        return try RunningServer(service: service, limits: limits)
    }

    /// The server's count of answers by status, read on `client` (kept alive).
    static func requestCounts(on client: TCPClient) throws -> [Int: Int] {
        client.send("GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n")
        var counted: [Int: Int] = [:]
        let prefix = "flags_http_requests_total{status=\""
        for line in try client.response().body.split(separator: "\n") where line.hasPrefix(prefix) {
            let status = Int(line.dropFirst(prefix.count).prefix(3)) ?? 0
            counted[status] = Int(line.split(separator: " ").last ?? "") ?? 0
        }
        return counted
    }

    static func setBuffer(_ fd: Int32, _ option: Int32, _ size: Int32) {
        var size = size
        setsockopt(fd, SOL_SOCKET, option, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    @Test func anIdleConnectionClosesAfterTheIdleLimit() async throws {
        try await offThePool {
            let running = try Self.running(.init(idle: 0.5))
            defer { running.stop() }
            let client = try TCPClient(port: running.server.port)
            client.send(Self.health)
            #expect(try client.response().status == 200)
            let answered = Date()
            let (text, closed) = HTTPLoopSequenceTests.readToEnd(client, seconds: 10)
            let idle = Date().timeIntervalSince(answered)
            #expect(closed && text.isEmpty && idle >= 0.45 && idle < 3, "closed \(closed) after \(idle) s: \(text)")
        }
    }

    /// While more than half the connections are taken, an idle one gets the busy limit.
    @Test func whileMoreThanHalfAreTakenAnIdleConnectionGetsTheBusyLimit() async throws {
        try await offThePool {
            let running = try Self.running(.init(connections: 4, idle: 60, busyIdle: 0.5))
            defer { running.stop() }
            // Two connections in the middle of a request (not idle), and one idle after its answer.
            let busy = try (0..<2).map { _ in try TCPClient(port: running.server.port) }
            for client in busy { client.send("G") }
            let idle = try TCPClient(port: running.server.port)
            idle.send(Self.health)
            #expect(try idle.response().status == 200)
            let answered = Date()
            let (text, closed) = HTTPLoopSequenceTests.readToEnd(idle, seconds: 10)
            let after = Date().timeIntervalSince(answered)
            #expect(closed && text.isEmpty && after >= 0.45 && after < 5, "closed \(closed) after \(after) s (the idle limit is 60 s)")
            withExtendedLifetime(busy) {}
        }
    }

    /// Beyond its connections a client is answered 503 at once (and counted), while those
    /// held are answered.
    @Test func beyondItsConnectionsAClientIsAnswered503() async throws {
        try await offThePool {
            let running = try Self.running(.init(connections: 2))
            defer { running.stop() }
            let held = try (0..<2).map { _ in try TCPClient(port: running.server.port) }
            for client in held {
                client.send(Self.health)
                #expect(try client.response().status == 200)
            }
            let over = try TCPClient(port: running.server.port)
            let (text, closed) = HTTPLoopSequenceTests.readToEnd(over, seconds: 10)
            #expect(HTTPLoopSequenceTests.statuses(text) == [503] && closed, "\(text)")
            let counted = try Self.requestCounts(on: held[0])
            #expect(counted[503] == 1 && counted[200] == 2, "\(counted)")
        }
    }

    /// A subscriber the hub has no room for is answered 503, and counted 503, not 200.
    @Test func aSubscriberBeyondTheHubsLimitIsCounted503() async throws {
        try await offThePool {
            let running = try Self.running(.init(subscribers: 2))
            defer { running.stop() }
            var answers: [String] = []
            var subscribers: [TCPClient] = []
            for _ in 0..<3 {
                let subscriber = try TCPClient(port: running.server.port)
                subscriber.send("GET /ofrep/v1/events HTTP/1.1\r\nHost: t\r\n\r\n")
                answers.append(try subscriber.read(within: 10) { $0.contains("\r\n\r\n") })
                subscribers.append(subscriber)
            }
            #expect(answers.map { HTTPLoopSequenceTests.statuses($0) } == [[200], [200], [503]], "\(answers)")
            #expect(running.server.hub.count == 2)
            let counted = try Self.requestCounts(on: try TCPClient(port: running.server.port))
            #expect(counted == [200: 2, 503: 1], "\(counted)")
        }
    }

    /// Subscribers that hang up free their places at once, though nothing is sent to them:
    /// at a limit of 40, 40 leave and 40 others come at once, and all of those are answered
    /// 200 within 2 s (a hang-up was noticed only at the next event, after which the newcomers
    /// were answered 503 for as long as nothing changed).
    @Test func subscribersThatLeaveFreeTheirPlacesAtOnce() async throws {
        try await offThePool {
            let running = try Self.running(.init(subscribers: 40))
            defer { running.stop() }
            func subscribe() throws -> (TCPClient, [Int]) {
                let subscriber = try TCPClient(port: running.server.port)
                subscriber.send("GET /ofrep/v1/events HTTP/1.1\r\nHost: t\r\n\r\n")
                return (subscriber, HTTPLoopSequenceTests.statuses(try subscriber.read(within: 10) { $0.contains("\r\n\r\n") }))
            }
            let first = try (0..<40).map { _ in try subscribe() }
            #expect(first.allSatisfy { $0.1 == [200] } && running.server.hub.count == 40)
            for (client, _) in first { client.hangUp() }
            let start = Date()
            var answered: [[Int]] = []
            var held: [TCPClient] = []
            while answered.filter({ $0 == [200] }).count < 40, Date().timeIntervalSince(start) < 10 {
                let (client, statuses) = try subscribe()
                answered.append(statuses)
                if statuses == [200] { held.append(client) }
            }
            let took = Date().timeIntervalSince(start)
            #expect(held.count == 40 && took < 2, "40 places back after \(took) s; answers: \(answered.map { $0.first ?? 0 })")
            #expect(answered.count == 40, "refused \(answered.count - held.count) newcomers first")
        }
    }

    /// The metrics count what the server holds: connections, and subscribers by the file
    /// they follow; `/healthz/upstream` is 200 for a server that follows no other.
    @Test func theMetricsCountConnectionsAndSubscribersByFile() async throws {
        try await offThePool {
            let running = try Self.running(.init())
            defer { running.stop() }
            let all = try TCPClient(port: running.server.port)
            all.send("GET /ofrep/v1/events HTTP/1.1\r\nHost: t\r\n\r\n")
            _ = try all.read(within: 10) { $0.contains("\r\n\r\n") }
            let followers = try (0..<2).map { _ in try TCPClient(port: running.server.port) }
            for follower in followers {
                follower.send("GET /ofrep/v1/events?rules=app.flags HTTP/1.1\r\nHost: t\r\n\r\n")
                _ = try follower.read(within: 10) { $0.contains("rulesAccepted") }
            }
            let idle = try TCPClient(port: running.server.port)
            idle.send(Self.health)
            #expect(try idle.response().status == 200)
            let client = try TCPClient(port: running.server.port)
            client.send("GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n")
            let metrics = try client.response().body
            #expect(metrics.contains("flags_event_stream_subscribers{file=\"*\"} 1\n"), "\(metrics)")
            #expect(metrics.contains("flags_event_stream_subscribers{file=\"app.flags\"} 2\n"), "\(metrics)")
            let connections = metrics.split(separator: "\n").first { $0.hasPrefix("flags_http_connections ") }
            #expect(connections.flatMap { Int($0.split(separator: " ").last!) }.map { $0 >= 2 && $0 <= 3 } == true, "\(metrics)")
            let upstream = try TCPClient(port: running.server.port)
            upstream.send("GET /healthz/upstream HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try upstream.response().status == 200)
            withExtendedLifetime((all, followers)) {}
        }
    }

    /// A client that pipelines requests and never reads: once its answers waiting pass the
    /// bound, the server reads no more of it (its own send buffer fills), and the answers
    /// waiting stay within the bound and one answer; once it reads, every request it sent is
    /// answered.
    @Test func aClientThatPipelinesAndNeverReadsCostsABoundedQueue() async throws {
        try await offThePool {
            let bound = 16 << 10
            let running = try Self.running(.init(queuedAnswers: bound, sendBuffer: 8 << 10))
            defer { running.stop() }
            let client = try TCPClient(port: running.server.port)
            Self.setBuffer(client.fd, SO_SNDBUF, 8 << 10)
            Self.setBuffer(client.fd, SO_RCVBUF, 4 << 10)
            _ = fcntl(client.fd, F_SETFL, fcntl(client.fd, F_GETFL) | O_NONBLOCK)
            #if canImport(Darwin)
                let flags: Int32 = 0
            #else
                let flags = Int32(MSG_NOSIGNAL)
            #endif
            let request = Array(Self.health.utf8)
            let chunk = Array(repeating: request, count: 100).flatMap { $0 }
            let most = 16 << 20
            var sent = 0
            sending: while sent < most {
                var offset = 0
                while offset < chunk.count {
                    let n = chunk.withUnsafeBytes { send(client.fd, $0.baseAddress! + offset, chunk.count - offset, flags) }
                    if n > 0 {
                        offset += n
                        sent += n
                        continue
                    }
                    // Its send buffer is full: wait (a second) for the server to read more.
                    var ready = pollfd(fd: client.fd, events: Int16(POLLOUT), revents: 0)
                    if poll(&ready, 1, 1_000) == 0 { break sending }
                }
            }
            #expect(sent < most, "the server read all \(sent) bytes")
            let largest = running.server.largestQueue
            #expect(largest > 0 && largest <= bound + 1_024, "\(largest) bytes of answers waited")
            // Reading now, it gets an answer to every whole request it sent.
            _ = fcntl(client.fd, F_SETFL, fcntl(client.fd, F_GETFL) & ~O_NONBLOCK)
            let whole = sent / request.count
            let answer = Array("HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 3\r\n\r\nok\n".utf8)
            var received = 0
            var bytes = [UInt8](repeating: 0, count: 65_536)
            while received < whole * answer.count {
                let n = recv(client.fd, &bytes, bytes.count, 0)
                if n <= 0 { break }
                received += n
            }
            #expect(received == whole * answer.count, "\(received) bytes of \(whole) answers of \(answer.count)")
            client.hangUp()  // (its last request unfinished: the server need not wait for it to stop)
        }
    }

    /// A client that takes its answers a little at a time (a few KiB every 0.2 s, well
    /// under the minimum rate) is closed once the deadline of what waits passes, however
    /// often it takes a little.
    @Test func aClientTakingItsAnswersTooSlowlyIsClosedAtTheDeadline() async throws {
        try await offThePool {
            let limits = HTTPServer.Limits(write: 0.5, minimumRate: 1 << 20, sendBuffer: 4 << 10)
            let running = try Self.running(limits)
            defer { running.stop() }
            let client = try TCPClient(port: running.server.port)
            Self.setBuffer(client.fd, SO_RCVBUF, 2 << 10)
            let requests = 10
            client.send(String(repeating: "GET /rules/app.flags HTTP/1.1\r\nHost: t\r\n\r\n", count: requests))
            let start = Date()
            var received = [UInt8]()
            var bytes = [UInt8](repeating: 0, count: 2 << 10)
            var closed = false
            // A little every 0.2 s, for 2 s (the deadline is under 1 s).
            while !closed, Date().timeIntervalSince(start) < 2 {
                var ready = pollfd(fd: client.fd, events: Int16(POLLIN), revents: 0)
                guard poll(&ready, 1, 200) > 0 else { continue }
                let n = recv(client.fd, &bytes, bytes.count, 0)
                if n <= 0 { closed = true } else { received += bytes[..<n] }
                usleep(200_000)
            }
            // Then all that is left, quickly: the server closed the connection.
            if !closed {
                let (rest, ended) = HTTPLoopSequenceTests.readToEnd(client, seconds: 10)
                received += Array(rest.utf8)
                closed = ended
            }
            let answers = HTTPLoopSequenceTests.statuses(String(decoding: received, as: UTF8.self))
            #expect(closed && answers.count < requests, "closed \(closed) after \(answers.count) answers (\(received.count) bytes)")
        }
    }

    /// A client that half-closes with a request unfinished after a whole one is answered
    /// the whole one, then closed (the unfinished one can never finish): no 408, however
    /// long the answer before it takes to be read.
    @Test func aHalfClosedClientIsAnsweredWhatItAskedThenClosed() async throws {
        try await offThePool {
            let running = try Self.running(.init(request: 1, sendBuffer: 4 << 10))
            defer { running.stop() }
            let client = try TCPClient(port: running.server.port)
            Self.setBuffer(client.fd, SO_RCVBUF, 2 << 10)
            client.send("GET /rules/app.flags HTTP/1.1\r\nHost: t\r\n\r\nGET /heal")
            shutdown(client.fd, Int32(SHUT_WR))
            // Read slowly past the request deadline: the first answer is still waiting when the
            // deadline of the unfinished one would pass.
            var received = [UInt8]()
            var bytes = [UInt8](repeating: 0, count: 1 << 10)
            var ended = false
            let start = Date()
            while !ended, Date().timeIntervalSince(start) < 20 {
                let n = recv(client.fd, &bytes, bytes.count, 0)
                if n <= 0 { ended = true } else { received += bytes[..<n] }
                if Date().timeIntervalSince(start) < 1.5 { usleep(50_000) }
            }
            let text = String(decoding: received, as: UTF8.self)
            #expect(ended && HTTPLoopSequenceTests.statuses(text) == [200] && text.hasSuffix("value v2999: int = 2999\n"))
        }
    }

    /// The defaults are the figures the OFREP article's Limits section gives (the tests
    /// above check what each does, made small).
    @Test func theDefaultsAreTheFiguresTheArticleGives() throws {
        let limits = HTTPServer.Limits()
        #expect(limits.connections == 2_048 && limits.subscribers == 16_000)
        #expect(limits.request == 10 && limits.write == 10 && limits.minimumRate == 64 << 10)
        #expect(limits.idle == 30 && limits.busyIdle == 2 && limits.queuedAnswers == 256 << 10)
        #expect(limits.subscriberBehind == 30 && limits.sendBuffer == nil)
        #expect(EventHub.backlogLimit([]) == 1 << 20)
        let page = try ArticleResultsTests.article("ServingOverOFREP")
        let start = try #require(page.range(of: "## Limits"))
        let end = page.range(of: "\n## ", range: start.upperBound..<page.endIndex)?.lowerBound ?? page.endIndex
        let section = page[start.upperBound..<end].replacingOccurrences(of: "\n", with: " ")
        // 16000 as "16,000".
        func figure(_ n: Int) -> String {
            var digits = String(n)
            var grouped = ""
            while digits.count > 3 {
                grouped = "," + digits.suffix(3) + grouped
                digits.removeLast(3)
            }
            return digits + grouped
        }
        for phrase in [
            "at most \(figure(limits.connections)) connections making requests",
            "within \(Int(limits.request)) s of its first byte",
            "within \(Int(limits.write)) s of when it began to wait, plus its size at \(limits.minimumRate >> 10) KiB a second",
            "more than \(limits.queuedAnswers >> 10) KiB of a connection's answers",
            "closes after \(Int(limits.idle)) s (\(Int(limits.busyIdle)) s while more than half",
            "at most \(figure(limits.subscribers)), each watched for its hang-up",
            "one that has held events back for \(Int(limits.subscriberBehind)) s",
        ] {
            #expect(section.contains(phrase), "the Limits section does not say '\(phrase)'")
        }
    }
}
