import FlagRulesAtomics

/// Values that replace what the rules say, by declaration name: for a test, a preview, a
/// debug screen.
///
/// ```swift
/// withFlagOverrides(["darkMode": true, "checkout": "oneStep"]) {
///     #expect(store.isEnabled("darkMode"))
/// }
/// ```
public struct FlagOverrides: Sendable, Hashable, ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral {
    /// The values, by declaration name (a variant's by its name as a string).
    public private(set) var values: [String: Value]

    /// Overrides of `values`.
    public init(_ values: [String: Value] = [:]) { self.values = values }

    /// Overrides from a literal: `["darkMode": true, "pageSize": 60]`.
    public init(dictionaryLiteral elements: (String, Value)...) {
        values = Dictionary(elements, uniquingKeysWith: { _, last in last })
    }

    /// Typed overrides: `[AppFlags.darkMode.overridden(to: true)]`.
    public init(arrayLiteral elements: FlagOverride...) {
        values = Dictionary(elements.map { ($0.name, $0.value) }, uniquingKeysWith: { _, last in last })
    }

    /// Whether there are none.
    public var isEmpty: Bool { values.isEmpty }

    /// The override of `name`, if any; setting nil removes it.
    public subscript(name: String) -> Value? {
        get { values[name] }
        set { values[name] = newValue }
    }

    /// Overrides `key` with `value`.
    public mutating func set<V>(_ key: FlagKey<V>, to value: V) { values[key.name] = value.flagValue }

    /// These overrides with `key` set to `value`.
    public func setting<V>(_ key: FlagKey<V>, to value: V) -> FlagOverrides {
        var copy = self
        copy.set(key, to: value)
        return copy
    }

    /// These overrides with `other`'s added, `other` winning.
    public func merging(_ other: FlagOverrides) -> FlagOverrides {
        FlagOverrides(values.merging(other.values) { _, inner in inner })
    }

    /// The overrides in force for the code running now: every enclosing
    /// `withFlagOverrides` scope of the current task, the inner ones winning.
    public static var current: FlagOverrides { OverrideScopes.everEntered ? (scoped ?? [:]) : [:] }

    /// The scopes' overrides, merged, bound to the task (and inherited by its child tasks).
    @TaskLocal static var scoped: FlagOverrides?
}

/// One typed override: `AppFlags.checkout.overridden(to: .oneStep)`.
public struct FlagOverride: Sendable, Hashable {
    /// The declaration's name.
    public let name: String
    /// The value it is given.
    public let value: Value
}

extension FlagKey {
    /// An override of this key, for ``withFlagOverrides(_:_:)-(_,()->R)`` or a debug screen.
    public func overridden(to value: Wrapped) -> FlagOverride { FlagOverride(name: name, value: value.flagValue) }
}

/// Runs `operation` with `overrides` in force for every evaluation it makes, on this task
/// and the tasks it starts: `RuleSet`, `FlagStore`, typed keys, handles and prepared
/// contexts answer the overridden value with reason `OVERRIDE`. Scopes nest: an inner
/// scope's values win, and names it does not override fall through to the outer scope,
/// then to the rules. Parallel tasks with different scopes never see each other's values.
public func withFlagOverrides<R>(_ overrides: FlagOverrides, _ operation: () throws -> R) rethrows -> R {
    OverrideScopes.enter()
    return try FlagOverrides.$scoped.withValue(FlagOverrides.current.merging(overrides), operation: operation)
}

/// Runs `operation` with `overrides` in force (see the synchronous form).
public func withFlagOverrides<R>(
    _ overrides: FlagOverrides, isolation: isolated (any Actor)? = #isolation, _ operation: () async throws -> R
) async rethrows -> R {
    OverrideScopes.enter()
    return try await FlagOverrides.$scoped.withValue(
        FlagOverrides.current.merging(overrides), operation: operation, isolation: isolation)
}

/// Whether any override scope has been entered in this process. Until one has, an
/// evaluation checks for overrides with one load of this switch and nothing else; after
/// one has, it reads the task-local scope too (a task started inside a scope may outlive
/// it, so the switch is never turned back off).
enum OverrideScopes {
    nonisolated(unsafe) private static let entered: UnsafeMutablePointer<Int32> = {
        let p = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
        p.initialize(to: 0)
        return p
    }()

    @inline(__always)
    static var everEntered: Bool { flagrules_atomic_load(entered) != 0 }

    static func enter() {
        if !everEntered { flagrules_atomic_store(entered, 1) }
    }
}

extension Resolution {
    /// The resolution an override gives: its value with reason `OVERRIDE`, or, when it does
    /// not fit the declaration (a string for a flag, a variant it lacks), `fallback` (else
    /// the declaration's default) with `TYPE_MISMATCH`. A name the rules lack takes the
    /// override as it is.
    static func overridden(_ name: String, _ value: Value, _ declaration: DeclarationInfo?, default fallback: Value?) -> Resolution {
        guard let d = declaration else {
            return Resolution(
                value: value, reason: .override, errorCode: nil, ruleNumber: 0, lineNumber: 0, variant: nil, errorMessage: nil)
        }
        var fits: Bool
        var value = value
        switch (d.kind, value, d.defaultValue) {
        case (.variant, .string(let s), _): fits = d.variants.contains(s)
        case (.flag, .bool, _), (.segment, .bool, _), (.value, .bool, .bool), (.value, .int, .int), (.value, .double, .double),
            (.value, .string, .string):
            fits = true
        case (.value, .int(let i), .double):
            fits = true
            value = .double(Double(i))
        default: fits = false
        }
        guard fits else {
            let message = "the override of '\(name)' is \(value), which does not fit its type, \(d.type)"
            return .error(.typeMismatch, message, default: fallback ?? d.defaultValue)
        }
        return Resolution(
            value: value, reason: .override, errorCode: nil, ruleNumber: 0, lineNumber: 0,
            variant: d.kind == .variant ? value.stringValue : nil, errorMessage: nil)
    }
}
