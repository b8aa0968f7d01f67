/// A context laid out in a rule set's schema slots, with every value checked and parsed
/// once (versions and datetimes included): the fastest way to evaluate many declarations,
/// or the same declaration many times, for one user. (Preparing costs about as much as
/// ten evaluations save: for one or two flags, evaluate an `EvaluationContext`.)
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
    /// Copy-on-write storage: the slots, and in its header the program they are laid out
    /// for and the extras. One reference, so that passing a context costs one retain and
    /// one release, not one for each part.
    private var box: PreparedBox
    var storage: PreparedStorage { box.buffer }
    var program: Program { storage.program }

    /// Runs `body` with the storage borrowed, not copied: no reference counting.
    @inline(__always)
    func withStorage<R>(_ body: (PreparedStorage) -> R) -> R { body(box.buffer) }

    /// `now`, and every attribute when the rule set has no schema.
    var extra: EvaluationContext { storage.extra }

    init(program: Program) {
        box = PreparedBox(buffer: PreparedStorage.make(program: program))
    }

    /// The attribute's value as given; setting nil removes it. A value of the wrong type
    /// is kept as present (for `has`) but reads as absent in comparisons.
    public subscript(name: String) -> Value? {
        get {
            if let slot = program.schema?.slots.index(of: name) { return storage.given(slot) }
            return extra[name]
        }
        set {
            let (slot, hasSchema) = withStorage { storage in storage.withProgram { ($0.attributeNames.index(of: name), $0.schema != nil) } }
            guard let slot else {
                guard !hasSchema || name == "now" else { return }
                if !isKnownUniquelyReferenced(&box.buffer) { box.buffer = box.buffer.copy() }
                box.buffer.header.extra[name] = newValue
                return
            }
            if !isKnownUniquelyReferenced(&box.buffer) { box.buffer = box.buffer.copy() }
            box.buffer.set(slot, given: newValue)
        }
    }

    /// The value in a schema slot (`rules.schema?["userId"]?.slot`) as given: the way
    /// hand-written code reads a prepared context without a name lookup.
    subscript(slot slot: Int) -> Value? {
        slot >= 0 && slot < storage.count ? storage.given(slot) : nil
    }

    /// The context as a plain dictionary.
    public var dictionary: EvaluationContext {
        var values = extra
        for (slot, attribute) in (program.schema?.attributes ?? []).enumerated() {
            if let v = storage.given(slot) { values[attribute.name] = v }
        }
        return values
    }
}

/// A declaration looked up once, for evaluating it without a name lookup.
public struct DeclarationHandle: Sendable, Hashable {
    /// The declaration's name.
    public let name: String
    let index: Int
    /// The program the index belongs to (held, so that its identity cannot be reused).
    let owner: Program

    /// Handles are equal when they name the same declaration of the same loaded rule set.
    public static func == (a: DeclarationHandle, b: DeclarationHandle) -> Bool {
        a.name == b.name && a.index == b.index && a.owner === b.owner
    }

