import Foundation
import Testing

@testable import FlagRules

/// A rules file is taken only once it has stopped changing: a file written in place in two
/// parts is never taken as its first part, by a polling store or by `refreshNow()`, even
/// when that part is valid rules on its own (a cut between declarations).
@Suite struct SettledFileTests {
    static func directory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("settled-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Writes `parts` into `file` in place (truncated first), `gap` apart; the longest gap
    /// there was between two writes (a loaded machine sleeps longer than asked).
    @discardableResult
    static func writeInParts(_ file: URL, _ parts: [String], gap: Duration) async throws -> Duration {
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        try handle.truncate(atOffset: 0)
        var last = ContinuousClock.now
        var longest = Duration.zero
        for (k, part) in parts.enumerated() {
            if k > 0 { try await Task.sleep(for: gap) }
            try handle.write(contentsOf: Data(part.utf8))
            try handle.synchronize()
            longest = max(longest, ContinuousClock.now - last)
            last = .now
        }
        return longest
    }

    @Test func aFileWrittenInTwoPartsIsTakenWhole() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("app.flags")
        try "flag a = true\n".write(to: file, atomically: true, encoding: .utf8)
        // Old enough to be taken at once.
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -60)], ofItemAtPath: file.path)
        let store = FlagStore(source: .file(file), refresh: .milliseconds(20))
        let (loads, loaded) = AsyncStream.makeStream(of: Int.self)
        store.onEvent = { event in
            if case .rulesLoaded(_, let declarations, _) = event { loaded.yield(declarations) }
        }
        store.start()
        defer { store.stop() }
        var counts: [Int] = []
        var gap = Duration.zero
        for await count in loads {
            counts.append(count)
            if counts.count == 1 {
                // The edit: the first part alone is valid rules that lack flag b.
                gap = try await Self.writeInParts(file, ["flag a = false\n", "flag b = true\n"], gap: .milliseconds(400))
            }
            if count == 2 { break }
        }
        // A part written after the settle time is an edit of its own, rightly taken: only a
        // gap shorter than it tests the rule.
        if gap < RulesFetcher.settleTime - .milliseconds(200) {
            #expect(counts == [1, 2], "the store took \(counts) declarations in turn (the parts \(gap) apart)")
        }
        #expect(store.isEnabled("b") && !store.isEnabled("a"))
    }

    @Test func refreshNowWaitsForTheFileToSettle() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("app.flags")
        try "flag a = true\n".write(to: file, atomically: true, encoding: .utf8)
        let store = FlagStore(source: .file(file), refresh: .seconds(60))
        // The first part is written before the look begins (so the look can only find the
        // edit under way, never the text before it); the second follows while it waits.
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data("flag a = false\n".utf8))
        try handle.synchronize()
        let first = ContinuousClock.now
        let writing = Task {
            try await Task.sleep(for: .milliseconds(400))
            try handle.write(contentsOf: Data("flag b = true\n".utf8))
            try handle.synchronize()
            return ContinuousClock.now - first
        }
        await store.refreshNow()
        let gap = try await writing.value
        // A machine loaded enough to stretch the parts' gap past the settle time makes the
        // first part a settled file by the rule (nothing then tells it from a finished one).
        if gap < RulesFetcher.settleTime - .milliseconds(200) {
            #expect(store.isEnabled("b") && !store.isEnabled("a"), "\(store.status) (the parts \(gap) apart)")
        }
    }

    /// A ConfigMap's key is a symbolic link through `..data`, itself a link swapped to a
    /// new directory on each update: the file the path leads to is what is stamped, so the
    /// swap is a new file, read at the next look.
    @Test func aConfigMapSwapIsReadAtTheNextLook() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let manager = FileManager.default
        for (version, text) in [("v1", "flag a = true\n"), ("v2", "flag a = false\nflag b = true\n")] {
            try manager.createDirectory(at: directory.appendingPathComponent(version), withIntermediateDirectories: true)
            try text.write(to: directory.appendingPathComponent("\(version)/app.flags"), atomically: true, encoding: .utf8)
        }
        try manager.createSymbolicLink(atPath: directory.appendingPathComponent("..data").path, withDestinationPath: "v1")
        let file = directory.appendingPathComponent("app.flags")
        try manager.createSymbolicLink(atPath: file.path, withDestinationPath: "..data/app.flags")
        let store = FlagStore(source: .file(file), refresh: .seconds(60))
        await store.refreshNow()
        #expect(store.isEnabled("a") && !store.isEnabled("b"))
        // The swap, as the kubelet makes it: a new link renamed over `..data`.
        try manager.createSymbolicLink(atPath: directory.appendingPathComponent("..data_tmp").path, withDestinationPath: "v2")
        #expect(rename(directory.appendingPathComponent("..data_tmp").path, directory.appendingPathComponent("..data").path) == 0)
        let start = ContinuousClock.now
        await store.refreshNow()
        #expect(store.isEnabled("b") && !store.isEnabled("a"), "\(store.status)")
        #expect(ContinuousClock.now - start < .milliseconds(500), "a swap waited for the settle time")
    }

    /// The settle rule itself: a stamp seen for the first time and modified just now waits;
    /// one last modified over the settle time ago is read at once; one that has stayed the
    /// same for the settle time is read whatever its modification time says.
    @Test func theFetcherReadsAFileOnceItHasStoppedChanging() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("app.flags")
        try "flag a = true\n".write(to: file, atomically: true, encoding: .utf8)
        var fetcher = RulesFetcher(source: .file(file), timeout: .seconds(1), maximumSize: 1 << 20)
        guard case .settling(let wait) = await fetcher.fetch() else {
            Issue.record("a file modified just now was read at once")
            return
        }
        #expect(wait <= RulesFetcher.settleTime)
        // A modification time in the future (a clock ahead of ours) cannot hold it back:
        // unchanged for the settle time, it is read.
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 3_600)], ofItemAtPath: file.path)
        guard case .settling = await fetcher.fetch() else {
            Issue.record("a changed stamp was read at once")
            return
        }
        try await Task.sleep(for: RulesFetcher.settleTime + .milliseconds(50))
        guard case .fetched(let bytes, let seen) = await fetcher.fetch() else {
            Issue.record("a file unchanged for the settle time was not read")
            return
        }
        #expect(bytes == Array("flag a = true\n".utf8))
        fetcher.commit(seen)
        if case .unchanged = await fetcher.fetch() {} else { Issue.record("a file taken was read again") }
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -60)], ofItemAtPath: file.path)
        if case .fetched = await fetcher.fetch() {} else { Issue.record("a file modified a minute ago was not read at once") }
        // Another file renamed over it was whole before the rename: read at once.
        try "flag b = true\n".write(to: file, atomically: true, encoding: .utf8)
        guard case .fetched(let replaced, _) = await fetcher.fetch() else {
            Issue.record("a file renamed over the one taken was not read at once")
            return
        }
        #expect(replaced == Array("flag b = true\n".utf8))
    }
}
