/// A name as written, with where it was written.
public struct Identifier: Sendable, Hashable {
    /// The name.
    public var name: String
    /// Where it is.
    public var range: SourceRange
}

/// A parsed `.flags` file: its declarations in source order, and every comment.
public struct FileSyntax: Sendable {
    /// Declarations, in source order.
    public var declarations: [DeclarationSyntax]
    /// All comments and doc comments, in source order (for the formatter).
    public var comments: [Comment]
}

/// `///` lines attached to the declaration below them.
public struct DocCommentSyntax: Sendable, Hashable {
    /// Each line's text after `///`, with one leading space removed.
    public var lines: [String]
    /// From the first `///` to the end of the last line.
    public var range: SourceRange

    /// The lines joined with newlines.
    public var text: String { lines.joined(separator: "\n") }
}

/// `@name` or `@name("argument", …)` before a declaration.
public struct AttributeSyntax: Sendable {
    /// The attribute's name, without `@`.
    public var name: Identifier
    /// Its literal arguments.
    public var arguments: [LiteralSyntax]
    /// From `@` to the closing parenthesis.
    public var range: SourceRange
}

/// What every declaration has: its keyword, name, attributes and doc comment.
public struct DeclarationHeader: Sendable {
    /// The declaration keyword (`flag`, `variant`, …).
    public var keyword: Identifier
    /// The declared name (for `context`, the keyword itself).
    public var name: Identifier
    /// Attributes written before it.
    public var attributes: [AttributeSyntax]
    /// Its doc comment.
    public var doc: DocCommentSyntax?
    /// The whole declaration, attributes included.
    public var range: SourceRange
}

