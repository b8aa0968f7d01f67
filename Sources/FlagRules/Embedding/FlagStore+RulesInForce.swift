extension FlagStore {
    /// What evaluations read, swapped whole: the rules in force, the base context, the
    /// local overrides and the evaluation hook.
    final class RulesInForce: Sendable {
        let rules: RuleSet?
        /// Why the latest update failed, if it did.
        let failure: RuleSetError?
        let base: EvaluationContext
        /// The store's own overrides (a debug screen's): under scoped ones, over the rules.
        let local: FlagOverrides
        /// The evaluation hook's closure, called in place by `report`.
        let onEvaluation: (@Sendable (FlagEvaluation) -> Void)?
        /// The same hook in a class, for passing out of a borrow (through a generic result):
        /// a class costs a retain where a closure would be re-wrapped, allocating.
        let hook: EvaluationHook?
        /// Where exposures are recorded, when they are.
        let exposures: ExposureLog?
        /// Where `@sticky` assignments are kept, when they are.
        let assignments: (any AssignmentStorage)?
        /// The rules evaluations run: those in force, else rules with no declarations.
        let evaluated: RuleSet
        /// Whether evaluations answer as the rules' own calls: no hook, no local override,
        /// rules loaded (the entry points' fast path).
        let answersAsRules: Bool
        /// Whether evaluations answer as the rules' own calls on the caller's context as it
        /// is: `answersAsRules`, and no base context to merge.
        let answersDirectly: Bool
        /// The local overrides, and the answer while no rules have loaded; nil when they
        /// change nothing (the evaluations' fast path then copies nothing of them).
        let layers: EvaluationLayers?

        init(
            rules: RuleSet?, failure: RuleSetError? = nil, base: EvaluationContext, local: FlagOverrides = [:],
            onEvaluation: (@Sendable (FlagEvaluation) -> Void)? = nil, exposures: ExposureLog? = nil,
            assignments: (any AssignmentStorage)? = nil
        ) {
            self.rules = rules
            self.exposures = exposures
            self.assignments = assignments
            self.failure = failure
            self.base = base
            self.local = local
            self.hook = onEvaluation.map(EvaluationHook.init)
            self.onEvaluation = onEvaluation
            evaluated = rules ?? FlagStore.noRules
            let layers = EvaluationLayers(local: local, missing: rules == nil ? MissingRules(failure: failure) : nil)
            self.layers = layers.isEmpty ? nil : layers
            answersAsRules = hook == nil && layers.isEmpty
            answersDirectly = answersAsRules && base.count == 0
        }

        func with(
            rules: RuleSet?? = nil, failure: RuleSetError?? = nil, base: EvaluationContext? = nil, local: FlagOverrides? = nil,
            onEvaluation: (@Sendable (FlagEvaluation) -> Void)?? = nil, exposures: ExposureLog?? = nil,
            assignments: (any AssignmentStorage)?? = nil
        ) -> RulesInForce {
            RulesInForce(
                rules: rules ?? self.rules, failure: failure ?? self.failure, base: base ?? self.base, local: local ?? self.local,
                onEvaluation: onEvaluation ?? self.onEvaluation, exposures: exposures ?? self.exposures,
                assignments: assignments ?? self.assignments)
        }

        /// Calls the evaluation hook, if one is set, with `event`: the closure is read from
        /// this object, borrowed, with no reference count.
        @inline(__always)
        func report(_ event: FlagEvaluation) {
            onEvaluation?(event)
        }

        /// `context` over the base context, its keys winning.
        @inline(__always)
        func merged(_ context: EvaluationContext) -> EvaluationContext {
            base.count == 0 ? context : base.merging(context)
        }

        /// The resolution of `name` in `context` (over the base context), with no hook
        /// called: for subscriptions, debug screens and the hooked entry points.
        @inline(__always)
        func resolve(_ name: String, _ context: EvaluationContext, expecting kind: DeclarationKind?, _ fallback: Value?) -> Resolution {
            evaluated.resolve(name, evaluated.index(of: name), merged(context), expecting: kind, default: fallback, layers)
        }
    }
}

/// A store's evaluation hook.
final class EvaluationHook: Sendable {
    let call: @Sendable (FlagEvaluation) -> Void
    init(_ call: @escaping @Sendable (FlagEvaluation) -> Void) { self.call = call }
}
