import FlagRules
import Foundation
import Testing

@testable import FlagRulesServer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The HTTP server's one thread under random sequences of clients, against a model of what
/// each must receive: pipelining clients (their answers in order), requests split into
/// pieces, half-closed clients (answered, then closed), vanishing ones (mid-request),
/// garbage (400, then closed), slow readers of a large answer (it arrives whole), tricklers
/// and silent clients left open meanwhile (408 at their deadline), and event-stream
/// subscribers held by the same loop while edits of the large file come: those that read
/// (the head, then each edit's events), those that read late through a small buffer (the
/// same, whole), and those that never read after the head (dropped within the time a
/// subscriber may stay behind). After every step a fresh client is answered; at the end the
/// server's count of answers by status is exactly the model's.
struct HTTPLoopSequenceTests {
    /// The large file's text; `edit` changes its first value.
    static func text(edit: Int) -> String {
        "flag f = true\n" + (0..<3_000).map { "value v\($0): int = \($0 == 0 ? edit : $0)\n" }.joined()
    }

    /// The server's limits here: short deadlines, a subscriber dropped after a second
    /// behind, and small send buffers (so that an edit's event of the file outgrows a
    /// socket that is not read).
    static let limits = HTTPServer.Limits(request: 1, write: 5, subscriberBehind: 1, sendBuffer: 16 << 10)

    /// A server with a large file and short deadlines.
    static func running() throws -> RunningServer {
        let service = OFREPService()
        service.install([.init(name: "app.flags", rules: try RuleSet(source: Self.text(edit: 0), name: "app.flags"))])
        return try RunningServer(service: service, limits: Self.limits)
    }

    /// An event-stream subscriber of the sequence: how it reads, what it asked for, what it
    /// read, and the events the model says it has been sent (`refetch GEN` and `rules FILE
    /// ETAG GEN`, as ``EventStreamSequenceTests/events(_:)`` writes them).
    final class StreamClient {
        enum Kind: CaseIterable { case reading, late, silent }
        let kind: Kind
        let client: TCPClient
        let file: String?
        var expected: [String] = []
        var text = ""
        init(kind: Kind, client: TCPClient, file: String?) {
            self.kind = kind
            self.client = client
            self.file = file
        }

        /// Its refetch and rules events so far.
        var events: [String] {
            EventStreamSequenceTests.events(text).filter { $0.hasPrefix("refetch ") || $0.hasPrefix("rules ") }
        }

        /// Whether the server closed its connection.
        var closed = false

        /// Reads once what its socket holds (a late one: a few KiB).
        func take() {
            var bytes = [UInt8](repeating: 0, count: kind == .late ? 4_096 : 65_536)
            let n = recv(client.fd, &bytes, bytes.count, 0)
            if n <= 0 { closed = true } else { text += String(decoding: bytes[..<n], as: UTF8.self) }
        }

        /// Whether it has read as many events as the model says it was sent.
        var hasAll: Bool { events.count >= expected.count }
    }

    /// Reads `streams` as their events come until each has as many as the model says (or
    /// its connection closes, or `seconds` pass).
    static func readAll(_ streams: [StreamClient], within seconds: Double) {
        let deadline = Date().addingTimeInterval(seconds)
        var left = streams.filter { !$0.hasAll }
        while !left.isEmpty, Date() < deadline {
            var fds = left.map { pollfd(fd: $0.client.fd, events: Int16(POLLIN), revents: 0) }
            _ = poll(&fds, nfds_t(fds.count), 50)
            for (k, ready) in fds.enumerated() where ready.revents != 0 { left[k].take() }
            left.removeAll { $0.hasAll || $0.closed }
        }
    }

