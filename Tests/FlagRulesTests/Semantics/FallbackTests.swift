import Foundation
import Testing

@testable import FlagRules
@testable import FlagRulesServer
@testable import FlagRulesTooling

/// `fallback`: a rule giving the caller's default (OpenFeature's default value, flagd's code
/// default), by every path that evaluates, explains, formats or serves it.
@Suite struct FallbackTests {
    /// The example of TheFlagsLanguage and the grammar, with a flag and a value beside it.
    static let source = """
        context { plan: string }
        variant tier [gold, silver] = silver {
          gold when plan == "enterprise"
          fallback when plan == "legacy"
        }
        flag beta = true {
          fallback when plan == "legacy"
          disabled when plan == "free"
        }
        value limit: int = 10 { fallback }
        flag readsTier { enabled when tier == gold or tier == silver }

        """

    static let rules = try! RuleSet(source: source)

    @Test func aFallbackRuleGivesTheCallersDefault() {
        let legacy: EvaluationContext = ["plan": "legacy"]
        let r = Self.rules.evaluate("tier", in: legacy, default: "bronze")
        #expect(r.value == "bronze" && r.reason == .default && r.isFallback && r.variant == nil)
        #expect(r.rule == 2 && r.line == 4)
        #expect(r.description == #""bronze" by fallback (DEFAULT, rule 2, line 4)"#)
        #expect(Self.rules.evaluate("tier", in: legacy).description == #""silver" by fallback (DEFAULT, rule 2, line 4)"#)
        // Without a caller's default, the declaration's.
        let bare = Self.rules.evaluate("tier", in: legacy)
        #expect(bare.value == "silver" && bare.isFallback && bare.variant == nil)
        // Another rule, or none, decides as before.
        let enterprise = Self.rules.evaluate("tier", in: ["plan": "enterprise"], default: "bronze")
        #expect(enterprise.value == "gold" && enterprise.variant == "gold" && !enterprise.isFallback)
        let other = Self.rules.evaluate("tier", in: ["plan": "team"], default: "bronze")
        #expect(other.value == "silver" && other.reason == .default && !other.isFallback)
        // A value's rule without a condition.
        #expect(Self.rules.evaluate("limit", in: [:], default: 3).value == 3)
        #expect(Self.rules.evaluate("limit", in: [:]).value == 10)
    }

    /// `isEnabled` (which answers without a resolution) gives what `evaluate` gives.
    @Test(arguments: [("legacy", true), ("legacy", false), ("free", true), ("team", false)])
    func aFlagFallsBackToTheCallersBool(_ plan: String, _ callersDefault: Bool) {
        let context: EvaluationContext = ["plan": .string(plan)]
        let resolved = Self.rules.evaluate("beta", in: context, default: .bool(callersDefault))
        #expect(Self.rules.isEnabled("beta", in: context, default: callersDefault) == resolved.value.boolValue)
        #expect(resolved.isFallback == (plan == "legacy"))
        let expected = plan == "legacy" ? callersDefault : plan != "free"
        #expect(resolved.value == .bool(expected))
        let handle = Self.rules.handle("beta")
        #expect(Self.rules.isEnabled(handle, in: Self.rules.prepare(context), default: callersDefault) == expected)
    }

    /// Read by another rule, a declaration that falls back is unknown.
    @Test func anOperandThatFallsBackIsUnknown() throws {
        #expect(Self.rules.evaluate("readsTier", in: ["plan": "legacy"]).value == .bool(false))
        #expect(Self.rules.evaluate("readsTier", in: ["plan": "team"]).value == .bool(true))
        let explained = try #require(Self.rules.explain("readsTier", in: ["plan": "legacy"]))
        #expect(explained.resolution.value == .bool(false))
        #expect(explained.text.contains("fallback: the caller's default, unknown here"), "\(explained.text)")
    }

