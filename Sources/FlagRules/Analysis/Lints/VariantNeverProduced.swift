extension Lint {
    /// FR108: a variant that no rule, split entry or default gives: dead code in every app
    /// that switches over the variants.
    static let variantNeverProduced = Lint(
        code: "FR108", name: "variant-never-produced", summary: "a variant that no rule and no default can give"
    ) { input in
        var out: [Diagnostic] = []
        for case .variant(let syntax) in input.file.declarations {
            guard let i = input.checked.names.index(of: syntax.header.name.name) else { continue }
            let d = input.checked.declarations[i]
            guard d.kind == .variant else { continue }
            var produced: Set<String> = [d.defaultValue.stringValue ?? ""]
            for rule in d.rules {
                switch rule.outcome {
                case .value(let v): produced.insert(v.stringValue ?? "")
                case .split(let s):
                    for (k, w) in s.weights.enumerated() where w > 0 { produced.insert(s.outcomes[k].stringValue ?? "") }
                }
            }
            for v in syntax.variants where !produced.contains(v.name) {
                out.append(
                    .warning(
                        "FR108", "variant '\(v.name)' of '\(d.name)' is given by no rule, split or default", at: v.range,
                        help: "remove it, or add a rule that gives it"))
            }
        }
        return out
    }
}
