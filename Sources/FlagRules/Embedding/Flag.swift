/// A property that reads a typed key from a store, with the store's base context:
///
/// ```swift
/// final class SettingsScreen {
///     @Flag(AppFlags.darkMode) var darkMode          // FlagStore.shared
///     @Flag(AppFlags.checkout, store: store) var checkout
/// }
/// ```
///
/// It reads through the store's ``FlagStore/observed`` path: a SwiftUI view (or any
/// `withObservationTracking`) that reads it is updated when the value it read changes,
/// because rules were put in force, the base context or a local override changed.
///
/// It captures the `withFlagOverrides` scopes in force when it is made: an object made
/// inside a scope (a test's, a preview's) keeps the scope's values for its whole life,
/// after the scope has returned. A scope in force when it is read wins over the captured
/// one. `$darkMode` is the typed value with its resolution (reason, variant, error).
@propertyWrapper
public struct Flag<Wrapped: FlagValue>: Sendable {
    /// The key read.
    public let key: FlagKey<Wrapped>
    private let store: FlagStore?
    private let context: EvaluationContext
    private let captured: FlagOverrides

    /// Reads `key` from `store` (else ``FlagStore/shared`` at each read) with `context`
    /// over the store's base context.
    public init(_ key: FlagKey<Wrapped>, store: FlagStore? = nil, in context: EvaluationContext = [:]) {
        self.key = key
        self.store = store
        self.context = context
        self.captured = FlagOverrides.current
    }

    /// The value now.
    public var wrappedValue: Wrapped { projectedValue.value }

    /// The value now, with its resolution.
    public var projectedValue: TypedResolution<Wrapped> {
        let store = self.store ?? FlagStore.shared
        guard !captured.isEmpty else { return store.observed.evaluate(key, in: context) }
        return withFlagOverrides(captured.merging(FlagOverrides.current)) { store.observed.evaluate(key, in: context) }
    }
}
