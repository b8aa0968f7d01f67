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
/// change, or to one file's text; with no `Last-Event-ID`, the current one or an old one;
/// holding no text, the one in force, an older one of the file with its generation, or an
/// unknown one), changes of one of two files, reverts of a file to an earlier text,
/// reinstalls of the same rules, rejected updates and their clearing, hang-ups and restarts
/// of the server, run against an in-process server, with two stores following one file;
/// after each step every subscriber has received exactly the events a small model says, in
/// order, no subscriber was ever sent a text older than one it held, and each store holds
/// the file's text in force, having never put in force an older one than it held.
struct EventStreamSequenceTests {
    /// A subscriber's events so far, as `refetch GEN`, `rules FILE ETAG GEN`, `rejected
    /// FILE` and `accepted FILE [GEN]` lines (comments and the response's head left out).
    static func events(_ text: String) -> [String] {
        guard let head = text.range(of: "\r\n\r\n") else { return [] }
        return text[head.upperBound...].components(separatedBy: "\n\n").dropLast().compactMap { block in
            guard let line = block.split(separator: "\n").first(where: { $0.hasPrefix("data: ") }) else { return nil }
            switch PushProtocol.Event(data: String(line.dropFirst(6))) {
            case .refetch(let version, _)?: return "refetch \(version)"
            case .rulesChanged(let file, let etag, let generation, _)?: return "rules \(file) \(etag) \(generation ?? 0)"
            case .rulesRejected(let file, _, _)?: return "rejected \(file)"
            case .rulesAccepted(let file, _, let generation)?: return "accepted \(file)" + (generation.map { " \($0)" } ?? "")
            case nil: return "unknown"
            }
        }
    }

    /// Whether `received` is what `expected` says: each line in turn, where a line marked
    /// `?` may be missing and a last word `*` stands for any word.
    static func matches(_ received: some Collection<String>, _ expected: some Collection<String>) -> Bool {
        guard let line = expected.first else { return received.isEmpty }
        let optional = line.hasPrefix("?")
        let pattern = optional ? String(line.dropFirst()) : line
        let fits = received.first.map { got in
            pattern.hasSuffix(" *") ? got.hasPrefix(pattern.dropLast()) && !got.dropFirst(pattern.count - 1).contains(" ") : got == pattern
        }
        if fits == true, matches(received.dropFirst(), expected.dropFirst()) { return true }
        return optional && matches(received, expected.dropFirst())
    }

    final class Subscriber {
        let client: TCPClient
        let file: String?
        var expected: [String] = []
        /// The generation of the file's text it held when it subscribed.
        let heldGeneration: Int
        init(client: TCPClient, file: String?, heldGeneration: Int) {
            self.client = client
            self.file = file
            self.heldGeneration = heldGeneration
        }
    }

