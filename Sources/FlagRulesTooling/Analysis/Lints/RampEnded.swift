import FlagRules
import Foundation

extension Lint {
    /// FR109: a ramp whose window has passed is its end value for good: write the value,
    /// so that the reader need not work it out (and the rule stops reading the clock).
    static let rampEnded = Lint(
        code: "FR109", name: "ramp-ended", summary: "a ramp whose window has passed"
    ) { input in
        var out: [Diagnostic] = []
        for condition in input.conditions {
            // A rollout compared with a ramp that ended at 100% holds for every unit that is
            // present: the fix writes `has(unit)`, not a comparison FR101 would warn of.
            var wholeComparison: [Int: Diagnostic.FixIt] = [:]
            condition.forEach { b in
                guard case .compare(let op, let l, let r) = b.kind, op == .less, case .rollout(let unit, _) = l.kind,
                    case .ramp(_, let to, _, let end) = r.kind, to <= input.today, end >= 100
                else { return }
                let text = "has(\(input.text(unit.range)))"
                wholeComparison[r.range.start.offset] = .init(
                    "write \(text): the rollout is at \(Value.format(end))%", [.init(b.range, text)])
            }
            condition.forEach { b in
                guard case .ramp(_, let to, _, let end) = b.kind, to <= input.today else { return }
                let day = String(DateTime.format(to).prefix(10))
                let fix =
                    wholeComparison[b.range.start.offset] ?? .init("write \(Value.format(end))%", [.init(b.range, Value.format(end) + "%")])
                out.append(
                    .warning(
                        "FR109", "this ramp ended on \(day): it is \(Value.format(end)) from then on", at: b.range,
                        help: "write \(Value.format(end))% (or \(Value.format(end)), if it is not a percentage)", fixIts: [fix]))
            }
        }
        return out
    }
}
