import FlagRules

/// Which rules a file's tests exercise (`flags test --coverage`): for every rule, whether
/// some test made it decide, only tried it (its condition did not hold), or never reached
/// it. A declaration a test reads through another counts as reached too.
package struct TestCoverage: Sendable {
    /// What the tests did with one rule.
    package enum State: String, Sendable {
        /// It decided some resolution.
        case matched
        /// It was evaluated and never decided.
        case tried
        /// No test got as far as it.
        case unreached
    }

    /// One rule.
    package struct Rule: Sendable {
        /// 1-based position in its declaration's body.
        package let index: Int
        /// The lines it spans.
        package let line: Int
        package let endLine: Int
        package let state: State
    }

    /// One flag, variant or value with rules.
    package struct Declaration: Sendable {
        package let name: String
        package let kind: DeclarationKind
        package let line: Int
        /// `@disabled`: its rules are not evaluated, and not counted.
        package let isDisabled: Bool
        package let rules: [Rule]

        /// How many rules decided some resolution.
        package var matched: Int { isDisabled ? 0 : rules.filter { $0.state == .matched }.count }
        /// How many rules count.
        package var counted: Int { isDisabled ? 0 : rules.count }
    }

    /// The declarations with rules, in file order.
    package let declarations: [Declaration]

    /// Coverage of these declarations (none: an empty total to add files to).
    package init(declarations: [Declaration] = []) {
        self.declarations = declarations
    }

    /// Rules that decided some resolution, over all counted rules.
    package var matched: Int { declarations.reduce(0) { $0 + $1.matched } }
    package var counted: Int { declarations.reduce(0) { $0 + $1.counted } }

    /// The share of counted rules matched, in percent; 100 when no rule counts.
    package var percent: Double { counted == 0 ? 100 : Double(matched) * 100 / Double(counted) }

    /// The coverage of two files' tests together (for a total over files).
    package static func + (a: TestCoverage, b: TestCoverage) -> TestCoverage {
        TestCoverage(declarations: a.declarations + b.declarations)
    }
}

extension RuleSet {
    /// Runs every test's expectations through the explainer and records which rules
    /// decided, which were tried and which were never reached.
    package func testCoverage() -> TestCoverage {
        var tried = Set<RuleKey>()
        var matched = Set<RuleKey>()
        func record(_ declaration: Int, _ explanation: Explanation) {
            for rule in explanation.rules {
                let key = RuleKey(declaration: declaration, rule: rule.index)
                tried.insert(key)
                if rule.matched { matched.insert(key) }
            }
        }
        for test in tests {
            let explainer = Explainer(checked: checked, source: source, context: test.context)
            for e in test.expectations {
                guard let i = checked.names.index(of: e.subject) else { continue }
                record(i, explainer.explain(i))
            }
            for (i, explanation) in explainer.memo.operands { record(i, explanation) }
        }
        let declarations = checked.declarations.enumerated().compactMap { i, d -> TestCoverage.Declaration? in
            guard d.kind != .segment, !d.rules.isEmpty else { return nil }
            let rules = d.rules.map { rule -> TestCoverage.Rule in
                let key = RuleKey(declaration: i, rule: rule.index)
                let state: TestCoverage.State = matched.contains(key) ? .matched : tried.contains(key) ? .tried : .unreached
                return TestCoverage.Rule(index: rule.index, line: rule.line, endLine: rule.range.end.line, state: state)
            }
            return TestCoverage.Declaration(name: d.name, kind: d.kind, line: d.range.start.line, isDisabled: d.disabled, rules: rules)
        }
        return TestCoverage(declarations: declarations)
    }
}

private struct RuleKey: Hashable {
    let declaration: Int
    let rule: Int
}

extension TestCoverage {
    /// `12.5 %`.
    package static func format(_ percent: Double) -> String {
        let text = String(Int((percent * 10).rounded()))
        let padded = text.count == 1 ? "0" + text : text
        return padded.dropLast() + "." + padded.suffix(1) + " %"
    }

    /// One line per declaration with rules: how many matched, and each rule that did not,
    /// tried or never reached.
    ///
    ///     newMediaPicker  3/4 rules  rule 4, line 35: tried, never matched
    package var text: String {
        let width = declarations.map(\.name.count).max() ?? 0
        var out = ""
        for d in declarations {
            out += "  " + d.name + String(repeating: " ", count: width - d.name.count + 2)
            if d.isDisabled {
                out += "@disabled: not counted\n"
                continue
            }
            out += "\(d.matched)/\(d.counted) rule\(d.counted == 1 ? "" : "s")"
            let missed = d.rules.filter { $0.state != .matched }.map { r in
                "rule \(r.index), line \(r.line): " + (r.state == .tried ? "tried, never matched" : "never reached")
            }
            if !missed.isEmpty { out += "  " + missed.joined(separator: "; ") }
            out += "\n"
        }
        return out
    }

    /// The line ending a report: `coverage: 30 of 41 rules matched (73.2 %)`.
    package var summary: String {
        "coverage: \(matched) of \(counted) rule\(counted == 1 ? "" : "s") matched (\(TestCoverage.format(percent)))"
    }

    /// The file's coverage as JSON, in the shape of `opa test --coverage`: the rules
    /// covered and not, with their lines, and the counts.
    package var json: JSON {
        func rule(_ d: Declaration, _ r: Rule) -> JSON {
            var m: [(String, JSON)] = [
                ("declaration", .string(d.name)), ("rule", .int(r.index)),
                ("start", .object([("row", .int(r.line))])), ("end", .object([("row", .int(r.endLine))])),
            ]
            if r.state != .matched { m.append(("reached", .bool(r.state == .tried))) }
            return .object(m)
        }
        let counted = declarations.filter { !$0.isDisabled }
        let covered = counted.flatMap { d in d.rules.filter { $0.state == .matched }.map { rule(d, $0) } }
        let notCovered = counted.flatMap { d in d.rules.filter { $0.state != .matched }.map { rule(d, $0) } }
        return .object([
            ("covered", .array(covered)), ("not_covered", .array(notCovered)),
            ("covered_rules", .int(matched)), ("not_covered_rules", .int(self.counted - matched)),
            ("disabled", .array(declarations.filter(\.isDisabled).map { .string($0.name) })),
            ("coverage", .double((percent * 10).rounded() / 10)),
        ])
    }
}
