import Foundation

/// The rules of a body: each outcome, each condition, splits and their units.
extension Checker {
    mutating func checkRules(_ body: BodySyntax?, _ outcome: (inout Checker, RuleSyntax) -> CheckedRule.Outcome?) -> [CheckedRule] {
        guard let body else { return [] }
        var rules: [CheckedRule] = []
        rules.reserveCapacity(body.rules.count)
        var failed = false
        for (k, rule) in body.rules.enumerated() {
            let o = outcome(&self, rule)
            var condition: Bound?
            if let c = rule.condition {
                condition = self.condition(c)
                if condition == nil { failed = true }
            }
            var isSplit = false
            if case .split = rule.outcome { isSplit = true }
            if rule.condition == nil, !isSplit, k < body.rules.count - 1 {
                diagnostics.error(
                    "unreachable-rule", "a rule without 'when' must be the last rule", at: rule.range,
                    notes: [.init("this rule can never be reached", at: body.rules[k + 1].range)],
                    help: "add a 'when' condition or move the rule to the end")
            }
            guard let o, !failed else { failed = true; continue }
            rules.append(CheckedRule(outcome: o, condition: condition, index: k + 1, line: rule.range.start.line, range: rule.range))
        }
        return rules
    }

    mutating func checkSplit(_ s: SplitSyntax, keyType: FlagType, salt defaultSalt: String, defaultValue: Value) -> CheckedSplit? {
        let unit = expression(s.unit)
        if let unit { checkUnit(unit, "split") }
        var salt = defaultSalt
        if let literal = s.salt, case .string(let text, _) = literal.value { salt = text }
        var scheme = BucketScheme.unleash
        if let written = s.scheme {
            guard let given = bucketScheme(written) else { return nil }
            scheme = given
        }
        if s.entries.isEmpty {
            diagnostics.error("empty-split", "a split needs at least one entry", at: s.range)
            return nil
        }
        var outcomes: [Value] = []
        var weights: [Int] = []
        outcomes.reserveCapacity(s.entries.count)
        weights.reserveCapacity(s.entries.count)
        var ok = true
        var seen: [Value: SourceRange] = [:]
        var fallbacks: Set<Int> = []
        var firstFallback: SourceRange?
        var percentForm: Bool?
        for entry in s.entries {
            var key: Value?
            switch entry.key {
            case .fallback(let range):
                if let first = firstFallback {
                    diagnostics.error(
                        "duplicate-entry", "fallback appears twice in the split", at: range,
                        notes: [.init("first listed here", at: first)])
                    ok = false
                }
                firstFallback = firstFallback ?? range
                if keyType.cases?.contains("fallback") == true {
                    diagnostics.warning(
                        "ambiguous-fallback", "'fallback' here gives the caller's default, not the variant 'fallback'",
                        at: range, help: "write the variant in backticks: `fallback`")
                }
                fallbacks.insert(outcomes.count)
                outcomes.append(defaultValue)
            case .name(let id):
                if let names = keyType.cases, names.contains(id.name) {
                    key = .string(id.name)
                } else if case .variant(let declaration, let names) = keyType {
                    unknownVariant(id, of: declaration, names)
                }
            case .literal(let literal):
                key = literalValue(literal, as: keyType)
            }
            if case .fallback = entry.key {
            } else if let key {
                if let first = seen.firstPlace(of: key, at: entry.key.range) {
                    diagnostics.error(
                        "duplicate-entry", "\(key) appears twice in the split", at: entry.key.range,
                        notes: [.init("first listed here", at: first)])
                    ok = false
                }
                outcomes.append(key)
            } else {
                ok = false
            }
            let isPercent: Bool
            let weight: Int
            switch entry.weight.value {
            case .int(let w): isPercent = false; weight = w
            case .percent(let t):
                isPercent = true
                if t % 100 != 0 {
                    diagnostics.error(
                        "invalid-weight", "a split percentage has at most one decimal, found \(entry.weight.text)",
                        at: entry.weight.range)
                    ok = false
                }
                weight = t / 100
            default: isPercent = false; weight = 0; ok = false
            }
            if let form = percentForm, form != isPercent {
                diagnostics.error(
                    "mixed-weights", "split weights mix whole numbers and percentages", at: entry.weight.range,
                    help: "write every weight as a percentage or every weight as a whole number")
                ok = false
            }
            percentForm = percentForm ?? isPercent
            if weight < 0 {
                diagnostics.error("invalid-weight", "a split weight cannot be negative", at: entry.weight.range)
                ok = false
            }
            weights.append(weight)
        }
        guard ok, let unit else { return nil }
        var total = 0
        for w in weights {
            let (sum, overflow) = total.addingReportingOverflow(w)
            if overflow || sum > Int(Int32.max) {
                diagnostics.error("invalid-weight", "split weights add up to more than \(Int32.max)", at: s.range)
                return nil
            }
            total = sum
        }
        if percentForm == true, total != 1000 {
            let shown = total % 10 == 0 ? "\(total / 10)%" : "\(total / 10).\(total % 10)%"
            diagnostics.error("weights-sum", "split weights add up to \(shown), not 100%", at: s.range)
            return nil
        }
        if total == 0 {
            diagnostics.error("invalid-weight", "all split weights are zero", at: s.range)
            return nil
        }
        if scheme == .launchdarkly, percentForm != true, total != 100_000 {
            diagnostics.error(
                "weights-sum", "a launchdarkly split's whole-number weights are 100,000ths and add up to 100,000, not \(total)",
                at: s.range, help: "write LaunchDarkly's weights as they are, or percentages")
            return nil
        }
        return CheckedSplit(unit: unit, salt: salt, weights: weights, outcomes: outcomes, scheme: scheme, fallbacks: fallbacks)
    }

    mutating func checkUnit(_ unit: Bound, _ function: String) {
        if !unit.type.isBucketable {
            diagnostics.error(
                "invalid-unit", "\(function)'s unit must be a string, an int or an enum, found \(unit.type)",
                at: unit.range)
        }
    }
}
