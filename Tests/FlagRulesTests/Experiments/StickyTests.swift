import Foundation
import Testing

@testable import FlagRules

/// `@sticky`: a unit keeps the first assignment a split gave it.
@Suite struct StickyTests {
    static func rules(_ weights: String, sticky: String = "@sticky") -> String {
        """
        context { userId: string }
        \(sticky)
        variant checkout [control, oneStep] = control { split(userId) { \(weights) } }
        variant plain [a, b] = a { split(userId) { a: 50%, b: 50% } }

        """
    }

    static let users: [EvaluationContext] = (0..<2_000).map { ["userId": .string("user-\($0)")] }

    /// A storage that counts its reads.
    final class Counting: AssignmentStorage, @unchecked Sendable {
        let inner = InMemoryAssignments()
        let lock = NSLock()
        var reads = 0
        func assignment(for key: StickyKey) -> String? {
            lock.withLock { reads += 1 }
            return inner.assignment(for: key)
        }
        func remember(_ assignment: String, for key: StickyKey) { inner.remember(assignment, for: key) }
    }

    static func unstuckVariant(_ context: EvaluationContext) -> String? {
        (try? RuleSet(source: rules("control: 50%, oneStep: 50%")))?.evaluate("checkout", in: context).variant
    }

    @Test func aWeightChangeMovesNoAssignedUnit() throws {
        let store = FlagStore(try RuleSet(source: Self.rules("control: 90%, oneStep: 10%")))
        let storage = Counting()
        store.assignments = storage
        let before = Self.users.map { store.evaluate("checkout", in: $0).variant }
        try store.update(source: Self.rules("control: 50%, oneStep: 50%"))
        let after = Self.users.map { store.evaluate("checkout", in: $0) }
        #expect(after.map(\.variant) == before)
        // The explanation says when the remembered assignment differs from the split's.
        let index = try #require(Self.users.indices.first { Self.unstuckVariant(Self.users[$0]) != before[$0] })
        let explanation = try #require(store.explain("checkout", in: Self.users[index]))
        #expect(explanation.resolution.variant == before[index])
        #expect(explanation.summary.hasPrefix("@sticky: this unit's first assignment, \(before[index]!), is remembered"))
        #expect(after.allSatisfy { $0.reason == .split && $0.rule == 1 })
        // Without the storage, the new weights move about two in five users.
        let unstuck = try RuleSet(source: Self.rules("control: 50%, oneStep: 50%"))
        let moved = zip(Self.users, before).filter { unstuck.evaluate("checkout", in: $0.0).variant != $0.1 }.count
        #expect(moved > 600)
        // A declaration without @sticky never reads the storage.
        let reads = storage.reads
        for u in Self.users.prefix(100) { _ = store.evaluate("plain", in: u) }
        #expect(storage.reads == reads)
    }

    /// A unit in a `fallback` share keeps it (the caller's default) under new weights, and
    /// one assigned a variant keeps that: changing the weights moves no one.
    @Test func aFallbackShareIsRememberedToo() throws {
        let store = FlagStore(try RuleSet(source: Self.rules("oneStep: 50%, fallback: 50%")))
        store.assignments = InMemoryAssignments()
        let before = Self.users.map { store.evaluate("checkout", in: $0, default: "app") }
        #expect(before.contains { $0.isFallback } && before.contains { $0.variant == "oneStep" })
        #expect(before.allSatisfy { $0.reason == .split })
        try store.update(source: Self.rules("oneStep: 10%, fallback: 90%"))
        let after = Self.users.map { store.evaluate("checkout", in: $0, default: "app") }
        #expect(zip(before, after).allSatisfy { $0.isFallback == $1.isFallback && $0.variant == $1.variant && $0.value == $1.value })
        try store.update(source: Self.rules("oneStep: 90%, fallback: 10%"))
        let again = Self.users.map { store.evaluate("checkout", in: $0, default: "app") }
        #expect(zip(before, again).allSatisfy { $0.isFallback == $1.isFallback && $0.variant == $1.variant })
        // Without the caller's default, a remembered fallback gives the declaration's.
        let fell = try #require(Self.users.indices.first { before[$0].isFallback })
        #expect(store.evaluate("checkout", in: Self.users[fell]).value == "control")
    }

