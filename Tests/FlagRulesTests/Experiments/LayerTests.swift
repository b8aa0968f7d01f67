import Foundation
import Testing

@testable import FlagRules

/// The layer pattern of examples/experiments.flags: exclusive experiments and a holdout.
@Suite struct LayerTests {
    /// Over 100,000 users: no user is in two experiments of the layer, each slice's share is
    /// within half a percentage point of its weight, and inside a slice the experiment's own
    /// split is even (its salt is independent of the layer's).
    @Test func noUserIsInTwoExperimentsAndSlicesHaveTheirWeights() async throws {
        try await offThePool(computing: true) {
            let rules = try RuleSet(contentsOf: packageRoot.appendingPathComponent("examples/experiments.flags"))
            let n = 100_000
            var slices: [String: Int] = [:]
            var inCheckout = 0
            var oneStep = 0
            for i in 0..<n {
                let context: EvaluationContext = ["userId": .string("user-\(i)"), "country": "US"]
                let layer = rules.evaluate("growthLayer", in: context)
                let checkout = rules.evaluate("checkoutFlow", in: context)
                let onboarding = rules.evaluate("onboardingFlow", in: context)
                slices[layer.variant ?? "?", default: 0] += 1
                let exposed = [checkout, onboarding].filter { $0.reason == .split }.count
                #expect(exposed <= 1, "user-\(i) is in two experiments")
                if exposed == 1 { #expect(layer.variant != "holdout") }
                #expect((checkout.reason == .split) == (layer.variant == "checkout"))
                #expect((onboarding.reason == .split) == (layer.variant == "onboarding"))
                if checkout.reason == .split {
                    inCheckout += 1
                    if checkout.variant == "oneStep" { oneStep += 1 }
                }
            }
            for (slice, weight) in [("checkout", 0.4), ("onboarding", 0.4), ("holdout", 0.2)] {
                let share = Double(slices[slice] ?? 0) / Double(n)
                #expect(abs(share - weight) < 0.005, "\(slice): \(share)")
            }
            #expect(abs(Double(oneStep) / Double(inCheckout) - 0.5) < 0.01)
        }
    }

    /// `--explain` of an experiment shows where the layer put the user.
    @Test func anExplanationShowsTheLayersSlice() throws {
        let rules = try RuleSet(contentsOf: packageRoot.appendingPathComponent("examples/experiments.flags"))
        let text = try #require(rules.explain("checkoutFlow", in: ["userId": "user-3"])?.text)
        #expect(text.contains("growthLayer → holdout  (variant SPLIT, rule 1, target "), "\(text)")
        #expect(text.contains("the slice 80.0%–100.0%)"), "\(text)")
    }
}
