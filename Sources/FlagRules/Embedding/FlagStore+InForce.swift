extension FlagStore {
    /// What evaluations read, swapped whole: the rules in force, the base context, the
    /// local overrides and the evaluation hook.
    final class InForce: Sendable {
        let rules: RuleSet?
        /// Why the latest update failed, if it did.
        let failure: RuleSetError?
        let base: EvaluationContext
        /// The store's own overrides (a debug screen's): under scoped ones, over the rules.
        let local: FlagOverrides
        let onEvaluation: (@Sendable (String, Resolution) -> Void)?

        init(
            rules: RuleSet?, failure: RuleSetError? = nil, base: EvaluationContext, local: FlagOverrides = [:],
            onEvaluation: (@Sendable (String, Resolution) -> Void)? = nil
        ) {
            self.rules = rules
            self.failure = failure
            self.base = base
            self.local = local
            self.onEvaluation = onEvaluation
        }

        func with(
            rules: RuleSet?? = nil, failure: RuleSetError?? = nil, base: EvaluationContext? = nil, local: FlagOverrides? = nil,
            onEvaluation: (@Sendable (String, Resolution) -> Void)?? = nil
        ) -> InForce {
            InForce(
                rules: rules ?? self.rules, failure: failure ?? self.failure, base: base ?? self.base, local: local ?? self.local,
                onEvaluation: onEvaluation ?? self.onEvaluation)
        }

        /// `context` over the base context, its keys winning.
        @inline(__always)
        func merged(_ context: EvaluationContext) -> EvaluationContext {
            base.count == 0 ? context : base.merging(context)
        }

        /// The resolution when no rules have loaded.
        func missing(_ fallback: Value?) -> Resolution {
            let value = fallback ?? .bool(false)
            switch failure {
            case .invalid?:
                return .error(.parseError, "the rules have errors: " + (failure?.errors.first?.message ?? "unknown"), default: value)
            case .unreadable?:
                return .error(.general, failure?.description ?? "", default: value)
            case nil:
                return .error(.general, "no rules have been loaded", default: value)
            }
        }

        /// What answers before the rules do: a local override (unless a scope overrides the
        /// name), or, with no rules, a scoped override or the caller's default. Nil when
        /// the rules answer (and they check the scopes themselves).
        @inline(__always)
        func preempt(_ name: String, _ fallback: Value?) -> Resolution? {
            if local.isEmpty, rules != nil { return nil }
            return slowPreempt(name, fallback)
        }

        @inline(never)
        private func slowPreempt(_ name: String, _ fallback: Value?) -> Resolution? {
            if let value = local[name], FlagOverrides.current[name] == nil {
                let declaration = rules?.declaration(named: name)
                let r = Resolution.overridden(name, value, declaration, default: fallback)
                return RuleSet.typed(r, name, fallback)
            }
            guard rules == nil else { return nil }
            if let r = FlagStore.noRules.scopedOverride(name, nil, default: fallback) {
                return RuleSet.typed(r, name, fallback)
            }
            return missing(fallback)
        }

        /// Whether a flag is on, with the rules and the context borrowed, not copied.
        @inline(__always)
        func isEnabled(_ name: String, _ context: EvaluationContext, _ fallback: Bool) -> Bool {
            if let r = preempt(name, .bool(fallback)) { return r.reason == .error ? fallback : r.value.boolValue ?? fallback }
            if base.count == 0 { return rules?.isEnabled(name, in: context, default: fallback) ?? fallback }
            return rules?.isEnabled(name, in: base.merging(context), default: fallback) ?? fallback
        }

        func resolve(_ name: String, _ context: EvaluationContext, _ fallback: Value?) -> Resolution {
            if let r = preempt(name, fallback) { return r }
            return rules?.evaluate(name, in: merged(context), default: fallback) ?? missing(fallback)
        }

        func resolve(_ name: String, _ context: EvaluationContext, expecting kind: DeclarationKind, _ fallback: Value) -> Resolution {
            if let r = preempt(name, fallback) { return r }
            return rules?.evaluate(name, in: merged(context), expecting: kind, default: fallback) ?? missing(fallback)
        }
    }
}
