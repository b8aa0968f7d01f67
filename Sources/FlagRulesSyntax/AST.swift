/// A name as written, with where it was written.
package struct Identifier: Sendable, Hashable {
    /// The name.
    package var name: String
    /// Where it is.
    package var range: SourceRange
}

extension Identifier {
    /// The name as a file writes it.
    package var written: String { Identifier.written(name) }

    /// A name as a file writes it: bare when it is a plain name (letters, digits and `_`,
    /// not starting with a digit, not a reserved word), else in backticks, with a backtick
    /// and a backslash escaped: `` `variant-a` ``.
    package static func written(_ name: String) -> String {
        if isPlain(name) { return name }
        var out = "`"
        for c in name.unicodeScalars {
            if c == "`" || c == "\\" { out.unicodeScalars.append("\\") }
            out.unicodeScalars.append(c)
        }
        return out + "`"
    }

    /// A variant's name where a rule or a split entry gives it: as `written(_:)`, and a
    /// variant named `fallback` in backticks (the bare word is the caller's default there).
    package static func writtenAsOutcome(_ name: String) -> String {
        name == "fallback" ? "`fallback`" : written(name)
    }

    /// A path (`org.plan`) as a file writes it: each field as `written(_:)`.
    package static func writtenPath(_ path: String) -> String {
        path.split(separator: ".", omittingEmptySubsequences: false).map { written(String($0)) }.joined(separator: ".")
    }

    /// Whether `name` is written bare: `[A-Za-z_][A-Za-z0-9_]*`, not a reserved word.
    package static func isPlain(_ name: String) -> Bool {
        guard let first = name.utf8.first, first == 0x5F || (first | 0x20 >= 0x61 && first | 0x20 <= 0x7A) else { return false }
        let plain = name.utf8.allSatisfy { c in c == 0x5F || (c >= 0x30 && c <= 0x39) || (c | 0x20 >= 0x61 && c | 0x20 <= 0x7A) }
        return plain && Keyword(rawValue: name) == nil
    }
}

/// A parsed `.flags` file: its declarations in source order, and every comment.
package struct FileSyntax: Sendable {
    /// Declarations, in source order.
    package var declarations: [DeclarationSyntax]
    /// All comments and doc comments, in source order (for the formatter).
    package var comments: [Comment]
}

/// `///` lines attached to the declaration below them.
package struct DocCommentSyntax: Sendable, Hashable {
    /// Each line's text after `///`, with one leading space removed.
    package var lines: [String]
    /// From the first `///` to the end of the last line.
    package var range: SourceRange

    /// The lines joined with newlines.
    package var text: String { lines.joined(separator: "\n") }
}

/// `@name` or `@name("argument", …)` before a declaration.
package struct AttributeSyntax: Sendable {
    /// The attribute's name, without `@`.
    package var name: Identifier
    /// Its literal arguments.
    package var arguments: [LiteralSyntax]
    /// From `@` to the closing parenthesis.
    package var range: SourceRange
}

/// What every declaration has: its keyword, name, attributes and doc comment.
package struct DeclarationHeader: Sendable {
    /// The declaration keyword (`flag`, `variant`, …).
    package var keyword: Identifier
    /// The declared name (for `context`, the keyword itself).
    package var name: Identifier
    /// Attributes written before it.
    package var attributes: [AttributeSyntax]
    /// Its doc comment.
    package var doc: DocCommentSyntax?
    /// The whole declaration, attributes included.
    package var range: SourceRange
}

/// One top-level declaration.
package indirect enum DeclarationSyntax: Sendable {
    /// `context { name: type … }`
    case context(ContextSyntax)
    /// `segment NAME = EXPR`
    case segment(SegmentSyntax)
    /// `flag NAME [= true|false] { RULES }`
    case flag(FlagSyntax)
    /// `variant NAME [a, b] [= a] { RULES }`
    case variant(VariantSyntax)
    /// `value NAME: TYPE = LITERAL { RULES }`
    case value(ValueSyntax)
    /// `test "name" { given { … } expect … }`
    case test(TestSyntax)

    /// How many rules the body has as written (0 without a body; segments, the context
    /// and tests have none).
    package var writtenRuleCount: Int {
        switch self {
        case .flag(let d): return d.body?.rules.count ?? 0
        case .variant(let d): return d.body?.rules.count ?? 0
        case .value(let d): return d.body?.rules.count ?? 0
        case .context, .segment, .test: return 0
        }
    }

    /// The declaration's name (the header's), read without copying the header.
    package var name: Identifier {
        switch self {
        case .context(let d): return d.header.name
        case .segment(let d): return d.header.name
        case .flag(let d): return d.header.name
        case .variant(let d): return d.header.name
        case .value(let d): return d.header.name
        case .test(let d): return d.header.name
        }
    }

    /// The parts every declaration has.
    package var header: DeclarationHeader {
        switch self {
        case .context(let d): return d.header
        case .segment(let d): return d.header
        case .flag(let d): return d.header
        case .variant(let d): return d.header
        case .value(let d): return d.header
        case .test(let d): return d.header
        }
    }
}

