/// Everything a `RuleSet` answers (``FlagEvaluating``), from the rules in force, each
/// call's context merged over the base context, overrides first: a `withFlagOverrides`
/// scope's, then the store's local ones. Before any rules have loaded, each answer is the
/// caller's default (with reason `ERROR` in a resolution).
///
/// Every entry point reads what is in force once, borrowed (no lock, no reference count
/// in the common case), and evaluates over the one evaluation path; the evaluation hook,
/// when set, is called after the borrow has ended, so that it may read the store.
extension FlagStore: FlagEvaluating {
    /// Resolves a declaration (`RuleSet.evaluate(_:in:default:)`).
    public func evaluate(_ name: String, in context: EvaluationContext = [:], default fallback: Value? = nil) -> Resolution {
        byName(name, context, nil, fallback)
    }

    /// Resolves a declaration, checking that it is of the expected kind.
    public func evaluate(_ name: String, in context: EvaluationContext, expecting kind: DeclarationKind, default fallback: Value)
        -> Resolution
    {
        byName(name, context, kind, fallback)
    }

    /// Whether a flag is on; `fallback` when it is unknown, not a flag, or no rules have
    /// loaded.
    public func isEnabled(_ name: String, in context: EvaluationContext = [:], default fallback: Bool = false) -> Bool {
        // The common case (no hook, no local override, rules loaded) answers as the rule
        // set's own call, borrowed; the rest resolves, then reports after the borrow, with
        // what is in force retained from the same read.
        var held: RulesInForce?
        let answer = withInForce { (s: RulesInForce) -> Bool in
            if s.answersDirectly { return s.evaluated.isEnabled(name, in: context, default: fallback) }
            guard s.answersAsRules else {
                held = s
                return fallback
            }
            return s.evaluated.isEnabled(name, in: s.base.merging(context), default: fallback)
        }
        guard let s = held else { return answer }
        return flagByName(s, name, context, fallback)
    }

    /// Resolves every flag, variant and value, keyed by name, overrides included; empty
    /// before rules load. The hook is called once for each. It records no exposure: a web
    /// view's bootstrap or a debug screen reading every flag exposes no one to an
    /// experiment (see ``evaluateAll(in:recordingExposures:)``).
    public func evaluateAll(in context: EvaluationContext = [:]) -> [String: Resolution] {
        evaluateAll(in: context, recordingExposures: false)
    }

    /// Resolves every flag, variant and value, as ``evaluateAll(in:)``, recording the
    /// exposures of the splits it resolves when `recordingExposures` is true (every
    /// declaration is used, as a server that hands them all to its client uses them).
    public func evaluateAll(in context: EvaluationContext, recordingExposures: Bool) -> [String: Resolution] {
        var (all, hook, merged, log, rules, storage) = withInForce { s in
            let merged = s.merged(context)
            return (s.evaluated.resolveAll(merged, s.layers), s.hook, merged, s.exposures, s.evaluated, s.assignments)
        }
        if let storage {
            for (name, r) in all where r.reason == .split { all[name] = rules.sticky(r, name, storage: storage) { merged[$0] } }
        }
        if let log, recordingExposures {
            for (name, r) in all where r.reason == .split {
                log.record(name, rules.index(of: name), r, rules: rules) { merged[$0] }
            }
        }
        if let hook {
            for (name, r) in all { hook.call(FlagEvaluation(name: name, resolution: r, input: .dictionary(merged), rules: rules)) }
        }
        return all
    }

    // MARK: Prepared contexts and handles

    /// A handle on `name`, for evaluating it without a name lookup while these rules are
    /// in force (after an update it is looked up by name once a call). A name the rules
    /// lack resolves to `FLAG_NOT_FOUND`.
    public func handle(_ name: String) -> DeclarationHandle {
        withInForce { $0.evaluated.handle(name) }
    }

    /// The base context laid out for the rules in force, ready to be filled in.
    public func makeContext() -> PreparedContext {
        withInForce { $0.evaluated.prepare($0.base) }
    }

    /// `context` over the base context, laid out for the rules in force. (A prepared context
    /// keeps the base context it was prepared with; one prepared for earlier rules is read
    /// by name.)
    public func prepare(_ context: EvaluationContext) -> PreparedContext {
        withInForce { $0.evaluated.prepare($0.merged(context)) }
    }

    /// Resolves a declaration by handle against a prepared context.
    public func evaluate(_ handle: DeclarationHandle, in context: PreparedContext, default fallback: Value? = nil) -> Resolution {
        byHandle(handle, context, nil, fallback)
    }

    /// Resolves a declaration by handle, checking its kind.
    public func evaluate(
        _ handle: DeclarationHandle, in context: PreparedContext, expecting kind: DeclarationKind, default fallback: Value
    ) -> Resolution {
        byHandle(handle, context, kind, fallback)
    }

