import FlagRules
import FlagRulesTooling
import Foundation
import Testing

/// The public API as an embedder sees it (no `@testable`): every name reads unqualified
/// beside Foundation's and Swift Testing's in one file.
@Suite struct PublicAPITests {
    @Test func namesDoNotClashWithFoundationOrSwiftTesting() throws {
        // Foundation's and Swift Testing's own names, unqualified.
        let formatter: Formatter? = nil
        let here: SourceLocation = #_sourceLocation
        let expectationType = Expectation.self
        #expect(formatter == nil && here.line > 0 && "\(expectationType)".contains("Expectation"))

        let rules = try RuleSet(
            source: """
                context { build: enum(debug, release); userId: string }
                flag darkMode { enabled when build == debug }
                test "debug builds" {
                  given { build: debug }
                  expect darkMode == true
                }
                """)
        let context: EvaluationContext = ["build": "debug", "userId": "u-1"]
        let resolution: Resolution = rules.evaluate("darkMode", in: context)
        #expect(resolution.value == .bool(true) && resolution.reason == .targetingMatch)
        let prepared: PreparedContext = rules.prepare(context)
        let handle: DeclarationHandle = rules.handle("darkMode")
        #expect(rules.isEnabled(handle, in: prepared))
        let info: DeclarationInfo = try #require(rules.declarations.first)
        #expect(info.kind == DeclarationKind.flag)
        let results: [TestResult] = rules.runTests()
        #expect(results.allSatisfy(\.passed) && results.first?.name == "debug builds")
        let explanation: Explanation? = rules.explain("darkMode", in: context)
        #expect(explanation?.resolution == resolution)
        let position: SourcePosition? = rules.warnings.first?.range.start
        #expect(position == nil)
        do {
            _ = try RuleSet(source: "flag {")
            Issue.record("a broken file loaded")
        } catch {
            let rendered = "\(error)"
            #expect(rendered.contains("error:"))
        }
    }

    /// A context built from variables reads as one built from literals.
    @Test func contextsTakeVariablesAsTheyTakeLiterals() throws {
        let rules = try RuleSet(
            source: """
                context { userId: string; groups: [string]; age: int; beta: bool; score: double; build: enum(debug, release) }
                flag a { enabled when userId == "u-7" and groups contains "qa" and age > 30 and beta and score < 1.5 and build == debug }
                """)
        let userID = "u-7", groups = ["qa", "staff"], age = 31, beta = true, score = 1.25, i = 7
        let fromVariables: EvaluationContext = [
            "userId": userID, "groups": groups, "age": age, "beta": beta, "score": score, "build": .string("debug"),
        ]
        let interpolated: EvaluationContext = [
            "userId": "u-\(i)", "groups": ["qa"], "age": 31, "beta": true, "score": 1.25, "build": "debug",
        ]
        let fromValues: EvaluationContext = [
            "userId": Value.string(userID), "groups": .list(["qa"]), "age": .int(age), "beta": .bool(beta), "score": .double(score),
            "build": "debug",
        ]
        for context in [fromVariables, interpolated, fromValues] {
            #expect(rules.isEnabled("a", in: context))
        }
        #expect(fromVariables["groups"] == .list(["qa", "staff"]) && interpolated["userId"] == .string("u-7"))
        let substring = "u-7-x".dropLast(2)
        let when = Date(timeIntervalSince1970: 0)
        let more: EvaluationContext = ["userId": substring, "now": when]
        #expect(more["userId"] == .string("u-7") && more["now"] == .datetime(when))
    }

    /// The async override scope, an override's reason, and a test result as text.
    @Test func asyncOverridesAndReadableTestResults() async throws {
        let rules = try RuleSet(
            source: """
                flag darkMode = false
                test "dark mode is on" {
                  expect darkMode
                }
                test "dark mode is off" {
                  expect not darkMode
                }
                """, name: "app.flags")
        let r = await withFlagOverrides(["darkMode": true]) {
            await Task.yield()
            return rules.evaluate("darkMode", in: [:])
        }
        #expect(r.value == .bool(true) && r.reason == .override)
        let results = rules.runTests()
        #expect(
            results.map(\.description) == [
                """
                FAIL line 2 "dark mode is on"
                  line 3: expect darkMode
                    expected: true
                    actual:   darkMode = false  (STATIC)
                      no rules: the default
                """,
                #"PASS line 5 "dark mode is off""#,
            ])
    }
}
