import Foundation

/// The three truth values of a condition: a rule matches only on `yes`.
enum Truth: UInt8, Sendable {
    case no, yes, unknown

    @inline(__always) init(_ b: Bool) { self = b ? .yes : .no }

    @inline(__always) var negated: Truth {
        switch self {
        case .no: return .yes
        case .yes: return .no
        case .unknown: return .unknown
        }
    }
}

/// What one evaluation reads: the context (a dictionary, or schema slots of a prepared
/// context) and the program (for prerequisites).
struct Frame {
    /// Attributes by name: a dictionary context, or a prepared context's extras (`now`).
    let values: [String: Value]
    /// A prepared context's schema-typed values by slot; empty for dictionary contexts.
    let slots: ContiguousArray<Value?>
    /// Whether each slot's attribute was given at all (even with a mistyped value).
    let present: ContiguousArray<Bool>
    let isSlotted: Bool
    let program: Program

    init(values: [String: Value], program: Program) {
        self.values = values
        slots = []
        present = []
        isSlotted = false
        self.program = program
    }

    init(prepared: PreparedContext, program: Program) {
        values = prepared.extra
        slots = prepared.slots
        present = prepared.present
        isSlotted = true
        self.program = program
    }
}

/// How an attribute's value is checked against its schema type: a value of the wrong
/// type reads as absent; version and datetime strings are parsed.
enum Coercion: Sendable {
    case any, string, int, double, bool, version, datetime
    case enumeration(Set<ByteString>)

    init(_ type: FlagType) {
        switch type {
        case .string: self = .string
        case .int: self = .int
        case .double: self = .double
        case .bool: self = .bool
        case .version: self = .version
        case .datetime: self = .datetime
        case .enumeration(let cases): self = .enumeration(Set(cases.map(ByteString.init)))
        case .variant, .symbol, .dynamic: self = .any
        }
    }

    @inline(__always)
    func apply(_ v: Value) -> Value? {
        switch (self, v) {
        case (.any, _), (.string, .string), (.int, .int), (.double, .int), (.double, .double), (.bool, .bool),
             (.version, .version), (.datetime, .datetime):
            return v
        case (.version, .string(let s)): return SemanticVersion(s).map { .version($0) }
        case (.datetime, .string(let s)): return DateTime.parse(s).map { .datetime($0) }
        case (.enumeration(let cases), .string(let s)): return cases.contains(ByteString(s)) ? v : nil
        default: return nil
        }
    }
}

typealias ValueFunction = @Sendable (Frame) -> Value?
typealias ConditionFunction = @Sendable (Frame) -> Truth

/// One compiled rule.
struct CompiledRule: Sendable {
    enum Outcome: Sendable {
        case value(Value)
        case split(ValueFunction)
    }
    let condition: ConditionFunction?
    let outcome: Outcome
    let index: Int
    let line: Int
}

/// One compiled declaration: its metadata and its rules as closures.
struct CompiledDeclaration: Sendable {
    let name: String
    let kind: DeclarationKind
    let defaultValue: Value
    let disabled: Bool
    let rules: [CompiledRule]
    /// True when the declaration was written without rules (reason STATIC).
    let isStatic: Bool
    /// A segment's condition.
    let segment: ConditionFunction?

    @inline(__always)
    private func make(_ value: Value, _ reason: Resolution.Reason, _ rule: CompiledRule? = nil) -> Resolution {
        var variant: String?
        if kind == .variant, case .string(let s) = value { variant = s }
        return Resolution(value: value, variant: variant, reason: reason, rule: rule?.index, line: rule?.line)
    }

    func resolve(_ frame: Frame) -> Resolution {
        if let segment {
            let truth = segment(frame)
            return Resolution(value: .bool(truth == .yes), reason: truth == .yes ? .targetingMatch : .default)
        }
        if disabled { return make(defaultValue, .disabled) }
        if isStatic { return make(defaultValue, .static) }
        for rule in rules {
            if let condition = rule.condition, condition(frame) != .yes { continue }
            switch rule.outcome {
            case .value(let v):
                return make(v, .targetingMatch, rule)
            case .split(let choose):
                if let v = choose(frame) { return make(v, .split, rule) }
            }
        }
        return make(defaultValue, .default)
    }

    /// The declaration's value as an operand of another declaration's expression.
    @inline(__always)
    func value(_ frame: Frame) -> Value? {
        if let segment {
            switch segment(frame) {
            case .yes: return .bool(true)
            case .no: return .bool(false)
            case .unknown: return nil
            }
        }
        return resolve(frame).value
    }
}

/// A compiled, immutable rule set: what `RuleSet` evaluates. Safe to share across threads.
final class Program: Sendable {
    let declarations: [CompiledDeclaration]
    let index: [String: Int]
    let schema: ContextSchema?
    /// Each schema attribute's coercion, by slot.
    let coercions: [Coercion]

    init(declarations: [CompiledDeclaration], index: [String: Int], schema: ContextSchema?) {
        self.declarations = declarations
        self.index = index
        self.schema = schema
        self.coercions = schema?.attributes.map { Coercion($0.type) } ?? []
    }

    static let empty = Program(declarations: [], index: [:], schema: nil)
}
