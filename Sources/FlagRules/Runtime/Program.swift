import Foundation

/// What one evaluation reads: a dictionary context, or the slots of a prepared context
/// (borrowed for the duration of the evaluation), and the program for prerequisites.
///
/// It holds no strong references of its own, so making one and passing it down the
/// closure tree costs no reference counting.
struct Frame {
    /// Attributes by name: a dictionary context, or a prepared context's extras (`now`);
    /// nil when there are none. Borrowed and never retained (the context outlives the
    /// evaluation): reading an attribute costs no reference counting.
    let context: Unmanaged<ContextStorage>?
    /// A prepared context's slots (typed value, enum ordinal); nil for dictionary
    /// contexts.
    let slots: UnsafePointer<PreparedSlot>?
    /// The program being evaluated, borrowed like the context.
    let program: Unmanaged<Program>

    /// A frame over a context, which must outlive the frame's use (an empty one need not:
    /// the frame then holds no reference at all).
    init(_ context: EvaluationContext, program: Program) {
        self.context = context.count == 0 ? nil : Unmanaged.passUnretained(context.storage)
        slots = nil
        self.program = Unmanaged.passUnretained(program)
    }

    /// A frame over a prepared context's storage (its slots and extras), which must
    /// outlive the frame's use.
    @inline(__always)
    init(_ storage: PreparedStorage, program: Program) {
        (context, slots) = storage.withUnsafeMutablePointers { header, slots in
            let extra = header.pointee.extra
            return (extra.count == 0 ? nil : Unmanaged.passUnretained(extra.storage), UnsafePointer(slots))
        }
        self.program = Unmanaged.passUnretained(program)
    }

    /// An attribute's schema-typed value: from its slot, or read from the dictionary
    /// (checked by `coercion`).
    @inline(__always)
    func attribute<R: DictionaryRead>(_ read: R, slot: Int, _ coercion: Coercion) -> Value? {
        if let slots { return slots[slot].typed }
        guard let v = read.value(in: self) else { return nil }
        return coercion.apply(v)
    }

    /// Whether an attribute was given, whatever its type (for `has`).
    @inline(__always)
    func isGiven<R: DictionaryRead>(_ read: R, slot: Int) -> Bool {
        if let slots { return slots[slot].isGiven }
        return read.value(in: self) != nil
    }

    /// Runs `body` with the program's declaration at `i` (a declaration another one reads),
    /// borrowed.
    @inline(__always)
    func withDeclaration<R>(_ i: Int, _ body: (CompiledDeclaration) -> R) -> R {
        program._withUnsafeGuaranteedRef { $0.withDeclaration(i, body) }
    }

    /// An attribute by name.
    @inline(__always)
    func value(named name: Key) -> Value? {
        context?._withUnsafeGuaranteedRef { $0.value(for: name.name, hash: name.hash) }
    }

    /// An attribute name with its hash, computed once when the rules compile.
    struct Key: Sendable {
        let name: String
        let hash: UInt64

        init(_ name: String) {
            self.name = name
            hash = ContextStorage.hash(name)
        }
    }

    static let now = Key("now")

    /// A frame with no attributes, for folding constants (no allocation per use).
    static var empty: Frame { Frame(Frame.noAttributes, program: .empty) }
    private static let noAttributes = EvaluationContext()
}

/// How a compiled rule reads an attribute of a dictionary context (or of a prepared
/// context's extras): a top-level attribute by name, or a path's field below one. Each is a
/// type of its own, and the closures a rule compiles to are specialised for the one they
/// read: a flat read costs no test of whether it is a path.
protocol DictionaryRead: Sendable {
    /// The value read, as given (nil: absent).
    func value(in f: Frame) -> Value?
}

/// A top-level attribute, by name.
struct NamedRead: DictionaryRead {
    let key: Frame.Key

    init(_ name: String) { key = Frame.Key(name) }

    @inline(__always)
    func value(in f: Frame) -> Value? { f.value(named: key) }
}

/// A path's field (`org.billing.country`): the top-level attribute by name, then each field
/// below it; absent when a step is absent or not an object.
struct PathRead: DictionaryRead {
    let key: Frame.Key
    let fields: [String]

    /// The read of `path`; nil when it names a top-level attribute (no dot).
    init?(_ path: String) {
        guard Path.isPath(path) else { return nil }
        let parts = path.split(separator: ".", omittingEmptySubsequences: false)
        key = Frame.Key(String(parts[0]))
        fields = parts.dropFirst().map(String.init)
    }

    func value(in f: Frame) -> Value? { f.value(named: key)?.value(at: fields) }
}

