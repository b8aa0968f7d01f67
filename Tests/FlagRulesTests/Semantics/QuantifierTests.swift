import Foundation
import Testing

@testable import FlagRules
@testable import FlagRulesTooling

/// `any(list) OP x` and `all(list) OP x`: a comparison tried on each element, as Kleene
/// `or` and `and` of its answers; checked, evaluated, explained and formatted.
@Suite struct QuantifierTests {
    static let source = """
        context { tags: [string]; scores: [int]; name: string }
        flag prefixed { enabled when any(tags) starts with "qa-" }
        flag allHigh { enabled when all(scores) >= 50 }
        flag matched { enabled when any(tags) matches "^team-[0-9]+$" }
        flag listed { enabled when any(scores) in [7, 9] }

        """

    static let rules = try! RuleSet(source: Self.source)

    /// Each form against a plain reading of it over the same elements.
    @Test func eachFormReadsAsOrAndOverTheElements() {
        let cases: [([String], [Int], [String: Bool])] = [
            (["qa-1", "x"], [50, 60], ["prefixed": true, "allHigh": true, "matched": false, "listed": false]),
            (["x", "team-12"], [49, 90], ["prefixed": false, "allHigh": false, "matched": true, "listed": false]),
            ([], [], ["prefixed": false, "allHigh": true, "matched": false, "listed": false]),
            (["team-x"], [9], ["prefixed": false, "allHigh": false, "matched": false, "listed": true]),
        ]
        for (tags, scores, expected) in cases {
            let context: EvaluationContext = ["tags": .list(tags.map { .string($0) }), "scores": .list(scores.map { .int($0) })]
            for (name, on) in expected {
                #expect(Self.rules.evaluate(name, in: context).value == .bool(on), "\(name) \(tags) \(scores)")
            }
        }
        // Absent: unknown, so the rule does not match.
        #expect(Self.rules.evaluate("allHigh", in: [:]).reason == .default)
    }

    /// Without a schema, an element of another type is unknown there: a match elsewhere
    /// decides `any`, a failure elsewhere decides `all`; a nested element, or a value that is
    /// no list, is unknown. The explanation gives what evaluation gives, on random lists.
    @Test func explanationAndEvaluationAgree() throws {
        let forms = [
            #"any(xs) starts with "a""#, "all(xs) > 2", "not (any(xs) == 3)", "any(xs) != 3", #"all(xs) ends with "1""#,
            #"any(xs) contains "b""#, #"all(xs) matches "^a""#, #"any(xs) in [3, "b"]"#, "all(xs) not in [1, 5]",
            "any(xs) <= y", #"any(xs) in ["10.0.0.0/8"]"#,
        ]
        let source = forms.enumerated().map { "flag f\($0.offset) { enabled when \($0.element) }\n" }.joined()
        let rules = try RuleSet(source: source)
        let names = forms.indices.map { "f\($0)" }
        let pool: [Value] = ["a1", "b", 1, 3, 5, .bool(true), 2.5, .list([]), "ab", "10.1.2.3", "cb1"]
        var g = SystemRandomNumberGenerator()
        for _ in 0..<600 {
            let xs: Value =
                Int.random(in: 0..<10, using: &g) == 0
                ? pool.randomElement(using: &g)! : .list((0..<Int.random(in: 0..<4, using: &g)).map { _ in pool.randomElement(using: &g)! })
            var context: EvaluationContext = ["xs": xs]
            if Bool.random(using: &g) { context["y"] = pool.randomElement(using: &g)! }
            for name in names {
                let explained = try #require(rules.explain(name, in: context))
                #expect(explained.resolution == rules.evaluate(name, in: context), "\(name) \(xs)")
            }
        }
        #expect(rules.evaluate("f0", in: ["xs": .list([1, "ab"])]).value == .bool(true))
        #expect(rules.evaluate("f1", in: ["xs": .list(["x", 1])]).value == .bool(false))
        #expect(rules.evaluate("f1", in: ["xs": .list(["x", 3])]).reason == .default)  // unknown
        #expect(rules.evaluate("f10", in: ["xs": .list(["x", "10.9.9.9"])]).value == .bool(true))
        let text = try #require(rules.explain("f0", in: ["xs": .list(["b", "a1"])])).text
        #expect(text.contains("passes for \"a1\""), "\(text)")
    }

    /// Errors: outside a comparison, over a value that is no list, with `contains any`, a
    /// comparison the element type refuses, and arguments of another form.
    @Test(arguments: [
        ("flag f { enabled when any(tags) }", "any(list) stands on the left of a comparison, as in any(tags) starts with \"qa\""),
        ("flag f { enabled when any(name) == \"a\" }", "any() takes a list, found string"),
        ("flag f { enabled when all(tags) contains any [\"a\"] }", "'contains any' takes a list on the left; all(…) gives its elements"),
        ("flag f { enabled when any(scores) starts with \"a\" }", "'starts with' works on strings, found int"),
        ("flag f { enabled when any(tags, scores) == 1 }", "any() takes one list, as in any(tags)"),
        ("flag f { enabled when any(tags) == [\"a\"] }", "'==' with a list literal compares a list; any(…) and all(…) give its elements"),
    ])
    func errorsNameTheFix(_ rule: String, _ message: String) throws {
        let error = #expect(throws: RuleSetError.self) {
            try RuleSet(source: "context { tags: [string]; scores: [int]; name: string }\n" + rule + "\n")
        }
        #expect(error?.errors.first?.message == message, "\(error?.errors.map(\.message) ?? [])")
    }

    /// `flags fmt` keeps the form, and the formatted rules mean the same.
    @Test func formattingKeepsTheMeaning() throws {
        let formatted = try FlagsFormatter.format(Self.source)
        #expect(formatted.contains("enabled when any(tags) starts with \"qa-\""), "\(formatted)")
        #expect(try FlagsFormatter.format(formatted) == formatted)
    }
}
