import Foundation
import Testing

@testable import FlagRules
@testable import FlagRulesServer

/// Everything a store reported, for the tests to read.
final class EventLog: Sendable {
    private let events = Locked<[StoreEvent]>([])

    func record(_ event: StoreEvent) { events.withLock { $0.append(event) } }
    var all: [StoreEvent] { events.withLock { $0 } }
    var lines: [String] { all.map(\.description) }

    func contains(_ predicate: (StoreEvent) -> Bool) -> Bool { all.contains(where: predicate) }
}

/// Waits until `condition` holds, looking every 5 ms, `seconds` worth of looks; whether it
/// did. Counted in looks, not wall time, so that a test starved by others running beside it
/// (their blocking calls can occupy every thread of the pool a store polls on) still gives
/// the store as many chances; two minutes is the most it waits.
func eventually(_ seconds: Double = 5, _ condition: () -> Bool) async -> Bool {
    let ceiling = Date().addingTimeInterval(120)
    for _ in 0..<Int(seconds / 0.005) where Date() < ceiling {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}

func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("flagrules-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// A new temporary directory holding `app.flags` with `text`: the directory (to remove)
/// and the file.
func rulesFile(_ text: String) throws -> (directory: URL, file: URL) {
    let dir = try temporaryDirectory()
    let file = dir.appendingPathComponent("app.flags")
    try text.write(to: file, atomically: true, encoding: .utf8)
    return (dir, file)
}

/// A rules file whose `generation` value says which version is in force.
func version(_ n: Int) -> String {
    """
    value generation: int = \(n)
    flag darkMode { enabled when plan == "pro" }
    """
}

let broken = "value generation: int = oops"

@Suite struct LiveStoreFileTests {
    @Test func aWatchedFileIsEditedReplacedAtomicallyAndDeleted() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("app.flags")
        try version(1).write(to: file, atomically: false, encoding: .utf8)
        let log = EventLog()
        let store = FlagStore(source: .file(file), refresh: .milliseconds(10))
        store.onEvent = log.record
        store.start()
        defer { store.stop() }
        #expect(try await store.ready(timeout: .seconds(30)).value("generation", in: [:], default: 0) == 1)
        #expect(log.contains { if case .rulesLoaded(.source, 2, nil) = $0 { return true } else { return false } })

        // Edited in place (a longer text: the size changes even within one clock tick).
        try (version(2) + "\n# edited\n").write(to: file, atomically: false, encoding: .utf8)
        #expect(await eventually { store.value("generation", default: 0) == 2 })

        // Replaced by a rename: a new file with the same size.
        try version(3).write(to: file, atomically: true, encoding: .utf8)
        #expect(await eventually { store.value("generation", default: 0) == 3 })

        // A broken edit is reported and never replaces good rules.
        try broken.write(to: file, atomically: true, encoding: .utf8)
        #expect(await eventually { log.contains { if case .updateRejected(.source, _) = $0 { return true } else { return false } } })
        #expect(store.value("generation", default: 0) == 3)
        #expect(store.lastError?.errors.isEmpty == false)

        // Deleted: the rules in force stay, and the failure is reported with the next try.
        try FileManager.default.removeItem(at: file)
        #expect(
            await eventually {
                log.contains { if case .fetchFailed(let reason, _) = $0 { return reason.contains("no such file") } else { return false } }
            })
        #expect(store.value("generation", default: 0) == 3)

        // Back again.
        try version(4).write(to: file, atomically: true, encoding: .utf8)
        #expect(await eventually(15) { store.value("generation", default: 0) == 4 })
    }

    @Test func aFileOverTheSizeLimitIsAFailureNotATruncation() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("app.flags")
        try (version(1) + String(repeating: "\n", count: 100)).write(to: file, atomically: true, encoding: .utf8)
        let log = EventLog()
        let store = FlagStore(source: .file(file), refresh: .milliseconds(10), maximumSize: 64)
        store.onEvent = log.record
        store.start()
        defer { store.stop() }
        #expect(await eventually { log.lines.contains { $0.contains("the limit is 64") } })
        do {
            _ = try await store.ready(timeout: .milliseconds(50))
            Issue.record("a file over the limit was loaded")
        } catch {
            #expect(error.message.contains("no rules within"))
            #expect(error.message.contains("the limit is 64"))
        }
    }

    @Test func retriesBackOffWithJitterUpToACap() {
        let refresh = Duration.seconds(60)
        #expect(FlagStore.retryDelay(after: 1, refresh: refresh, jitter: 1) == .seconds(60))
        #expect(FlagStore.retryDelay(after: 1, refresh: refresh, jitter: 0) == .seconds(30))
        #expect(FlagStore.retryDelay(after: 2, refresh: refresh, jitter: 1) == .seconds(120))
        #expect(FlagStore.retryDelay(after: 3, refresh: refresh, jitter: 0.5) == .seconds(180))
        #expect(FlagStore.retryDelay(after: 9, refresh: refresh, jitter: 1) == .seconds(600))
        #expect(FlagStore.retryDelay(after: 1_000, refresh: refresh, jitter: 1) == .seconds(600))
        #expect(FlagStore.retryDelay(after: 5, refresh: .seconds(3_600), jitter: 1) == .seconds(3_600))
        // With no rules in force yet: from a second, doubling up to `refresh`.
        #expect(FlagStore.retryDelay(after: 1, refresh: refresh, jitter: 1, hasRules: false) == .seconds(1))
        #expect(FlagStore.retryDelay(after: 1, refresh: refresh, jitter: 0, hasRules: false) == .milliseconds(500))
        #expect(FlagStore.retryDelay(after: 4, refresh: refresh, jitter: 1, hasRules: false) == .seconds(8))
        #expect(FlagStore.retryDelay(after: 7, refresh: refresh, jitter: 1, hasRules: false) == .seconds(60))
        #expect(FlagStore.retryDelay(after: 1_000, refresh: refresh, jitter: 1, hasRules: false) == .seconds(60))
        #expect(FlagStore.retryDelay(after: 3, refresh: .milliseconds(250), jitter: 1, hasRules: false) == .milliseconds(250))
        // While the source cannot be reached at all: from half a second, at most 2 s, with
        // rules in force (bundled ones, say) or not.
        for hasRules in [true, false] {
            #expect(
                FlagStore.retryDelay(after: 1, refresh: refresh, jitter: 1, hasRules: hasRules, unreachable: true) == .milliseconds(500))
            #expect(FlagStore.retryDelay(after: 2, refresh: refresh, jitter: 1, hasRules: hasRules, unreachable: true) == .seconds(1))
            #expect(FlagStore.retryDelay(after: 1_000, refresh: refresh, jitter: 1, hasRules: hasRules, unreachable: true) == .seconds(2))
            #expect(FlagStore.retryDelay(after: 1_000, refresh: refresh, jitter: 0, hasRules: hasRules, unreachable: true) == .seconds(1))
        }
    }
}

