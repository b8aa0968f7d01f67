/// What a `RuleSet` and a `FlagStore` both answer, in the same words: code written against
/// this protocol takes either (a store in the app, fixed rules in a test).
///
/// The requirements are the primitives each type implements over the one evaluation path;
/// everything typed (``variant(_:in:default:)-(String,_,_)``, ``value(_:in:default:)-(String,_,_)``, typed keys) is
/// written once, here, over them. Every answer goes through the same steps: a scope's
/// override, a store's local override, the name's lookup, the kind, a strict context
/// check, the rules, and the caller's default's type.
public protocol FlagEvaluating: Sendable {
    /// Resolves one declaration. An unknown name gives `fallback` (or `false` when none is
    /// given) with reason `ERROR` and `FLAG_NOT_FOUND`; with a `fallback`, a declaration
    /// whose value is of another type gives `fallback` with `TYPE_MISMATCH` (an int where
    /// a double is expected is converted).
    func evaluate(_ name: String, in context: EvaluationContext, default fallback: Value?) -> Resolution

    /// Resolves a declaration, checking that it is of the expected kind; on any error the
    /// resolution carries `fallback`.
    func evaluate(_ name: String, in context: EvaluationContext, expecting kind: DeclarationKind, default fallback: Value) -> Resolution

    /// Whether a flag is on; `fallback` when the name is unknown or not a flag.
    func isEnabled(_ name: String, in context: EvaluationContext, default fallback: Bool) -> Bool

    /// Resolves every flag, variant and value (not segments), keyed by name.
    func evaluateAll(in context: EvaluationContext) -> [String: Resolution]

    /// A handle on the declaration `name`, for evaluating it without a name lookup. A name
    /// the rules lack resolves to `FLAG_NOT_FOUND` (a store looks it up again once other
    /// rules are in force).
    func handle(_ name: String) -> DeclarationHandle

    /// An empty context laid out for the rules' schema (a store's: its base context).
    func makeContext() -> PreparedContext

    /// `context` laid out for the rules' schema, each value checked once.
    func prepare(_ context: EvaluationContext) -> PreparedContext

    /// Resolves a declaration by handle against a prepared context, as by name.
    func evaluate(_ handle: DeclarationHandle, in context: PreparedContext, default fallback: Value?) -> Resolution

    /// Resolves a declaration by handle, checking its kind, as by name.
    func evaluate(_ handle: DeclarationHandle, in context: PreparedContext, expecting kind: DeclarationKind, default fallback: Value)
        -> Resolution

    /// Whether a flag is on, by handle against a prepared context.
    func isEnabled(_ handle: DeclarationHandle, in context: PreparedContext, default fallback: Bool) -> Bool

    /// Whether a flag is on for each context, in order: the same answers as one call a
    /// context (a rollout's reach, the users a change moves).
    func isEnabled(_ handle: DeclarationHandle, in contexts: [PreparedContext], default fallback: Bool) -> [Bool]
}

extension FlagEvaluating {
    /// The chosen variant's name; `fallback` when the name is unknown or not a variant.
    public func variant(_ name: String, in context: EvaluationContext = [:], default fallback: String = "") -> String {
        evaluate(name, in: context, expecting: .variant, default: .string(fallback)).value.stringValue ?? fallback
    }

    /// A value declaration's value, read as the type of `fallback` (`Int`, `Double`,
    /// `String`, `Bool`): `rules.value("cacheHours", default: 24)`. `fallback` when the
    /// name is unknown, not a value, or of another type (an int is read as a double).
    public func value<V: FlagValue>(_ name: String, in context: EvaluationContext = [:], default fallback: V) -> V {
        V(flagValue: evaluate(name, in: context, expecting: .value, default: fallback.flagValue).value) ?? fallback
    }

    /// Resolves a declaration by name against a prepared context.
    public func evaluate(_ name: String, in context: PreparedContext, default fallback: Value? = nil) -> Resolution {
        evaluate(handle(name), in: context, default: fallback)
    }

    /// The chosen variant's name, by handle.
    public func variant(_ handle: DeclarationHandle, in context: PreparedContext, default fallback: String = "") -> String {
        evaluate(handle, in: context, expecting: .variant, default: .string(fallback)).value.stringValue ?? fallback
    }

    /// A value declaration's value, by handle, read as the type of `fallback`.
    public func value<V: FlagValue>(_ handle: DeclarationHandle, in context: PreparedContext, default fallback: V) -> V {
        V(flagValue: evaluate(handle, in: context, expecting: .value, default: fallback.flagValue).value) ?? fallback
    }

    // MARK: Typed keys

    /// A declaration's typed value and its resolution; the key's default with reason
    /// `ERROR` when the rules lack it or give another type.
    public func evaluate<V>(_ key: FlagKey<V>, in context: EvaluationContext = [:]) -> TypedResolution<V> {
        key.typed(evaluate(key.name, in: context, expecting: key.kind, default: key.defaultValue.flagValue))
    }

    /// A declaration's typed value against a prepared context.
    public func evaluate<V>(_ key: FlagKey<V>, in context: PreparedContext) -> TypedResolution<V> {
        key.typed(evaluate(handle(key.name), in: context, expecting: key.kind, default: key.defaultValue.flagValue))
    }

    /// A declaration's typed value: `rules[AppFlags.checkout, in: context]`.
    public subscript<V>(key: FlagKey<V>, in context: EvaluationContext = [:]) -> V {
        evaluate(key, in: context).value
    }

    /// A declaration's typed value against a prepared context.
    public subscript<V>(key: FlagKey<V>, in context: PreparedContext) -> V {
        evaluate(key, in: context).value
    }
}

/// One evaluation, as a store's ``FlagStore/onEvaluation`` hook receives it: the name,
/// the resolution, and the context it was made in (the call's over the store's base
/// context). What an exposure log, an experiment's assignment or a metric needs.
///
/// ```swift
/// store.onEvaluation = { e in
///     if e.resolution.reason == .split { analytics.expose(e.name, e.resolution.variant, user: e["userId"]) }
/// }
/// ```
///
/// The context is built only when read: a hook that reads only the name and the
/// resolution costs no copy of it.
public struct FlagEvaluation: Sendable {
    /// The declaration's name.
    public let name: String
    /// What it resolved to (overrides and errors included).
    public let resolution: Resolution
    private let input: Input

    enum Input: Sendable {
        case dictionary(EvaluationContext)
        case prepared(PreparedContext)
    }

    @inline(__always)
    init(name: String, resolution: consuming Resolution, input: consuming Input) {
        self.name = name
        self.resolution = resolution
        self.input = input
    }

    /// The context the declaration was evaluated in, the store's base context under it.
    public var context: EvaluationContext {
        switch input {
        case .dictionary(let context): return context
        case .prepared(let context): return context.dictionary
        }
    }

    /// One attribute of the context (`e["userId"]`, the targeting unit of a split), read
    /// without building the whole context.
    public subscript(attribute: String) -> Value? {
        switch input {
        case .dictionary(let context): return context[attribute]
        case .prepared(let context): return context[attribute]
        }
    }
}
