/// How a declaration resolved: every rule tried in order, and under each the value of
/// every sub-expression and why. `print(explanation)` shows it as `flags eval --explain`
/// does.
public struct Explanation: Sendable, CustomStringConvertible {
    /// The declaration.
    public let name: String
    /// The resolution (always equal to what `RuleSet.evaluate` returns).
    public let resolution: Resolution
    /// The rules tried, in order, up to the one that decided.
    package let rules: [RuleTrace]
    /// For segments: the condition's trace.
    package let condition: ExpressionTrace?
    /// A sentence on what decided, when no rule did ("@disabled", "no rules", "no rule matched").
    public let summary: String
}

/// One rule tried during an explanation.
package struct RuleTrace: Sendable {
    /// 1-based index in the body.
    package let index: Int
    /// Where it starts.
    package let line: Int
    /// The rule as written.
    package let text: String
    /// Its `when` condition, evaluated.
    package let condition: ExpressionTrace?
    /// Its split, when it is one and its condition held.
    package let split: SplitTrace?
    /// Whether it decided the result.
    package let matched: Bool
}

/// A sub-expression's value and why.
package struct ExpressionTrace: Sendable {
    /// The sub-expression as written.
    package let text: String
    /// `true`, `false`, `unknown`, or a value.
    package let result: String
    /// Why, when it is not obvious: "country is absent", "age is a string, expected int".
    package let note: String?
    /// The traces of its operands (constants left out).
    package let children: [ExpressionTrace]
}

/// A split's computation.
package struct SplitTrace: Sendable {
    /// The unit's value, when known.
    package let unit: String?
    /// The bucketing key (`salt:unit`).
    package let key: String?
    /// `hash % total + 1`.
    package let target: Int?
    /// The sum of the weights.
    package let total: Int
    /// The chosen entry.
    package let choice: String?
    /// Why nothing was chosen, if so.
    package let note: String?
}

extension Explanation {
    /// The explanation as `flags eval --explain` prints it (``text``).
    public var description: String { text }

    /// Indented text for terminals.
    public var text: String {
        var out = resolution.summary(name: name) + "\n"
        if let condition { condition.render(into: &out, indent: 2) }
        for rule in rules {
            out += "  rule \(rule.index), line \(rule.line): \(rule.text)"
            out += rule.matched ? "  → matched\n" : "  → no match\n"
            rule.condition?.render(into: &out, indent: 4)
            if let s = rule.split {
                out += "    split: "
                if let key = s.key, let target = s.target {
                    out += "key \"\(key)\", target \(target) of \(s.total) → \(s.choice ?? "none")\n"
                } else {
                    out += (s.note ?? "no choice") + "\n"
                }
            }
        }
        if !summary.isEmpty { out += "  \(summary)\n" }
        return out
    }

    /// The explanation as JSON.
    package var json: JSON {
        var members: [(String, JSON)] = [("resolution", resolution.json)]
        if !summary.isEmpty { members.append(("summary", .string(summary))) }
        if let condition { members.append(("condition", condition.json)) }
        members.append(
            (
                "rules",
                .array(
                    rules.map { rule in
                        var m: [(String, JSON)] = [
                            ("rule", .int(rule.index)), ("line", .int(rule.line)), ("text", .string(rule.text)),
                            ("matched", .bool(rule.matched)),
                        ]
                        if let c = rule.condition { m.append(("condition", c.json)) }
                        if let s = rule.split {
                            var sm: [(String, JSON)] = [("total", .int(s.total))]
                            if let u = s.unit { sm.append(("unit", .string(u))) }
                            if let k = s.key { sm.append(("key", .string(k))) }
                            if let t = s.target { sm.append(("target", .int(t))) }
                            if let c = s.choice { sm.append(("choice", .string(c))) }
                            if let n = s.note { sm.append(("note", .string(n))) }
                            m.append(("split", .object(sm)))
                        }
                        return .object(m)
                    })
            ))
        return .object(members)
    }
}

extension ExpressionTrace {
    func render(into out: inout String, indent: Int) {
        out += String(repeating: " ", count: indent) + "\(text) → \(result)"
        if let note, result != "absent" { out += "  (\(note))" }
        out += "\n"
        for child in children { child.render(into: &out, indent: indent + 2) }
    }

    /// The trace as JSON.
    package var json: JSON {
        var members: [(String, JSON)] = [("expression", .string(text)), ("result", .string(result))]
        if let note { members.append(("note", .string(note))) }
        if !children.isEmpty { members.append(("operands", .array(children.map(\.json)))) }
        return .object(members)
    }
}