/// How an attribute's value is checked against its schema type: a value of the wrong
/// type reads as absent; version and datetime strings are parsed.
package enum Coercion: Sendable {
    case any, string, int, double, bool, version, datetime
    /// A string that parses as an IPv4 or IPv6 address.
    case ip
    case enumeration(EnumTable)
    /// A list whose every element fits the element coercion (`string`, `int` or an enum).
    indirect case list(Coercion)
    /// An object (its fields are read through their own slots).
    case object

    package init(_ type: FlagType) {
        switch type {
        case .string: self = .string
        case .int: self = .int
        case .double: self = .double
        case .bool: self = .bool
        case .version: self = .version
        case .datetime: self = .datetime
        case .enumeration(let cases): self = .enumeration(EnumTable(cases))
        case .ip: self = .ip
        case .list(let element): self = .list(Coercion(element))
        case .object: self = .object
        case .variant, .symbol, .dynamic: self = .any
        }
    }

    @inline(__always)
    package func apply(_ v: Value) -> Value? {
        switch (self, v) {
        case (.any, _), (.string, .string), (.int, .int), (.double, .int), (.double, .double), (.bool, .bool),
            (.version, .version), (.datetime, .datetime):
            return v
        case (.version, .string(let s)): return SemanticVersion(s).map { .version($0) }
        case (.datetime, .string(let s)): return DateTime.parse(s).map { .datetime($0) }
        case (.enumeration(let table), .string(let s)): return table.ordinal(of: s) != nil ? v : nil
        case (.ip, _), (.list, _), (.object, _): return applyOutOfLine(v)
        default: return nil
        }
    }

    /// Whether `apply` takes `v`.
    package func fits(_ v: Value) -> Bool { apply(v) != nil }

    /// `apply` for addresses and lists, out of line: bound in the inlined switch, their
    /// payloads made every read copy and destroy its value.
    @inline(never)
    private func applyOutOfLine(_ v: Value) -> Value? {
        switch self {
        case .ip:
            guard case .string(let s) = v, IPAddress(s) != nil else { return nil }
            return v
        case .list(let element):
            guard case .list(let elements) = v else { return nil }
            for e in elements where !element.fitsElement(e) { return nil }
            return v
        case .object:
            guard case .object = v else { return nil }
            return v
        default:
            return nil
        }
    }

    /// Whether a list element fits this element coercion as it is (list elements are
    /// strings, ints or enum cases: none is converted).
    func fitsElement(_ e: Value) -> Bool {
        switch (self, e) {
        case (.string, .string), (.int, .int): return true
        case (.enumeration(let table), .string(let s)): return table.ordinal(of: s) != nil
        default: return false
        }
    }

    /// A prepared slot's tag for its typed value `v`: an enum value's case ordinal, else -1.
    func tag(_ v: Value?) -> Int32 {
        switch (self, v) {
        case (.enumeration(let table), .string(let s)?): return table.ordinal(of: s).map { Int32($0) } ?? -1
        default: return -1
        }
    }
}

/// An enum's cases, looked up by their bytes: a linear scan for a few cases, a hash table
/// for many.
package struct EnumTable: Sendable {
    let strings: LiteralSet

    init(_ cases: [String]) { strings = LiteralSet(cases) }

    @inline(__always)
    func ordinal(of s: String) -> Int? { strings.index(of: s) }
}

typealias ValueFunction = @Sendable (Frame) -> Value?
/// The index of a split's chosen entry (nil: none).
typealias IndexFunction = @Sendable (Frame) -> Int?
typealias ConditionFunction = @Sendable (Frame) -> Truth
typealias ResolveFunction = @Sendable (Frame) -> Outcome
typealias FlagFunction = @Sendable (Frame) -> Bool

/// What a compiled declaration returns: a `Resolution` without its strings, cheap to pass
/// up the closure chain (the variant is the value's string; rule and line are 0 for none).
struct Outcome: Sendable {
    var value: Value
    var reason: Resolution.Reason
    /// A `fallback` rule decided: the caller's default (`value` is the declaration's, for a
    /// caller that gives none).
    var isFallback = false
    var rule: Int32
    var line: Int32

    init(_ value: Value, _ reason: Resolution.Reason, rule: Int = 0, line: Int = 0) {
        self.value = value
        self.reason = reason
        self.rule = Int32(truncatingIfNeeded: rule)
        self.line = Int32(truncatingIfNeeded: line)
    }

    /// The outcome of a `fallback` rule of a declaration whose default is `value`.
    static func fallback(_ value: Value, rule: Int, line: Int, reason: Resolution.Reason = .default) -> Outcome {
        var o = Outcome(value, reason, rule: rule, line: line)
        o.isFallback = true
        return o
    }
}

/// One compiled declaration: its metadata and a closure that resolves it.
final class CompiledDeclaration: Sendable {
    let name: String
    let kind: DeclarationKind
    let defaultValue: Value
    /// The whole declaration: disabled, static, the rules as a chain of closures, the default.
    let resolve: ResolveFunction
    /// A segment's condition.
    let segment: ConditionFunction?
    /// Whether a flag is on: its rules answering only that, when every rule gives a
    /// constant (no outcome to build and take apart), else its value. (Not optional: a
    /// closure read out of an optional is retained and released around its call.)
    let isOn: FlagFunction
    /// A flag none of whose rules is `fallback`: `isOn` answers for it (one with a
    /// `fallback` rule answers the caller's default there, which `isOn` does not know).
    let isOnAnswers: Bool