/// `test "name" { given { key: value, … } expect … }`: a test written next to the rules.
package struct TestSyntax: Sendable {
    /// Keyword and range; the name is the test's title (its range is the string's).
    package var header: DeclarationHeader
    /// The `given` entries, in order (several `given` blocks merge).
    package var givens: [GivenSyntax]
    /// The expectations, in order.
    package var expectations: [ExpectationSyntax]
}

/// `key: value` inside `given { … }`.
package struct GivenSyntax: Sendable {
    /// A literal, a bare name (an enum case), or a list of those.
    package indirect enum Value: Sendable {
        /// A literal.
        case literal(LiteralSyntax)
        /// A bare name, taken as a case or symbol.
        case name(Identifier)
        /// `[a, b, …]`: a list of literals or names, with its range.
        case list([Value], SourceRange)
    }
    /// The context attribute.
    package var key: Identifier
    /// Its value.
    package var value: Value
    /// The whole entry.
    package var range: SourceRange
}

/// `expect NAME`, `expect not NAME`, `expect NAME == x`, `expect NAME.reason == SPLIT`, `expect NAME.rule == 2`.
package struct ExpectationSyntax: Sendable {
    /// What is expected to be equal (or, with `!=`, different).
    package enum Expected: Sendable {
        /// `expect NAME` (true) or `expect not NAME` (false).
        case bare(Bool)
        /// A literal.
        case literal(LiteralSyntax)
        /// A name: a variant, an enum case, or a reason.
        case name(Identifier)
    }
    /// The declaration under test.
    package var subject: Identifier
    /// `reason`, `rule` or `variant` after a dot; nil for the value.
    package var property: Identifier?
    /// True for `!=`.
    package var negated: Bool
    /// The expected value.
    package var expected: Expected
    /// The whole line.
    package var range: SourceRange
}

/// `context { … }`: the schema of the evaluation context.
package struct ContextSyntax: Sendable {
    /// Keyword, attributes and range.
    package var header: DeclarationHeader
    /// The declared attributes, in order.
    package var fields: [ContextFieldSyntax]
}

/// `name : type` inside `context { … }`.
package struct ContextFieldSyntax: Sendable {
    /// The attribute's name.
    package var name: Identifier
    /// Its declared type.
    package var type: TypeSyntax
    /// The whole field.
    package var range: SourceRange
}

/// A type as written: `int`, `version`, `enum(debug, release)`, `[string]`.
package struct TypeSyntax: Sendable {
    /// The form of the type.
    package indirect enum Kind: Sendable {
        /// A named type: string, int, double, bool, version, datetime, ip.
        case named(Identifier)
        /// `enum(a, b, …)`.
        case enumeration([Identifier])
        /// `[element]`.
        case list(TypeSyntax)
        /// `{ name : type, … }`: an object's fields.
        case object([ContextFieldSyntax])
    }
    /// What the type is.
    package var kind: Kind
    /// Where it is.
    package var range: SourceRange
}

/// `segment NAME = EXPR`
package struct SegmentSyntax: Sendable {
    /// Keyword, name, attributes.
    package var header: DeclarationHeader
    /// The segment's condition.
    package var condition: ExprSyntax
}

/// `flag NAME [= true|false] [{ RULES }]`
package struct FlagSyntax: Sendable {
    /// Keyword, name, attributes.
    package var header: DeclarationHeader
    /// The default after `=`, if written.
    package var defaultValue: LiteralSyntax?
    /// The rules, if there is a body.
    package var body: BodySyntax?
}

/// `variant NAME [a, b, …] [= a] [{ RULES }]`
package struct VariantSyntax: Sendable {
    /// Keyword, name, attributes.
    package var header: DeclarationHeader
    /// The variants, in the order written.
    package var variants: [Identifier]
    /// The default after `=`, if written.
    package var defaultVariant: Identifier?
    /// The rules, if there is a body.
    package var body: BodySyntax?
}

/// `value NAME: TYPE = LITERAL [{ RULES }]`
package struct ValueSyntax: Sendable {
    /// Keyword, name, attributes.
    package var header: DeclarationHeader
    /// The declared type.
    package var type: TypeSyntax
    /// The default literal (required; nil only after a syntax error).
    package var defaultValue: LiteralSyntax?
    /// The rules, if there is a body.
    package var body: BodySyntax?
}

/// `{ rule; rule … }`
package struct BodySyntax: Sendable {
    /// The rules in order.
    package var rules: [RuleSyntax]
    /// From `{` to `}`.
    package var range: SourceRange
}