    @Test func aNewVersionStartsFreshAssignments() throws {
        let store = FlagStore(try RuleSet(source: Self.rules("control: 90%, oneStep: 10%", sticky: "@sticky(\"v1\")")))
        store.assignments = InMemoryAssignments()
        _ = Self.users.map { store.evaluate("checkout", in: $0) }
        let v2 = Self.rules("control: 50%, oneStep: 50%", sticky: "@sticky(\"v2\")")
        try store.update(source: v2)
        let fresh = try RuleSet(source: v2)
        for u in Self.users { #expect(store.evaluate("checkout", in: u).variant == fresh.evaluate("checkout", in: u).variant) }
    }

    @Test func aFileKeepsAssignmentsAcrossRestartsAndSurvivesCorruption() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("sticky-\(UUID()).json")
        defer { try? FileManager.default.removeItem(at: url) }
        let first = FlagStore(try RuleSet(source: Self.rules("control: 90%, oneStep: 10%")))
        let file = FileAssignments(url: url)
        first.assignments = file
        let before = Self.users.map { first.evaluate("checkout", in: $0).variant }
        file.flush()
        // A new process: the file's assignments hold under new weights.
        let second = FlagStore(try RuleSet(source: Self.rules("control: 10%, oneStep: 90%")))
        second.assignments = FileAssignments(url: url)
        #expect(Self.users.map { second.evaluate("checkout", in: $0).variant } == before)
        // A corrupt file: reported, and plain bucketing.
        try Data("{not json".utf8).write(to: url)
        let problems = Locked([String]())
        let third = FlagStore(try RuleSet(source: Self.rules("control: 10%, oneStep: 90%")))
        third.assignments = FileAssignments(url: url) { problem in problems.withLock { $0.append(problem) } }
        let plain = try RuleSet(source: Self.rules("control: 10%, oneStep: 90%"))
        for u in Self.users.prefix(200) { #expect(third.evaluate("checkout", in: u).variant == plain.evaluate("checkout", in: u).variant) }
        #expect(problems.withLock { $0 }.count == 1)
        #expect(problems.withLock { $0 }.first?.contains("were not read") == true)
    }

    @Test func stickyIsCheckedWhereItIsWritten() {
        let cases: [(String, String)] = [
            ("@sticky flag f { enabled when true }", "only a variant or a value can be '@sticky': it keeps what a split assigns"),
            ("@sticky variant v [a, b] = a { b when x == 1 }", "'v' has no split: '@sticky' keeps what a split assigns"),
            (
                "@sticky(1) variant v [a, b] { split(u) { a: 1, b: 1 } }",
                "'@sticky' takes nothing or a version string, as in @sticky(\"v2\")"
            ),
            ("@stiky variant v [a, b] { split(u) { a: 1, b: 1 } }", "unknown attribute '@stiky'; did you mean '@sticky'?"),
        ]
        for (source, message) in cases {
            do {
                _ = try RuleSet(source: source)
                Issue.record("\(source) loaded")
            } catch {
                #expect(error.errors.map(\.message) == [message], "\(source)")
            }
        }
        #expect((try? RuleSet(source: "@sticky(\"v3\") value n: int = 1 { split(u) { 1: 1, 2: 1 } }")) != nil)
    }

    @Test func aStickyValueKeepsItsValue() throws {
        let text = "context { u: string }\n@sticky value n: int = 1 { split(u) { 1: 90%, 2: 10% } }\n"
        let store = FlagStore(try RuleSet(source: text))
        store.assignments = InMemoryAssignments()
        let before = (0..<500).map { store.evaluate("n", in: ["u": .string("u\($0)")]).value }
        try store.update(source: text.replacingOccurrences(of: "1: 90%, 2: 10%", with: "1: 10%, 2: 90%"))
        #expect((0..<500).map { store.evaluate("n", in: ["u": .string("u\($0)")]).value } == before)
    }
}