    init(
        name: String, kind: DeclarationKind, defaultValue: Value, resolve: @escaping ResolveFunction, segment: ConditionFunction?,
        isOn: @escaping FlagFunction, fallsBack: Bool = false
    ) {
        self.name = name
        self.kind = kind
        self.defaultValue = defaultValue
        self.resolve = resolve
        self.segment = segment
        self.isOn = isOn
        self.isOnAnswers = kind == .flag && !fallsBack
    }

    /// The end of a flag's on/off chain: its default, shared (a closure capturing the
    /// default would be an allocation for every declaration).
    static let alwaysOn: FlagFunction = { _ in true }
    static let alwaysOff: FlagFunction = { _ in false }

    /// `isOn` for declarations that are not flags (`isEnabled` never calls it): one
    /// function for all of them, not one each.
    static var notAFlag: FlagFunction { alwaysOff }

    /// The full resolution, built in place from the outcome (through the public
    /// initialiser it was built in a temporary, copied out and destroyed: three string
    /// retains and releases an evaluation).
    @inline(__always)
    func resolution(_ frame: Frame) -> Resolution {
        Resolution(resolve(frame), isVariant: kind == .variant)
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
        let outcome = resolve(frame)
        return outcome.isFallback ? nil : outcome.value  // the caller's default: unknown here
    }
}

/// A compiled, immutable rule set: what `RuleSet` evaluates. Safe to share across threads.
final class Program: Sendable {
    let declarations: [CompiledDeclaration]
    /// Declaration names by position: name → index without SipHash.
    let names: LiteralSet
    let schema: ContextSchema?
    /// Each schema attribute's coercion, by slot.
    let coercions: [Coercion]
    /// Schema attribute names by slot (fields by their paths).
    let attributeNames: LiteralSet
    /// By slot, whether the attribute is a field of an object (named by its path, which is
    /// no context key).
    let isField: [Bool]
    /// By slot, an object attribute's fields: each one's name and slot (empty for others).
    let fieldSlots: [[(name: String, slot: Int)]]

    /// A program of `declarations` over `schema`, whose attributes' coercions are
    /// `coercions` by slot (made from the schema when nil), and whose names are `names` by
    /// position (made from the declarations when nil).
    init(declarations: [CompiledDeclaration], schema: ContextSchema?, coercions: [Coercion]? = nil, names: LiteralSet? = nil) {
        self.declarations = declarations
        self.names = names ?? LiteralSet(declarations.map(\.name))
        self.schema = schema
        let coercions = coercions ?? schema?.attributes.map { Coercion($0.type) } ?? []
        self.coercions = coercions
        self.attributeNames = schema?.slots ?? LiteralSet([])
        self.isField = schema?.attributes.map { $0.parent != nil } ?? []
        var fieldSlots = [[(name: String, slot: Int)]](repeating: [], count: schema?.attributes.count ?? 0)
        for a in schema?.attributes ?? [] {
            if let parent = a.parent { fieldSlots[parent].append((a.fieldName, a.slot)) }
        }
        self.fieldSlots = fieldSlots
    }

    /// Runs `body` with the declaration at `i` borrowed: calling its closures then retains
    /// and releases nothing (a retain of a closure's context is an atomic operation). `i`
    /// comes from this program's own name table, a handle made by it, or the checker's
    /// reference to a declaration: always in range, so it is not checked again here.
    @inline(__always)
    func withDeclaration<R>(_ i: Int, _ body: (CompiledDeclaration) -> R) -> R {
        declarations.withUnsafeBufferPointer { Unmanaged.passUnretained($0[i])._withUnsafeGuaranteedRef(body) }
    }

    /// Resolves the declaration at `i` over `frame`. Only the small outcome leaves the
    /// borrow; the resolution is built from it outside (built inside, it was copied out
    /// whole and the original destroyed, several calls an evaluation).
    @inline(__always)
    func resolution(_ i: Int, _ frame: Frame) -> Resolution {
        let (outcome, kind) = withDeclaration(i) { ($0.resolve(frame), $0.kind) }
        return Resolution(outcome, isVariant: kind == .variant)
    }

    /// The slot of the top-level attribute called `name`: a context's key names an
    /// attribute, dots and all, so a field's path (`org.plan`) names none.
    @inline(__always)
    func topLevelSlot(of name: String) -> Int? {
        guard let slot = attributeNames.index(of: name), !isField[slot] else { return nil }
        return slot
    }

    static let empty = Program(declarations: [], schema: nil)

}
