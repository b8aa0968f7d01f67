/// A context laid out in a rule set's schema slots, with every value checked and parsed
/// once (versions and datetimes included): the fastest way to evaluate many declarations,
/// or the same declaration many times, for one user.
///
/// ```swift
/// var context = rules.makeContext()
/// context["build"] = "alpha"
/// context["userId"] = .string(id)
/// let darkMode = rules.handle("darkMode")!
/// rules.isEnabled(darkMode, in: context)
/// ```
///
/// Attributes the schema does not declare are ignored (except `now`), as with dictionary
/// contexts. A prepared context used with a different rule set is read by name instead.
public struct PreparedContext: Sendable {
    let program: Program
    /// Schema-typed values by slot (a mistyped value is nil here).
    var slots: ContiguousArray<Value?>
    /// The values as given, by slot (present even when mistyped, for `has`).
    var raw: ContiguousArray<Value?>
    /// Enum attributes as case ordinals, by slot (-1: absent, mistyped, or not an enum).
    var ordinals: ContiguousArray<Int32>
    /// `now`, and every attribute when the rule set has no schema.
    var extra: [String: Value] = [:]

    init(program: Program) {
        self.program = program
        let n = program.coercions.count
        slots = ContiguousArray(repeating: nil, count: n)
        raw = ContiguousArray(repeating: nil, count: n)
        ordinals = ContiguousArray(repeating: -1, count: n)
    }

    /// The attribute's value as given; setting nil removes it. A value of the wrong type
    /// is kept as present (for `has`) but reads as absent in comparisons.
    public subscript(name: String) -> Value? {
        get {
            if let slot = program.schema?.slots[name] { return raw[slot] }
            return extra[name]
        }
        set {
            guard let slot = program.schema?.slots[name] else {
                if program.schema == nil || name == "now" { extra[name] = newValue }
                return
            }
            raw[slot] = newValue
            slots[slot] = newValue.flatMap(program.coercions[slot].apply)
            ordinals[slot] = program.coercions[slot].ordinal(newValue)
        }
    }

    /// The context as a plain dictionary.
    public var dictionary: EvaluationContext {
        var values = extra
        for (slot, attribute) in (program.schema?.attributes ?? []).enumerated() {
            if let v = raw[slot] { values[attribute.name] = v }
        }
        return EvaluationContext(values)
    }
}

/// A declaration looked up once, for evaluating it without a name lookup.
public struct DeclarationHandle: Sendable, Hashable {
    /// The declaration's name.
    public let name: String
    let index: Int
    /// The program the index belongs to (held, so that its identity cannot be reused).
    let owner: Program

    public static func == (a: DeclarationHandle, b: DeclarationHandle) -> Bool {
        a.name == b.name && a.index == b.index && a.owner === b.owner
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(index)
        hasher.combine(ObjectIdentifier(owner))
    }
}

extension RuleSet {
    /// An empty context laid out for this rule set's schema.
    public func makeContext() -> PreparedContext { PreparedContext(program: program) }

    /// `context` laid out for this rule set's schema, each value checked once.
    public func prepare(_ context: EvaluationContext) -> PreparedContext {
        var prepared = PreparedContext(program: program)
        for (k, v) in context.values { prepared[k] = v }
        return prepared
    }

    /// A handle on the declaration called `name`, or nil when there is none.
    public func handle(_ name: String) -> DeclarationHandle? {
        program.index[name].map { DeclarationHandle(name: name, index: $0, owner: program) }
    }

    /// Runs `body` with a frame over the context: its slots when it was prepared for this
    /// rule set, else its values by name.
    @inline(__always)
    private func withFrame<R>(_ context: PreparedContext, _ body: (Frame) -> R) -> R {
        if context.program === program { return Frame.with(context, program: program, body) }
        return body(Frame(values: context.dictionary.values, program: program))
    }

    /// The declaration a handle names in this rule set: by index when the handle was made
    /// here, else by name.
    @inline(__always)
    private func index(of handle: DeclarationHandle) -> Int? {
        handle.owner === program ? handle.index : program.index[handle.name]
    }

    /// Resolves a declaration by handle against a prepared context.
    public func evaluate(_ handle: DeclarationHandle, in context: PreparedContext) -> Resolution {
        guard let i = index(of: handle) else {
            return .error(.flagNotFound, "no declaration named '\(handle.name)'", default: .bool(false))
        }
        let d = program.declarations[i]
        return withFrame(context) { d.resolve($0) }
    }

    /// Resolves a declaration by name against a prepared context.
    public func evaluate(_ name: String, in context: PreparedContext) -> Resolution {
        guard let i = program.index[name] else {
            return .error(.flagNotFound, "no declaration named '\(name)'", default: .bool(false))
        }
        let d = program.declarations[i]
        return withFrame(context) { d.resolve($0) }
    }

    /// Whether a flag is on, by handle; `fallback` when the handle names no flag here.
    public func isEnabled(_ handle: DeclarationHandle, in context: PreparedContext, default fallback: Bool = false) -> Bool {
        guard let i = index(of: handle) else { return fallback }
        let d = program.declarations[i]
        guard d.kind == .flag, case .bool(let b) = withFrame(context, { d.resolve($0).value }) else { return fallback }
        return b
    }
}
