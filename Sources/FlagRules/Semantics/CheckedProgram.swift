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
package struct Bound: Sendable {
    /// Only the cases holding a `Bound` directly are boxed: constants and attributes, most
    /// of a program's nodes, cost no allocation of their own.
    package enum Kind: Sendable {
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
        /// `rollout(unit, salt, scheme)` with another system's bucketing.
        indirect case vendorRollout(Bound, salt: String, BucketScheme)
        /// `list contains any [literals]` (`all` false) or `contains all [literals]`.
        indirect case containsSet(Bound, [Value], all: Bool)
        /// `count(list)`.
        indirect case count(Bound)
        /// `lower(string)`.
        indirect case lower(Bound)
        /// `version(x)` or `datetime(x)`: a value read as a version or a datetime.
        indirect case convert(Bound, Conversion)
        /// `ramp(from, to, start, end)`.
        case ramp(from: Date, to: Date, start: Double, end: Double)
        /// `address in [blocks]` (or `not in`).
        indirect case network(Bound, NetworkSet, negated: Bool)
        /// `any(list) OP x` (`all` false) or `all(list) OP x`: the test (whose operand
        /// `element` stands for each element in turn) over the list's elements.
        indirect case quantified(Bound, test: Bound, all: Bool)
        /// The element a `quantified` test is tried on.
        case element
    }
    package var kind: Kind
    package var type: FlagType
    package var range: SourceRange
}

/// One rule after checking.
package struct CheckedRule: Sendable {
    package enum Outcome: Sendable {
        case value(Value)
        case split(CheckedSplit)
        /// The caller's default (`fallback`).
        case fallback
    }
    package var outcome: Outcome
    package var condition: Bound?
    /// 1-based position in the body.
    package var index: Int
    /// The line where the rule starts.
    package var line: Int
    /// The whole rule as written.
    package var range: SourceRange
}

/// A split after checking: integer weights (whole numbers, or 0.1 % units) and outcomes.
package struct CheckedSplit: Sendable {
    package var unit: Bound
    package var salt: String
    package var weights: [Int]
    /// Each entry's value; a `fallback` entry's is the declaration's default (see
    /// `fallbacks`).
    package var outcomes: [Value]
    /// How the unit is bucketed (another system's, for imported rules).
    package var scheme: BucketScheme = .unleash
    /// The entries written `fallback`: the caller's default, not `outcomes[k]`.
    package var fallbacks: Set<Int> = []

    /// Whether entry `k` gives the caller's default.
    package func isFallback(_ k: Int) -> Bool { !fallbacks.isEmpty && fallbacks.contains(k) }
}

/// A declaration after checking.
package struct CheckedDeclaration: Sendable {
    package var name: String
    package var kind: DeclarationKind
    package var type: FlagType
    package var defaultValue: Value
    package var variants: [String]
    /// Where each variant's name is written in the declaration's list (for the lints).
    package var variantRanges: [SourceRange] = []
    package var rules: [CheckedRule]
    /// A segment's condition.
    package var condition: Bound?
    package var disabled: Bool
    package var owner: String?
    package var expires: Date?
    package var doc: String?
    package var range: SourceRange
    /// How many rules the body has as written: the checked `rules` lack those with errors
    /// (and the rest of the body after one), and a test's `expect d.rule == N` is checked
    /// against what was written, so that one error does not cascade into another.
    var writtenRuleCount = 0
    /// `@sticky`'s version ("" without one); nil when the declaration is not sticky.
    var sticky: String?
}

