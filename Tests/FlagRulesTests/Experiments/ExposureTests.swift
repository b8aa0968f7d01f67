import Foundation
import Testing

@testable import FlagRules

/// A store's exposures: one per declaration, unit and variant, off the evaluation path.
@Suite struct ExposureTests {
    static let rules = """
        context { userId: string; country: string }
        variant checkout [control, oneStep] = control {
          control when country == "DE"
          split(userId) { control: 50%, oneStep: 50% }
        }
        value limit: int = 1 { split(userId) { 1: 50%, 2: 50% } }
        flag dark { enabled when rollout(userId) < 50% }

        """

    static func store(_ text: String = rules) throws -> FlagStore {
        FlagStore(try RuleSet(source: text, name: "rules.flags"))
    }

    /// Drains what the log holds now (the stream stays open).
    static func drain(_ log: ExposureLog, expecting count: Int) async -> [Exposure] {
        var out: [Exposure] = []
        guard count > 0 else { return out }
        for await e in log.exposures {
            out.append(e)
            if out.count == count { break }
        }
        return out
    }

    @Test func eachUnitAndVariantIsRecordedOnceUnderConcurrentReads() async throws {
        let store = try Self.store()
        let log = store.recordExposures(window: 1_000, buffer: 10_000)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for round in 0..<1_000 {
                        let context: EvaluationContext = ["userId": .string("user-\(round % 100)"), "country": "US"]
                        _ = store.evaluate("checkout", in: context)
                    }
                }
            }
        }
        #expect(log.recorded == 100 && log.dropped == 0)
        let exposures = await Self.drain(log, expecting: 100)
        #expect(Set(exposures.map(\.unit)).count == 100)
        let first = try #require(exposures.first)
        #expect(first.declaration == "checkout" && first.unitAttribute == "userId" && first.rule == 2 && first.line == 4)
        #expect(first.rulesVersion == (try RuleSet(source: Self.rules, name: "x")).loaded.declarationVersions[0])
        let direct = try RuleSet(source: Self.rules).evaluate("checkout", in: ["userId": .string(first.unit), "country": "US"])
        #expect(first.variant == direct.variant)
    }

    @Test func onlySplitsAreExposuresAndNewRulesRecordAgain() async throws {
        let store = try Self.store()
        let log = store.recordExposures()
        _ = store.evaluate("checkout", in: ["userId": "u1", "country": "DE"])  // a rule match
        _ = store.isEnabled("dark", in: ["userId": "u1"])  // a rollout, not a split
        _ = store.evaluate("limit", in: ["userId": "u1"])
        _ = store.evaluate("limit", in: ["userId": "u1"])
        #expect(log.recorded == 1)
        // Overrides, scoped or local, record nothing.
        store.localOverrides = ["limit": .int(7)]
        _ = store.evaluate("limit", in: ["userId": "u2"])
        store.localOverrides = [:]
        withFlagOverrides(["limit": .int(8)]) { _ = store.evaluate("limit", in: ["userId": "u3"]) }
        #expect(log.recorded == 1)
        // A comment, the layout or another declaration edited exposes no one again.
        try store.update(source: "# the shop's rules\n" + Self.rules.replacingOccurrences(of: "  ", with: "    ") + "flag other = true\n")
        _ = store.evaluate("limit", in: ["userId": "u1"])
        #expect(log.recorded == 1)
        // An edit of the declaration's rules does: the same unit and variant is an exposure again.
        try store.update(source: Self.rules.replacingOccurrences(of: "{ 1: 50%, 2: 50% }", with: "{ 1: 50%, 2: 50%, 3: 0% }"))
        _ = store.evaluate("limit", in: ["userId": "u1"])
        #expect(log.recorded == 2)
        let exposures = await Self.drain(log, expecting: 2)
        #expect(exposures.map(\.declaration) == ["limit", "limit"] && exposures[0].rulesVersion != exposures[1].rulesVersion)
        // Handles and prepared contexts record too; evaluateAll only when asked (a bootstrap or
        // a debug screen reading every flag exposes no one).
        let handle = store.handle("checkout")
        _ = store.evaluate(handle, in: store.prepare(["userId": "u9", "country": "US"]))
        #expect(log.recorded == 3)
        _ = store.evaluateAll(in: ["userId": "u10", "country": "US"])
        #expect(log.recorded == 3)
        _ = store.evaluateAll(in: ["userId": "u10", "country": "US"], recordingExposures: true)
        #expect(log.recorded == 5)
        store.stopRecordingExposures()
        _ = store.evaluate("limit", in: ["userId": "u11"])
        #expect(log.recorded == 5)
    }

    /// A stalled consumer holds at most `buffer` exposures; the rest are counted, not
    /// remembered, and recorded when their units come back once the consumer has caught up.
    @Test func aStalledConsumerCostsABoundedBufferAndNoUnit() async throws {
        let store = try Self.store()
        let log = store.recordExposures(window: 100, buffer: 10)
        for i in 0..<500 { _ = store.evaluate("limit", in: ["userId": .string("u\(i)")]) }
        #expect(log.recorded == 10 && log.dropped == 490)
        // A unit already queued is not a drop.
        _ = store.evaluate("limit", in: ["userId": "u0"])
        #expect(log.recorded == 10 && log.dropped == 490)
        let first = await Self.drain(log, expecting: 10)
        #expect(first.map(\.unit) == (0..<10).map { "u\($0)" })
        for i in 10..<20 { _ = store.evaluate("limit", in: ["userId": .string("u\(i)")]) }
        let second = await Self.drain(log, expecting: 10)
        #expect(second.map(\.unit) == (10..<20).map { "u\($0)" })
        #expect(log.recorded == 20 && log.delivered == 20)
    }

    /// The window forgets the least recently seen: a unit seen again after the window has
    /// moved past it is recorded again; one seen within it is not.
    @Test func theWindowIsBounded() throws {
        let store = try Self.store()
        let log = store.recordExposures(window: 10, buffer: 1_000)
        for i in 0..<30 { _ = store.evaluate("limit", in: ["userId": .string("u\(i)")]) }
        _ = store.evaluate("limit", in: ["userId": "u29"])
        #expect(log.recorded == 30)
        _ = store.evaluate("limit", in: ["userId": "u0"])
        #expect(log.recorded == 31)
    }

    @Test func batchesGoWhenFullAndWhenTheLogFinishes() async throws {
        let store = try Self.store()
        let log = store.recordExposures()
        let batches = Locked([[Exposure]]())
        let delivery = log.deliverBatches(maxBatch: 10, interval: .seconds(3_600)) { batch in batches.withLock { $0.append(batch) } }
        for i in 0..<25 { _ = store.evaluate("limit", in: ["userId": .string("u\(i)")]) }
        store.stopRecordingExposures()
        await delivery.value
        #expect(batches.withLock { $0.map(\.count) } == [10, 10, 5])
        #expect(Set(batches.withLock { $0.flatMap { $0.map(\.unit) } }).count == 25)
    }

    /// A timed wait woken by its batch filling cancels its deadline's timer: waits that end
    /// early leave no task sleeping.
    @Test func aWaitWokenEarlyLeavesNoTimer() async throws {
        let store = try Self.store()
        let log = store.recordExposures(window: 1_000, buffer: 1_000)
        let (delivered, sink) = AsyncStream.makeStream(of: Int.self)
        // Each batch of one goes as soon as its exposure is recorded, long before the minute.
        let delivery = log.deliverBatches(maxBatch: 1, interval: .seconds(60)) { batch in sink.yield(batch.count) }
        var batches = delivered.makeAsyncIterator()
        for k in 0..<30 {
            _ = store.evaluate("limit", in: ["userId": .string("t\(k)")])
            #expect(await batches.next() == 1)
        }
        delivery.cancel()
        let deadline = ContinuousClock.now + .seconds(30)
        while log.runningTimers > 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(log.runningTimers == 0)
    }

    /// A partial batch left after a full one keeps its first exposure's time: its deadline
    /// is that time plus the interval, not the take's.
    @Test func aPartialBatchKeepsItsTime() async throws {
        let store = try Self.store()
        let log = store.recordExposures(window: 1_000, buffer: 1_000)
        let before = ContinuousClock.now
        for k in 0..<3 { _ = store.evaluate("limit", in: ["userId": .string("p\(k)")]) }
        let recorded = ContinuousClock.now
        #expect(await log.nextBatch(limit: 2, interval: .milliseconds(600))?.count == 2)
        let oldest = try #require(log.oldestPendingAt)
        #expect(oldest >= before && oldest <= recorded, "the third exposure's own time, not the take's")
        #expect(await log.nextBatch(limit: 2, interval: .milliseconds(100))?.count == 1)
        #expect(log.oldestPendingAt == nil)
    }
}
