import FlagRules

extension Lint {
    /// FR114: two splits in different declarations bucketing the same unit with the same
    /// salt put every unit in the same place in both: their assignments are correlated (the
    /// first slice of one is the first slice of the other), which an experiment's analysis
    /// takes for independent. A split's salt is its declaration's name unless written.
    static let sharedSplitSalt = Lint(
        code: "FR114", name: "shared-split-salt", summary: "two splits of different declarations with the same salt"
    ) { input in
        var first: [String: (declaration: String, range: SourceRange)] = [:]
        var out: [Diagnostic] = []
        for d in input.checked.declarations {
            for rule in d.rules {
                guard case .split(let s) = rule.outcome else { continue }
                let key = s.salt + "\u{0}" + input.text(s.unit.range)
                if let earlier = first[key], earlier.declaration != d.name {
                    out.append(
                        .warning(
                            "FR114",
                            "this split buckets \(input.text(s.unit.range)) with the salt \"\(s.salt)\", as '\(earlier.declaration)' does: "
                                + "their assignments are correlated",
                            at: rule.range, notes: [.init("the split of '\(earlier.declaration)' is here", at: earlier.range)],
                            help:
                                "give each experiment its own salt (the default, its name, is one); share one only to correlate on purpose")
                    )
                } else if first[key] == nil {
                    first[key] = (d.name, rule.range)
                }
            }
        }
        return out
    }
}