@Suite struct LiveStoreHTTPTests {
    /// A server whose answer the test changes as it goes.
    final class Script: Sendable {
        let response = Locked(TestHTTPServer.Response.ok(version(1), etag: "\"v1\""))
        func set(_ r: TestHTTPServer.Response) { response.withLock { $0 = r } }
    }

    /// Serves the script's response, or `304` when the request carries the ETag it would send.
    static func server(_ script: Script) throws -> TestHTTPServer {
        try TestHTTPServer { request in
            let r = script.response.withLock { $0 }
            if let etag = r.headers["ETag"], request.headers["if-none-match"] == etag {
                return TestHTTPServer.Response(status: 304, headers: ["ETag": etag])
            }
            return r
        }
    }

    @Test func aPolledURLServes200And304AndErrors() async throws {
        let script = Script()
        let server = try Self.server(script)
        let log = EventLog()
        let store = FlagStore(
            source: .url(server.url, headers: ["X-Api-Key": "k-1"]), refresh: .milliseconds(20), timeout: .seconds(2))
        store.onEvent = log.record
        store.start()
        defer { store.stop() }
        #expect(try await store.ready(timeout: .seconds(30)).value("generation", in: [:], default: 0) == 1)
        #expect(log.contains { if case .rulesLoaded(.source, _, "\"v1\"") = $0 { return true } else { return false } })
        #expect(server.requests.first?.headers["x-api-key"] == "k-1")
        #expect(server.requests.first?.headers["if-none-match"] == nil)

        // Unchanged: from the first request that sends the ETag on, every request sends it and
        // gets 304; nothing is reloaded. (On a loaded machine a first request can time out,
        // and the one after it has no ETag to send yet either.)
        let withTag = { server.requests.firstIndex { $0.headers["if-none-match"] != nil } }
        #expect(await eventually { (withTag()).map { server.requests.count - $0 >= 3 } ?? false })
        let first = try #require(withTag())
        #expect(server.requests[first...].allSatisfy { $0.headers["if-none-match"] == "\"v1\"" })
        #expect(log.all.filter { if case .rulesLoaded = $0 { return true } else { return false } }.count == 1)

        // A new version.
        script.set(.ok(version(2), etag: "\"v2\""))
        #expect(await eventually { store.value("generation", default: 0) == 2 })

        // A server error keeps the rules in force and is reported with the next attempt.
        script.set(TestHTTPServer.Response(status: 500))
        #expect(await eventually { log.lines.contains { $0.contains("HTTP 500") && $0.contains("next attempt in") } })
        #expect(store.value("generation", default: 0) == 2)

        // A broken text is rejected with its diagnostics.
        script.set(.ok(broken, etag: "\"bad\""))
        #expect(
            await eventually {
                log.contains { if case .updateRejected(.source, let e) = $0 { return !e.errors.isEmpty } else { return false } }
            })
        #expect(store.value("generation", default: 0) == 2)

