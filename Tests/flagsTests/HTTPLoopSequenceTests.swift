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
/// garbage (400, then closed), slow readers of a large answer (it arrives whole), and
/// tricklers and silent clients left open meanwhile (408 at their deadline). After every
/// step a fresh client is answered; at the end the server's count of answers by status is
/// exactly the model's.
struct HTTPLoopSequenceTests {
    /// A server with a large file and short deadlines.
    static func running() throws -> RunningServer {
        let service = OFREPService()
        let text = "flag f = true\n" + (0..<3_000).map { "value v\($0): int = \($0)\n" }.joined()
        service.install([.init(name: "app.flags", rules: try RuleSet(source: text, name: "app.flags"))])
        return try RunningServer(service: service, deadlines: .init(request: 1, write: 5))
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
        for step in 0..<30 {
            let context = "seed \(seed), step \(step)"
            switch g.next() % 7 {
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
        withExtendedLifetime(tricklers) {}
        return problems
    }
}
