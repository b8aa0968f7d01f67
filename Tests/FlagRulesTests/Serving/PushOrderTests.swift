import Foundation
import Testing

@testable import FlagRules
@testable import FlagRulesServer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Pushed rules never go back: the three ways a review found to end on an older text, each
/// as a test, and a store's guard against a text older than the one it holds.
@Suite struct PushOrderTests {
    /// Two stores loading at once: each one's hook installs what every store holds, and
    /// without installs made one at a time the slower could put back the other's older
    /// text. After every round the server serves each store's newest rules.
    @Test func storesLoadingAtOnceNeverLeaveAnOlderTextServed() async throws {
        let stores = [FlagStore(), FlagStore()]
        for (k, store) in stores.enumerated() { _ = try store.update(source: "value v\(k): int = 0\n", name: "s\(k).flags") }
        let server = try FlagServer(files: [("s0.flags", stores[0]), ("s1.flags", stores[1])], options: .init(port: 0))
        for round in 1...300 {
            await withTaskGroup(of: Void.self) { group in
                for (k, store) in stores.enumerated() {
                    group.addTask { _ = try? store.update(source: "value v\(k): int = \(round)\n", name: "s\(k).flags") }
                }
            }
            let served = server.service.servedFiles.map { String(decoding: $0.rules.source.bytes, as: UTF8.self) }
            #expect(served == ["value v0: int = \(round)\n", "value v1: int = \(round)\n"], "round \(round)")
            if served != ["value v0: int = \(round)\n", "value v1: int = \(round)\n"] { break }
        }
    }

    /// A file served without rules yet (a relay's before upstream's first answer) is a
    /// `503` asking again in a second, not a `404` a store backs off from; a name not served
    /// is a `404`; once the file has rules it is served.
    @Test func aFileWithoutRulesYetIsAskedForAgainInASecond() throws {
        let pending = FlagStore()
        let ready = FlagStore()
        _ = try ready.update(source: "flag a = true\n", name: "ready.flags")
        let server = try FlagServer(files: [("ready.flags", ready), ("pending.flags", pending)], options: .init(port: 0))
        func get(_ name: String) -> HTTPResponse {
            server.service.respond(HTTPRequest(method: "GET", path: PushProtocol.filePath(name)))
        }
        let waiting = get("pending.flags")
        #expect(waiting.status == 503 && waiting.header("Retry-After") == "1")
        #expect(String(decoding: waiting.body, as: UTF8.self).contains("'pending.flags' has no rules yet"))
        #expect(get("ready.flags").status == 200)
        #expect(get("other.flags").status == 404)
        _ = try pending.update(source: "flag b = true\n", name: "pending.flags")
        #expect(get("pending.flags").status == 200)
        // No longer served: a 404 again.
        server.replaceFiles(with: [("ready.flags", ready)])
        #expect(get("pending.flags").status == 404)
    }

    /// Generations only go up across a restart whatever the clock does: a server keeps its
    /// last generation in its generation file and starts above it. Here the file holds one
    /// an hour ahead of this clock (as after a clock stepped back an hour): the server's
    /// first text comes after it, and the file then holds the new one, which the next server
    /// starts above in turn.
    @Test func generationsGoUpAcrossARestartWhateverTheClock() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("generations-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("state/serve.generation")
        let ahead = Int(Date().timeIntervalSince1970 * 1_000_000) + 3_600_000_000
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try "\(ahead)\n".write(to: file, atomically: true, encoding: .utf8)
        func kept() -> Int? { (try? String(contentsOf: file, encoding: .utf8)).flatMap { Int($0.trimmingCharacters(in: .newlines)) } }
        var last = ahead
        for restart in 0..<3 {
            let store = FlagStore()
            _ = try store.update(source: "flag f = \(restart % 2 == 0)\n", name: "app.flags")
            let server = try FlagServer(files: [("app.flags", store)], options: .init(port: 0, generationFile: file))
            let first = server.service.served.snapshot
            #expect(first.generation > last && first.files[0].generation > last, "restart \(restart)")
            #expect(kept() == first.generation, "restart \(restart)")
            _ = try store.update(source: "flag f = \(restart % 2 == 1)\n", name: "app.flags")
            let edited = server.service.served.snapshot.generation
            #expect(edited > first.generation && kept() == edited, "restart \(restart)")
            last = edited
        }
        // Without a file, or with one that holds no number, the clock alone.
        try "not a number".write(to: file, atomically: true, encoding: .utf8)
        #expect(ServedRules(generationFloor: GenerationRecord(file).read() ?? 0).snapshot.generation == 0)
    }