        script.set(.ok(version(3), etag: "\"v3\""))
        #expect(await eventually(10) { store.value("generation", default: 0) == 3 })
    }

    @Test func aSlowResponseAndAnOversizedBodyAreFailures() async throws {
        let script = Script()
        script.set(TestHTTPServer.Response(status: 200, body: Array(version(1).utf8), delay: 1.5))
        let server = try Self.server(script)
        let log = EventLog()
        let store = FlagStore(source: .url(server.url), refresh: .milliseconds(20), timeout: .milliseconds(300), maximumSize: 200)
        store.onEvent = log.record
        let started = Date()
        store.start()
        defer { store.stop() }
        #expect(await eventually { log.lines.contains { $0.contains("no complete response within 300 ms") } })
        #expect(Date().timeIntervalSince(started) >= 0.25)
        #expect(store.rules == nil)
        #expect(store.evaluate("darkMode", default: true).reason == .error)

        script.set(.ok(version(1) + "\n" + String(repeating: "# padding\n", count: 100)))
        #expect(await eventually(10) { log.lines.contains { $0.contains("over 200 bytes") } })
        #expect(store.rules == nil)
    }

    @Test func aServerThatGoesAwayAndComesBack() async throws {
        let script = Script()
        let server = try Self.server(script)
        let log = EventLog()
        let store = FlagStore(source: .url(server.url), refresh: .milliseconds(20), timeout: .milliseconds(500))
        store.onEvent = log.record
        store.start()
        defer { store.stop() }
        _ = try await store.ready(timeout: .seconds(30))
        server.stop()
        #expect(await eventually { log.contains { if case .fetchFailed = $0 { return true } else { return false } } })
        #expect(store.value("generation", default: 0) == 1)
        script.set(.ok(version(2), etag: "\"v2\""))
        try server.start()
        #expect(await eventually(15) { store.value("generation", default: 0) == 2 })
    }

    @Test func theCacheIsWrittenReusedOfflineAndIgnoredWhenCorrupt() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let script = Script()
        let server = try Self.server(script)
        do {
            let store = FlagStore(source: .url(server.url), refresh: .milliseconds(20), cacheDirectory: dir)
            store.start()
            _ = try await store.ready(timeout: .seconds(30))
            store.stop()
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path)
        #expect(files.count == 1)
        let cacheFile = dir.appendingPathComponent(files[0])
        let cached = try String(contentsOf: cacheFile, encoding: .utf8)
        #expect(cached.contains("\\\"v1\\\"") && cached.contains("fetchedAt") && cached.contains("generation"))

        // Offline: the server is gone; a new store starts from the cache.
        server.stop()
        let log = EventLog()
        let offline = FlagStore(source: .url(server.url), refresh: .milliseconds(20), cacheDirectory: dir)
        offline.onEvent = log.record
        let rules = try await offline.ready(timeout: .seconds(30))
        offline.stop()
        #expect(rules.value("generation", in: [:], default: 0) == 1)
        #expect(log.contains { if case .rulesLoaded(.cache, _, "\"v1\"") = $0 { return true } else { return false } })

        // The cache's ETag goes with the first request once the server is back: 304.
        try server.start()
        let before = server.requests.count
        let again = FlagStore(source: .url(server.url), refresh: .milliseconds(20), cacheDirectory: dir)
        again.start()
        #expect(await eventually { server.requests.count > before })
        again.stop()
        #expect(server.requests[before].headers["if-none-match"] == "\"v1\"")

        // Corrupt: ignored with a reason; the store fetches instead.
        try Data("{ not json".utf8).write(to: cacheFile)
        let log2 = EventLog()
        let fresh = FlagStore(source: .url(server.url), refresh: .milliseconds(20), cacheDirectory: dir)
        fresh.onEvent = log2.record
        #expect(try await fresh.ready(timeout: .seconds(30)).value("generation", in: [:], default: 0) == 1)
        fresh.stop()
        #expect(log2.lines.contains { $0.hasPrefix("cache ignored:") && $0.contains("not a rules cache") })
        #expect(log2.contains { if case .rulesLoaded(.source, _, _) = $0 { return true } else { return false } })

        // Cached rules that no longer compile are ignored too.
        let entry = RulesCache.Entry(source: RulesSource.url(server.url).description, fetchedAt: Date(), rules: broken)
        try RulesCache(directory: dir, source: .url(server.url)).write(entry)
        let log3 = EventLog()
        let third = FlagStore(source: .url(server.url), refresh: .milliseconds(20), cacheDirectory: dir)
        third.onEvent = log3.record
        _ = try await third.ready(timeout: .seconds(30))
        third.stop()
        #expect(log3.lines.contains { $0.contains("no longer compile") })
    }

    @Test func aCacheOfAnotherSourceIsIgnored() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = RulesSource.file(dir.appendingPathComponent("a.flags"))
        let cache = RulesCache(directory: dir, source: source)
        try cache.write(RulesCache.Entry(source: "/elsewhere.flags", fetchedAt: Date(), rules: version(1)))
        guard case .failure(let problem)? = cache.read() else {
            Issue.record("a cache of another source was read")
            return
        }
        #expect(problem.reason.contains("/elsewhere.flags"))
    }

    @Test func nextLaunchKeepsFetchedRulesForTheNextStore() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let script = Script()
        let server = try Self.server(script)
        let log = EventLog()
        let first = FlagStore(source: .url(server.url), refresh: .milliseconds(20), cacheDirectory: dir, apply: .nextLaunch)
        first.onEvent = log.record
        first.start()
        // Nothing was in force: the first rules fetched apply at once.
        #expect(try await first.ready(timeout: .seconds(30)).value("generation", in: [:], default: 0) == 1)
        script.set(.ok(version(2), etag: "\"v2\""))
        #expect(
            await eventually { log.contains { if case .rulesSavedForNextLaunch(_, "\"v2\"") = $0 { return true } else { return false } } })
        #expect(first.value("generation", default: 0) == 1)  // unchanged mid-session
        // Once saved, the new version is not fetched again: its ETag goes with the next request.
        let count = server.requests.count
        #expect(await eventually { server.requests.count > count + 1 })
        #expect(server.requests.last?.headers["if-none-match"] == "\"v2\"")
        first.stop()

        // The next launch starts with version 2, from the cache.
        let second = FlagStore(source: .url(server.url), refresh: .milliseconds(20), cacheDirectory: dir, apply: .nextLaunch)
        #expect(try await second.ready(timeout: .seconds(30)).value("generation", in: [:], default: 0) == 2)
        second.stop()
    }
}