    @Test(arguments: 0..<4) func randomSequencesMatchTheModel(seed: Int) async throws {
        var g = SeededGenerator(seed: UInt64(seed) &+ 4_242)
        let names = ["a.flags", "b.flags"]
        var texts = ["flag a = false\n", "flag b = false\n"]
        // Every text each file has had, and the generation it last came in force at.
        var history: [[(text: String, generation: Int)]] = [[], []]
        var standing: Set<String> = []
        var counter = 0
        // (A port no client socket is given: the server comes back on it after a restart.)
        var running = try RunningServer.onStablePort()
        defer { running.stop() }
        var lastGeneration = 0
        func etag(_ text: String, _ k: Int) throws -> String { "\"\(try RuleSet(source: text, name: names[k]).contentVersion)\"" }
        /// Installs the texts; the files whose text changed (their subscribers get it).
        @discardableResult
        func install() throws -> [Int] {
            let before = running.service.servedFiles
            try running.service.install(zip(names, texts).map { .init(name: $0, rules: try RuleSet(source: $1, name: $0)) })
            let after = running.service.servedFiles
            let changed = (0..<2).filter { k in before.count < 2 || before[k].etag != after[k].etag }
            let generation = Int(running.service.version)!
            // The generation only goes up, across restarts too; a file whose text did not
            // change keeps its own.
            #expect(changed.isEmpty ? generation == lastGeneration : generation > lastGeneration, "seed \(seed)")
            for k in 0..<2 {
                #expect(after[k].generation == (changed.contains(k) ? generation : before[k].generation), "seed \(seed)")
                if changed.contains(k) { history[k].append((texts[k], generation)) }
            }
            lastGeneration = generation
            return changed
        }
        try install()
        // Two stores of a.flags: each generation it puts in force, in order.
        let url = URL(string: "http://127.0.0.1:\(running.server.port)/rules/a.flags")!
        let stores = (0..<2).map { _ in FlagStore(source: .url(url), refresh: .seconds(120)) }
        let loaded = Locked<[[Int]]>([[], []])
        for (k, store) in stores.enumerated() {
            store.onEvent = { [weak store] event in
                if case .rulesLoaded = event, let generation = store?.rulesGeneration { loaded.withLock { $0[k].append(generation) } }
            }
            store.start()
        }
        defer { for store in stores { store.stop() } }
        // Beside the whole suite, whose blocking tests may hold the few threads tasks share,
        // a first fetch can wait a while.
        for store in stores { _ = try await store.ready(timeout: .seconds(120)) }
        var subscribers: [Subscriber] = []
        for step in 0..<50 {
            // The step and its subscribers' reads block (on sockets, for up to 30 s), so run
            // off the pool, whose threads the stores' tasks need; true if there was no step.
            let skipped = try await offThePool { () throws -> Bool in
                let service = running.service
                switch g.next() % 10 {
                case 0, 1, 2:
                    let file = [nil, 0, 1][Int(g.next() % 3)]
                    let version = service.version
                    let lastEventID = [nil, version, "old"][Int(g.next() % 3)]
                    // The text the subscriber says it holds: none, the one in force, an older
                    // one of the file (with its generation), or an unknown one.
                    var holding: (etag: String, generation: Int?)?
                    if let k = file {
                        let current = service.servedFiles[k]
                        switch g.next() % 4 {
                        case 0: holding = nil
                        case 1: holding = (current.etag, current.generation)
                        case 2:
                            let older = history[k][Int(g.next() % UInt64(history[k].count))]
                            holding = (try etag(older.text, k), older.generation)
                        default: holding = ("\"other\"", nil)
                        }
                    }
                    let client = try TCPClient(port: running.server.port)
                    let query = file.map { "?rules=\(names[$0])" } ?? ""
                    var request = "GET /ofrep/v1/events\(query) HTTP/1.1\r\n"
                    if let lastEventID { request += "Last-Event-ID: \(lastEventID)\r\n" }
                    if let holding { request += "If-None-Match: \(holding.etag)\r\n" }
                    if let generation = holding?.generation { request += "X-Flags-Generation: \(generation)\r\n" }
                    client.send(request + "\r\n")
                    _ = try client.read(until: "text/event-stream")
                    let subscriber = Subscriber(client: client, file: file.map { names[$0] }, heldGeneration: holding?.generation ?? 0)
                    if let k = file {
                        // A file's stream starts from its text in force, unless the one held is
                        // it (or is not older); then says whether its update stands rejected.
                        let current = service.servedFiles[k]
                        if let holding, holding.etag != current.etag, current.generation > holding.generation ?? 0 {
                            subscriber.expected.append("rules \(names[k]) \(current.etag) \(current.generation)")
                        }
                        // (Its head's acceptance names the generation in force: a subscriber
                        // holding that text after a revert takes the newer generation.)
                        subscriber.expected.append(
                            standing.contains(names[k]) ? "rejected \(names[k])" : "accepted \(names[k]) \(current.generation)")
                    }
                    if let lastEventID, lastEventID != version { subscriber.expected.append("refetch \(version)") }
                    subscribers.append(subscriber)
                case 3, 4:
                    // A change to one file, or a revert to one of its earlier texts: its
                    // subscribers get its text, then everyone the refetch.
                    let k = Int(g.next() % 2)
                    let earlier = history[k].map(\.text).filter { $0 != texts[k] }
                    if g.next() % 2 == 0, let back = earlier.last {
                        texts[k] = back
                    } else {
                        counter += 1
                        texts[k] = "flag \(k == 0 ? "a" : "b") = \(counter % 2 == 0)\nvalue n\(counter): int = \(counter)\n"
                    }
                    try install()
                    let file = service.servedFiles[k]
                    for s in subscribers {
                        if s.file == names[k] { s.expected.append("rules \(names[k]) \(file.etag) \(file.generation)") }
                        s.expected.append("refetch \(service.version)")
                    }
                case 5 where g.next() % 2 == 0:
                    try install()  // the same rules again: no event
                case 5:
                    // Two installs of one file at once (two stores loading together): they go in
                    // force one after the other, the later one stays, and a subscriber may or may
                    // not have been sent the earlier before it.
                    let k = Int(g.next() % 2)
                    let candidates = (1...2).map { n in "flag \(k == 0 ? "a" : "b") = true\nvalue n\(counter + n): int = \(counter + n)\n" }
                    counter += 2
                    let sets = try candidates.map { text in
                        try zip(names, texts).enumerated().map { i, pair in
                            OFREPService.ServedFile(name: pair.0, rules: try RuleSet(source: i == k ? text : pair.1, name: pair.0))
                        }
                    }
                    DispatchQueue.concurrentPerform(iterations: 2) { i in service.install(sets[i]) }
                    let after = service.servedFiles
                    let kept = try candidates.first { try etag($0, k) == after[k].etag }
                    let generation = Int(service.version)!
                    #expect(kept != nil && generation > lastGeneration && after[k].generation == generation, "seed \(seed)")
                    lastGeneration = generation
                    texts[k] = kept ?? texts[k]
                    history[k].append((texts[k], generation))
                    let other = try etag(candidates.first { $0 != texts[k] }!, k)
                    for s in subscribers {
                        if s.file == names[k] { s.expected.append("?rules \(names[k]) \(other) *") }
                        s.expected.append("?refetch *")
                        if s.file == names[k] { s.expected.append("rules \(names[k]) \(after[k].etag) \(generation)") }
                        s.expected.append("refetch \(service.version)")
                    }
                case 6:
                    // A rejected update of one file: its subscribers and those of every change
                    // are told (not another file's), the rules stay.
                    let name = names[Int(g.next() % 2)]
                    service.reject(file: name, message: "\(name):1:1: expected a declaration")
                    standing.insert(name)
                    for s in subscribers where s.file == nil || s.file == name { s.expected.append("rejected \(name)") }
                case 7:
                    // A good text in force again: a standing rejection clears, and the same
                    // subscribers are told, with the generation in force.
                    let k = Int(g.next() % 2)
                    let name = names[k]
                    service.accepted(file: name)
                    if standing.remove(name) != nil {
                        let generation = service.servedFiles[k].generation
                        for s in subscribers where s.file == nil || s.file == name { s.expected.append("accepted \(name) \(generation)") }
                    }
                case 8:
                    guard !subscribers.isEmpty else { return true }
                    let gone = subscribers.remove(at: Int(g.next() % UInt64(subscribers.count)))
                    gone.client.hangUp()
                default:
                    // A restart: every subscriber is dropped; the new server starts from the same
                    // texts at a later generation, with no rejection standing.
                    running.stop()
                    subscribers = []
                    standing = []
                    running = try RunningServer.restarted(on: running.server.port)
                    try install()
                }
                for (k, s) in subscribers.enumerated() {
                    let received = Self.events(try s.client.read(within: 30) { Self.matches(Self.events($0), s.expected) })
                    #expect(
                        Self.matches(received, s.expected), "seed \(seed), step \(step), subscriber \(k): \(received) against \(s.expected)"
                    )
                    // Never a text older than one it held or was sent.
                    let generations = received.filter { $0.hasPrefix("rules ") }.compactMap { Int($0.split(separator: " ").last!) }
                    #expect(zip([s.heldGeneration] + generations, generations).allSatisfy { $0 < $1 }, "seed \(seed), step \(step)")
                }
                return false
            }
            if skipped { continue }
            // Each store holds a.flags's text in force (it came by its stream, or by a fetch
            // after a restart), and never put an older generation in force.
            let current = running.service.servedFiles[0]
            for (k, store) in stores.enumerated() {
                let start = Date()
                while store.rules?.source.bytes != current.rules.source.bytes, Date().timeIntervalSince(start) < 30 {
                    try await Task.sleep(for: .milliseconds(10))
                }
                #expect(store.rules?.source.bytes == current.rules.source.bytes, "seed \(seed), step \(step), store \(k)")
                let history = loaded.withLock { $0[k] }
                #expect(zip(history, history.dropFirst()).allSatisfy { $0 < $1 }, "seed \(seed), step \(step): \(history)")
            }
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

    /// A subscriber of a.flags on a socket pair whose buffers are 4 KB (a slow link), its
    /// head read: the hub's end and the subscriber's.
    static func smallSubscriber(of streams: EventHub) throws -> [Int32] {
        let pair = try socketPair()
        var size: Int32 = 4_096
        setsockopt(pair[0], SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(pair[1], SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        #expect(streams.subscribe(pair[0], lastEventID: nil, file: "a.flags"))
        _ = receive(pair[1], chunk: 1_024) { $0.contains("rulesAccepted") }
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

    /// A `?rules=` stream starts from the text in force only when the socket takes it at
    /// once: a text larger than half its send buffer is not sent in the head, and the head
    /// does not say the stream starts current (the client fetches).
    @Test func aTextTooLargeForTheSocketIsLeftToAFetch() async throws {
        try await offThePool {
            for (lines, inline) in [(10, true), (40_000, false)] {
                let text = (0..<lines).map { "value v\($0): int = \($0)\n" }.joined()
                let service = OFREPService()
                service.install([.init(name: "a.flags", rules: try RuleSet(source: text, name: "a.flags"))])
                let streams = EventHub(served: service.served)
                defer { streams.stop() }
                let pair = try Self.socketPair()
                defer { close(pair[1]) }
                #expect(EventHub.fitsAtOnce(text.utf8.count * 2, pair[0]) == inline, "\(text.utf8.count) bytes")
                #expect(streams.subscribe(pair[0], lastEventID: nil, file: "a.flags", holding: "\"other\""))
                let head = Self.receive(pair[1], chunk: 65_536) { $0.contains("rulesAccepted") && $0.hasSuffix("\n\n") }
                #expect(head.contains("X-Flags-Rules: current\r\n") == inline, "\(lines) lines")
                #expect(head.contains("\r\nX-Accel-Buffering: no\r\n"), "a proxy must not buffer the stream")
                let file = service.servedFiles[0]
                #expect(
                    Self.events(head) == (inline ? ["rules a.flags \(file.etag) \(file.generation)"] : []) + [
                        "accepted a.flags \(file.generation)"
                    ],
                    "\(lines) lines")
            }
        }
    }

    /// A push never holds the loop for the subscribers × bytes it owes: each step writes
    /// (here) one share, round-robin, so that no subscriber gets its second share before
    /// every other has had its first, and the server's loop answers requests between steps
    /// (`writesLeft` asks it to come back at once). Every subscriber then has the whole text.
    @Test func aPushIsWrittenAShareAStepRoundRobin() async throws {
        try await offThePool {
            let text = (0..<2_000).map { "value v\($0): int = \($0)\n" }.joined()
            let service = OFREPService()
            service.install([.init(name: "a.flags", rules: try RuleSet(source: "value v: int = 0\n", name: "a.flags"))])
            let share = 4_096
            let streams = EventHub(served: service.served, driven: true, writeBudget: 0, writeShare: share)
            defer { streams.stop() }
            var readers: [Int32] = []
            defer { for fd in readers { close(fd) } }
            for _ in 0..<12 {
                let pair = try Self.socketPair()
                readers.append(pair[1])
                #expect(streams.subscribe(pair[0], lastEventID: nil, file: "a.flags", holding: "\"other\""))
                _ = Self.receive(pair[1]) { $0.contains("rulesAccepted") && $0.hasSuffix("\n\n") }
            }
            _ = streams.step(ready: [])
            service.install([.init(name: "a.flags", rules: try RuleSet(source: text, name: "a.flags"))])
            func readAvailable(_ fd: Int32) -> Int {
                var total = 0
                var bytes = [UInt8](repeating: 0, count: 65_536)
                while true {
                    let n = recv(fd, &bytes, bytes.count, Int32(MSG_DONTWAIT))
                    if n <= 0 { return total }
                    total += n
                }
            }
            var received = [Int](repeating: 0, count: readers.count)
            var wait = streams.step(ready: [])
            var steps = 1
            while true {
                let got = readers.map(readAvailable)
                let writers = got.indices.filter { got[$0] > 0 }
                // One share a step, to one subscriber, and never more than a share.
                #expect(writers.count <= 1 && got.allSatisfy { $0 <= share }, "step \(steps): \(got)")
                for k in writers {
                    // Round-robin: it had no more shares than any other before this one.
                    #expect(received[k] / share <= received.map { $0 / share }.min()!, "step \(steps): \(received)")
                    received[k] += got[k]
                }
                guard wait.writesLeft, steps < 10_000 else { break }
                wait = streams.step(ready: [])
                steps += 1
            }
            #expect(!wait.writesLeft)
            #expect(Set(received).count == 1 && received[0] > text.utf8.count, "\(received)")
            #expect(steps > readers.count * text.utf8.count / share, "\(steps) steps")
        }
    }

    /// A stream's head that the socket cannot take at once (its buffer full of answers the
    /// client pipelined before asking for the stream) is queued as an event is, not taken
    /// for a client gone: it arrives whole after them once the client reads, then the next
    /// event.
    @Test func aHeadTheSocketCannotTakeAtOnceArrivesAfterWhatFilledIt() async throws {
        try await offThePool {
            let service = OFREPService()
            service.install([.init(name: "a.flags", rules: try RuleSet(source: "value v: int = 0\n", name: "a.flags"))])
            let streams = EventHub(served: service.served)
            defer { streams.stop() }
            // A subscriber before it: the hub's thread is already waiting in `poll` on the
            // sockets it knew of, and is to be woken to watch the new one for room.
            let first = try Self.socketPair()
            defer { close(first[1]) }
            #expect(streams.subscribe(first[0], lastEventID: nil, file: "a.flags"))
            _ = Self.receive(first[1]) { $0.contains("rulesAccepted") && $0.hasSuffix("\n\n") }
            let pair = try Self.socketPair()
            defer { close(pair[1]) }
            _ = fcntl(pair[0], F_SETFL, fcntl(pair[0], F_GETFL) | O_NONBLOCK)
            // The answers before the request: as many bytes as the socket takes.
            let filler = [UInt8](repeating: UInt8(ascii: "x"), count: 4_096)
            var filled = 0
            while true {
                let n = filler.withUnsafeBytes { send(pair[0], $0.baseAddress!, filler.count, Int32(MSG_DONTWAIT)) }
                if n <= 0 { break }
                filled += n
            }
            #expect(filled > 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            #expect(streams.admit(pair[0], lastEventID: nil, file: "a.flags") == .held)
            // Well within the keep-alive's 15 s, which would otherwise be the hub's next step.
            let head = Self.receive(pair[1], seconds: 5) { $0.contains("rulesAccepted") && $0.hasSuffix("\n\n") }
            #expect(head.prefix(filled) == String(repeating: "x", count: filled))
            #expect(head.dropFirst(filled).hasPrefix("HTTP/1.1 200 OK\r\n"), "\(head.dropFirst(filled).prefix(200))")
            service.install([.init(name: "a.flags", rules: try RuleSet(source: "value v: int = 1\n", name: "a.flags"))])
            let next = Self.receive(pair[1]) { $0.contains("refetchEvaluation") }
            #expect(next.contains("refetchEvaluation"), "\(next)")
        }
    }

    /// An event larger than the subscriber's socket takes at once arrives whole, then the
    /// next: the rest is sent as the socket takes it, and the subscriber is not dropped.
    @Test func anEventLargerThanTheSocketTakesArrivesWhole() async throws {
        try await offThePool {
            let small = try RuleSet(source: "value v: int = 0\n", name: "a.flags")
            let text = (0..<20_000).map { "value v\($0): int = \($0)\n" }.joined()
            let large = try RuleSet(source: text, name: "a.flags")
            let service = OFREPService()
            service.install([.init(name: "a.flags", rules: small)])
            let streams = EventHub(served: service.served)
            defer { streams.stop() }
            let pair = try Self.smallSubscriber(of: streams)
            defer { close(pair[1]) }
            // The large text goes out while nothing is read: the socket fills at once.
            service.install([.init(name: "a.flags", rules: large)])
            let stream = "HTTP/1.1 200 OK\r\n\r\n" + Self.receive(pair[1], chunk: 1_024, seconds: 60) { $0.contains("refetchEvaluation") }
            let file = service.servedFiles[0]
            #expect(Self.events(stream) == ["rules a.flags \(file.etag) \(file.generation)", "refetch \(service.version)"])
            let data = try #require(stream.components(separatedBy: "\n").first { $0.hasPrefix("data: ") && $0.contains("rulesChanged") })
            let event = try #require(try JSONSerialization.jsonObject(with: Data(data.dropFirst(6).utf8)) as? [String: Any])
            #expect(event["rules"] as? String == text)
            #expect(streams.count == 1)
        }
    }

    /// The hub's thread starts with its first subscriber; a change made at once after that
    /// subscriber's head went out (before the thread has run) must still reach it. Each
    /// round is a new hub, so each round races the thread's start.
    @Test func aChangeRightAfterTheFirstSubscriptionReachesIt() async throws {
        try await offThePool {
            let before = try RuleSet(source: "flag a = false\n", name: "a.flags")
            let after = try RuleSet(source: "flag a = true\n", name: "a.flags")
            for round in 0..<50 {
                let service = OFREPService()
                service.install([.init(name: "a.flags", rules: before)])
                let streams = EventHub(served: service.served)
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

    /// A subscriber that reads, but too slowly to take what it is sent, is dropped once it
    /// has held events back for `maxBehind`, however many bytes it takes meanwhile; while it
    /// is behind the hub waits for its socket, not on a timer.
    @Test func aSubscriberThatReadsTooSlowlyIsDroppedAndTheHubDoesNotPoll() async throws {
        try await offThePool {
            let text = (0..<20_000).map { "value v\($0): int = \($0)\n" }.joined()
            let service = OFREPService()
            service.install([.init(name: "a.flags", rules: try RuleSet(source: "value v: int = 0\n", name: "a.flags"))])
            let streams = EventHub(served: service.served, maxBehind: 2)
            defer { streams.stop() }
            let pair = try Self.smallSubscriber(of: streams)
            defer { close(pair[1]) }
            service.install([.init(name: "a.flags", rules: try RuleSet(source: text, name: "a.flags"))])
            // Behind, and not reading: the hub sleeps until the deadline.
            Thread.sleep(forTimeInterval: 0.5)
            let woken = streams.wakeCount
            Thread.sleep(forTimeInterval: 1)
            #expect(streams.wakeCount - woken <= 2, "the hub woke \(streams.wakeCount - woken) times in a second")
            // A byte every 50 ms: progress, but never caught up.
            let start = Date()
            var byte: UInt8 = 0
            while streams.count == 1, Date().timeIntervalSince(start) < 10 {
                _ = read(pair[1], &byte, 1)
                Thread.sleep(forTimeInterval: 0.05)
            }
            #expect(streams.count == 0, "still held after \(Date().timeIntervalSince(start)) s")
            #expect(Date().timeIntervalSince(start) < 5)
        }
    }

    /// A subscriber that never reads is dropped once it holds back more than its limit in
    /// bytes (a mebibyte, or twice its largest event), not after a count of events.
    @Test func aSubscriberHoldingBackTooManyBytesIsDropped() async throws {
        try await offThePool {
            let service = OFREPService()
            service.install([.init(name: "a.flags", rules: try RuleSet(source: "value v: int = 0\n", name: "a.flags"))])
            let streams = EventHub(served: service.served)
            defer { streams.stop() }
            let pair = try Self.socketPair()
            defer { close(pair[1]) }
            #expect(streams.subscribe(pair[0], lastEventID: nil, file: "a.flags"))
            _ = Self.receive(pair[1], chunk: 1_024) { $0.contains("rulesAccepted") }
            for edit in 1...6 {
                let text = (0..<15_000).map { "value v\($0): int = \($0 + edit)\n" }.joined()
                service.install([.init(name: "a.flags", rules: try RuleSet(source: text, name: "a.flags"))])
                Thread.sleep(forTimeInterval: 0.1)
            }
            let start = Date()
            while streams.count == 1, Date().timeIntervalSince(start) < 5 { Thread.sleep(forTimeInterval: 0.05) }
            #expect(streams.count == 0)
            #expect(EventHub.backlogLimit([[UInt8](repeating: 0, count: 10)]) == 1 << 20)
            #expect(EventHub.backlogLimit([[UInt8](repeating: 0, count: 3 << 20)]) == 6 << 20)
        }
    }

    /// A subscriber of a file not served yet (a relay still loading, a rename) gets its text
    /// once it is served, as any change.
    @Test func aSubscriberOfAFileNotServedYetGetsItOnceServed() async throws {
        try await offThePool {
            let service = OFREPService()
            let a = try RuleSet(source: "flag a = true\n", name: "a.flags")
            service.install([.init(name: "a.flags", rules: a)])
            let streams = EventHub(served: service.served)
            defer { streams.stop() }
            let pair = try Self.socketPair()
            defer { close(pair[1]) }
            #expect(streams.subscribe(pair[0], lastEventID: nil, file: "c.flags", holding: "\"old\""))
            service.install([
                .init(name: "a.flags", rules: a), .init(name: "c.flags", rules: try RuleSet(source: "flag c = true\n", name: "c.flags")),
            ])
            let text = Self.receive(pair[1]) { $0.contains("refetchEvaluation") }
            #expect(text.contains(#""type": "rulesChanged", "file": "c.flags""#), "\(text)")
        }
    }
}

/// An in-process HTTP server on a port of its own (or `port`, after a restart), running on
/// a thread until `stop()`.
final class RunningServer {
    let service: OFREPService
    let server: HTTPServer
    private let done = DispatchSemaphore(value: 0)
    init(service: OFREPService = OFREPService(), port: Int = 0, limits: HTTPServer.Limits = .init()) throws {
        self.service = service
        server = try HTTPServer(service: service, host: "127.0.0.1", port: port, limits: limits)
        Thread { [server, done] in
            server.run()
            done.signal()
        }.start()
    }
    func stop() {
        server.drain()
        _ = done.wait(timeout: .now() + 30)
    }

    /// A server again on `port` once the system lets it be bound: on a loaded machine the
    /// port of a server just stopped is refused for a moment ("Address already in use"), so
    /// the bind is tried until it succeeds, for at most 5 s.
    static func restarted(on port: Int) throws -> RunningServer {
        let deadline = ContinuousClock.now + .seconds(5)
        while true {
            do {
                return try RunningServer(port: port)
            } catch let error as HTTPServer.StartError where ContinuousClock.now < deadline && error.message.contains("in use") {
                usleep(20_000)
            }
        }
    }

    /// A server on a port no client socket is given (``StablePort``), another port when
    /// something else took the one chosen between the look and the listen.
    static func onStablePort() throws -> RunningServer {
        for _ in 0..<9 {
            if let running = try? RunningServer(port: StablePort.next()) { return running }
        }
        return try RunningServer(port: StablePort.next())
    }
}