    /// A generation file that cannot be written is said once, and the server goes on.
    @Test func aGenerationFileThatCannotBeWrittenIsSaidOnce() throws {
        let blocker = FileManager.default.temporaryDirectory.appendingPathComponent("generation-blocker-\(UUID().uuidString)")
        try "a file, not a directory".write(to: blocker, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: blocker) }
        let lines = Locked<[String]>([])
        let store = FlagStore()
        _ = try store.update(source: "flag f = true\n", name: "app.flags")
        let server = try FlagServer(
            files: [("app.flags", store)], options: .init(port: 0, generationFile: blocker.appendingPathComponent("serve.generation"))
        ) { line in lines.withLock { $0.append(line) } }
        _ = try store.update(source: "flag f = false\n", name: "app.flags")
        #expect(server.service.served.snapshot.files[0].rules.evaluate("f", in: [:]).value == .bool(false))
        let said = lines.withLock { $0 }.filter { $0.contains("cannot keep the generation") }
        #expect(said.count == 1, "\(lines.withLock { $0 })")
    }

    /// The wait of the event hub follows the generation, not the text: A → B → A before the
    /// hub looks is a change (content versions compared with `!=` saw none).
    @Test func aRevertIsANewGeneration() throws {
        let a = try RuleSet(source: "flag a = false\n", name: "a.flags")
        let b = try RuleSet(source: "flag a = true\n", name: "a.flags")
        let served = ServedRules()
        served.install([.init(name: "a.flags", rules: a)])
        let first = served.snapshot.generation
        served.install([.init(name: "a.flags", rules: b)])
        served.install([.init(name: "a.flags", rules: a)])
        let woken = served.waitForChange(from: first, notices: 0, timeout: 5)
        #expect(woken.generation > first)
        #expect(served.snapshot.files[0].generation == woken.generation)
        // The same text again is no change.
        served.install([.init(name: "a.flags", rules: a)])
        #expect(served.snapshot.generation == woken.generation)
        // A relayed file keeps its upstream's generation when newer than its own.
        served.install([.init(name: "a.flags", rules: b, generation: woken.generation + 1_000_000_000)])
        #expect(served.snapshot.files[0].generation == woken.generation + 1_000_000_000)
        // A new text whose upstream generation is older (another clock) still comes after.
        served.install([.init(name: "a.flags", rules: a, generation: 5)])
        #expect(served.snapshot.files[0].generation == woken.generation + 1_000_000_001)
    }

    /// A subscriber that connected during B, holding B, is sent A when A comes back, however
    /// busy the hub: it is compared by generation. Each round races the revert with the
    /// hub's thread.
    @Test func aSubscriberHoldingTheRevertedTextGetsTheRevert() throws {
        let a = try RuleSet(source: "flag a = false\n", name: "a.flags")
        let b = try RuleSet(source: "flag a = true\n", name: "a.flags")
        for round in 0..<100 {
            let service = OFREPService()
            service.install([.init(name: "a.flags", rules: a)])
            let streams = EventHub(served: service.served)
            defer { streams.stop() }
            let first = try Self.socketPair()
            defer { close(first[1]) }
            #expect(streams.subscribe(first[0], lastEventID: nil, file: "a.flags"))
            service.install([.init(name: "a.flags", rules: b)])
            let held = service.servedFiles[0]
            let second = try Self.socketPair()
            defer { close(second[1]) }
            #expect(
                streams.subscribe(second[0], lastEventID: nil, file: "a.flags", holding: held.etag, heldGeneration: held.generation))
            service.install([.init(name: "a.flags", rules: a)])
            let text = EventStreamReading.receive(second[1], seconds: 10) { $0.contains(#""rules": "flag a = false\n""#) }
            let reached = text.contains(#""rules": "flag a = false\n""#)
            #expect(reached, "round \(round): \(text)")
            if !reached { break }
        }
    }

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

    /// A store never puts in force a text older than the one it holds: not an event that
    /// came late, not a fetch a cache answered with an older text; a newer one it takes.
    @Test func aStoreNeverTakesAnOlderGeneration() async throws {
        struct Served: Sendable {
            var text: String
            var generation: Int
        }
        let file = Locked(Served(text: "value v: int = 3\n", generation: 30))
        // Its stream sends a text of an older generation (a late event), then ends.
        let late = PushProtocol.Event.rulesChanged(file: "app.flags", etag: "\"late\"", generation: 20, rules: "value v: int = 2\n")
        let server = try TestHTTPServer { request in
            if request.path.hasPrefix("/events") {
                return TestHTTPServer.Response(
                    status: 200, headers: ["Content-Type": "text/event-stream", "X-Flags-Rules": "current"], body: Array(late.text.utf8))
            }
            let served = file.withLock { $0 }
            return TestHTTPServer.Response(
                status: 200,
                headers: [
                    "ETag": "\"\(served.generation)\"", "X-Flags-Generation": String(served.generation),
                    "X-Flags-Events": "/events?rules=app.flags",
                ], body: Array(served.text.utf8))
        }
        let events = Locked<[StoreEvent]>([])
        let store = FlagStore(source: .url(server.url), refresh: .seconds(600))
        store.onEvent = { event in events.withLock { $0.append(event) } }
        store.start()
        defer { store.stop() }
        _ = try await store.ready(timeout: .seconds(30))
        func value() -> Value? { store.rules?.evaluate("v", in: [:]).value }
        #expect(value() == .int(3) && store.rulesGeneration == 30)
        // The late event is ignored, and said so.
        let ignoredLate = await Self.until {
            events.withLock { $0.contains { if case .olderRulesIgnored(20, 30) = $0 { true } else { false } } }
        }
        #expect(ignoredLate)
        #expect(value() == .int(3))
        // A cache still holding an older text.
        file.withLock { $0 = Served(text: "value v: int = 1\n", generation: 10) }
        await store.refreshNow()
        #expect(value() == .int(3))
        #expect(events.withLock { $0.contains { if case .olderRulesIgnored(10, 30) = $0 { true } else { false } } })
        // A newer one.
        file.withLock { $0 = Served(text: "value v: int = 4\n", generation: 40) }
        await store.refreshNow()
        #expect(value() == .int(4) && store.rulesGeneration == 40)
    }

    /// Texts that arrive in quick succession are put in force in the order they came, and
    /// the last one stays: each was once handled by a task of its own, so an earlier text
    /// could land after a later one and stay in force.
    @Test func textsPushedInQuickSuccessionLandInOrder() async throws {
        let count = 60
        var stream = ""
        for n in 2...count {
            stream +=
                PushProtocol.Event.rulesChanged(file: "app.flags", etag: "\"g\(n)\"", generation: n, rules: "value v: int = \(n)\n").text
        }
        let body = stream
        let server = try TestHTTPServer { request in
            if request.path.hasPrefix("/events") {
                return TestHTTPServer.Response(
                    status: 200, headers: ["Content-Type": "text/event-stream", "X-Flags-Rules": "current"], body: Array(body.utf8))
            }
            return TestHTTPServer.Response(
                status: 200, headers: ["ETag": "\"g1\"", "X-Flags-Generation": "1", "X-Flags-Events": "/events?rules=app.flags"],
                body: Array("value v: int = 1\n".utf8))
        }
        let loaded = Locked<[Int]>([])
        let store = FlagStore(source: .url(server.url), refresh: .seconds(600))
        store.onEvent = { event in
            if case .rulesLoaded(_, _, let etag?) = event, let n = Int(etag.filter(\.isNumber)) { loaded.withLock { $0.append(n) } }
        }
        store.start()
        defer { store.stop() }
        _ = try await store.ready(timeout: .seconds(30))
        #expect(await Self.until { store.rulesGeneration == count })
        let order = loaded.withLock { $0 }
        #expect(order == order.sorted() && Set(order).count == order.count, "texts put in force in the order \(order)")
        #expect(store.rules?.evaluate("v", in: [:]).value == .int(count))
    }

    /// After a revert (A, then B, then A again) a store that held A through it is told that
    /// A is in force under the newest generation, by its stream's head or by a `304`: a
    /// cache still holding B (whose generation is newer than the A it came with) is then
    /// not taken.
    @Test func aStoreHoldingARevertedTextTakesItsNewGeneration() async throws {
        enum Answer: Sendable { case text(String, etag: String, generation: Int), notModified(generation: Int) }
        let answer = Locked(Answer.text("value v: int = 1\n", etag: "\"a\"", generation: 10))
        let head = Locked("")
        let server = try TestHTTPServer { request in
            if request.path.hasPrefix("/events") {
                return TestHTTPServer.Response(
                    status: 200, headers: ["Content-Type": "text/event-stream", "X-Flags-Rules": "current"],
                    body: Array(head.withLock { $0 }.utf8))
            }
            switch answer.withLock({ $0 }) {
            case .text(let text, let etag, let generation):
                return TestHTTPServer.Response(
                    status: 200,
                    headers: ["ETag": etag, "X-Flags-Generation": String(generation), "X-Flags-Events": "/events?rules=app.flags"],
                    body: Array(text.utf8))
            case .notModified(let generation):
                return TestHTTPServer.Response(
                    status: 304, headers: ["ETag": "\"a\"", "X-Flags-Generation": String(generation)], body: [])
            }
        }
        let events = Locked<[StoreEvent]>([])
        let store = FlagStore(source: .url(server.url), refresh: .seconds(600))
        store.onEvent = { event in events.withLock { $0.append(event) } }
        func value() -> Value? { store.rules?.evaluate("v", in: [:]).value }
        func ignored(_ generation: Int, _ holding: Int) -> Bool {
            events.withLock { $0.contains { if case .olderRulesIgnored(generation, holding) = $0 { true } else { false } } }
        }
        // The stream's head: A (the text held) is in force under generation 30.
        head.withLock { $0 = PushProtocol.Event.rulesAccepted(file: "app.flags", etag: "\"a\"", generation: 30).text }
        store.start()
        defer { store.stop() }
        _ = try await store.ready(timeout: .seconds(30))
        #expect(await Self.until { store.rulesGeneration == 30 })
        #expect(value() == .int(1))
        // A cache answers with B, of generation 20: older than the A held.
        answer.withLock { $0 = .text("value v: int = 2\n", etag: "\"b\"", generation: 20) }
        await store.refreshNow()
        #expect(value() == .int(1) && ignored(20, 30))
        // A 304 for A names generation 50; B of 40 is then older too.
        answer.withLock { $0 = .notModified(generation: 50) }
        await store.refreshNow()
        answer.withLock { $0 = .text("value v: int = 2\n", etag: "\"b\"", generation: 40) }
        await store.refreshNow()
        #expect(value() == .int(1) && ignored(40, 50))
        #expect(store.rulesGeneration == 50)
    }

    /// Waits (up to 30 s) for `condition`, as a task.
    static func until(_ condition: () -> Bool) async -> Bool {
        let start = Date()
        while Date().timeIntervalSince(start) < 30 {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }
}

/// Reads what a socket receives until a condition holds.
enum EventStreamReading {
    static func receive(_ fd: Int32, seconds: Double = 10, until done: (String) -> Bool) -> String {
        var received = [UInt8]()
        let deadline = Date().addingTimeInterval(seconds)
        while !done(String(decoding: received, as: UTF8.self)), Date() < deadline {
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 100) > 0 else { continue }
            var bytes = [UInt8](repeating: 0, count: 65_536)
            let n = read(fd, &bytes, bytes.count)
            if n <= 0 { break }
            received += bytes[..<n]
        }
        return String(decoding: received, as: UTF8.self)
    }
}
