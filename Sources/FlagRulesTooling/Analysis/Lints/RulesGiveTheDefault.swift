import FlagRules

extension Lint {
    /// FR110: a flag, variant or value whose every rule gives its default (and every split
    /// entry too) resolves to the default whatever the context: its rules are dead, or
    /// the default is not the one meant.
    static let rulesGiveTheDefault = Lint(
        code: "FR110", name: "rules-give-the-default", summary: "a declaration whose every rule gives its default"
    ) { input in
        var out: [Diagnostic] = []
        for d in input.checked.declarations where d.kind != .segment && !d.rules.isEmpty && !d.disabled {
            let allDefault = d.rules.allSatisfy { rule in
                switch rule.outcome {
                case .value(let v): return Comparison.equal(v, d.defaultValue) == true
                case .fallback: return false  // the caller's default, not the declaration's
                case .split(let s):
                    return s.weights.indices.allSatisfy {
                        s.weights[$0] == 0 || (!s.isFallback($0) && Comparison.equal(s.outcomes[$0], d.defaultValue) == true)
                    }
                }
            }
            guard allDefault else { continue }
            let shown = d.kind == .variant ? (d.defaultValue.stringValue ?? "") : d.defaultValue.description
            out.append(
                .warning(
                    "FR110", "every rule of '\(d.name)' gives its default, \(shown): it is \(shown) whatever the context", at: d.range,
                    help: d.kind == .flag
                        ? "a flag is off unless '= true': write 'enabled when …', or drop the rules"
                        : "drop the rules, or change the default"))
        }
        return out
    }
}
