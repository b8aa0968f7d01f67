import FlagRules

extension Lint {
    /// FR102: `rollout(x) < 15` compares with a bare number, read as 15%: write `15%`, so
    /// that the reader sees a percentage (and `< 0.15`, meant as 15%, is caught).
    static let rolloutBareNumber = Lint(
        code: "FR102", name: "rollout-bare-number", summary: "a rollout compared with a number without '%'"
    ) { input in
        var out: [Diagnostic] = []
        for condition in input.conditions {
            condition.forEach { b in
                guard case .compare(_, let l, let r) = b.kind else { return }
                let number: Bound
                if case .rollout = l.kind { number = r } else if case .rollout = r.kind { number = l } else { return }
                guard case .constant(let v) = number.kind, v.doubleValue != nil else { return }
                let written = input.text(number.range)
                var help = "write '\(written)%'"
                var fixIts = [Diagnostic.FixIt("write '\(written)%'", [.init(number.range, written + "%")])]
                if let d = v.doubleValue, d > 0, d < 1 {
                    let fraction = Value.format(d * 100) + "%"
                    help += ", or '\(fraction)' if you meant a fraction"
                    fixIts.append(Diagnostic.FixIt("write '\(fraction)'", [.init(number.range, fraction)]))
                }
                out.append(
                    .warning(
                        "FR102", "rollout(…) compared with the bare number \(written), read as \(written)%", at: number.range,
                        help: help, fixIts: fixIts))
            }
        }
        return out
    }
}
