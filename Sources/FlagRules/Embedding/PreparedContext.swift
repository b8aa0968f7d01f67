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
    var slots: ContiguousArray<Value?>
    var present: ContiguousArray<Bool>
    /// `now`, and every attribute when the rule set has no schema.
    var extra: [String: Value] = [:]

    init(program: Program) {
        self.program = program
        let n = program.coercions.count
        slots = ContiguousArray(repeating: nil, count: n)
        present = ContiguousArray(repeating: false, count: n)
    }

    /// The attribute's value as given; setting nil removes it. A value of the wrong type
    /// is kept as present (for `has`) but reads as absent in comparisons.
    public subscript(name: String) -> Value? {
        get {
            if let slot = program.schema?.slots[name] { return present[slot] ? raw[name] : nil }
            return extra[name]
        }
        set {
            guard let slot = program.schema?.slots[name] else {
                if program.schema == nil || name == "now" { extra[name] = newValue }
                return
            }
            present[slot] = newValue != nil
            slots[slot] = newValue.flatMap(program.coercions[slot].apply)
            raw[name] = newValue
        }
    }

    /// The values as given, for reading back and for evaluation with another rule set.
    private var raw: [String: Value] = [:]

    /// The context as a plain dictionary.
    public var dictionary: EvaluationContext {
        EvaluationContext(raw.merging(extra) { a, _ in a })
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

    @inline(__always)
    private func frame(_ context: PreparedContext) -> Frame {
        context.program === program ? Frame(prepared: context, program: program)
            : Frame(values: context.dictionary.values, program: program)
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
        return program.declarations[i].resolve(frame(context))
    }

    /// Resolves a declaration by name against a prepared context.
    public func evaluate(_ name: String, in context: PreparedContext) -> Resolution {
        guard let i = program.index[name] else {
            return .error(.flagNotFound, "no declaration named '\(name)'", default: .bool(false))
        }
        return program.declarations[i].resolve(frame(context))
    }

    /// Whether a flag is on, by handle; `fallback` when the handle names no flag here.
    public func isEnabled(_ handle: DeclarationHandle, in context: PreparedContext, default fallback: Bool = false) -> Bool {
        guard let i = index(of: handle), program.declarations[i].kind == .flag,
              case .bool(let b) = program.declarations[i].resolve(frame(context)).value else { return fallback }
        return b
    }
}
