import FlagRules

extension Lint {
    /// FR108: a variant that no rule, split entry or default gives: dead code in every app
    /// that switches over the variants.
    static let variantNeverProduced = Lint(
        code: "FR108", name: "variant-never-produced", summary: "a variant that no rule and no default can give"
    ) { input in
        var out: [Diagnostic] = []
        for d in input.checked.declarations where d.kind == .variant && d.variantRanges.count == d.variants.count {
            var produced: Set<String> = [d.defaultValue.stringValue ?? ""]
            for rule in d.rules {
                switch rule.outcome {
                case .value(let v): produced.insert(v.stringValue ?? "")
                case .fallback: break
                case .split(let s):
                    for (k, w) in s.weights.enumerated() where w > 0 && !s.isFallback(k) {
                        produced.insert(s.outcomes[k].stringValue ?? "")
                    }
                }
            }
            for (k, name) in d.variants.enumerated() where !produced.contains(name) {
                out.append(
                    .warning(
                        "FR108", "variant '\(name)' of '\(d.name)' is given by no rule, split or default", at: d.variantRanges[k],
                        help: "remove it, or add a rule that gives it"))
            }
        }
        return out
    }
}
