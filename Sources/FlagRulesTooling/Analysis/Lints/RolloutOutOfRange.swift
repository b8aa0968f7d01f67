import FlagRules

extension Lint {
    /// FR101: `rollout(x) < 100%` (or more) holds for every unit, and `rollout(x) < 0%` (or
    /// less) for none: the comparison does not roll anything out.
    static let rolloutOutOfRange = Lint(
        code: "FR101", name: "rollout-out-of-range", summary: "a rollout compared with 100% or more, or 0% or less"
    ) { input in
        var out: [Diagnostic] = []
        for condition in input.conditions {
            condition.forEach { b in
                guard case .compare(let op, let l, let r) = b.kind, op.isOrdering else { return }
                let (threshold, rolloutFirst): (Int?, Bool)
                if case .rollout = l.kind {
                    (threshold, rolloutFirst) = (r.rolloutThreshold, true)
                } else if case .rollout = r.kind {
                    (threshold, rolloutFirst) = (l.rolloutThreshold, false)
                } else {
                    return
                }
                guard let t = threshold else { return }
                // Buckets are 0 to 99,999 thousandths of a percent.
                let always: Bool, never: Bool
                switch rolloutFirst ? op : op.flipped {
                case .less: (always, never) = (t >= 100_000, t <= 0)
                case .lessEqual: (always, never) = (t >= 99_999, t < 0)
                case .greater: (always, never) = (t < 0, t >= 99_999)
                case .greaterEqual: (always, never) = (t <= 0, t >= 100_000)
                default: return
                }
                guard always || never else { return }
                out.append(
                    .warning(
                        "FR101",
                        "'\(input.text(b.range))' is \(always ? "true for every unit" : "false for every unit"): rollouts lie in [0%, 100%)",
                        at: b.range, help: always ? "to turn it on for everyone, drop the rollout" : "to turn it off, drop the rule"))
            }
        }
        return out
    }
}
