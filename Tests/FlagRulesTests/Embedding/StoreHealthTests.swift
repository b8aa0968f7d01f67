import Foundation
import Testing

@testable import FlagRules
@testable import FlagRulesServer

/// What a service sees of its store's health: a fix taken at the usual pace after an
/// unusable source, back-off only for outages, the latest problem and the rules' age.
@Suite struct StoreHealthTests {
    static func failures(_ log: EventLog) -> [Duration] {
        log.all.compactMap { if case .fetchFailed(_, let next) = $0 { return next } else { return nil } }
    }

    @Test func anEmptiedOrMissingFileIsLookedAtAgainAtTheUsualPace() async throws {
        let (dir, file) = try rulesFile(version(1))
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = EventLog()
        let store = FlagStore(source: .file(file), refresh: .milliseconds(250))
        store.onEvent = log.record
        await store.refreshNow()
        #expect(store.status.origin == .source && store.status.failuresInARow == 0)
        try Data().write(to: file)
        for _ in 0..<3 { await store.refreshNow() }
        // Reported once, with the next look after `refresh`, however often it is read again.
        #expect(Self.failures(log) == [.milliseconds(250)])
        #expect(store.status.failuresInARow == 3 && store.status.lastProblem?.contains("is empty") == true)
        #expect(store.value("generation", default: 0) == 1)
        try FileManager.default.removeItem(at: file)
        for _ in 0..<3 { await store.refreshNow() }
        #expect(Self.failures(log) == [.milliseconds(250), .milliseconds(250)])
        #expect(store.status.failuresInARow == 6 && store.status.lastProblem?.contains("no such file") == true)
        try version(2).write(to: file, atomically: true, encoding: .utf8)
        await store.refreshNow()
        #expect(store.value("generation", default: 0) == 2 && store.status.failuresInARow == 0)
        // A broken edit is rejected and waits `refresh` too: no back-off.
        try broken.write(to: file, atomically: true, encoding: .utf8)
        await store.refreshNow()
        #expect(store.lastError != nil && store.status.lastProblem?.contains("rejected") == true)
    }

    /// The poller itself: after an emptied file it looks again at the usual pace (never
    /// backing off), so a fix written then is taken at its next look. Counted in the looks
    /// it schedules, not in wall time, which a loaded machine stretches (`flags serve`'s
    /// test times the same path end to end).
    @Test func aFixAfterAnEmptyFileIsTakenAtTheNextLook() async throws {
        let (dir, file) = try rulesFile(version(1))
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = EventLog()
        let store = FlagStore(source: .file(file), refresh: .milliseconds(250))
        store.onEvent = log.record
        store.start()
        defer { store.stop() }
        _ = try await store.ready(timeout: .seconds(30))
        for round in 2...4 {
            try Data().write(to: file)
            #expect(await eventually(30) { Self.failures(log).count == round - 1 })
            try version(round).write(to: file, atomically: true, encoding: .utf8)
            #expect(await eventually(30) { store.value("generation", default: 0) == round })
        }
        #expect(Self.failures(log).allSatisfy { $0 == .milliseconds(250) }, "\(Self.failures(log))")
    }

    @Test func aURLBacksOffForAnOutageButNotForAnEmptyBody() async throws {
        let script = LiveStoreHTTPTests.Script()
        let server = try LiveStoreHTTPTests.server(script)
        let log = EventLog()
        let store = FlagStore(source: .url(server.url), refresh: .seconds(1))
        store.onEvent = log.record
        await store.refreshNow()
        // An error the server answers itself is backed off from.
        script.set(TestHTTPServer.Response(status: 500))
        for _ in 0..<4 { await store.refreshNow() }
        let outage = Self.failures(log)
        #expect(outage.count == 4 && outage[3] >= .seconds(4))
        #expect(store.status.lastProblem?.contains("HTTP 500") == true)
        script.set(.ok(version(2), etag: "\"v2\""))
        await store.refreshNow()
        #expect(store.status.failuresInARow == 0)
        script.set(TestHTTPServer.Response(status: 200, headers: ["ETag": "\"e\""], body: []))
        for _ in 0..<3 { await store.refreshNow() }
        #expect(Self.failures(log).dropFirst(4) == [.seconds(1)])
        // A proxy's 502, 504 or bare 503 (the server behind it is down) is an outage asked
        // again within 2 s, however many in a row.
        for status in [502, 503, 504] {
            script.set(TestHTTPServer.Response(status: status))
            let before = Self.failures(log).count
            for _ in 0..<5 { await store.refreshNow() }
            let waits = Self.failures(log).dropFirst(before)
            #expect(waits.count == 5 && waits.allSatisfy { $0 <= .seconds(2) }, "HTTP \(status): \(waits)")
            script.set(.ok(version(status), etag: "\"v\(status)\""))
            await store.refreshNow()
        }
    }

    @Test func theStatusTellsTheRulesOriginAndAge() async throws {
        let script = LiveStoreHTTPTests.Script()
        let server = try LiveStoreHTTPTests.server(script)
        let cache = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: cache) }
        let fetched = Date(timeIntervalSinceNow: -3_600)
        try RulesCache(directory: cache, source: .url(server.url)).write(
            RulesCache.Entry(source: server.url.absoluteString, etag: "\"v1\"", fetchedAt: fetched, rules: version(1)))
        let store = FlagStore(source: .url(server.url), refresh: .seconds(3_600), cacheDirectory: cache)
        #expect(store.status.origin == nil && store.status.age() == nil)
        #expect(store.status.description == "no rules in force")
        store.start()
        defer { store.stop() }
        // The cache is in force as soon as start() returns, an hour old.
        #expect(store.rules != nil && store.status.origin == .cache)
        let age = try #require(store.status.age())
        #expect(abs(age - 3_600) < 60 && store.status.confirmedAt == nil)
        // A 304 confirms the cached rules: they are current again.
        await store.refreshNow()
        #expect(server.requests.last?.headers["if-none-match"] == "\"v1\"")
        #expect(store.status.origin == .cache && (store.status.age() ?? 3_600) < 60)
        #expect(store.status.description.hasPrefix("rules from the cache, "))
    }
}

