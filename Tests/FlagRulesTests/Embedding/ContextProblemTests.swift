import Testing

@testable import FlagRules

/// A misspelt key, a mistyped value or an unparsable version is absent to a lenient rule
/// set (three-valued logic) and listed by `problems(in:)`; a mistyped value is an
/// `INVALID_CONTEXT` error naming the attribute to a strict one, while a key the schema does
/// not declare is read by no rule, strict or not.
@Suite struct ContextProblemTests {
    static let source = """
        context { userId: string; appVersion: version; build: enum(debug, release) }
        flag f = true { disabled when rollout(userId) >= 50% }
        value v: int = 3 { 4 when appVersion >= "2.0" }
        """

    /// The messages `ContextProblem.description`'s doc comment shows are the ones the
    /// library prints, word for word.
    @Test func theDocCommentShowsMessagesTheLibraryPrints() throws {
        let file = try String(
            contentsOf: packageRoot.appendingPathComponent("Sources/FlagRules/Embedding/ContextProblems.swift"), encoding: .utf8)
        let lines = file.split(separator: "\n", omittingEmptySubsequences: false)
        let end = try #require(lines.firstIndex { $0.contains("public var description: String") })
        var start = end
        while start > 0, lines[start - 1].trimmingCharacters(in: .whitespaces).hasPrefix("///") { start -= 1 }
        let comment = lines[start..<end].map { $0.trimmingCharacters(in: .whitespaces).dropFirst(3) }.joined(separator: " ")
        let shown = comment.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }
            .map { String($0.element) }
        try #require(shown.count == 3, "\(comment)")
        let rules = try RuleSet(source: "context { userId: string; age: int; org: { plan: enum(free, team) } }\nflag f = true\n")
        let printed = rules.problems(in: ["userid": "u-1", "age": "old", "org.plan": "team"]).map(\.description)
        #expect(Set(printed) == Set(shown), "printed \(printed)")
    }

    @Test func problemsNameEachAttribute() throws {
        let rules = try RuleSet(source: Self.source)
        let context: EvaluationContext = [
            "userid": "u-1", "userId": 12_345, "appVersion": "two", "build": "prod",
            "now": "yesterday", "extra": true,
        ]
        let problems = rules.problems(in: context).map(\.description).sorted()
        #expect(
            problems == [
                "attribute 'appVersion' expects a semantic version such as 2.3.0",
                "attribute 'build' expects one of debug, release",
                "attribute 'now' expects an ISO 8601 datetime",
                "attribute 'userId' expects a string",
                "unknown attribute 'extra'",
                "unknown attribute 'userid'; did you mean 'userId'?",
            ])
        #expect(rules.problems(in: ["userId": "u-1", "appVersion": "3.2", "build": "debug", "now": "2026-01-01"]).isEmpty)
        #expect(try RuleSet(source: "flag f = true").problems(in: ["anything": 1]).isEmpty)
    }

    @Test func lenientRuleSetsReadProblemsAsAbsent() throws {
        let rules = try RuleSet(source: Self.source)
        let r = rules.evaluate("v", in: ["appVersion": "two"])
        #expect(r.value == .int(3) && r.reason == .default)
        #expect(rules.isEnabled("f", in: ["userid": "u-1"]))
    }

    @Test func strictRuleSetsGiveInvalidContext() throws {
        var rules = try RuleSet(source: Self.source)
        rules.checksContextsStrictly = true
        let r = rules.evaluate("v", in: ["appVersion": "two"])
        #expect(r.reason == .error && r.errorCode == .invalidContext && r.value == .int(3))
        #expect(r.errorMessage == "attribute 'appVersion' expects a semantic version such as 2.3.0")
        // An undeclared key (a struct's other fields) is no error: no rule reads it.
        #expect(rules.evaluate("v", in: ["userid": "x", "name": "Ada"], default: .int(9)).reason == .default)
        #expect(rules.evaluate("v", in: ["appVersion": "2.1", "org.plan": "x"]).value == .int(4))
        // Two mistyped values: the one first in the schema, on every path.
        let two: EvaluationContext = ["build": "prod", "userId": 5]
        #expect(rules.evaluate("v", in: two).errorMessage == "attribute 'userId' expects a string")
        #expect(rules.evaluate(rules.handle("v"), in: rules.prepare(two)).errorMessage == "attribute 'userId' expects a string")
        #expect(!rules.isEnabled("f", in: ["userId": 5]))
        #expect(rules.isEnabled("f", in: ["userId": 5], default: true))
        #expect(rules.value("v", in: ["build": "prod"], default: 7) == 7)
        #expect(rules.evaluateAll(in: ["build": "prod"])["f"]?.errorCode == .invalidContext)
        #expect(rules.evaluate("v", in: ["appVersion": "2.1"]).value == .int(4))  // a fitting context
        // Prepared: a mistyped value is a problem; undeclared attributes were dropped.
        let handle = rules.handle("v")
        #expect(rules.evaluate(handle, in: rules.prepare(["appVersion": "two"])).errorCode == .invalidContext)
        #expect(rules.evaluate(handle, in: rules.prepare(["appVersion": "2.1", "userid": "x"])).value == .int(4))
        #expect(!rules.isEnabled(rules.handle("f"), in: rules.prepare(["userId": 5])))
    }
}
