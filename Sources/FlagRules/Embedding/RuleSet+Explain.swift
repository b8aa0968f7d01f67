/// Why a declaration resolved as it did.
extension RuleSet {
    /// Every rule tried for `name` and the value of every sub-expression, or nil when no
    /// declaration has that name. Inside a `withFlagOverrides` scope that overrides it, the
    /// override, with no rules tried; for a rule set that checks contexts strictly, a
    /// mistyped value's `INVALID_CONTEXT`, with no rules tried.
    public func explain(_ name: String, in context: EvaluationContext) -> Explanation? {
        guard let i = program.names.index(of: name) else { return nil }
        if OverrideScopes.everEntered, FlagOverrides.scoped?[name] != nil {
            let r = evaluate(name, in: context)
            return Explanation(name: name, resolution: r, rules: [], condition: nil, summary: "overridden by a withFlagOverrides scope")
        }
        if let problem = strictProblem(context) {
            return Explanation(
                name: name, resolution: invalidContext(problem, declaration: i, default: nil), rules: [], condition: nil,
                summary: "the context is invalid (strict): \(problem)")
        }
        return Explainer(checked: checked, source: source, context: context).explain(i)
    }
}

extension RuleSet {
    /// The error for rules that declare no flag, variant, value or segment (an empty or
    /// truncated file): a store, `flags serve` and `flags check` all refuse them with it.
    /// Nil when something is declared.
    package var declaresNothing: Diagnostic? {
        guard checked.declarations.isEmpty else { return nil }
        let start = SourcePosition(offset: 0, line: 1, column: 1)
        return .error(
            "no-declarations", "the rules declare nothing: an empty or truncated file never replaces rules",
            at: SourceRange(start: start, end: start), help: "declare a flag, variant, value or segment")
    }

    /// The attributes a declaration's rollouts and splits bucket by that `context` lacks,
    /// when no rule decided `r` (so a default may be the absent unit's doing); sorted.
    package func absentUnits(of name: String, resolution r: Resolution, in context: EvaluationContext) -> [String] {
        guard let info = declaration(named: name) else { return [] }
        return absentUnits(info.bucketingUnits, resolution: r, in: context)
    }

    /// ``absentUnits(of:resolution:in:)`` of a declaration's bucketing units.
    package func absentUnits(_ units: [String], resolution r: Resolution, in context: EvaluationContext) -> [String] {
        guard r.rule == nil, r.reason == .default, !units.isEmpty else { return [] }
        return units.filter { context.value(atPath: $0) == nil }
    }
}