@Suite struct LiveStoreObservationTests {
    @Test func beforeAnyRulesEveryAnswerIsTheCallersDefault() async {
        let store = FlagStore()
        #expect(store.isEnabled("darkMode", default: true))
        #expect(store.variant("checkout", default: "control") == "control")
        #expect(store.value("limit", default: 7) == 7)
        #expect(store.value("ratio", default: 0.5) == 0.5)
        #expect(store.value("title", default: "Hi") == "Hi")
        #expect(store.evaluateAll().isEmpty)
        let r = store.evaluate("darkMode", default: .bool(true))
        #expect(r.reason == .error && r.errorCode == .general && r.value == .bool(true))
        let handle = store.handle("darkMode")
        #expect(store.isEnabled(handle, in: store.makeContext(), default: true))
        #expect(store.evaluate(handle, in: store.prepare(["plan": "pro"]), default: .bool(true)).reason == .error)
        // A handle made before the rules loaded finds its declaration by name after.
        _ = try? store.update(source: version(1))
        #expect(store.isEnabled(handle, in: store.prepare(["plan": "pro"])))
        await #expect(throws: Never.self) { _ = try await store.ready(timeout: .milliseconds(1)) }
    }

    @Test func theBaseContextIsMergedUnderEveryCall() throws {
        let store = FlagStore(
            try RuleSet(
                source: """
                    flag internal { enabled when build in ["debug", "alpha"] }
                    variant tier [free, pro] { pro when plan == "pro" }
                    value label: string = "none" { "alpha" when build == "alpha"; "beta" when build == "beta" }
                    """),
            baseContext: ["build": .string(BuildConfiguration.alpha.name), "plan": "pro"])
        #expect(store.isEnabled("internal"))
        #expect(store.isEnabled("internal", in: ["userId": "u-1"]))
        #expect(!store.isEnabled("internal", in: ["build": "release"]))  // the call's key wins
        #expect(store.variant("tier") == "pro")
        #expect(store.variant("tier", in: ["plan": "free"]) == "free")
        #expect(store.value("label", default: "") == "alpha")
        #expect(store.evaluateAll(in: ["build": "beta"])["label"]?.value == "beta")
        #expect(store.isEnabled(store.handle("internal"), in: store.makeContext()))
        #expect(!store.isEnabled(store.handle("internal"), in: store.prepare(["build": "release"])))
        store.baseContext = ["build": "release"]
        #expect(!store.isEnabled("internal"))
        #expect(store.baseContext == ["build": "release"])
    }

