import FlagRules
import Testing

/// A Swift Testing trait that runs a test, or every test of a suite, with flag overrides in
/// force: the scope `withFlagOverrides(_:_:)` opens, around the test's whole body.
///
/// ```swift
/// @Suite(.flagOverrides(["darkMode": true]))
/// struct CheckoutTests {
///     @Test(.flagOverrides([ShopFlags.checkout.overridden(to: "twoStep")]))
///     func twoStepCheckout() { … }
/// }
/// ```
///
/// Traits nest as scopes do: a test's overrides win over its suite's, and names neither
/// overrides answer from the rules. Tests running in parallel with different overrides
/// never see each other's values (each scope is the test task's own).
public struct FlagOverridesTrait: TestTrait, SuiteTrait, TestScoping {
    /// The values in force while the test runs.
    public let overrides: FlagOverrides

    /// On a suite, the overrides are in force in each of its tests and nested suites.
    public var isRecursive: Bool { true }

    /// Runs the test with the overrides in force.
    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withFlagOverrides(overrides) { try await function() }
    }
}

extension Trait where Self == FlagOverridesTrait {
    /// Runs the test (each test of the suite) with `overrides` in force: a dictionary of
    /// names and values, or typed keys' overrides (`ShopFlags.checkout.overridden(to: "twoStep")`).
    public static func flagOverrides(_ overrides: FlagOverrides) -> FlagOverridesTrait {
        FlagOverridesTrait(overrides: overrides)
    }
}
