/// `test` declarations: contexts checked against the schema, expectations against the
/// declarations they name.
extension Checker {
    static let reasons: [String: Resolution.Reason] = [
        "STATIC": .static, "TARGETING_MATCH": .targetingMatch, "SPLIT": .split, "DEFAULT": .default,
        "DISABLED": .disabled, "ERROR": .error,
    ]

    mutating func checkTests(_ checked: [CheckedDeclaration]) -> [TestCase] {
        var seen: [String: SourceRange] = [:]
        var tests: [TestCase] = []
        for t in testSyntax {
            let title = t.header.name
            if let first = seen[title.name] {
                diagnostics.error(
                    "duplicate-test", "test \"\(title.name)\" is declared twice", at: title.range,
                    notes: [.init("the first is here", at: first)])
            }
            seen[title.name] = title.range
            for a in t.header.attributes {
                diagnostics.error("misplaced-attribute", "attributes cannot be applied to a test", at: a.range)
            }
            var context = EvaluationContext()
            for g in t.givens { given(g, into: &context) }
            var expectations: [TestExpectation] = []
            for e in t.expectations {
                if let x = expectation(e, checked) { expectations.append(x) }
            }
            if t.expectations.isEmpty {
                diagnostics.error(
                    "empty-test", "test \"\(title.name)\" expects nothing", at: title.range,
                    help: "add a line such as 'expect darkMode' or 'expect checkout == oneStep'")
            }
            tests.append(
                TestCase(
                    name: title.name, line: t.header.range.start.line, context: context, expectations: expectations,
                    range: t.header.range))
        }
        return tests
    }

    /// A given value: a literal, a case name (checked against an enum, or a list of one),
    /// or a list of those; nil after an error.
    mutating func givenValue(_ v: GivenSyntax.Value, key: String, type: FlagType?) -> Value? {
        switch v {
        case .name(let id):
            if let type, let cases = type.cases, !cases.contains(id.name) {
                diagnostics.error("unknown-case", "'\(id.name)' is not a case of \(type)" + didYouMean(id.name, cases), at: id.range)
                return nil
            }
            if let type, type.cases == nil {
                diagnostics.error(
                    "type-mismatch", "'\(key)' is \(type); write the value as a literal, as in \"\(id.name)\"", at: id.range)
                return nil
            }
            return .string(id.name)
        case .literal(let literal):
            switch literal.value {
            case .bool(let b): return .bool(b)
            case .int(let i): return .int(i)
            case .double(let d): return .double(d)
            case .string(let s, _): return .string(s)
            case .version(let v): return .string(v)
            case .percent:
                diagnostics.error("type-mismatch", "a context value cannot be a percentage", at: literal.range)
                return nil
            }
        case .list(let elements, let range):
            if let type, !type.isList {
                diagnostics.error("type-mismatch", "'\(key)' is \(type), not a list", at: range)
                return nil
            }
            var values: [Value] = []
            for e in elements {
                guard let v = givenValue(e, key: key, type: type?.element) else { return nil }
                values.append(v)
            }
            return .list(values)
        }
    }

    mutating func given(_ g: GivenSyntax, into context: inout EvaluationContext) {
        let key = g.key.name
        if schema == nil || schema?[key] != nil { referPath(key, g.key.range) }
        let parts = Path.names(key)
        guard parts.count <= Path.maxNames else {
            diagnostics.error("invalid-path", "a path has at most \(Path.maxNames) names", at: g.key.range)
            return
        }
        if let given = context[parts[0]], parts.count == 1 || given.value(at: parts.dropFirst()) != nil {
            diagnostics.error("duplicate-given", "'\(key)' is given twice", at: g.key.range)
            return
        }
        guard let value = givenValue(g.value, key: key, type: schema?[key]?.type) else { return }
        if let schema {
            do {
                try schema.validate(key, value)
            } catch {
                diagnostics.error(schema[key] == nil && key != "now" ? "unknown-name" : "type-mismatch", error.message, at: g.range)
                return
            }
        }
        context.set(value, atPath: key)
    }