    @Test func buildConfigurationIsDerivedAndSettable() {
        #if DEBUG
            #expect(BuildConfiguration.compiled == .debug)
        #else
            #expect(BuildConfiguration.compiled == .release)
        #endif
        let saved = BuildConfiguration.current
        defer { BuildConfiguration.current = saved }
        BuildConfiguration.current = .beta
        #expect(BuildConfiguration.context == ["build": "beta"])
        #expect(BuildConfiguration("staging").description == "staging")
    }

    @Test func updatesYieldTheNewestRuleSetPutInForce() async throws {
        let store = FlagStore()
        let a = store.updates
        let b = store.updates
        try store.update(source: version(1))
        #expect(throws: RuleSetError.self) { try store.update(source: broken) }
        try store.update(source: version(2))
        // Both fell behind: each gets the newest rules, not every one in between.
        var iteratorA = a.makeAsyncIterator()
        #expect(await iteratorA.next()?.value("generation", in: [:], default: 0) == 2)
        try store.update(source: version(3))
        #expect(await iteratorA.next()?.value("generation", in: [:], default: 0) == 3)
        var iteratorB = b.makeAsyncIterator()
        #expect(await iteratorB.next()?.value("generation", in: [:], default: 0) == 3)
    }

    @Test func changesYieldNowAndThenOnlyWhenTheResolutionChanges() async throws {
        let store = FlagStore()
        let changes = store.changes(of: "darkMode", in: ["plan": "pro"])
        var iterator = changes.makeAsyncIterator()
        #expect(await iterator.next()?.reason == .error)  // nothing loaded yet
        try store.update(source: version(1))
        #expect(await iterator.next()?.value == .bool(true))
        try store.update(source: version(2))  // darkMode unchanged: nothing yielded
        try store.update(source: "flag darkMode { enabled when plan == \"team\" }")
        let next = await iterator.next()
        #expect(next?.value == .bool(false) && next?.reason == .default)
        store.baseContext = ["plan": "team"]  // the call's "pro" still wins: nothing
        try store.update(source: "flag darkMode { enabled when plan == \"pro\" and has(userId) }")
        store.baseContext = ["userId": "u-1"]
        let last = await iterator.next()
        #expect(last?.value == .bool(true) && last?.reason == .targetingMatch)
    }

