import Foundation

/// What kind of declaration a name refers to.
public enum DeclarationKind: String, Sendable, Hashable {
    /// A boolean flag.
    case flag
    /// A variant (A/B test) declaration.
    case variant
    /// A typed value.
    case value
    /// A named condition, usable in expressions.
    case segment
}

/// A checked expression: names resolved, literals coerced, patterns compiled.
struct Bound: Sendable {
    /// Only the cases holding a `Bound` directly are boxed: constants and attributes, most
    /// of a program's nodes, cost no allocation of their own.
    enum Kind: Sendable {
        case constant(Value)
        /// A percentage literal, in thousandths (kept exact for rollout comparisons).
        case percent(Int)
        case attribute(String, slot: Int?, FlagType)
        case declaration(Int)
        case now
        indirect case not(Bound)
        case and([Bound])
        case or([Bound])
        indirect case compare(ComparisonOperator, Bound, Bound)
        indirect case member(Bound, [Value], negated: Bool)
        indirect case text(ComparisonOperator, Bound, Bound)
        indirect case matches(Bound, Pattern)
        case coalesce([Bound])
        case has(String, slot: Int?)
        indirect case rollout(Bound, salt: String)
        /// `list contains any [literals]` (`all` false) or `contains all [literals]`.
        indirect case containsSet(Bound, [Value], all: Bool)
        /// `count(list)`.
        indirect case count(Bound)
        /// `lower(string)`.
        indirect case lower(Bound)
        /// `ramp(from, to, start, end)`.
        case ramp(from: Date, to: Date, start: Double, end: Double)
        /// `address in [blocks]` (or `not in`).
        indirect case network(Bound, NetworkSet, negated: Bool)
    }
    var kind: Kind
    var type: FlagType
    var range: SourceRange
}

/// One rule after checking.
struct CheckedRule: Sendable {
    enum Outcome: Sendable {
        case value(Value)
        case split(CheckedSplit)
    }
    var outcome: Outcome
    var condition: Bound?
    /// 1-based position in the body.
    var index: Int
    /// The line where the rule starts.
    var line: Int
    /// The whole rule as written.
    var range: SourceRange
}

/// A split after checking: integer weights (whole numbers, or 0.1 % units) and outcomes.
struct CheckedSplit: Sendable {
    var unit: Bound
    var salt: String
    var weights: [Int]
    var outcomes: [Value]
}

/// A declaration after checking.
struct CheckedDeclaration: Sendable {
    var name: String
    var kind: DeclarationKind
    var type: FlagType
    var defaultValue: Value
    var variants: [String]
    /// Where each variant's name is written in the declaration's list (for the lints).
    var variantRanges: [SourceRange] = []
    var rules: [CheckedRule]
    /// A segment's condition.
    var condition: Bound?
    var disabled: Bool
    var owner: String?
    var expires: Date?
    var doc: String?
    var range: SourceRange
    /// How many rules the body has as written: the checked `rules` lack those with errors
    /// (and the rest of the body after one), and a test's `expect d.rule == N` is checked
    /// against what was written, so that one error does not cascade into another.
    var writtenRuleCount = 0
    /// `@sticky`'s version ("" without one); nil when the declaration is not sticky.
    var sticky: String?
}

/// The names a file defines, by position, with their types and the schema: what an
/// expression written against the file (the REPL) is checked with.
struct SymbolTable: Sendable {
    var schema: ContextSchema?
    /// The declarations' names by position, looked up.
    var names: LiteralSet
    /// The declarations' names by position.
    var declarationNames: [String]
    /// The declarations' result types, by position.
    var types: [FlagType]
    /// Where each schema attribute's name is written, by slot (for the lints).
    var attributeRanges: [SourceRange] = []
}

/// A name written in a file and what it reads (recorded for editors).
package struct SymbolReference: Sendable, Hashable {
    /// What a name can refer to.
    package enum Target: Sendable, Hashable {
        /// The declaration at this position.
        case declaration(Int)
        /// The context attribute of this name.
        case attribute(String)
    }
    /// Where the name is written.
    package var range: SourceRange
    /// What it reads.
    package var target: Target
}

/// The output of the checker: everything the compiler needs, nothing it must look up again.
struct CheckedProgram: Sendable {
    var symbols: SymbolTable
    var declarations: [CheckedDeclaration]
    var tests: [TestCase] = []
    /// The names that read declarations and attributes (only when checked for tools).
    var references: [SymbolReference] = []

    var schema: ContextSchema? { symbols.schema }
    /// The declarations' names by position.
    var names: LiteralSet { symbols.names }
}

/// A `test "…" { … }` declaration after checking: a context and expectations on resolutions.
public struct TestCase: Sendable {
    /// The test's title.
    public let name: String
    /// The line of the `test` keyword.
    public let line: Int
    /// The context built from its `given` blocks.
    public let context: EvaluationContext
    /// Its expectations, in order.
    public let expectations: [TestExpectation]
    /// Where its header is written (for the lints).
    let range: SourceRange
}

/// One `expect` line of a test.
public struct TestExpectation: Sendable {
    /// What is compared.
    public enum Expected: Sendable, Hashable, CustomStringConvertible {
        /// The resolved value.
        case value(Value)
        /// The resolution's reason.
        case reason(Resolution.Reason)
        /// The 1-based index of the deciding rule.
        case rule(Int)

        /// The expected value, reason or rule as test reports show it (`true`, `DEFAULT`,
        /// `rule 2`).
        public var description: String {
            switch self {
            case .value(let v): return v.description
            case .reason(let r): return r.rawValue
            case .rule(let i): return "rule \(i)"
            }
        }
    }
    /// The declaration under test.
    public let subject: String
    /// The expected value, reason or rule.
    public let expected: Expected
    /// True for `!=`.
    public let negated: Bool
    /// The line of the `expect`.
    public let line: Int
    /// The expectation as written.
    public let text: String
    /// Where it is written (for the lints).
    let range: SourceRange

    /// Whether a resolution meets the expectation.
    public func isMet(by r: Resolution) -> Bool {
        let equal: Bool
        switch expected {
        case .value(let v): equal = Comparison.equal(r.value, v) ?? false
        case .reason(let reason): equal = r.reason == reason
        case .rule(let i): equal = r.rule == i
        }
        return equal != negated
    }
}

extension Bound {
    /// The exact thousandths of a percent of a numeric constant (`20%`, `20`, `20.5`), for
    /// comparing with a rollout bucket; nil for anything else.
    var rolloutThreshold: Int? {
        switch kind {
        case .percent(let t): return t
        case .constant(let v): return Bucketing.thousandths(v)
        default: return nil
        }
    }
}

extension CheckedDeclaration {
    /// What a `@disabled` declaration resolves to: a flag is off (a kill switch, whatever
    /// its default); a variant or value keeps its default.
    var disabledValue: Value { kind == .flag ? .bool(false) : defaultValue }
}