    mutating func expectation(_ e: ExpectationSyntax, _ checked: [CheckedDeclaration]) -> TestExpectation? {
        let name = e.subject.name
        guard let i = declarationIndex[name] else {
            diagnostics.error(
                "unknown-name", "unknown declaration '\(name)'" + didYouMean(name, declarations.map(\.header.name.name)),
                at: e.subject.range)
            return nil
        }
        // Past the error limit, the declarations after it were not checked (nor is this).
        guard i < checked.count else { return nil }
        let d = checked[i]
        refer(e.subject.range, to: .declaration(i))
        let text = sourceText.map { $0.text(of: e.range) } ?? ""
        func make(_ expected: TestExpectation.Expected) -> TestExpectation {
            TestExpectation(
                subject: name, expected: expected, negated: e.negated, line: e.range.start.line, text: text, range: e.range)
        }
        if let property = e.property {
            switch property.name {
            case "reason":
                guard case .name(let id) = e.expected, let reason = Checker.reasons[id.name] else {
                    let written: String
                    switch e.expected {
                    case .name(let id): written = id.name
                    case .literal(let l): written = l.text
                    case .bare: written = ""
                    }
                    diagnostics.error(
                        "unknown-reason", "'\(written)' is not a reason" + didYouMean(written, Checker.reasons.keys),
                        at: e.range, help: "the reasons are STATIC, TARGETING_MATCH, SPLIT, DEFAULT, DISABLED and ERROR")
                    return nil
                }
                return make(.reason(reason))
            case "rule":
                guard case .literal(let l) = e.expected, case .int(let n) = l.value, n >= 1 else {
                    diagnostics.error("type-mismatch", "a rule is a number from 1", at: e.range)
                    return nil
                }
                if n > d.writtenRuleCount, d.kind != .segment {
                    let count = d.writtenRuleCount
                    diagnostics.error("unknown-rule", "'\(name)' has \(count) rule\(count == 1 ? "" : "s")", at: e.range)
                    return nil
                }
                return make(.rule(n))
            case "variant":
                guard d.kind == .variant else {
                    diagnostics.error("type-mismatch", "'\(name)' is a \(d.kind.rawValue), not a variant", at: property.range)
                    return nil
                }
            default:
                diagnostics.error(
                    "unknown-property", "unknown property '\(property.name)'" + didYouMean(property.name, ["reason", "rule", "variant"]),
                    at: property.range, help: "expect NAME, NAME.reason, NAME.rule or NAME.variant")
                return nil
            }
        }
        switch e.expected {
        case .bare(let b):
            guard d.type == .bool else {
                diagnostics.error("type-mismatch", "'\(name)' is \(d.type), not a bool; write 'expect \(name) == …'", at: e.subject.range)
                return nil
            }
            return TestExpectation(
                subject: name, expected: .value(.bool(b)), negated: false, line: e.range.start.line, text: text, range: e.range)
        case .name(let id) where id.name == "fallback" && sourceText.map({ !$0.text(of: id.range).hasPrefix("`") }) ?? true:
            // `expect tier == fallback`: a `fallback` rule decides (the caller's default).
            if d.type.cases?.contains("fallback") == true {
                diagnostics.warning(
                    "ambiguous-fallback", "'fallback' here expects the caller's default, not the variant 'fallback'",
                    at: id.range, help: "write the variant in backticks: `fallback`")
            }
            return make(.fallback)
        case .name(let id):
            guard let cases = d.type.cases else {
                diagnostics.error(
                    "type-mismatch", "expected \(Checker.article(d.type)) \(d.type) for '\(name)', found the name '\(id.name)'",
                    at: id.range, help: d.type == .string ? "write strings in quotes" : nil)
                return nil
            }
            guard cases.contains(id.name) else {
                unknownVariant(id, of: name, cases)
                return nil
            }
            return make(.value(.string(id.name)))
        case .literal(let literal):
            guard let v = literalValue(literal, as: d.type) else { return nil }
            return make(.value(v))
        }
    }
}
