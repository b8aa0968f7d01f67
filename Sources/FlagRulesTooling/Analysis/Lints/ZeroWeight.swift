import FlagRules

extension Lint {
    /// FR103: a split entry of weight 0 is never chosen: drop it, or give it a share.
    static let zeroWeight = Lint(
        code: "FR103", name: "zero-weight", summary: "a split entry that is never chosen (weight 0)"
    ) { input in
        var out: [Diagnostic] = []
        for d in input.checked.declarations {
            for rule in d.rules {
                guard case .split(let s) = rule.outcome else { continue }
                for (k, weight) in s.weights.enumerated() where weight == 0 {
                    let shown =
                        s.isFallback(k) ? "fallback" : d.kind == .variant ? (s.outcomes[k].stringValue ?? "") : s.outcomes[k].description
                    out.append(
                        .warning(
                            "FR103", "'\(shown)' has weight 0 in the split of '\(d.name)': no unit is ever given it", at: rule.range,
                            help: "remove the entry, or give it a share"))
                }
            }
        }
        return out
    }
}
