import Foundation
import Testing

@testable import FlagRules

/// The exposure log as a state machine: random sequences of evaluations, rules edits and
/// a consumer that takes a few at a time (or none for long stretches), against a model
/// of a bounded queue and a set of what was queued. No unit is taken as seen unless its
/// exposure was queued; once the consumer catches up and the units come back, each
/// (unit, declaration's version) has been delivered exactly once. A comment edit keeps the
/// version (it exposes no one again); an edit of the split's weights makes a new one.
/// `evaluateAll` records an exposure only when asked.
@Suite struct ExposureSequenceTests {
    static let rules = """
        context { userId: string }
        variant exp [a, b, c] = a { split(userId) { a: 34%, b: 33%, c: 33% } }

        """

    /// The rules at version `v`: a tenth of a percent moved from a to b for each.
    static func rules(version v: Int) -> String {
        let a = 340 - v, b = 330 + v
        return """
            context { userId: string }
            variant exp [a, b, c] = a { split(userId) { a: \(a / 10).\(a % 10)%, b: \(b / 10).\(b % 10)%, c: 33% } }

            """
    }

    /// The declaration's version in `text`.
    static func version(of text: String) throws -> String { try RuleSet(source: text).loaded.declarationVersions[0] }

    struct Model {
        let buffer: Int
        var pending: [String] = []
        var queued: Set<String> = []
        var recorded = 0
        var dropped = 0
        /// What was dropped and not queued since: a unit counts once however often it comes.
        var droppedKeys: Set<String> = []
        var delivered = 0

        mutating func evaluate(_ key: String) {
            guard !queued.contains(key) else { return }
            guard pending.count < buffer else {
                if droppedKeys.insert(key).inserted { dropped += 1 }
                return
            }
            droppedKeys.remove(key)
            queued.insert(key)
            pending.append(key)
            recorded += 1
        }
    }

    @Test(arguments: [1, 3, 8, 40])
    func randomSequencesAgreeWithTheModel(buffer: Int) async throws {
        var random = SeededGenerator(seed: 0xE4B0 &+ UInt64(buffer))
        let store = FlagStore(try RuleSet(source: Self.rules(version: 0), name: "x.flags"))
        let log = store.recordExposures(window: 100_000, buffer: buffer)
        var model = Model(buffer: buffer)
        var version = 0
        var everDelivered: [String: Int] = [:]
        let units = 25
        func key(_ unit: Int) -> String { "u\(unit)@\(version)" }
        func take(_ k: Int) async {
            guard model.delivered < model.recorded else { return }
            let batch = await log.nextBatch(limit: k, interval: nil) ?? []
            let expected = Array(model.pending.prefix(k))
            model.pending.removeFirst(expected.count)
            model.delivered += expected.count
            #expect(batch.map { "\($0.unit)@\(versions[$0.rulesVersion] ?? -1)" } == expected)
            for e in batch { everDelivered["\(e.unit)@\(e.rulesVersion)", default: 0] += 1 }
        }
        var versions: [String: Int] = [try Self.version(of: Self.rules(version: 0)): 0]
        var comments = 0
        for _ in 0..<600 {
            switch Int.random(in: 0..<20, using: &random) {
            case 0:
                // A comment edit (the same version), or an edit of the weights (a new one).
                let weights = Bool.random(using: &random)
                if weights { version += 1 } else { comments += 1 }
                let text = Self.rules(version: version) + "# comment \(comments)\n"
                try store.update(source: text, name: "x.flags")
                versions[try Self.version(of: text)] = version
            case 1...4:
                await take(Int.random(in: 1...5, using: &random))
            case 5:
                // Every declaration read at once: an exposure only when asked for.
                let unit = Int.random(in: 0..<units, using: &random)
                let asked = Bool.random(using: &random)
                _ = store.evaluateAll(in: ["userId": .string("u\(unit)")], recordingExposures: asked)
                if asked { model.evaluate(key(unit)) }
            default:
                let unit = Int.random(in: 0..<units, using: &random)
                _ = store.evaluate("exp", in: ["userId": .string("u\(unit)")])
                model.evaluate(key(unit))
            }
            #expect(log.recorded == model.recorded && log.dropped == model.dropped && log.delivered == model.delivered)
        }
        // Catching up: the consumer drains, the units come back, until none is dropped.
        for _ in 0..<(units / buffer + 3) {
            while model.delivered < model.recorded { await take(buffer) }
            for unit in 0..<units {
                _ = store.evaluate("exp", in: ["userId": .string("u\(unit)")])
                model.evaluate(key(unit))
            }
            while model.delivered < model.recorded { await take(buffer) }
        }
        let current = everDelivered.keys.filter { $0.hasSuffix("@" + store.rules!.loaded.declarationVersions[0]) }
        #expect(current.count == units, "every unit counted under the rules in force")
        #expect(everDelivered.values.allSatisfy { $0 == 1 }, "no exposure delivered twice")
    }

    /// The Running experiments article's settings: 2,001 users read by four tasks, over and
    /// over, and a consumer that catches up between rounds. Every user is counted, once,
    /// under each rules version.
    @Test func theArticlesSettingsCountEveryUserOnce() async throws {
        let store = FlagStore(try RuleSet(source: Self.rules, name: "x.flags"))
        let log = store.recordExposures(window: 10_000, buffer: 1_000)
        var iterator = log.exposures.makeAsyncIterator()
        for edit in 0..<2 {
            if edit > 0 { try store.update(source: Self.rules(version: 1), name: "x.flags") }
            var counts: [String: Int] = [:]
            for _ in 0..<4 {
                await withTaskGroup(of: Void.self) { group in
                    for task in 0..<4 {
                        group.addTask {
                            for unit in stride(from: task, to: 2_001, by: 4) {
                                _ = store.evaluate("exp", in: ["userId": .string("user-\(unit)")])
                            }
                        }
                    }
                }
                while log.delivered < log.recorded, let e = await iterator.next() { counts[e.unit, default: 0] += 1 }
                if counts.count == 2_001 { break }
            }
            #expect(counts.count == 2_001 && counts.values.allSatisfy { $0 == 1 })
        }
    }

    /// A partial batch goes at its interval, with no exposure after it to push it out.
    @Test func aPartialBatchGoesAtItsInterval() async throws {
        let store = FlagStore(try RuleSet(source: Self.rules, name: "x.flags"))
        let log = store.recordExposures()
        let (batches, sink) = AsyncStream.makeStream(of: [Exposure].self)
        let started = ContinuousClock.now
        let delivery = log.deliverBatches(maxBatch: 100, interval: .milliseconds(200)) { sink.yield($0) }
        for unit in 0..<3 { _ = store.evaluate("exp", in: ["userId": .string("u\(unit)")]) }
        var iterator = batches.makeAsyncIterator()
        let first = await iterator.next()
        #expect(first?.count == 3)
        #expect(ContinuousClock.now - started >= .milliseconds(200))
        // A second partial batch, after a quiet spell, goes at its own interval.
        _ = store.evaluate("exp", in: ["userId": "late"])
        #expect(await iterator.next()?.map(\.unit) == ["late"])
        delivery.cancel()
        await delivery.value
    }
}
