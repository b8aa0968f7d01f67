import FlagRules
import FlagRulesTesting
import Foundation
import Testing

/// The rules the trait's tests read: `darkMode` off and `checkout` at `control` for
/// everyone, unless overridden.
private let rules = try! RuleSet(
    source: """
        flag darkMode { enabled when build == "debug" }
        variant checkout [control, oneStep, twoStep] = control
        """, name: "shop.flags")

@Suite(.flagOverrides(["darkMode": true]))
struct OverridesTraitTests {
    @Test func theSuitesOverridesAreInForce() {
        #expect(rules.isEnabled("darkMode"))
    }

    @Test(.flagOverrides(["checkout": "twoStep"]))
    func aTestsOverridesNestInsideTheSuites() {
        #expect(rules.isEnabled("darkMode") && rules.variant("checkout") == "twoStep")
    }
}

/// What the trait does beyond the page's example, and the page itself.
@Suite struct OverridesTraitScopeTests {
    @Test(.flagOverrides(["darkMode": true, "checkout": "oneStep"]))
    func anOverriddenValueSaysSoAndReachesTasksTheTestStarts() async {
        #expect(rules.evaluate("darkMode").reason == .override)
        let fromATask = await Task { rules.variant("checkout") }.value
        #expect(fromATask == "oneStep")
    }

    @Test(.flagOverrides(["darkMode": true]), .flagOverrides(["darkMode": false]))
    func theLastTraitOfATestWins() {
        #expect(!rules.isEnabled("darkMode"))
        #expect(rules.evaluate("darkMode").reason == .override)
    }

    /// Tests beside the overridden ones, running in parallel with them, see the rules.
    @Test func withoutTheTraitTheRulesAnswer() {
        #expect(!rules.isEnabled("darkMode") && rules.variant("checkout") == "control")
        #expect(rules.evaluate("darkMode").reason != .override)
    }

    /// The module's page shows the suite above as it is written here (and so as it runs).
    @Test func thePageShowsTheSuiteAsItRuns() throws {
        let page = try String(
            contentsOf: packageRoot.appendingPathComponent("Sources/FlagRulesTesting/FlagRulesTesting.docc/FlagRulesTesting.md"),
            encoding: .utf8)
        let start = try #require(page.range(of: "@Suite(.flagOverrides"))
        let end = try #require(page.range(of: "\n```", range: start.lowerBound..<page.endIndex))
        let shown = String(page[start.lowerBound..<end.lowerBound])
        let here = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        #expect(here.contains(shown))
    }
}