/// One rule: an outcome and an optional `when` condition.
package struct RuleSyntax: Sendable {
    /// What the rule resolves to.
    package enum Outcome: Sendable {
        /// `enabled` (flags).
        case enabled(SourceRange)
        /// `disabled` (flags).
        case disabled(SourceRange)
        /// A variant name (variants).
        case variant(Identifier)
        /// A literal (values).
        case literal(LiteralSyntax)
        /// `split(unit[, salt]) { … }`.
        case split(SplitSyntax)
        /// `fallback` (any declaration): the caller's default, as OpenFeature's code default.
        case fallback(SourceRange)
    }
    /// What the rule resolves to.
    package var outcome: Outcome
    /// The condition after `when`.
    package var condition: ExprSyntax?
    /// The whole rule.
    package var range: SourceRange
}

/// `split(unit[, "salt"]) { key: weight, … }`
package struct SplitSyntax: Sendable {
    /// The bucketing unit.
    package var unit: ExprSyntax
    /// The salt, when given.
    package var salt: LiteralSyntax?
    /// Another system's bucketing (`growthbook`), when given after the salt.
    package var scheme: ExprSyntax?
    /// The weighted entries in order.
    package var entries: [SplitEntrySyntax]
    /// From `split` to `}`.
    package var range: SourceRange
}

/// `key: weight` inside a split.
package struct SplitEntrySyntax: Sendable {
    /// A variant name or a value literal.
    package enum Key: Sendable {
        /// A variant name.
        case name(Identifier)
        /// A literal for a value declaration.
        case literal(LiteralSyntax)
        /// `fallback`: the caller's default for the units in this entry's share.
        case fallback(SourceRange)

        /// Where the key is.
        package var range: SourceRange {
            switch self {
            case .name(let i): return i.range
            case .literal(let l): return l.range
            case .fallback(let r): return r
            }
        }
    }
    /// The entry's key.
    package var key: Key
    /// Its weight: an int or a percentage literal.
    package var weight: LiteralSyntax
    /// The whole entry.
    package var range: SourceRange
}

/// A literal's decoded value.
package enum LiteralValue: Sendable, Hashable {
    /// `true` / `false`
    case bool(Bool)
    /// A 64-bit integer.
    case int(Int)
    /// A double.
    case double(Double)
    /// A percentage in thousandths (`20%` → 20000).
    case percent(Int)
    /// A string; `raw` when written `#"…"#`.
    case string(String, raw: Bool)
    /// A version literal, as written.
    case version(String)
}

/// A literal with its range and spelling.
package struct LiteralSyntax: Sendable {
    /// The decoded value.
    package var value: LiteralValue
    /// Where it is.
    package var range: SourceRange
    /// The exact source text.
    package var text: String
}

/// Comparison operators, from `==` to `matches`.
package enum ComparisonOperator: String, Sendable, CaseIterable {
    case equal = "==", notEqual = "!=", less = "<", lessEqual = "<=", greater = ">", greaterEqual = ">="
    case `in` = "in", notIn = "not in", contains = "contains", startsWith = "starts with"
    case endsWith = "ends with", matches = "matches"
    case containsAny = "contains any", containsAll = "contains all"

    /// `<`, `<=`, `>`, `>=`.
    package var isOrdering: Bool {
        switch self {
        case .less, .lessEqual, .greater, .greaterEqual: return true
        default: return false
        }
    }

    /// The operator with its operands swapped (`a < b` is `b > a`).
    package var flipped: ComparisonOperator {
        switch self {
        case .less: return .greater
        case .lessEqual: return .greaterEqual
        case .greater: return .less
        case .greaterEqual: return .lessEqual
        default: return self
        }
    }
}

/// An expression with its source range.
package struct ExprSyntax: Sendable {
    /// The forms of expressions. Only the cases holding an expression directly are boxed:
    /// names and literals, most of a file's nodes, cost no allocation of their own.
    package enum Kind: Sendable {
        /// A literal.
        case literal(LiteralValue)
        /// A name: attribute, declaration, segment, `now`, or a case/symbol; or a path to an
        /// object attribute's field, its names joined by dots (`org.billing.country`).
        case name(String)
        /// `[a, b, …]` (only as the right side of `in`).
        case list([ExprSyntax])
        /// `not e` / `!e`.
        indirect case not(ExprSyntax)
        /// `a and b and …` (flattened).
        case and([ExprSyntax])
        /// `a or b or …` (flattened).
        case or([ExprSyntax])
        /// `a OP b`.
        indirect case comparison(ComparisonOperator, ExprSyntax, ExprSyntax)
        /// `a ?? b ?? …` (flattened).
        case coalesce([ExprSyntax])
        /// `name(arguments)`: `has`, `rollout`.
        indirect case call(Identifier, [ExprSyntax])
        /// `( e )`, kept for the formatter.
        indirect case parenthesized(ExprSyntax)
    }
    /// The form.
    package var kind: Kind
    /// Where it is.
    package var range: SourceRange
}