    /// Whether a flag is on, by handle against a prepared context.
    public func isEnabled(_ handle: DeclarationHandle, in context: PreparedContext, default fallback: Bool = false) -> Bool {
        let answer = withInForce { (s: RulesInForce) -> Bool? in
            guard s.answersAsRules else { return nil }
            return s.evaluated.isEnabled(handle, in: context, default: fallback)
        }
        if let answer { return answer }
        return byHandle(handle, context, .flag, .bool(fallback)).value.boolValue ?? fallback
    }

    /// Whether a flag is on for each context, in order, all against one rule set.
    public func isEnabled(_ handle: DeclarationHandle, in contexts: [PreparedContext], default fallback: Bool = false) -> [Bool] {
        let (answers, hook, resolutions, rules) = withInForce { s -> ([Bool], EvaluationHook?, [Resolution], RuleSet) in
            let rules = s.evaluated
            let index = rules.index(of: handle)
            guard let hook = s.hook else {
                return (contexts.map { rules.isOn(handle.name, index, $0, default: fallback, s.layers) }, nil, [], rules)
            }
            let all = contexts.map { rules.resolve(handle.name, index, $0, expecting: .flag, default: .bool(fallback), s.layers) }
            return (all.map { $0.value.boolValue ?? fallback }, hook, all, rules)
        }
        if let hook {
            for (r, context) in zip(resolutions, contexts) {
                hook.call(FlagEvaluation(name: handle.name, resolution: r, input: .prepared(context), rules: rules))
            }
        }
        return answers
    }

    // MARK: The one path, for a store

    /// By name, when the hook or the layers are in play: what is in force is retained once
    /// (one reference count, cheaper than carrying a resolution out of a borrow), then
    /// resolved, then reported to the hook.
    private func byName(_ name: String, _ context: EvaluationContext, _ kind: DeclarationKind?, _ fallback: Value?) -> Resolution {
        let s = withInForce { $0 }
        let merged = s.merged(context)
        let rules = s.evaluated
        let index = rules.index(of: name)
        var r = rules.resolve(name, index, merged, expecting: kind, default: fallback, s.layers)
        if r.reason == .split, let storage = s.assignments {
            r = rules.sticky(r, name, storage: storage, callersDefault: fallback) { merged[$0] }
        }
        if r.reason == .split, let log = s.exposures { log.record(name, index, r, rules: rules) { merged[$0] } }
        s.report(FlagEvaluation(name: name, resolution: r, input: .dictionary(consume merged), rules: rules))
        return r
    }

    /// A flag by name, when the hook or the layers are in play: as `byName`, the resolution
    /// moved into the hook's event (a flag is never split: no assignment or exposure).
    @inline(never)
    private func flagByName(_ s: RulesInForce, _ name: String, _ context: EvaluationContext, _ fallback: Bool) -> Bool {
        let merged = s.merged(context), rules = s.evaluated
        // The resolution is made in the event, not copied into it.
        let event = FlagEvaluation(
            name: name,
            resolution: rules.resolve(name, rules.index(of: name), merged, expecting: .flag, default: .bool(fallback), s.layers),
            input: .dictionary(consume merged), rules: rules)
        s.report(event)
        return event.resolution.value.boolValue ?? fallback
    }

    /// By handle: as by name.
    private func byHandle(_ handle: DeclarationHandle, _ context: PreparedContext, _ kind: DeclarationKind?, _ fallback: Value?)
        -> Resolution
    {
        let s = withInForce { $0 }
        let rules = s.evaluated
        let index = rules.index(of: handle)
        var r = rules.resolve(handle.name, index, context, expecting: kind, default: fallback, s.layers)
        if r.reason == .split, let storage = s.assignments {
            r = rules.sticky(r, handle.name, storage: storage, callersDefault: fallback) { context.value(atPath: $0.path) }
        }
        if r.reason == .split, let log = s.exposures { log.record(handle.name, index, r, rules: rules) { context.value(atPath: $0.path) } }
        s.report(FlagEvaluation(name: handle.name, resolution: r, input: .prepared(context), rules: rules))
        return r
    }

    /// Rules with no declarations, to lay prepared contexts out for before any have loaded
    /// (never named in an evaluation's event: ``RuleSet/isStandIn``).
    static let noRules: RuleSet = {
        do {
            return try RuleSet(source: "", name: "<none>")
        } catch {
            preconditionFailure("an empty source compiles")
        }
    }()
}

extension RuleSet {
    /// Whether these are the rules a store evaluates against while it has none in force.
    var isStandIn: Bool { loaded === FlagStore.noRules.loaded }
}