/// Rules shipped with the app: the newer of the cache and the bundle at start, the source
/// over both once it answers.
@Suite struct BundledRulesTests {
    static let hourAgo = Date(timeIntervalSinceNow: -3_600)
    static let dayAgo = Date(timeIntervalSinceNow: -86_400)

    /// A store of an unreachable URL (or `url`), with a cache of `version(cached)` fetched at
    /// `cachedAt` (none when nil) and a bundle of `version(bundled)` published at `bundledAt`.
    static func store(url: URL? = nil, cached: (Int, Date)?, bundled: (Int, Date)?) throws -> (FlagStore, URL) {
        let source = RulesSource.url(url ?? URL(string: "http://127.0.0.1:9/app.flags")!)
        let cache = try temporaryDirectory()
        if let (n, date) = cached {
            try RulesCache(directory: cache, source: source).write(
                RulesCache.Entry(source: source.description, etag: "\"v\(n)\"", fetchedAt: date, rules: version(n)))
        }
        let bundle = bundled.map { BundledRules(source: version($0.0), name: "app.flags", publishedAt: $0.1) }
        return (FlagStore(source: source, refresh: .seconds(3_600), cacheDirectory: cache, bundled: bundle), cache)
    }

    @Test func aCacheNewerThanTheBundleWins() throws {
        let (store, cache) = try Self.store(cached: (2, Self.hourAgo), bundled: (1, Self.dayAgo))
        defer { try? FileManager.default.removeItem(at: cache) }
        store.start()
        defer { store.stop() }
        #expect(store.value("generation", default: 0) == 2 && store.status.origin == .cache)
    }

    @Test func aBundleNewerThanTheCacheWins() throws {
        let (store, cache) = try Self.store(cached: (1, Self.dayAgo), bundled: (3, Self.hourAgo))
        defer { try? FileManager.default.removeItem(at: cache) }
        store.start()
        defer { store.stop() }
        #expect(store.value("generation", default: 0) == 3 && store.status.origin == .bundle)
        #expect(store.status.fetchedAt == Self.hourAgo)
    }

    @Test func withNoCacheTheBundleIsInForceAtOnce() throws {
        let (store, cache) = try Self.store(cached: nil, bundled: (1, Self.dayAgo))
        defer { try? FileManager.default.removeItem(at: cache) }
        store.start()
        defer { store.stop() }
        #expect(store.value("generation", default: 0) == 1 && store.status.origin == .bundle)
    }

    @Test func aBrokenBundleIsReportedAndTheCacheKept() throws {
        let source = RulesSource.url(URL(string: "http://127.0.0.1:9/app.flags")!)
        let cache = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: cache) }
        try RulesCache(directory: cache, source: source).write(
            RulesCache.Entry(source: source.description, fetchedAt: Self.dayAgo, rules: version(1)))
        let log = EventLog()
        let store = FlagStore(
            source: source, cacheDirectory: cache, bundled: BundledRules(source: broken, name: "app.flags", publishedAt: Date()))
        store.onEvent = log.record
        store.start()
        defer { store.stop() }
        #expect(store.value("generation", default: 0) == 1)
        #expect(log.contains { if case .updateRejected(.bundle, _) = $0 { return true } else { return false } })
    }

    @Test func theSourceWinsOverBothOnceItAnswers() async throws {
        let script = LiveStoreHTTPTests.Script()
        script.set(.ok(version(5), etag: "\"v5\""))
        let server = try LiveStoreHTTPTests.server(script)
        let (store, cache) = try Self.store(url: server.url, cached: (1, Self.dayAgo), bundled: (3, Self.hourAgo))
        defer { try? FileManager.default.removeItem(at: cache) }
        store.start()
        defer { store.stop() }
        #expect(store.value("generation", default: 0) == 3)
        #expect(try await store.ready().value("generation", in: [:], default: 0) >= 3)
        await store.refreshNow()
        #expect(store.value("generation", default: 0) == 5 && store.status.origin == .source)
        // The bundle was in force, so the first fetch did not send the older cache's ETag.
        #expect(server.requests.first?.headers["if-none-match"] == nil)
    }

    /// The source holding the same rules as a bundle newer than the cache confirms them.
    @Test func aSourceHoldingTheBundlesRulesKeepsThem() async throws {
        let script = LiveStoreHTTPTests.Script()
        script.set(.ok(version(3), etag: "\"v3\""))
        let server = try LiveStoreHTTPTests.server(script)
        let (store, cache) = try Self.store(url: server.url, cached: (1, Self.dayAgo), bundled: (3, Self.hourAgo))
        defer { try? FileManager.default.removeItem(at: cache) }
        store.start()
        defer { store.stop() }
        await store.refreshNow()
        #expect(store.value("generation", default: 0) == 3)
    }

    @Test func aBundleReadFromAFileIsDatedByTheFile() throws {
        let (dir, file) = try rulesFile(version(4))
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.setAttributes([.modificationDate: Self.hourAgo], ofItemAtPath: file.path)
        let bundle = BundledRules(contentsOf: file)
        #expect(abs(bundle.publishedAt.timeIntervalSince(Self.hourAgo)) < 1 && bundle.text == version(4))
        #expect(BundledRules(contentsOf: file, publishedAt: Self.dayAgo).publishedAt == Self.dayAgo)
    }
}