    static let health = "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n"
    static let evaluation: String = {
        let body = #"{"context": {"userId": "u"}}"#
        return "POST /ofrep/v1/evaluate/flags/f HTTP/1.1\r\nHost: t\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }()

    /// The statuses of the responses in `text`, in order.
    static func statuses(_ text: String) -> [Int] {
        text.components(separatedBy: "HTTP/1.1 ").dropFirst().compactMap { Int($0.prefix(3)) }
    }

    /// Reads until the peer closes or `seconds` pass; what came, and whether it closed.
    static func readToEnd(_ client: TCPClient, seconds: Double = 10) -> (String, closed: Bool) {
        var received = [UInt8]()
        let deadline = Date().addingTimeInterval(seconds)
        var bytes = [UInt8](repeating: 0, count: 65_536)
        while Date() < deadline {
            var ready = pollfd(fd: client.fd, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 50) > 0 else { continue }
            let n = recv(client.fd, &bytes, bytes.count, 0)
            if n <= 0 { return (String(decoding: received, as: UTF8.self), true) }
            received += bytes[..<n]
        }
        return (String(decoding: received, as: UTF8.self), false)
    }

    /// Run off the threads Swift's tasks share (it blocks on sockets for seconds; beside
    /// the whole suite, stores' tasks need those threads): the problems found.
    @Test(arguments: 0..<3) func randomClientsGetWhatTheModelSays(seed: Int) async throws {
        let problems = try await offThePool { try Self.sequence(seed: seed) }
        #expect(problems.isEmpty, "\(problems)")
    }

    static func sequence(seed: Int) throws -> [String] {
        var problems: [String] = []
        func expect(_ condition: Bool, _ what: @autoclosure () -> String) { if !condition { problems.append(what()) } }
        var g = SeededGenerator(seed: UInt64(seed) &+ 31)
        let running = try Self.running()
        defer { running.stop() }
        let port = running.server.port
        var expected: [Int: Int] = [:]
        func count(_ status: Int, _ n: Int = 1) { expected[status, default: 0] += n }
        // Clients left open while the others come and go: each must get a 408.
        var tricklers: [(TCPClient, Date)] = []
        // Event-stream subscribers the hub holds.
        var streams: [StreamClient] = []
        var edits = 0
        var kinds = Set<StreamClient.Kind>()
        /// An edit of the large file: every subscriber held is sent its events (the file's
        /// text first to those that asked for it); those that read get them, and those that
        /// never read are dropped within the time they may stay behind.
        func edit(_ context: String) throws {
            edits += 1
            running.service.install([.init(name: "app.flags", rules: try RuleSet(source: Self.text(edit: edits), name: "app.flags"))])
            let file = running.service.servedFiles[0]
            for stream in streams {
                if stream.file != nil { stream.expected.append("rules app.flags \(file.etag) \(file.generation)") }
                stream.expected.append("refetch \(running.service.version)")
            }
            // Those that read get every event at once.
            // (The deadlines are generous: the wait ends when the events are in, and under
            // the thread sanitizer on a loaded machine a large file's events take seconds.)
            let reading = streams.filter { $0.kind == .reading }
            Self.readAll(reading, within: 30)
            // Those that never read are dropped within the time a subscriber may stay behind.
            let silent = streams.filter { $0.kind == .silent }
            streams.removeAll { $0.kind == .silent }
            let deadline = Date().addingTimeInterval(Self.limits.subscriberBehind + 5)
            while running.server.hub.count != streams.count, Date() < deadline { usleep(10_000) }
            expect(running.server.hub.count == streams.count, "\(context): the hub holds \(running.server.hub.count), not \(streams.count)")
            for stream in silent {
                let (_, closed) = Self.readToEnd(stream.client)
                expect(closed, "\(context): a subscriber that never read is still open")
            }
            // Those that read late (after that time) get them whole: their sockets held them.
            let late = streams.filter { $0.kind == .late }
            Self.readAll(late, within: 30)
            for stream in reading + late {
                expect(
                    stream.events == stream.expected, "\(context): a \(stream.kind) subscriber got \(stream.events), not \(stream.expected)"
                )
            }
        }
        for step in 0..<30 {
            let context = "seed \(seed), step \(step)"
            switch g.next() % 11 {
            case 0:
                // Pipelining: k requests in one write, k answers in order.
                let k = 1 + Int(g.next() % 5)
                let client = try TCPClient(port: port)
                client.send(String(repeating: Self.health, count: k - 1) + Self.evaluation)
                let text = try client.read(within: 10) { Self.statuses($0).count >= k && $0.hasSuffix("}") }
                expect(Self.statuses(text) == Array(repeating: 200, count: k), "\(context)")
                count(200, k)
            case 1:
                // A request in pieces, with pauses well inside its deadline.
                let client = try TCPClient(port: port)
                let bytes = Array(Self.evaluation.utf8)
                var i = 0
                while i < bytes.count {
                    let n = 1 + Int(g.next() % 40)
                    client.send(Array(bytes[i..<min(bytes.count, i + n)]))
                    i += n
                    usleep(UInt32(g.next() % 20_000))
                }
                let text = try client.read(within: 10) { $0.contains("\"value\"") }
                expect(Self.statuses(text) == [200] && text.contains(#""value": true"#), "\(context)")
                count(200)
            case 2:
                // Half-closed: both requests answered, then the connection closes.
                let client = try TCPClient(port: port)
                client.send(Self.health + Self.health)
                shutdown(client.fd, Int32(SHUT_WR))
                let (text, closed) = Self.readToEnd(client)
                expect(Self.statuses(text) == [200, 200] && closed, "\(context): \(text)")
                count(200, 2)
            case 3:
                // Vanishing mid-request: nothing is answered, nothing is held.
                let client = try TCPClient(port: port)
                client.send(String(Self.evaluation.prefix(Int(g.next() % 60) + 5)))
                client.hangUp()
            case 4:
                // Garbage: 400, then closed.
                let client = try TCPClient(port: port)
                client.send("NOT HTTP AT ALL\r\n\r\n")
                let (text, closed) = Self.readToEnd(client)
                expect(Self.statuses(text) == [400] && closed, "\(context): \(text)")
                count(400)
            case 5:
                // A slow reader of a large answer: it arrives whole.
                let client = try TCPClient(port: port)
                var size: Int32 = 2_048
                setsockopt(client.fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
                client.send("GET /rules/app.flags HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
                var received = [UInt8]()
                var chunk = [UInt8](repeating: 0, count: 4_096)
                let deadline = Date().addingTimeInterval(20)
                while Date() < deadline {
                    let n = recv(client.fd, &chunk, chunk.count, 0)
                    if n <= 0 { break }
                    received += chunk[..<n]
                    usleep(200)
                }
                let text = String(decoding: received, as: UTF8.self)
                expect(Self.statuses(text) == [200] && text.hasSuffix("value v2999: int = 2999\n"), "\(context)")
                count(200)
            case 7, 8, 9:
                // A subscriber (of every change, or of the file's text too): the head, and
                // the hub holds it. The first three are one of each kind.
                let left = StreamClient.Kind.allCases.filter { !kinds.contains($0) }
                let kind = left.isEmpty ? StreamClient.Kind.allCases[Int(g.next() % 3)] : left[Int(g.next() % UInt64(left.count))]
                kinds.insert(kind)
                // One that never reads has a small receive buffer; one that reads late, one that
                // holds an edit's events (set before connecting: the window a connection opens
                // with is not taken back).
                let client = try TCPClient(port: port, receiveBuffer: kind == .reading ? nil : kind == .silent ? 2_048 : 256 << 10)
                // One that never reads asks for the file's text: an edit's event outgrows its socket.
                let file = kind != .silent && g.next() % 2 == 0 ? nil : "app.flags"
                client.send("GET /ofrep/v1/events\(file.map { "?rules=\($0)" } ?? "") HTTP/1.1\r\nHost: t\r\n\r\n")
                let stream = StreamClient(kind: kind, client: client, file: file)
                stream.text = try client.read(within: 10) { $0.contains("\r\n\r\n") && (file == nil || $0.contains("rulesAccepted")) }
                expect(Self.statuses(stream.text) == [200] && stream.events.isEmpty, "\(context): \(stream.text.prefix(300))")
                streams.append(stream)
                expect(
                    running.server.hub.count == streams.count, "\(context): the hub holds \(running.server.hub.count), not \(streams.count)"
                )
                count(200)
            case 10:
                try edit(context)
            default:
                // A trickler (a byte now, another later) or a client that opens and says
                // nothing: left open; the trickler gets 408 at its deadline.
                let client = try TCPClient(port: port)
                if g.next() % 2 == 0 {
                    client.send("G")
                    tricklers.append((client, Date()))
                    count(408)
                } else {
                    tricklers.append((client, .distantFuture))
                }
            }
            // Meanwhile anyone is answered at once.
            let probe = try TCPClient(port: port)
            let start = Date()
            probe.send(Self.health)
            expect(Self.statuses(try probe.read(within: 10) { Self.statuses($0).count == 1 }) == [200], "\(context)")
            expect(Date().timeIntervalSince(start) < 1, "\(context)")
            count(200)
        }
        // A last edit: every subscriber has seen one.
        try edit("seed \(seed), the last edit")
        expect(kinds.count == 3, "seed \(seed) had subscribers of only \(kinds)")
        for (client, started) in tricklers where started != .distantFuture {
            client.send("E")  // more trickling does not push the deadline back
            let (text, closed) = Self.readToEnd(client, seconds: 5)
            expect(Self.statuses(text) == [408] && closed, "seed \(seed): \(text)")
        }
        // Every answer counted by its status, exactly as the model says (the metrics
        // request itself is counted after its answer is made).
        let metrics = try TCPClient(port: port)
        metrics.send("GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n")
        let body = try metrics.response().body
        var counted: [Int: Int] = [:]
        for line in body.split(separator: "\n") where line.hasPrefix("flags_http_requests_total{status=\"") {
            let status = Int(line.dropFirst("flags_http_requests_total{status=\"".count).prefix(3)) ?? 0
            counted[status] = Int(line.split(separator: " ").last ?? "") ?? 0
        }
        expect(counted == expected, "seed \(seed)")
        withExtendedLifetime((tricklers, streams)) {}
        return problems
    }
}