    /// The explanation resolves as the evaluation does, over random contexts and every
    /// declaration; a long body (run as a loop) too.
    @Test func explanationAndEvaluationAgree() throws {
        let long =
            "context { n: int }\nvalue v: int = 0 {\n"
            + (0..<40).map { $0 % 7 == 3 ? "  fallback when n == \($0)\n" : "  \($0) when n == \($0)\n" }.joined() + "}\n"
        let longRules = try RuleSet(source: long)
        var g = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let n = Int.random(in: 0..<45, using: &g)
            let r = longRules.evaluate("v", in: ["n": .int(n)], default: -1)
            #expect(r.isFallback == (n < 40 && n % 7 == 3))
            #expect(r.value == (r.isFallback ? .int(-1) : .int(n < 40 ? n : 0)))
            #expect(longRules.explain("v", in: ["n": .int(n)])?.resolution == longRules.evaluate("v", in: ["n": .int(n)]))
        }
        for plan in ["legacy", "enterprise", "free", "team"] {
            for name in ["tier", "beta", "limit", "readsTier"] {
                let context: EvaluationContext = ["plan": .string(plan)]
                #expect(Self.rules.explain(name, in: context)?.resolution == Self.rules.evaluate(name, in: context), "\(name) \(plan)")
            }
        }
    }

    /// `flags fmt` writes the outcome back, and quotes a variant named `fallback`.
    @Test func formattingKeepsTheMeaning() throws {
        let text = """
            variant mode [fallback, fresh] = fresh {
              `fallback` when x == 1
              fallback   when x == 2
            }
            """
        let formatted = try FlagsFormatter.format(text)
        #expect(formatted.contains("  `fallback` when x == 1\n") && formatted.contains("  fallback when x == 2\n"), "\(formatted)")
        let rules = try RuleSet(source: formatted)
        #expect(rules.evaluate("mode", in: ["x": 1], default: "none").value == "fallback")
        #expect(rules.evaluate("mode", in: ["x": 2], default: "none").value == "none")
        #expect(try FlagsFormatter.format(formatted) == formatted)
    }

    /// Over OFREP, a success with no value and no variant: the provider's code default.
    @Test func overOFREPASuccessWithNoValue() throws {
        let service = OFREPService()
        service.install([.init(name: "rules.flags", rules: Self.rules)])
        let r = service.respond(
            HTTPRequest(
                method: "POST", path: "/ofrep/v1/evaluate/flags/tier", headers: [], body: Array(#"{"context": {"plan": "legacy"}}"#.utf8)))
        let json = try JSON.parse(bytes: r.body)
        #expect(r.status == 200 && json["value"] == nil && json["variant"] == nil && json["reason"] == .string("DEFAULT"))
        #expect(json["metadata"]?["fallback"] == .bool(true))
        // In the bulk answer too.
        let bulk = service.respond(
            HTTPRequest(
                method: "POST", path: "/ofrep/v1/evaluate/flags", headers: [], body: Array(#"{"context": {"plan": "legacy"}}"#.utf8)))
        let flags = try JSON.parse(bytes: bulk.body)["flags"]?.elements ?? []
        let tier = try #require(flags.first { $0["key"] == .string("tier") })
        #expect(tier["value"] == nil && tier["reason"] == .string("DEFAULT"))
        // `flags eval --json`'s form of a resolution.
        #expect(Self.rules.evaluate("tier", in: ["plan": "legacy"]).json["fallback"] == .bool(true))
        #expect(Self.rules.evaluate("tier", in: ["plan": "legacy"]).json["value"] == nil)
    }

    /// What tools say of a fallback: `flags test` never takes it for a value of the file's,
    /// `flags diff` counts a change to or from it, a default of another type is a mismatch,
    /// and a bare `fallback` in a variant listing a variant of that name is warned of.
    @Test func toolsTellAFallbackFromTheDefault() throws {
        let tested = try RuleSet(
            source: Self.source + """
                test "legacy" {
                  given { plan: "legacy" }
                  expect tier == silver
                  expect tier != silver
                  expect tier.reason == DEFAULT
                }

                """)
        let failures = try #require(tested.runTests().first).failures
        #expect(failures.map(\.line) == [14], "\(failures)")
        let before = try RuleSet(source: "context { plan: string }\nflag beta = false { disabled when plan == \"legacy\" }\n")
        let after = try RuleSet(source: "context { plan: string }\nflag beta = false { fallback when plan == \"legacy\" }\n")
        let report = Impact.measure(from: before, to: after, contexts: [["plan": "legacy"], ["plan": "team"]])
        #expect(report.declarations.first?.changed == 1 && report.declarations.first?.transitions.first?.to == "fallback")
        let mismatch = Self.rules.evaluate("beta", in: ["plan": "legacy"], default: "x")
        #expect(mismatch.reason == .error && mismatch.errorCode == .typeMismatch && mismatch.value == "x")
        let ambiguous = try RuleSet(source: "variant m [fallback, fresh] = fresh { fallback when x == 1 }\n")
        #expect(ambiguous.warnings.map(\.message) == ["'fallback' here gives the caller's default, not the variant 'fallback'"])
    }

    /// A test expects a fallback with `== fallback` (a variant of that name in backticks);
    /// a rule that a `fallback` rule always decides first is unreachable.
    @Test func testsExpectItAndLintsSeeIt() throws {
        let rules = try RuleSet(
            source: """
                context { plan: string }
                variant tier [gold, fallback] = gold {
                  fallback when plan == "legacy"
                  `fallback` when plan == "legacy" and plan != "x"
                  `fallback` when plan == "trial"
                }
                test "legacy falls back" {
                  given { plan: "legacy" }
                  expect tier == fallback
                  expect tier != `fallback`
                }
                test "trial gets the variant" {
                  given { plan: "trial" }
                  expect tier == `fallback`
                  expect tier != fallback
                }
                test "fails: a value is no fallback" {
                  given { plan: "team" }
                  expect tier == fallback
                }

                """)
        let results = rules.runTests()
        #expect(results.map(\.failures.count) == [0, 0, 1], "\(results)")
        // The rule's bare fallback, and each test's.
        let ambiguous = rules.warnings.filter { $0.code == "ambiguous-fallback" }.map(\.message)
        #expect(
            ambiguous == ["'fallback' here gives the caller's default, not the variant 'fallback'"]
                + Array(repeating: "'fallback' here expects the caller's default, not the variant 'fallback'", count: 3),
            "\(rules.warnings)")
        let lints = rules.lint()
        #expect(lints.contains { $0.code == "FR105" && $0.message.hasPrefix("rule 2 of 'tier' can never decide") }, "\(lints)")
    }
}
