import Foundation
import Testing

@testable import FlagRules
@testable import FlagRulesServer

/// Sequences of store operations that the happy path hides: each test pins one.
@Suite(.timeLimit(.minutes(1))) struct StoreSequenceTests {
    @Test func aSubscriptionIsEvaluatedUnderItsOwnScopeNotTheUpdatersScope() async throws {
        let store = FlagStore(try RuleSet(source: "flag darkMode = false\nvalue generation: int = 1"))
        var watched = store.changes(of: "darkMode").makeAsyncIterator()
        #expect(await watched.next()?.reason == .static)
        // Another task, inside a scope that overrides darkMode, puts new rules in force.
        try await Task {
            try withFlagOverrides(["darkMode": true]) {
                #expect(store.isEnabled("darkMode"))
                try store.update(source: "flag darkMode = false { enabled when plan == \"pro\" }\nvalue generation: int = 2")
            }
        }.value
        store.baseContext = ["plan": "pro"]
        // The subscriber sees the rules' answers, never the other task's override.
        let next = await watched.next()
        #expect(next?.reason != .override)
        #expect(next?.value == .bool(true) && next?.reason == .targetingMatch)

        // A subscription made inside a scope keeps that scope for its changes.
        let scoped = withFlagOverrides(["generation": 99]) { store.changes(of: "generation") }
        var inScope = scoped.makeAsyncIterator()
        #expect(await inScope.next()?.value == .int(99))
        // Under its scope the value stays 99 whatever the rules say; the change it sees is
        // one only its scope makes: the override no longer fits the declaration's type.
        store.localOverrides = ["generation": 5]
        try store.update(source: "flag darkMode = true\nvalue generation: string = \"three\"")
        let last = await inScope.next()
        #expect(last?.errorCode == .typeMismatch && last?.value == .string("three"))
    }

    @Test func anEmptyOrDeclarationlessTextNeverReplacesRules() async throws {
        let store = FlagStore(try RuleSet(source: version(1)))
        for text in ["", "   \n\n", "# only a comment\n", "context { plan: string }\n"] {
            #expect(throws: RuleSetError.self) { try store.update(source: text) }
            #expect(store.value("generation", default: 0) == 1)
        }
        #expect(store.lastError?.errors.first?.code == "no-declarations")

        // An emptied watched file is a failed fetch: the rules and the cache stay.
        let (dir, file) = try rulesFile(version(1))
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = EventLog()
        let watched = FlagStore(source: .file(file), refresh: .seconds(3_600), cacheDirectory: dir.appendingPathComponent("cache"))
        watched.onEvent = log.record
        await watched.refreshNow()
        #expect(watched.value("generation", default: 0) == 1)
        try Data().write(to: file)
        await watched.refreshNow()
        #expect(watched.value("generation", default: 0) == 1)
        #expect(log.lines.contains { $0.contains("is empty: an empty file or body never replaces rules") })
        let cached = try #require(RulesCache(directory: dir.appendingPathComponent("cache"), source: .file(file)).read())
        #expect(try cached.get().rules == version(1))
        // Written whole again (with the same stamp or not), it is read.
        try version(2).write(to: file, atomically: false, encoding: .utf8)
        await watched.refreshNow()
        #expect(watched.value("generation", default: 0) == 2)
    }

    @Test func anEmptyBodyIsAFailedFetchAndIsAskedForAgain() async throws {
        let script = LiveStoreHTTPTests.Script()
        let server = try LiveStoreHTTPTests.server(script)
        let log = EventLog()
        let store = FlagStore(source: .url(server.url), refresh: .seconds(3_600))
        store.onEvent = log.record
        await store.refreshNow()
        #expect(store.value("generation", default: 0) == 1)
        script.set(TestHTTPServer.Response(status: 200, headers: ["ETag": "\"empty\""], body: []))
        await store.refreshNow()
        #expect(store.value("generation", default: 0) == 1)
        #expect(log.lines.contains { $0.contains("is empty") })
        script.set(.ok(version(2), etag: "\"v2\""))
        await store.refreshNow()
        // The empty body's ETag was not kept: the next request did not send it.
        #expect(server.requests.last?.headers["if-none-match"] == "\"v1\"")
        #expect(store.value("generation", default: 0) == 2)
    }

    @Test func rulesThatDropAnExpectedKeyAreRejectedUnlessAllowed() throws {
        let store = FlagStore(try RuleSet(source: version(1)))
        store.expectedKeys = [FlagKey<Bool>(flag: "darkMode").erased, FlagKey(value: "generation", default: 0).erased]
        let log = EventLog()
        store.onEvent = log.record
        #expect(throws: RuleSetError.self) { try store.update(source: "value generation: int = 2") }
        #expect(store.isEnabled("darkMode", in: ["plan": "pro"]) && store.value("generation", default: 0) == 1)
        #expect(log.lines.contains { $0.contains("the rules drop 'darkMode', which the app reads") })
        store.allowsRemovingExpectedKeys = true
        try store.update(source: "value generation: int = 2")
        #expect(store.value("generation", default: 0) == 2)
    }

    @Test func identicalContentIsNotLoadedAgain() async throws {
        let (dir, file) = try rulesFile(version(1))
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = EventLog()
        let store = FlagStore(source: .file(file), refresh: .seconds(3_600))
        store.onEvent = log.record
        await store.refreshNow()
        let first = try #require(store.rules)
        let handle = store.handle("darkMode")
        for i in 0..<4 {
            // touch: a new modification time, the same bytes (rewritten by a rename, too).
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(Double(i + 1))], ofItemAtPath: file.path)
            await store.refreshNow()
            try version(1).write(to: file, atomically: true, encoding: .utf8)
            await store.refreshNow()
        }
        #expect(log.lines.filter { $0.hasPrefix("rules loaded") }.count == 1)
        #expect(store.rules?.loaded === first.loaded)
        #expect(handle == store.handle("darkMode"))  // handles stay good

        // A server without validators, polled: one load for one content.
        let server = try TestHTTPServer { _ in .ok(version(7)) }
        let polled = FlagStore(source: .url(server.url), refresh: .seconds(3_600))
        let polledLog = EventLog()
        polled.onEvent = polledLog.record
        for _ in 0..<4 { await polled.refreshNow() }
        #expect(server.requests.count == 4)
        #expect(polledLog.lines.filter { $0.hasPrefix("rules loaded") }.count == 1)

        // The same broken text is reported once, not at every look.
        try broken.write(to: file, atomically: true, encoding: .utf8)
        for _ in 0..<3 {
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(60)], ofItemAtPath: file.path)
            await store.refreshNow()
        }
        #expect(log.lines.filter { $0.hasPrefix("rules from the source rejected") }.count == 1)
        // update(source:) with the text in force changes nothing.
        try store.update(source: version(1))
        #expect(log.lines.filter { $0.hasPrefix("rules loaded") }.count == 1)
    }

    @Test func nextLaunchWithoutACacheDirectorySaysItSavedNothing() async throws {
        let (dir, file) = try rulesFile(version(1))
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = EventLog()
        let store = FlagStore(source: .file(file), refresh: .seconds(3_600), apply: .nextLaunch)
        store.onEvent = log.record
        await store.refreshNow()
        #expect(store.value("generation", default: 0) == 1)  // the first rules go in force
        try version(2).write(to: file, atomically: true, encoding: .utf8)
        await store.refreshNow()
        #expect(store.value("generation", default: 0) == 1)
        #expect(!log.lines.contains { $0.hasPrefix("rules saved for the next launch") })
        #expect(log.lines.contains { $0.contains("were not saved: the store has no cache directory") })
    }

    @Test func stopCancelsTheFetchInFlightAndNothingItBringsGoesInForce() async throws {
        let received = Locked(0)
        let server = try TestHTTPServer { _ in
            received.withLock { $0 += 1 }
            return TestHTTPServer.Response(status: 200, body: Array(version(1).utf8), delay: 0.5)
        }
        let log = EventLog()
        let store = FlagStore(source: .url(server.url), refresh: .seconds(3_600), timeout: .seconds(5))
        store.onEvent = log.record
        store.start()
        #expect(await eventually { received.withLock { $0 } == 1 })
        store.stop()
        // A manual look begun before a stop is dropped too.
        let look = Task { await store.refreshNow() }
        #expect(await eventually { received.withLock { $0 } == 2 })
        store.stop()
        await look.value
        try await Task.sleep(for: .milliseconds(700))
        #expect(store.rules == nil)
        #expect(!log.lines.contains { $0.hasPrefix("rules loaded") })

        // stop(); start() runs one poller: each look asks once.
        store.start()
        store.stop()
        store.start()
        #expect(await eventually { store.rules != nil })
        try await Task.sleep(for: .milliseconds(100))
        #expect(log.lines.filter { $0.hasPrefix("rules loaded") }.count == 1)
        store.stop()
    }

    @Test func aRestartNeverPutsOlderCachedRulesOverNewerOnes() async throws {
        let (dir, file) = try rulesFile(version(1))
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = FlagStore(source: .file(file), refresh: .seconds(3_600), cacheDirectory: dir.appendingPathComponent("cache"))
        store.start()
        #expect(await eventually { store.value("generation", default: 0) == 1 })
        store.stop()
        try store.update(source: version(3))  // newer than the cache
        store.start()
        try await Task.sleep(for: .milliseconds(100))
        #expect(store.value("generation", default: 0) == 3)
        store.stop()
    }

    @Test func anyPositiveMaximumSizeIsAccepted() async throws {
        let (dir, file) = try rulesFile(version(1))
        defer { try? FileManager.default.removeItem(at: dir) }
        for size in [Int.max, 1 << 40, 4_096] {
            let store = FlagStore(source: .file(file), maximumSize: size)
            await store.refreshNow()
            #expect(store.value("generation", default: 0) == 1)
        }
        #expect(FlagStore(source: .file(file), maximumSize: -5).maximumSize == 1)
    }

    @Test func aLastModifiedInTheSecondOfTheResponseIsNotAValidator() async throws {
        #expect(Validators.strongLastModified("Wed, 25 Nov 2026 04:00:00 GMT", date: "Wed, 25 Nov 2026 04:00:00 GMT") == nil)
        #expect(Validators.strongLastModified("Wed, 25 Nov 2026 04:00:00 GMT", date: "Wed, 25 Nov 2026 04:00:00 GMT") == nil)
        #expect(Validators.strongLastModified("Wed, 25 Nov 2026 03:59:59 GMT", date: "Wed, 25 Nov 2026 04:00:00 GMT") != nil)
        #expect(Validators.strongLastModified("Wednesday, 25-Nov-26 03:00:00 GMT", date: "Wed Nov 25 04:00:00 2026") != nil)
        #expect(Validators.strongLastModified("Wed, 25 Nov 2026 03:00:00 GMT", date: nil) == nil)
        #expect(Validators.strongLastModified("yesterday", date: "Wed, 25 Nov 2026 04:00:00 GMT") == nil)

        // A static server (as python's http.server): Last-Modified at one-second
        // resolution, 304 for an If-Modified-Since not older than it.
        let second = "Wed, 25 Nov 2026 04:00:00 GMT"
        let body = Locked(version(30))
        let server = try TestHTTPServer { request in
            if request.headers["if-modified-since"] == second { return TestHTTPServer.Response(status: 304) }
            return TestHTTPServer.Response(
                status: 200, headers: ["Last-Modified": second, "Date": second], body: Array(body.withLock { $0 }.utf8))
        }
        let store = FlagStore(source: .url(server.url), refresh: .seconds(3_600))
        await store.refreshNow()
        #expect(store.value("generation", default: 0) == 30)
        body.withLock { $0 = version(50) }  // edited within the same second
        await store.refreshNow()
        #expect(store.value("generation", default: 0) == 50)
    }

    @Test func aRejectionBeforeAnyRulesIsSeenBySubscribers() async throws {
        let store = FlagStore()
        var watched = store.changes(of: "darkMode").makeAsyncIterator()
        #expect(await watched.next()?.errorCode == .general)
        #expect(throws: RuleSetError.self) { try store.update(source: broken, name: "app.flags") }
        let next = await watched.next()
        #expect(next?.errorCode == .parseError)
    }

    @Test func eventsSayWhereAndWhenInWords() throws {
        let store = FlagStore()
        let log = EventLog()
        store.onEvent = log.record
        _ = try? store.update(source: "flag a = true\nflag b = tru", name: "app.flags")
        #expect(log.lines.first?.hasPrefix("rules from the update rejected (1 error): app.flags:2:10: ") == true, "\(log.lines)")
        let failed = StoreEvent.fetchFailed(reason: "HTTP 500", nextAttempt: .milliseconds(197.34214006069192))
        #expect(failed.description == "fetch failed: HTTP 500; next attempt in 197 ms")
        #expect(Duration.seconds(1.5).readable == "1.5 s" && Duration.seconds(600).readable == "10 min")
        #expect(Duration.seconds(150).readable == "2 min 30 s" && Duration.seconds(12).readable == "12 s")
    }

    @Test func urlSourcesDifferingInHeadersHaveTheirOwnCache() throws {
        let dir = URL(fileURLWithPath: "/tmp/cache")
        let url = URL(string: "https://cdn.example.com/app.flags")!
        let a = RulesCache(directory: dir, source: .url(url, headers: ["X-Audience": "beta"]))
        let b = RulesCache(directory: dir, source: .url(url, headers: ["X-Audience": "public"]))
        let c = RulesCache(directory: dir, source: .url(url, headers: ["x-audience": "beta"]))
        #expect(a.file != b.file && a.file == c.file)
        #expect(a.file != RulesCache(directory: dir, source: .url(url)).file)
    }

    @Test func readyEndsWhenItsTaskIsCancelled() async throws {
        let store = FlagStore()
        let started = Date()
        let wait = Task { try await store.ready(timeout: .seconds(60)) }
        try await Task.sleep(for: .milliseconds(50))
        wait.cancel()
        let result = await wait.result
        #expect(Date().timeIntervalSince(started) < 30)
        #expect(throws: FlagStoreError.self) { try result.get() }
        if case .failure(let error as FlagStoreError) = result { #expect(error.message.contains("cancelled")) }
    }

    @Test(.timeLimit(.minutes(1))) func whatIsReplacedIsReleasedOutsideTheLocks() throws {
        // A capture whose deinit reads the store: released under a lock, it would deadlock.
        final class Reader: Sendable {
            weak let store: FlagStore?
            let read = Locked(false)
            init(_ store: FlagStore) { self.store = store }
            deinit {
                let on = store?.isEnabled("darkMode", in: ["plan": "pro"]) ?? false
                read.withLock { $0 = on }
            }
        }
        let store = FlagStore(try RuleSet(source: version(1)))
        let flag = Locked(false)
        do {
            let reader = Reader(store)
            store.onEvaluation = { [reader] _ in _ = reader }
            _ = store.isEnabled("darkMode")
        }
        store.onEvaluation = { _ in flag.withLock { $0 = true } }
        try store.update(source: version(2))
        #expect(store.value("generation", default: 0) == 2)
        #expect(flag.withLock { $0 })
    }

    @Test func aReleasedStoresRulesDoNotOutliveItInAThreadsCopy() throws {
        weak var loaded: RuleSet.Loaded?
        do {
            let store = FlagStore(try RuleSet(source: version(1)), baseContext: ["userId": "u-1"])
            loaded = store.rules?.loaded
            #expect(store.isEnabled("darkMode", in: ["plan": "pro"]))  // this thread now has a copy
            #expect(loaded != nil)
        }
        // This thread reads nothing else, yet the rules are gone with the store.
        #expect(loaded == nil)
    }

    @Test func theDebugModelListsOneSnapshotWithoutExposuresAndSavesTheLastChange() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = FlagStore(try RuleSet(source: version(1)))
        let exposures = Locked(0)
        store.onEvaluation = { _ in exposures.withLock { $0 += 1 } }
        let storage = FileOverrideStorage(url: dir.appendingPathComponent("overrides.json"))
        let debug = FlagDebugModel(store: store, storage: storage)
        #expect(debug.entries().count == 2)
        #expect(exposures.withLock { $0 } == 0)
        await withTaskGroup(of: Void.self) { group in
            for i in 0..<40 {
                group.addTask { try? debug.setOverride("generation", to: .int(i)) }
            }
        }
        #expect(try storage.load() == store.localOverrides)
    }
}
