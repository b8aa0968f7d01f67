import Foundation
import Testing

@testable import FlagRules

/// Garbage of any size is refused quickly, with a bounded number of errors; no size of
/// body crashes.
@Suite struct RobustnessTests {
    static func errors(of source: SourceText) -> [Diagnostic] {
        do {
            _ = try RuleSet(source: source, today: Date())
            return []
        } catch {
            return error.errors
        }
    }

    /// Random bytes: loading stops after `Diagnostic.errorLimit` errors and says so.
    @Test func errorsAreBoundedAndSaySo() {
        var g = DifferentialTests.Generator(state: 99)
        let bytes = (0..<200_000).map { _ in UInt8(truncatingIfNeeded: g.next()) }
        let errors = Self.errors(of: SourceText(bytes: bytes, name: "random.bin"))
        #expect(errors.count == Diagnostic.errorLimit + 1)
        #expect(errors.last?.message == "too many errors (\(Diagnostic.errorLimit)); stopping")
        #expect(errors.last?.code == "too-many-errors")
        // Parse errors after lexical ones count towards the same limit.
        let lines = (0..<500).map { "flag f\($0) { enabled when x == }" }.joined(separator: "\n")
        let parseErrors = Self.errors(of: SourceText(lines, name: "many.flags"))
        #expect(parseErrors.count == Diagnostic.errorLimit + 1 && parseErrors.last?.code == "too-many-errors")
        // Checker errors too.
        let typeErrors = (0..<500).map { "flag f\($0) { enabled when age == \"x\" }" }.joined(separator: "\n")
        let checked = Self.errors(of: SourceText("context { age: int }\n" + typeErrors, name: "typed.flags"))
        #expect(checked.count == Diagnostic.errorLimit + 1 && checked.last?.code == "too-many-errors")
    }

    /// A test that names a declaration past the error limit (left unchecked) is no crash:
    /// the errors stop at the limit as they do without it.
    @Test func aTestNamingADeclarationPastTheErrorLimit() {
        let typeErrors = (0..<40).map { "flag f\($0) { enabled when age == \"x\" }" }.joined(separator: "\n")
        let test = "\ntest \"late\" {\n  given { age: 3 }\n  expect f39\n}\n"
        let errors = Self.errors(of: SourceText("context { age: int }\n" + typeErrors + test, name: "late.flags"))
        #expect(errors.count == Diagnostic.errorLimit + 1 && errors.last?.code == "too-many-errors")
    }

    /// Brackets nested past any depth the parser takes end lexing with one error.
    @Test func deepBracketsAreOneError() {
        let source = "flag f { enabled when " + String(repeating: "(", count: 1_000_000) + "x }"
        let errors = Self.errors(of: SourceText(source, name: "deep.flags"))
        #expect(errors.count == 1)
        #expect(errors.first?.message == "brackets nest more than 64 levels deep")
        // 64 levels of parentheses in an expression still parse.
        let fine = "flag f { enabled when " + String(repeating: "(", count: 60) + "x == 1" + String(repeating: ")", count: 60) + " }"
        #expect(Self.errors(of: SourceText(fine, name: "fine.flags")).isEmpty)
    }

    /// A body of 100,000 rules loads, evaluates (every rule reached), explains and releases.
    @Test func aLongBodyOfRules() async throws {
        try await offThePool(computing: true) {
            let count = 100_000
            let rules = (0..<count).map { "  \($0) when x == \($0)" }.joined(separator: "\n")
            let set = try RuleSet(source: "value v: int = -1 {\n\(rules)\n}")
            #expect(
                set.evaluate("v", in: ["x": .int(count - 1)])
                    == Resolution(value: .int(count - 1), reason: .targetingMatch, rule: count, line: count + 1))
            #expect(set.evaluate("v", in: ["x": -5]).reason == .default)
            #expect(set.explain("v", in: ["x": 3])?.resolution.rule == 4)
            let flags = (0..<count).map { "  \($0 % 2 == 0 ? "enabled" : "disabled") when x == \($0)" }.joined(separator: "\n")
            let flagSet = try RuleSet(source: "flag f {\n\(flags)\n}")
            #expect(flagSet.isEnabled("f", in: ["x": .int(count - 2)]) && !flagSet.isEnabled("f", in: ["x": .int(count - 1)]))
            #expect(flagSet.evaluate("f", in: ["x": .int(count - 1)]).rule == count)
        }
    }
}
