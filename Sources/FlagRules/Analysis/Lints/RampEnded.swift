import Foundation

extension Lint {
    /// FR109: a ramp whose window has passed is its end value for good: write the value,
    /// so that the reader need not work it out (and the rule stops reading the clock).
    static let rampEnded = Lint(
        code: "FR109", name: "ramp-ended", summary: "a ramp whose window has passed"
    ) { input in
        var out: [Diagnostic] = []
        for condition in input.conditions {
            condition.forEach { b in
                guard case .ramp(_, let to, _, let end) = b.kind, to <= input.today else { return }
                let day = String(DateTime.format(to).prefix(10))
                out.append(
                    .warning(
                        "FR109", "this ramp ended on \(day): it is \(Value.format(end)) from then on", at: b.range,
                        help: "write \(Value.format(end))% (or \(Value.format(end)), if it is not a percentage)",
                        fixIts: [.init("write \(Value.format(end))%", [.init(b.range, Value.format(end) + "%")])]))
            }
        }
        return out
    }
}
