/// Everything a `RuleSet` answers, from the rules in force, each call's context merged
/// over the base context, overrides first: a `withFlagOverrides` scope's, then the store's
/// local ones. Before any rules have loaded, each answer is the caller's default (with
/// reason `ERROR` in a resolution).
extension FlagStore {
    /// The rules in force, the base context, the overrides and the hook, read once.
    @inline(__always)
    private var now: InForce { inForceSnapshot() }

    /// Resolves a declaration (`RuleSet.evaluate(_:in:default:)`).
    public func evaluate(_ name: String, in context: EvaluationContext = [:], default fallback: Value? = nil) -> Resolution {
        let s = now
        let r = s.resolve(name, context, fallback)
        s.onEvaluation?(name, r)
        return r
    }

    /// Whether a flag is on; `fallback` when it is unknown, not a flag, or no rules have
    /// loaded.
    public func isEnabled(_ name: String, in context: EvaluationContext = [:], default fallback: Bool = false) -> Bool {
        // The common case, no hook: evaluated with the rules borrowed, not retained. With a
        // hook, what is in force is kept (retained) to build the resolution the hook gets.
        let (answer, hooked) = withInForce { (s: InForce) -> (Bool, InForce?) in
            guard s.onEvaluation == nil else { return (fallback, s) }
            return (s.isEnabled(name, context, fallback), nil)
        }
        guard let hooked else { return answer }
        let r = hooked.resolve(name, context, expecting: .flag, .bool(fallback))
        hooked.onEvaluation?(name, r)
        return r.value.boolValue ?? fallback
    }

    /// The chosen variant's name; `fallback` when the name is unknown or not a variant.
    public func variant(_ name: String, in context: EvaluationContext = [:], default fallback: String = "") -> String {
        typed(name, context, .variant, .string(fallback)).value.stringValue ?? fallback
    }

    /// An int value; `fallback` when the name is unknown or not an int value.
    public func value(_ name: String, in context: EvaluationContext = [:], default fallback: Int) -> Int {
        typed(name, context, .value, .int(fallback)).value.intValue ?? fallback
    }

    /// A double value; `fallback` when the name is unknown or not a number.
    public func value(_ name: String, in context: EvaluationContext = [:], default fallback: Double) -> Double {
        typed(name, context, .value, .double(fallback)).value.doubleValue ?? fallback
    }

    /// A string value; `fallback` when the name is unknown or not a string value.
    public func value(_ name: String, in context: EvaluationContext = [:], default fallback: String) -> String {
        typed(name, context, .value, .string(fallback)).value.stringValue ?? fallback
    }

    /// A bool value; `fallback` when the name is unknown or not a bool value.
    public func value(_ name: String, in context: EvaluationContext = [:], default fallback: Bool) -> Bool {
        typed(name, context, .value, .bool(fallback)).value.boolValue ?? fallback
    }

    /// Resolves every flag, variant and value, keyed by name, overrides included; empty
    /// before rules load.
    public func evaluateAll(in context: EvaluationContext = [:]) -> [String: Resolution] {
        let s = now
        guard let rules = s.rules else { return [:] }
        var all = rules.evaluateAll(in: s.merged(context))
        for name in s.local.values.keys where all[name] != nil {
            if let r = s.preempt(name, nil) { all[name] = r }
        }
        return all
    }

    // MARK: Typed keys

    /// A declaration's typed value and its resolution; the key's default with reason
    /// `ERROR` before rules load, or when the rules lack it or give another type.
    public func evaluate<V>(_ key: FlagKey<V>, in context: EvaluationContext = [:]) -> TypedResolution<V> {
        key.typed(typed(key.name, context, key.kind, key.defaultValue.flagValue))
    }

    /// A declaration's typed value: `store[AppFlags.checkout, in: context]`.
    public subscript<V>(key: FlagKey<V>, in context: EvaluationContext = [:]) -> V {
        evaluate(key, in: context).value
    }

    // MARK: Prepared contexts and handles

    /// A handle on `name`, for evaluating it without a name lookup while these rules are
    /// in force (after an update it is looked up by name once a call). A name the rules
    /// lack resolves to `FLAG_NOT_FOUND`.
    public func handle(_ name: String) -> DeclarationHandle {
        now.rules?.handle(name) ?? DeclarationHandle(name: name, index: -1, owner: FlagStore.noRules.program)
    }

    /// The base context laid out for the rules in force, ready to be filled in.
    public func makeContext() -> PreparedContext {
        let s = now
        return (s.rules ?? FlagStore.noRules).prepare(s.base)
    }

    /// `context` over the base context, laid out for the rules in force. (A prepared context
    /// keeps the base context it was prepared with; one prepared for earlier rules is read
    /// by name.)
    public func prepare(_ context: EvaluationContext) -> PreparedContext {
        let s = now
        return (s.rules ?? FlagStore.noRules).prepare(s.merged(context))
    }

    /// Resolves a declaration by handle against a prepared context.
    public func evaluate(_ handle: DeclarationHandle, in context: PreparedContext, default fallback: Value? = nil) -> Resolution {
        resolve(now, handle, context, fallback)
    }

    /// Whether a flag is on, by handle against a prepared context.
    public func isEnabled(_ handle: DeclarationHandle, in context: PreparedContext, default fallback: Bool = false) -> Bool {
        // As by name: borrowed when nothing but the rules answers, else one retained read.
        let (answer, other) = withInForce { (s: InForce) -> (Bool, InForce?) in
            guard s.onEvaluation == nil, s.local.isEmpty, let rules = s.rules else { return (fallback, s) }
            return (rules.isEnabled(handle, in: context, default: fallback), nil)
        }
        guard let other else { return answer }
        return resolve(other, handle, context, .bool(fallback)).value.boolValue ?? fallback
    }

    private func resolve(_ s: InForce, _ handle: DeclarationHandle, _ context: PreparedContext, _ fallback: Value?) -> Resolution {
        let r = s.preempt(handle.name, fallback) ?? s.rules?.evaluate(handle, in: context, default: fallback) ?? s.missing(fallback)
        s.onEvaluation?(handle.name, r)
        return r
    }

    // MARK: Helpers

    /// Rules with no declarations, to lay prepared contexts out for before any have loaded.
    static let noRules: RuleSet = {
        do {
            return try RuleSet(source: "", name: "<none>")
        } catch {
            preconditionFailure("an empty source compiles")
        }
    }()

    private func typed(_ name: String, _ context: EvaluationContext, _ kind: DeclarationKind, _ fallback: Value) -> Resolution {
        let s = now
        let r = s.resolve(name, context, expecting: kind, fallback)
        s.onEvaluation?(name, r)
        return r
    }
}
