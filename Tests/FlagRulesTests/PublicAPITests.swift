import FlagRules
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
        let expectation: TestExpectation = try #require(rules.tests.first?.expectations.first)
        #expect(results.allSatisfy(\.passed) && expectation.subject == "darkMode")
        let explanation: Explanation? = rules.explain("darkMode", in: context)
        #expect(explanation?.resolution == resolution)
        let position: SourcePosition? = rules.warnings.first?.range.start
        #expect(position == nil)
        #expect(Bucketing.rolloutBucket(salt: "a", unit: "b") >= 0)
        do {
            _ = try RuleSet(source: "flag {")
            Issue.record("a broken file loaded")
        } catch {
            let rendered = "\(error)"
            #expect(rendered.contains("error:"))
        }
    }
}
