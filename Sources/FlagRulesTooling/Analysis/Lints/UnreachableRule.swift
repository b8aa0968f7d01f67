import FlagRules

extension Lint {
    /// FR105: a rule whose condition implies an earlier rule's of the same declaration (the
    /// same condition, or it and more, joined by `and`) can never decide: the earlier rule
    /// matches first whenever it would.
    static let unreachableRule = Lint(
        code: "FR105", name: "unreachable-rule", summary: "a rule that an earlier rule always matches first"
    ) { input in
        var out: [Diagnostic] = []
        /// The texts of a condition's conjuncts.
        func conjuncts(_ b: Bound) -> Set<String> {
            if case .and(let xs) = b.kind { return Set(xs.map { input.text($0.range) }) }
            return [input.text(b.range)]
        }
        for d in input.checked.declarations {
            var earlier: [(conjuncts: Set<String>, rule: CheckedRule)] = []
            for rule in d.rules {
                guard let c = rule.condition else { continue }
                let mine = conjuncts(c)
                if let first = earlier.first(where: { $0.conjuncts.isSubset(of: mine) }) {
                    out.append(
                        .warning(
                            "FR105",
                            "rule \(rule.index) of '\(d.name)' can never decide: rule \(first.rule.index) matches first whenever it would",
                            at: rule.range, notes: [.init("rule \(first.rule.index) is here", at: first.rule.range)],
                            help: "remove it, or move it above rule \(first.rule.index)",
                            fixIts: [Diagnostic.deletingLines(of: rule.range, in: input.source, message: "remove rule \(rule.index)")]
                                .compactMap { $0 }))
                }
                // A split may not choose (an absent unit): it shadows nothing; a value or a
                // `fallback` decides whenever its condition holds.
                if case .split = rule.outcome { continue }
                earlier.append((mine, rule))
            }
        }
        return out
    }
}
