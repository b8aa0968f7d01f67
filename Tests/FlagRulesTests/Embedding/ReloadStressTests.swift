import Foundation
import Testing

@testable import FlagRules

/// Several tasks evaluate without pause, by name on dictionary contexts and by handle on
/// prepared ones, while a store reloads a thousand times, valid and broken rules in turn.
/// Every evaluation sees one whole rule set: each generation's three declarations agree on
/// the generation, and a broken update never wins. `.ci/run` runs this suite under the
/// thread sanitizer.
@Suite struct ReloadStressTests {
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
                        let twice = rules.evaluate(rules.handle("twice")!, in: prepared).value.intValue ?? -1
                        let even = rules.isEnabled(rules.handle("even")!, in: prepared)
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
