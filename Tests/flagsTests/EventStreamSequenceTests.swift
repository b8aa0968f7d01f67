import FlagRules
import Foundation
import Testing

@testable import FlagRulesServer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The event-stream hub as a state machine: random sequences of subscriptions (to every
/// change, or to one file's text; with no `Last-Event-ID`, the current one or an old one),
/// rules changes to one of two files, reinstalls of the same rules, rejected updates and
/// hang-ups, run
/// against an in-process server; after each step every subscriber has received exactly
/// the events a small model says, in order.
struct EventStreamSequenceTests {
    /// A subscriber's events so far, as `refetch ID` and `rules FILE ETAG` lines (comments
    /// and the response's head left out).
    static func events(_ text: String) -> [String] {
        guard let head = text.range(of: "\r\n\r\n") else { return [] }
        return text[head.upperBound...].components(separatedBy: "\n\n").dropLast().compactMap { block in
            guard let line = block.split(separator: "\n").first(where: { $0.hasPrefix("data: ") }),
                let json = try? JSONSerialization.jsonObject(with: Data(line.dropFirst(6).utf8)) as? [String: Any]
            else { return nil }
            switch json["type"] as? String {
            case "refetchEvaluation": return "refetch \(json["etag"] as? String ?? "?")"
            case "rulesChanged": return "rules \(json["file"] as? String ?? "?") \(json["etag"] as? String ?? "?")"
            case "rulesRejected": return "rejected \(json["file"] as? String ?? "?")"
            default: return "unknown"
            }
        }
    }

    final class Subscriber {
        let client: TCPClient
        let file: String?
        var expected: [String] = []
        init(client: TCPClient, file: String?) {
            self.client = client
            self.file = file
        }
    }

    /// Two connected sockets: the hub's end, and the subscriber's.
    static func socketPair() throws -> [Int32] {
        var pair: [Int32] = [0, 0]
        #if canImport(Darwin)
            let made = socketpair(AF_UNIX, SOCK_STREAM, 0, &pair)
        #else
            let made = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair)
        #endif
        try #require(made == 0)
        return pair
    }

    /// What `fd` receives, read `chunk` bytes at a time, until `done` holds of it, the peer
    /// closes, or `seconds` pass.
    static func receive(_ fd: Int32, chunk: Int = 4_096, seconds: Double = 10, until done: (String) -> Bool) -> String {
        var received = [UInt8]()
        let deadline = Date().addingTimeInterval(seconds)
        while !done(String(decoding: received, as: UTF8.self)), Date() < deadline {
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 100) > 0 else { continue }
            var bytes = [UInt8](repeating: 0, count: chunk)
            let n = read(fd, &bytes, bytes.count)
            if n <= 0 { break }
            received += bytes[..<n]
        }
        return String(decoding: received, as: UTF8.self)
    }

    @Test(arguments: 0..<3) func randomSequencesMatchTheModel(seed: Int) throws {
        var g = SeededGenerator(seed: UInt64(seed) &+ 4_242)
        let service = OFREPService()
        let names = ["a.flags", "b.flags"]
        var texts = ["flag a = false\n", "flag b = false\n"]
        var counter = 0
        func install() throws {
            try service.install(zip(names, texts).map { .init(name: $0, rules: try RuleSet(source: $1, name: $0)) })
        }
        func etag(_ k: Int) throws -> String { "\"\(try RuleSet(source: texts[k], name: names[k]).contentVersion)\"" }
        try install()
        let server = try HTTPServer(service: service, host: "127.0.0.1", port: 0)
        let done = DispatchSemaphore(value: 0)
        Thread {
            server.run()
            done.signal()
        }.start()
        defer {
            server.drain()
            _ = done.wait(timeout: .now() + 30)
        }
        var subscribers: [Subscriber] = []
        for step in 0..<40 {
            switch g.next() % 6 {
            case 0, 1:
                let file = [nil, "a.flags", "b.flags"][Int(g.next() % 3)]
                let version = service.version
                let lastEventID = [nil, version, "old"][Int(g.next() % 3)]
                // The text the subscriber says it holds: none, the one in force, or another.
                let index = file.flatMap { names.firstIndex(of: $0) }
                let holding = try [nil, index.map(etag), "\"other\""][Int(g.next() % 3)]
                let client = try TCPClient(port: server.port)
                let query = file.map { "?rules=\($0)" } ?? ""
                client.send(
                    "GET /ofrep/v1/events\(query) HTTP/1.1\r\n" + (lastEventID.map { "Last-Event-ID: \($0)\r\n" } ?? "")
                        + (holding.map { "If-None-Match: \($0)\r\n" } ?? "") + "\r\n")
                _ = try client.read(until: "text/event-stream")
                let subscriber = Subscriber(client: client, file: file)
                // A file's stream starts from its text in force, unless that is the one held.
                if let index, let holding, holding != (try etag(index)) {
                    subscriber.expected.append("rules \(names[index]) \(try etag(index))")
                }
                if let lastEventID, lastEventID != version { subscriber.expected.append("refetch \(version)") }
                subscribers.append(subscriber)
            case 2:
                // A change to one file: its subscribers get its text, then everyone the refetch.
                let k = Int(g.next() % 2)
                counter += 1
                texts[k] = "flag \(k == 0 ? "a" : "b") = \(counter % 2 == 0)\nvalue n\(counter): int = \(counter)\n"
                try install()
                for s in subscribers {
                    if s.file == names[k] { s.expected.append("rules \(names[k]) \(try etag(k))") }
                    s.expected.append("refetch \(service.version)")
                }
            case 3:
                try install()  // the same rules again: no event
            case 4:
                // A rejected update of one file: everyone is told, the rules stay.
                let name = names[Int(g.next() % 2)]
                service.reject(file: name, message: "\(name):1:1: expected a declaration")
                for s in subscribers { s.expected.append("rejected \(name)") }
            default:
                guard !subscribers.isEmpty else { continue }
                let gone = subscribers.remove(at: Int(g.next() % UInt64(subscribers.count)))
                gone.client.hangUp()
            }
            for (k, s) in subscribers.enumerated() {
                let received = Self.events(try s.client.read(within: 30) { Self.events($0).count >= s.expected.count })
                #expect(received == s.expected, "seed \(seed), step \(step), subscriber \(k)")
            }
        }
    }

    /// A `?rules=` stream starts from the text in force only when the socket takes it at
    /// once: a text larger than half its send buffer is not sent in the head, and the head
    /// does not say the stream starts current (the client fetches).
    @Test func aTextTooLargeForTheSocketIsLeftToAFetch() throws {
        for (lines, inline) in [(10, true), (40_000, false)] {
            let text = (0..<lines).map { "value v\($0): int = \($0)\n" }.joined()
            let service = OFREPService()
            service.install([.init(name: "a.flags", rules: try RuleSet(source: text, name: "a.flags"))])
            let streams = EventStreams(service: service)
            defer { streams.stop() }
            let pair = try Self.socketPair()
            defer { close(pair[1]) }
            #expect(EventStreams.fitsAtOnce(text.utf8.count * 2, pair[0]) == inline, "\(text.utf8.count) bytes")
            #expect(streams.subscribe(pair[0], lastEventID: nil, file: "a.flags", holding: "\"other\""))
            let expectedEnd = inline ? "\"}\n\n" : "\r\n\r\n"
            let head = Self.receive(pair[1], chunk: 65_536) { $0.hasSuffix(expectedEnd) }
            #expect(head.contains("X-Flags-Rules: current\r\n") == inline, "\(lines) lines")
            #expect(Self.events(head) == (inline ? ["rules a.flags \(service.servedFiles[0].etag)"] : []), "\(lines) lines")
        }
    }

    /// An event larger than the subscriber's socket takes at once arrives whole, then the
    /// next: the rest is sent as the socket takes it, and the subscriber is not dropped.
    @Test func anEventLargerThanTheSocketTakesArrivesWhole() throws {
        let small = try RuleSet(source: "value v: int = 0\n", name: "a.flags")
        let text = (0..<20_000).map { "value v\($0): int = \($0)\n" }.joined()
        let large = try RuleSet(source: text, name: "a.flags")
        let service = OFREPService()
        service.install([.init(name: "a.flags", rules: small)])
        let streams = EventStreams(service: service)
        defer { streams.stop() }
        let pair = try Self.socketPair()
        defer { close(pair[1]) }
        var size: Int32 = 4_096
        setsockopt(pair[0], SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(pair[1], SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        #expect(streams.subscribe(pair[0], lastEventID: nil, file: "a.flags"))
        _ = Self.receive(pair[1], chunk: 1_024) { $0.contains("\r\n\r\n") }
        // The large text goes out while nothing is read: the socket fills at once.
        service.install([.init(name: "a.flags", rules: large)])
        let stream = "HTTP/1.1 200 OK\r\n\r\n" + Self.receive(pair[1], chunk: 1_024, seconds: 60) { $0.contains("refetchEvaluation") }
        #expect(Self.events(stream) == ["rules a.flags \(service.servedFiles[0].etag)", "refetch \(service.version)"])
        let data = try #require(stream.components(separatedBy: "\n").first { $0.hasPrefix("data: ") && $0.contains("rulesChanged") })
        let event = try #require(try JSONSerialization.jsonObject(with: Data(data.dropFirst(6).utf8)) as? [String: Any])
        #expect(event["rules"] as? String == text)
        #expect(streams.count == 1)
    }

    /// The hub's thread starts with its first subscriber; a change made at once after that
    /// subscriber's head went out (before the thread has run) must still reach it. Each
    /// round is a new hub, so each round races the thread's start.
    @Test func aChangeRightAfterTheFirstSubscriptionReachesIt() throws {
        let before = try RuleSet(source: "flag a = false\n", name: "a.flags")
        let after = try RuleSet(source: "flag a = true\n", name: "a.flags")
        for round in 0..<50 {
            let service = OFREPService()
            service.install([.init(name: "a.flags", rules: before)])
            let streams = EventStreams(service: service)
            defer { streams.stop() }
            let pair = try Self.socketPair()
            defer { close(pair[1]) }
            #expect(streams.subscribe(pair[0], lastEventID: nil, file: "a.flags"))
            service.install([.init(name: "a.flags", rules: after)])
            let text = Self.receive(pair[1]) { $0.contains("refetchEvaluation") }
            let reached = text.contains("\"rulesChanged\"") && text.contains("refetchEvaluation")
            #expect(reached, "round \(round): \(text)")
            if !reached { break }
        }
    }
}
