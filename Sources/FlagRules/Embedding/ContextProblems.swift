/// Something wrong with a context for a rule set's schema: an attribute the schema does
/// not declare, or a value that does not fit its attribute's type. Evaluation treats
/// either as absent (three-valued logic) unless the rule set checks contexts strictly.
public struct ContextProblem: Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    public enum Kind: Sendable, Hashable {
        /// The schema declares no attribute of this name; `suggestion` is the closest one.
        case unknownAttribute(suggestion: String?)
        /// The value does not fit the attribute's type (`expected` names it).
        case mistyped(expected: String)
        /// The key spells a declared field's path (`org.plan`). A key names an attribute,
        /// dots and all, so no rule reads it: the field is given inside its object
        /// (`["org": ["plan": "team"]]`).
        case fieldPathAsKey
    }

    /// The attribute's name, as the context spells it, or a field's path (`org.plan`).
    public let attribute: String
    /// What is wrong with it.
    public let kind: Kind

    package init(attribute: String, kind: Kind) {
        self.attribute = attribute
        self.kind = kind
    }

    /// `unknown attribute 'userid'; did you mean 'userId'?`,
    /// `attribute 'age' expects an int`, or
    /// `unknown attribute 'org.plan': a key is a name, not a path; give the field inside its object, as {"org": {"plan": …}}`.
    public var description: String {
        switch kind {
        case .unknownAttribute(let suggestion?): return "unknown attribute '\(attribute)'; did you mean '\(suggestion)'?"
        case .unknownAttribute(nil): return "unknown attribute '\(attribute)'"
        case .mistyped(let expected): return "attribute '\(attribute)' expects \(expected)"
        case .fieldPathAsKey:
            return
                "unknown attribute '\(attribute)': a key is a name, not a path; give the field inside its object, as \(Path.nestedJSON(attribute))"
        }
    }
}

extension RuleSet {
    /// The problems of `context` for this rule set's schema, in the context's order: keys
    /// the schema does not declare (with "did you mean"), and values that do not fit their
    /// attribute (a number for a string, an unparsable version, a case the enum lacks).
    /// Without a schema attributes are untyped, and only a `now` that is not a datetime is
    /// a problem.
    public func problems(in context: EvaluationContext) -> [ContextProblem] {
        var found: [ContextProblem] = []
        for (name, value) in context.entries {
            if name == "now" {
                switch value {
                case .datetime: continue
                case .string(let s) where DateTime.parse(s) != nil: continue
                default: found.append(ContextProblem(attribute: name, kind: .mistyped(expected: "an ISO 8601 datetime")))
                }
                continue
            }
            guard let schema else { continue }
            guard let attribute = schema.attribute(forKey: name) else {
                if schema[name] != nil {
                    found.append(ContextProblem(attribute: name, kind: .fieldPathAsKey))
                    continue
                }
                let suggestion = Suggestions.closest(to: name, in: schema.topLevel.map(\.name))
                found.append(ContextProblem(attribute: name, kind: .unknownAttribute(suggestion: suggestion)))
                continue
            }
            check(attribute, value, schema, into: &found)
        }
        return found
    }

    /// The problems of `value` for `attribute`: its type, and for an object each field's,
    /// by path (a field the object's type lacks is an unknown attribute).
    private func check(_ attribute: ContextSchema.Attribute, _ value: Value, _ schema: ContextSchema, into found: inout [ContextProblem]) {
        guard Coercion(attribute.type).apply(value) != nil else {
            found.append(ContextProblem(attribute: attribute.name, kind: .mistyped(expected: ContextSchema.describe(attribute.type))))
            return
        }
        guard let declared = attribute.type.fields, case .object(let fields) = value else { return }
        for (name, v) in fields.sorted(by: { $0.key < $1.key }) {
            guard let field = schema[attribute.name + "." + name] else {
                let suggestion = Suggestions.closest(to: name, in: declared.map { $0.name }).map { attribute.name + "." + $0 }
                found.append(ContextProblem(attribute: attribute.name + "." + name, kind: .unknownAttribute(suggestion: suggestion)))
                continue
            }
            check(field, v, schema, into: &found)
        }
    }

    /// The first mistyped value of `context` when this rule set checks contexts strictly;
    /// nil otherwise (and always for a lenient rule set, at the cost of one test).
    @inline(__always)
    func strictProblem(_ context: EvaluationContext) -> ContextProblem? {
        guard checksContextsStrictly else { return nil }
        return firstMistyped(in: context)
    }

    /// The mistyped value of `context` that comes first in the schema (`now` after every
    /// attribute): the one a prepared context reports, whose slots are in schema order.
    /// Undeclared keys are not strictness's concern: they are read by no rule.
    @inline(never)
    private func firstMistyped(in context: EvaluationContext) -> ContextProblem? {
        var first: (rank: Int, problem: ContextProblem)?
        for problem in problems(in: context) {
            guard case .mistyped = problem.kind else { continue }
            let rank = schema?[problem.attribute]?.slot ?? Int.max
            if first == nil || rank < first!.rank { first = (rank, problem) }
        }
        return first?.problem
    }

    /// The resolution a strict rule set gives for a context with `problem`: the caller's
    /// default (else the declaration's), reason `ERROR`, code `INVALID_CONTEXT`.
    func invalidContext(_ problem: ContextProblem, declaration i: Int, default fallback: Value?) -> Resolution {
        .error(.invalidContext, problem.description, default: fallback ?? program.declarations[i].defaultValue)
    }
}

extension RuleSet {
    /// The first mistyped value of a prepared context, in schema order, when this rule set
    /// checks contexts strictly. Out of line, so that the lenient fast path stays small.
    @inline(never)
    func strictProblem(_ context: PreparedContext) -> ContextProblem? {
        guard checksContextsStrictly else { return nil }
        guard context.storage.isLaidOut(for: program) else { return firstMistyped(in: context.dictionary) }
        for (slot, attribute) in (schema?.attributes ?? []).enumerated() where context.storage.isMistyped(slot) {
            return ContextProblem(attribute: attribute.name, kind: .mistyped(expected: ContextSchema.describe(attribute.type)))
        }
        return firstMistyped(in: context.storage.extra)
    }
}