/// One top-level declaration.
public indirect enum DeclarationSyntax: Sendable {
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

    /// The parts every declaration has.
    public var header: DeclarationHeader {
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
public struct TestSyntax: Sendable {
    /// Keyword and range; the name is the test's title (its range is the string's).
    public var header: DeclarationHeader
    /// The `given` entries, in order (several `given` blocks merge).
    public var givens: [GivenSyntax]
    /// The expectations, in order.
    public var expectations: [ExpectationSyntax]
}

/// `key: value` inside `given { … }`.
public struct GivenSyntax: Sendable {
    /// A literal, or a bare name (an enum case).
    public enum Value: Sendable {
        /// A literal.
        case literal(LiteralSyntax)
        /// A bare name, taken as a case or symbol.
        case name(Identifier)
    }
    /// The context attribute.
    public var key: Identifier
    /// Its value.
    public var value: Value
    /// The whole entry.
    public var range: SourceRange
}

/// `expect NAME`, `expect not NAME`, `expect NAME == x`, `expect NAME.reason == SPLIT`, `expect NAME.rule == 2`.
public struct ExpectationSyntax: Sendable {
    /// What is expected to be equal (or, with `!=`, different).
    public enum Expected: Sendable {
        /// `expect NAME` (true) or `expect not NAME` (false).
        case bare(Bool)
        /// A literal.
        case literal(LiteralSyntax)
        /// A name: a variant, an enum case, or a reason.
        case name(Identifier)
    }
    /// The declaration under test.
    public var subject: Identifier
    /// `reason`, `rule` or `variant` after a dot; nil for the value.
    public var property: Identifier?
    /// True for `!=`.
    public var negated: Bool
    /// The expected value.
    public var expected: Expected
    /// The whole line.
    public var range: SourceRange
}

/// `context { … }`: the schema of the evaluation context.
public struct ContextSyntax: Sendable {
    /// Keyword, attributes and range.
    public var header: DeclarationHeader
    /// The declared attributes, in order.
    public var fields: [ContextFieldSyntax]
}

/// `name : type` inside `context { … }`.
public struct ContextFieldSyntax: Sendable {
    /// The attribute's name.
    public var name: Identifier
    /// Its declared type.
    public var type: TypeSyntax
    /// The whole field.
    public var range: SourceRange
}

/// A type as written: `int`, `version`, `enum(debug, release)`.
public struct TypeSyntax: Sendable {
    /// The form of the type.
    public enum Kind: Sendable {
        /// A named type: string, int, double, bool, version, datetime.
        case named(Identifier)
        /// `enum(a, b, …)`.
        case enumeration([Identifier])
    }
    /// What the type is.
    public var kind: Kind
    /// Where it is.
    public var range: SourceRange
}

/// `segment NAME = EXPR`
public struct SegmentSyntax: Sendable {
    /// Keyword, name, attributes.
    public var header: DeclarationHeader
    /// The segment's condition.
    public var condition: ExprSyntax
}

/// `flag NAME [= true|false] [{ RULES }]`
public struct FlagSyntax: Sendable {
    /// Keyword, name, attributes.
    public var header: DeclarationHeader
    /// The default after `=`, if written.
    public var defaultValue: LiteralSyntax?
    /// The rules, if there is a body.
    public var body: BodySyntax?
}

/// `variant NAME [a, b, …] [= a] [{ RULES }]`
public struct VariantSyntax: Sendable {
    /// Keyword, name, attributes.
    public var header: DeclarationHeader
    /// The variants, in the order written.
    public var variants: [Identifier]
    /// The default after `=`, if written.
    public var defaultVariant: Identifier?
    /// The rules, if there is a body.
    public var body: BodySyntax?
}

/// `value NAME: TYPE = LITERAL [{ RULES }]`
public struct ValueSyntax: Sendable {
    /// Keyword, name, attributes.
    public var header: DeclarationHeader
    /// The declared type.
    public var type: TypeSyntax
    /// The default literal (required; nil only after a syntax error).
    public var defaultValue: LiteralSyntax?
    /// The rules, if there is a body.
    public var body: BodySyntax?
}

/// `{ rule; rule … }`
public struct BodySyntax: Sendable {
    /// The rules in order.
    public var rules: [RuleSyntax]
    /// From `{` to `}`.
    public var range: SourceRange
}

/// One rule: an outcome and an optional `when` condition.
public struct RuleSyntax: Sendable {
    /// What the rule resolves to.
    public enum Outcome: Sendable {
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
    }
    /// What the rule resolves to.
    public var outcome: Outcome
    /// The condition after `when`.
    public var condition: ExprSyntax?
    /// The whole rule.
    public var range: SourceRange
}

/// `split(unit[, "salt"]) { key: weight, … }`
public struct SplitSyntax: Sendable {
    /// The bucketing unit.
    public var unit: ExprSyntax
    /// The salt, when given.
    public var salt: LiteralSyntax?
    /// The weighted entries in order.
    public var entries: [SplitEntrySyntax]
    /// From `split` to `}`.
    public var range: SourceRange
}

/// `key: weight` inside a split.
public struct SplitEntrySyntax: Sendable {
    /// A variant name or a value literal.
    public enum Key: Sendable {
        /// A variant name.
        case name(Identifier)
        /// A literal for a value declaration.
        case literal(LiteralSyntax)

        /// Where the key is.
        public var range: SourceRange {
            switch self {
            case .name(let i): return i.range
            case .literal(let l): return l.range
            }
        }
    }
    /// The entry's key.
    public var key: Key
    /// Its weight: an int or a percentage literal.
    public var weight: LiteralSyntax
    /// The whole entry.
    public var range: SourceRange
}

/// A literal's decoded value.
public enum LiteralValue: Sendable, Hashable {
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
public struct LiteralSyntax: Sendable {
    /// The decoded value.
    public var value: LiteralValue
    /// Where it is.
    public var range: SourceRange
    /// The exact source text.
    public var text: String
}

/// Comparison operators, from `==` to `matches`.
public enum ComparisonOperator: String, Sendable, CaseIterable {
    case equal = "==", notEqual = "!=", less = "<", lessEqual = "<=", greater = ">", greaterEqual = ">="
    case `in` = "in", notIn = "not in", contains = "contains", startsWith = "starts with"
    case endsWith = "ends with", matches = "matches"

    /// `<`, `<=`, `>`, `>=`.
    public var isOrdering: Bool {
        switch self {
        case .less, .lessEqual, .greater, .greaterEqual: return true
        default: return false
        }
    }

    /// The operator with its operands swapped (`a < b` is `b > a`).
    var flipped: ComparisonOperator {
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
public struct ExprSyntax: Sendable {
    /// The forms of expressions. Only the cases holding an expression directly are boxed:
    /// names and literals, most of a file's nodes, cost no allocation of their own.
    public enum Kind: Sendable {
        /// A literal.
        case literal(LiteralValue)
        /// A name: attribute, declaration, segment, `now`, or a case/symbol.
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
    public var kind: Kind
    /// Where it is.
    public var range: SourceRange
}
