import Foundation
import Testing

@testable import FlagRules

/// Several tasks evaluate without pause, by name on dictionary contexts and by handle on
/// prepared ones, while a store reloads a thousand times, valid and broken rules in turn.
/// Every evaluation sees one whole rule set: each generation's three declarations agree on
/// the generation, and a broken update never wins. `.ci/run` runs this suite under the
/// thread sanitizer.
@Suite(slowTests) struct ReloadStressTests {
    static func source(_ generation: Int) -> String {
        """
        context { userId: string; age: int }
        value generation: int = \(generation)
        value twice: int = \(2 * generation) { \(2 * generation) when age > 0 }
        flag even = \(generation % 2 == 0) { \(generation % 2 == 0 ? "enabled" : "disabled") when has(userId) }
        """
    }

    @Test func evaluationsSeeOneWholeRuleSetWhileTheStoreReloads() async throws {
        let store = FlagStore()
        try store.update(source: Self.source(0))
        let reloads = 1_000
        let seen = await withTaskGroup(of: Int.self) { group in
            group.addTask {
                for i in 1...reloads {
                    if i % 2 == 0 {
                        _ = try? store.update(source: "value generation: int = oops \(i)")  // broken: never wins
                    } else {
                        _ = try? store.update(source: Self.source(i))
                    }
                }
                return 0
            }
            for reader in 0..<4 {
                group.addTask {
                    var checks = 0
                    let context: EvaluationContext = ["userId": .string("u\(reader)"), "age": 3]
                    while true {
                        guard let rules = store.rules else { continue }
                        let generation = rules.value("generation", in: context, default: -1)
                        let prepared = rules.prepare(context)
                        let twice = rules.evaluate(rules.handle("twice"), in: prepared).value.intValue ?? -1
                        let even = rules.isEnabled(rules.handle("even"), in: prepared)
                        let byName = rules.isEnabled("even", in: context)
                        // One whole rule set: all three agree on its generation.
                        if generation < 0 || generation % 2 == 0 && generation != 0 || twice != 2 * generation
                            || even != (generation % 2 == 0) || byName != even
                        {
                            Issue.record("a mixed or broken rule set: generation \(generation), twice \(twice), even \(even)")
                            return checks
                        }
                        checks += 1
                        if generation == reloads - 1 || checks > 2_000_000 { return checks }
                    }
                }
            }
            var total = 0
            for await n in group { total += n }
            return total
        }
        #expect(seen > 0)
        #expect(store.rules?.value("generation", in: [:], default: -1) == reloads - 1)
        #expect(store.lastError != nil)  // the last update (an even one) was broken
    }
}

/// Several tasks evaluate through a store's own API (plain, prepared, all at once) while it
/// reloads a watched file that is rewritten a hundred times with valid and broken rules in
/// turn. Each call reads one whole rule set: a flag that refers to its own generation's
/// variant is always on, every answer comes from a valid generation, and generations never
/// go back. `.ci/tsan` runs this suite under the thread sanitizer.
@Suite(slowTests) struct WatchedFileStressTests {
    static func source(_ generation: Int) -> String {
        """
        value generation: int = \(generation)
        variant tag [g\(generation), other] = g\(generation)
        flag consistent { enabled when tag == g\(generation) }
        """
    }

    @Test func evaluationsSeeOneWholeRuleSetWhileAWatchedFileChanges() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("live.flags")
        try Self.source(1).write(to: file, atomically: true, encoding: .utf8)
        let outcomes = Locked(0)
        let store = FlagStore(source: .file(file), refresh: .milliseconds(10))
        store.onEvent = { event in
            switch event {
            case .rulesLoaded, .updateRejected: outcomes.withLock { $0 += 1 }
            default: break
            }
        }
        _ = try await store.ready(timeout: .seconds(30))
        defer { store.stop() }
        let versions = 100
        let done = Locked(false)
        let failures = await withTaskGroup(of: [String].self) { group in
            group.addTask {
                defer { done.withLock { $0 = true } }
                for i in 2...versions {
                    let seen = outcomes.withLock { $0 }
                    // Odd generations are valid, even ones broken (they never compile).
                    let text = i % 2 == 1 ? Self.source(i) : "value generation: int = \(i) oops"
                    try? text.write(to: file, atomically: true, encoding: .utf8)
                    guard await eventually(10, { outcomes.withLock { $0 } > seen }) else { return ["version \(i) was never seen"] }
                }
                return []
            }
            for reader in 0..<3 {
                group.addTask {
                    var problems: [String] = []
                    var last = 0
                    let handle = store.handle("consistent")
                    while !done.withLock({ $0 }) && problems.isEmpty {
                        if !store.isEnabled("consistent", in: ["reader": .int(reader)]) { problems.append("plain path saw a mix") }
                        if !store.isEnabled(handle, in: store.prepare(["reader": .int(reader)])) {
                            problems.append("prepared path saw a mix")
                        }
                        let all = store.evaluateAll()
                        let generation = all["generation"]?.value.intValue ?? -1
                        if all["tag"]?.variant != "g\(generation)" || all["consistent"]?.value != true {
                            problems.append("evaluateAll saw a mix at generation \(generation)")
                        }
                        if generation % 2 != 1 { problems.append("a broken generation \(generation) won") }
                        if generation < last { problems.append("generation went back from \(last) to \(generation)") }
                        last = generation
                        await Task.yield()  // the pool has as many threads as cores: let the store's poller run
                    }
                    return problems
                }
            }
            var all: [String] = []
            for await problems in group { all += problems }
            return all
        }
        #expect(failures.isEmpty, "\(failures.prefix(5))")
        #expect(store.value("generation", default: 0) == versions - 1)
        #expect(store.lastError != nil)  // the last version written was broken
    }
}