    @Test func theEvaluationHookSeesEveryEntryPointWithItsContext() throws {
        let store = FlagStore(try RuleSet(source: version(1)), baseContext: ["userId": "u-7"])
        let seen = Locked<[String]>([])
        store.onEvaluation = { e in
            seen.withLock {
                $0.append(
                    "\(e.name)=\(e.resolution.value) plan=\(e["plan"]?.stringValue ?? "-") user=\(e.context["userId"]?.stringValue ?? "-")")
            }
        }
        _ = store.isEnabled("darkMode", in: ["plan": "pro"])
        _ = store.value("generation", default: 0)
        _ = store.evaluate("darkMode")
        _ = store.isEnabled(store.handle("darkMode"), in: store.prepare(["plan": "pro"]))
        _ = store.variant("nothing", in: ["plan": "team"])
        #expect(
            seen.withLock { $0 } == [
                "darkMode=true plan=pro user=u-7", "generation=1 plan=- user=u-7", "darkMode=false plan=- user=u-7",
                "darkMode=true plan=pro user=u-7", #"nothing="" plan=team user=u-7"#,
            ])
        seen.withLock { $0 = [] }
        let all = store.evaluateAll(in: ["plan": "pro"])
        #expect(seen.withLock { $0.sorted() } == ["darkMode=true plan=pro user=u-7", "generation=1 plan=pro user=u-7"])
        #expect(seen.withLock { $0.count } == all.count)
        store.onEvaluation = nil
        _ = store.isEnabled("darkMode")
        #expect(seen.withLock { $0.count } == all.count)
    }

    @Test func theHookMayReadTheStoreWhileRulesChange() throws {
        // The hook runs after the borrow of what is in force: it may read the store, and
        // an update between reads releases nothing a caller still holds.
        let store = FlagStore(try RuleSet(source: version(1)))
        let inner = Locked<[Int]>([])
        store.onEvaluation = { e in
            if e.name == "darkMode" { inner.withLock { $0.append(store.value("generation", default: 0)) } }
        }
        for n in 2...20 {
            _ = store.isEnabled("darkMode", in: ["plan": "pro"])
            try store.update(source: version(n))
        }
        #expect(inner.withLock { $0 } == Array(1...19))
    }
}

@Suite struct StoreLifetimeTests {
    /// A store that is started, observed and released goes away: its poller, its
    /// subscribers and its waiters hold it weakly.
    @Test func aReleasedStoreIsFreed() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("app.flags")
        try version(1).write(to: file, atomically: true, encoding: .utf8)
        weak var released: FlagStore?
        do {
            let store = FlagStore(source: .file(file), refresh: .milliseconds(10))
            released = store
            _ = try await store.ready(timeout: .seconds(30))
            let updates = store.updates
            let changes = store.changes(of: "darkMode")
            _ = (updates, changes)
        }
        #expect(await eventually { released == nil })
    }
}