    /// Hashes what `==` compares: the name, the position and the rule set's identity.
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
        // The entries as stored (`values` would build a dictionary of them first).
        let storage = context.storage
        for i in 0..<storage.count {
            let entry = storage.entry(i)
            prepared[entry.key] = entry.value
        }
        return prepared
    }

    /// A handle on the declaration called `name`, or nil when there is none.
    public func handle(_ name: String) -> DeclarationHandle? {
        program.names.index(of: name).map { DeclarationHandle(name: name, index: $0, owner: program) }
    }

    /// Runs `body` with a frame over the context: its slots when it was prepared for this
    /// rule set, else its values by name.
    @inline(__always)
    private func withFrame<R>(_ context: PreparedContext, _ body: (Frame) -> R) -> R {
        context.withStorage { storage in withFrame(storage, context, body) }
    }

    @inline(__always)
    private func withFrame<R>(_ storage: PreparedStorage, _ context: @autoclosure () -> PreparedContext, _ body: (Frame) -> R) -> R {
        guard storage.isLaidOut(for: program) else {
            let dictionary = context().dictionary
            return withExtendedLifetime(dictionary) { body(Frame(dictionary, program: program)) }
        }
        guard program.schema != nil else { return body(Frame(storage.extra, program: program)) }
        return body(Frame(storage, program: program))
    }

    /// The declaration a handle names in this rule set: by index when the handle was made
    /// here, else by name.
    @inline(__always)
    private func index(of handle: DeclarationHandle) -> Int? {
        handle.owner === program && handle.index >= 0 ? handle.index : program.names.index(of: handle.name)
    }

    /// Resolves a declaration by handle against a prepared context; an unknown name or a
    /// mistyped value answers as `evaluate(_:in:default:)` does.
    public func evaluate(_ handle: DeclarationHandle, in context: PreparedContext, default fallback: Value? = nil) -> Resolution {
        let index = index(of: handle)
        if let r = scopedOverride(handle.name, index, default: fallback) { return RuleSet.typed(r, handle.name, fallback) }
        guard let i = index else {
            return .error(.flagNotFound, "no declaration named '\(handle.name)'", default: fallback ?? .bool(false))
        }
        if let problem = strictProblem(context) { return invalidContext(problem, declaration: i, default: fallback) }
        let r = withFrame(context) { program.resolution(i, $0) }
        return RuleSet.typed(r, handle.name, fallback)
    }

    /// Resolves a declaration by name against a prepared context; an unknown name or a
    /// mistyped value answers as `evaluate(_:in:default:)` does.
    public func evaluate(_ name: String, in context: PreparedContext, default fallback: Value? = nil) -> Resolution {
        let index = program.names.index(of: name)
        if let r = scopedOverride(name, index, default: fallback) { return RuleSet.typed(r, name, fallback) }
        guard let i = index else {
            return .error(.flagNotFound, "no declaration named '\(name)'", default: fallback ?? .bool(false))
        }
        if let problem = strictProblem(context) { return invalidContext(problem, declaration: i, default: fallback) }
        let r = withFrame(context) { program.resolution(i, $0) }
        return RuleSet.typed(r, name, fallback)
    }

    /// Whether a flag is on, by handle; `fallback` when the handle names no flag here.
    public func isEnabled(_ handle: DeclarationHandle, in context: PreparedContext, default fallback: Bool = false) -> Bool {
        let index = index(of: handle)
        if let r = scopedOverride(handle.name, index, default: .bool(fallback)) { return r.value.boolValue ?? fallback }
        guard let i = index else { return fallback }
        if checksContextsStrictly, strictProblem(context) != nil { return fallback }
        return program.withDeclaration(i) { d in
            guard d.kind == .flag else { return fallback }
            return withFrame(context) { d.isOn($0) }
        }
    }

    /// Whether a flag is on for each context, in order: the same answers as one
    /// `isEnabled(_:in:)` call a context (a rollout's reach, the users a change moves).
    ///
    /// ```swift
    /// let on = rules.isEnabled(handle, in: users.map(rules.prepare))
    /// let share = Double(on.filter { $0 }.count) / Double(on.count)
    /// ```
    public func isEnabled(_ handle: DeclarationHandle, in contexts: [PreparedContext], default fallback: Bool = false) -> [Bool] {
        let index = index(of: handle)
        if let r = scopedOverride(handle.name, index, default: .bool(fallback)) {
            return Array(repeating: r.value.boolValue ?? fallback, count: contexts.count)
        }
        guard let i = index else { return Array(repeating: fallback, count: contexts.count) }
        return program.withDeclaration(i) { d in
            guard d.kind == .flag else { return Array(repeating: fallback, count: contexts.count) }
            return contexts.map { context in
                if checksContextsStrictly, strictProblem(context) != nil { return fallback }
                return withFrame(context) { d.isOn($0) }
            }
        }
    }
}