/// The names a file defines, by position, with their types and the schema: what an
/// expression written against the file (the REPL) is checked with.
package struct SymbolTable: Sendable {
    var schema: ContextSchema?
    /// The declarations' names by position, looked up.
    var names: LiteralSet
    /// The declarations' names by position.
    package var declarationNames: [String]
    /// The declarations' result types, by position.
    package var types: [FlagType]
    /// Where each schema attribute's name is written, by slot (for the lints).
    package var attributeRanges: [SourceRange] = []
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
package struct CheckedProgram: Sendable {
    package var symbols: SymbolTable
    package var declarations: [CheckedDeclaration]
    package var tests: [TestCase] = []
    /// The names that read declarations and attributes (only when checked for tools).
    package var references: [SymbolReference] = []

    package var schema: ContextSchema? { symbols.schema }
    /// The declarations' names by position.
    package var names: LiteralSet { symbols.names }
}

/// A `test "…" { … }` declaration after checking: a context and expectations on resolutions.
package struct TestCase: Sendable {
    /// The test's title.
    package let name: String
    /// The line of the `test` keyword.
    package let line: Int
    /// The context built from its `given` blocks.
    package let context: EvaluationContext
    /// Its expectations, in order.
    package let expectations: [TestExpectation]
    /// Where its header is written (for the lints).
    package let range: SourceRange
}

/// One `expect` line of a test.
package struct TestExpectation: Sendable {
    /// What is compared.
    package enum Expected: Sendable, Hashable, CustomStringConvertible {
        /// The resolved value.
        case value(Value)
        /// The resolution's reason.
        case reason(Resolution.Reason)
        /// The 1-based index of the deciding rule.
        case rule(Int)
        /// A `fallback` decided: the caller's default.
        case fallback

        /// The expected value, reason or rule as test reports show it (`true`, `DEFAULT`,
        /// `rule 2`).
        package var description: String {
            switch self {
            case .value(let v): return v.description
            case .reason(let r): return r.rawValue
            case .rule(let i): return "rule \(i)"
            case .fallback: return "fallback"
            }
        }
    }
    /// The declaration under test.
    package let subject: String
    /// The expected value, reason or rule.
    package let expected: Expected
    /// True for `!=`.
    package let negated: Bool
    /// The line of the `expect`.
    package let line: Int
    /// The expectation as written.
    package let text: String
    /// Where it is written (for the lints).
    package let range: SourceRange

    /// Whether a resolution meets the expectation.
    package func isMet(by r: Resolution) -> Bool {
        let equal: Bool
        switch expected {
        // (A `fallback` gives the app its own default, not a value of the file's.)
        case .value(let v): equal = !r.isFallback && Comparison.equal(r.value, v) ?? false
        case .reason(let reason): equal = r.reason == reason
        case .rule(let i): equal = r.rule == i
        case .fallback: equal = r.isFallback
        }
        return equal != negated
    }
}

extension Bound {
    /// The exact thousandths of a percent of a numeric constant (`20%`, `20`, `20.5`), for
    /// comparing with a rollout bucket; nil for anything else.
    package var rolloutThreshold: Int? {
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
    package var disabledValue: Value { kind == .flag ? .bool(false) : defaultValue }
}

/// What `version(x)` and `datetime(x)` read a value as.
package enum Conversion: String, Sendable {
    case version, datetime
}

extension Bound {
    /// Calls `visit` on this expression and every expression inside it, outermost first.
    package func forEach(_ visit: (Bound) -> Void) {
        visit(self)
        switch kind {
        case .constant, .percent, .attribute, .declaration, .now, .has, .ramp, .element: break
        case .quantified(let x, let test, _):
            x.forEach(visit)
            test.forEach(visit)
        case .not(let x), .matches(let x, _), .member(let x, _, _), .rollout(let x, _), .vendorRollout(let x, _, _),
            .containsSet(let x, _, _), .count(let x),
            .lower(let x), .convert(let x, _), .network(let x, _, _):
            x.forEach(visit)
        case .and(let xs), .or(let xs), .coalesce(let xs): for x in xs { x.forEach(visit) }
        case .compare(_, let x, let y), .text(_, let x, let y):
            x.forEach(visit)
            y.forEach(visit)
        }
    }
}
