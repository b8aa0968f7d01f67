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
    /// The rules it was evaluated against (their file's name and version); a store's stand-in
    /// while it has none in force, whose events then name no file and no version.
    private let rules: RuleSet?

    enum Input: Sendable {
        case dictionary(EvaluationContext)
        case prepared(PreparedContext)
    }

    @inline(__always)
    init(name: String, resolution: consuming Resolution, input: consuming Input, rules: RuleSet) {
        self.name = name
        self.resolution = resolution
        self.input = input
        self.rules = rules
    }

    /// The evaluation as OpenTelemetry's `feature_flag.evaluation` event (semantic
    /// conventions for feature flags): its name, and its attributes keyed as the
    /// conventions key them, ready for a span event or a log record:
    ///
    /// | attribute | holds |
    /// |---|---|
    /// | `feature_flag.key` | the declaration's name |
    /// | `feature_flag.result.variant` | the variant, when the result has one |
    /// | `feature_flag.result.value` | the value, when the result has no variant |
    /// | `feature_flag.result.reason` | one of the conventions' values: `static`, `targeting_match`, `split`, `default`, `disabled`, `error`; an override is `static` |
    /// | `flagrules.override` | `true` for a value an override gave (a `withFlagOverrides` scope, a store's overrides) |
    /// | `feature_flag.provider.name` | `FlagRules` |
    /// | `feature_flag.context.id` | the context's `targetingKey`, else its `userId` (as text), when present; ``openTelemetryEvent(contextID:)`` reads another attribute |
    /// | `feature_flag.set.id` | the name the rules file is served under: `NAME` for rules fetched from `…/rules/NAME`, else the file's name (none while a store has no rules in force) |
    /// | `feature_flag.version` | the rules' version: the hash `flags serve` gives as the file's ETag (none without rules) |
    /// | `error.type` | on an error: `flag_not_found`, `type_mismatch`, `parse_error`, `invalid_context`, `general` |
    /// | `feature_flag.error.message` | on an error, its message |
    ///
    /// A version or datetime value is its text; a list, a list of its elements' texts.
    public var openTelemetryEvent: (name: String, attributes: [String: Value]) {
        ("feature_flag.evaluation", Self.openTelemetryAttributes(name, resolution, self["targetingKey"] ?? self["userId"], rules))
    }

    /// ``openTelemetryEvent`` with `feature_flag.context.id` read from `attribute`, an
    /// attribute or a field by its path (a model whose id is `user.id`), when present.
    ///
    /// ```swift
    /// let event = e.openTelemetryEvent(contextID: "user.id")
    /// ```
    public func openTelemetryEvent(contextID attribute: String) -> (name: String, attributes: [String: Value]) {
        ("feature_flag.evaluation", Self.openTelemetryAttributes(name, resolution, self[attribute], rules))
    }

    /// The event's attributes from its parts (`flags serve` logs its evaluations with them;
    /// a server does not know its clients' defaults, which a `fallback` gives them).
    package static func openTelemetryAttributes(
        _ name: String, _ r: Resolution, _ unit: Value?, _ rules: RuleSet?, servedAs setID: String? = nil,
        knowsCallersDefault: Bool = true
    ) -> [String: Value] {
        var a: [String: Value] = [
            "feature_flag.key": .string(name), "feature_flag.result.reason": .string(telemetryReason(r.reason)),
            "feature_flag.provider.name": "FlagRules",
        ]
        if r.reason == .override { a["flagrules.override"] = true }
        if let variant = r.variant {
            a["feature_flag.result.variant"] = .string(variant)
        } else if !r.isFallback || knowsCallersDefault {
            a["feature_flag.result.value"] = telemetryValue(r.value)
        }
        if let unit = unit.flatMap(BucketUnit.init) { a["feature_flag.context.id"] = .string(VendorRollout.text(unit)) }
        if let rules, !rules.isStandIn {
            a["feature_flag.set.id"] = .string(setID ?? rules.servedName)
            a["feature_flag.version"] = .string(rules.contentVersion)
        }
        if let code = r.errorCode {
            a["error.type"] = .string(code.rawValue.lowercased())
            if let message = r.errorMessage { a["feature_flag.error.message"] = .string(message) }
        }
        return a
    }

    /// The reason as the semantic conventions' `feature_flag.result.reason` names it: an
    /// override, which they do not name, is a `static` value (``Resolution/Reason/override``
    /// is said in `flagrules.override`).
    package static func telemetryReason(_ reason: Resolution.Reason) -> String {
        reason == .override ? "static" : reason.rawValue.lowercased()
    }

    /// A value as an attribute holds one: a bool, an int, a double or a string as it is;
    /// a version or a datetime as its text; a list as its elements' texts.
    static func telemetryValue(_ v: Value) -> Value {
        switch v {
        case .bool, .int, .double, .string: return v
        case .version(let version): return .string(version.description)
        case .datetime(let d): return .string(DateTime.format(d))
        case .list(let elements): return .list(elements.map { telemetryValue($0) })
        case .object: return .string(v.json.serialized())
        }
    }

    /// The context the declaration was evaluated in, the store's base context under it.
    public var context: EvaluationContext {
        switch input {
        case .dictionary(let context): return context
        case .prepared(let context): return context.dictionary
        }
    }

    /// One attribute of the context, or a field by its path (`e["userId"]`, or a split's
    /// unit `e["device.id"]`), read without building the whole context.
    public subscript(attribute: String) -> Value? {
        switch input {
        case .dictionary(let context): return context.value(atPath: attribute)
        case .prepared(let context): return context.value(atPath: attribute)
        }
    }
}
