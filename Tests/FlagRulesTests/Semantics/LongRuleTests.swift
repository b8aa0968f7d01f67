import Testing

@testable import FlagRules
@testable import FlagRulesTooling

/// Size is not an error: chains of 100,000 operands and a list of 100,000 elements load,
/// evaluate (by name and prepared), explain, format and release, without deep recursion.
/// (The 1,000,000-operand chain runs in `flags-bench`.)
@Suite(slowTests) struct LongRuleTests {
    static let count = 100_000

    static func check(_ source: String, _ context: EvaluationContext, expecting value: Bool) throws {
        var rules: RuleSet? = try RuleSet(source: source)
        guard let loaded = rules else { return }
        #expect(loaded.evaluate("f", in: context).value == .bool(value))
        #expect(loaded.evaluate(loaded.handle("f"), in: loaded.prepare(context)).value == .bool(value))
        let explanation = try #require(loaded.explain("f", in: context))
        #expect(explanation.resolution == loaded.evaluate("f", in: context))
        let formatted = try FlagsFormatter.format(source)
        #expect(try RuleSet(source: formatted).evaluate("f", in: context).value == .bool(value))
        rules = nil  // released here, with no recursion by length
        #expect(rules == nil)
    }

    @Test func aLongAndChain() throws {
        let chain = (0..<Self.count).map { "a > \($0 - Self.count)" }.joined(separator: " and ")
        try Self.check("context { a: int }\nflag f { enabled when \(chain) }", ["a": 1], expecting: true)
    }

    @Test func aLongOrChain() throws {
        let chain = (0..<Self.count).map { "a == \($0 + 10)" }.joined(separator: " or ")
        try Self.check("context { a: int }\nflag f { enabled when \(chain) }", ["a": .int(Self.count + 9)], expecting: true)
        try Self.check("context { a: int }\nflag f { enabled when \(chain) }", ["a": 1], expecting: false)
    }

    @Test func aLongCoalesceChain() throws {
        let chain = (0..<Self.count).map { "x\($0)" }.joined(separator: " ?? ")
        try Self.check("flag f { enabled when (\(chain)) == 7 }", ["x\(Self.count - 1)": 7], expecting: true)
    }

    @Test func aLongList() throws {
        let list = (0..<Self.count).map { "\"k\($0)\"" }.joined(separator: ", ")
        try Self.check("context { s: string }\nflag f { enabled when s in [\(list)] }", ["s": "k99999"], expecting: true)
    }
}
