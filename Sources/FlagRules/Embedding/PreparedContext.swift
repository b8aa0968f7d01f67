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
    public subscript(slot slot: Int) -> Value? {
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

/// One attribute of a prepared context: its value checked against the schema (nil when
/// absent or mistyped), whether the value as given differs from that (mistyped, or
/// converted, like a version given as a string: the storage then keeps the given value
/// aside), and a tag worked out once: an enum's case ordinal, or a string's hash. 24 bytes,
/// so that a million contexts held for a batch take little cache from the rules.
struct PreparedSlot {
    var typed: Value?
    var givenDiffers: Bool
    /// For an enum slot, the case ordinal (-1: absent or mistyped); for a string slot, the
    /// string's `StringHash.key`, so that a lookup in a large literal set does not hash it
    /// on every evaluation; else -1 (`Coercion.tag`).
    var tag: Int32

    /// Whether a value was given (for `has`), of the right type or not.
    @inline(__always)
    var isGiven: Bool { typed != nil || givenDiffers }

    /// An enum slot's case ordinal (-1: absent or mistyped).
    @inline(__always)
    var ordinal: Int32 { tag }

    /// A string slot's hash (meaningful only when `typed` holds a string).
    @inline(__always)
    var hash: UInt32 { UInt32(bitPattern: tag) }
}

/// A prepared context's header: the number of slots, the values as given for the slots
/// whose given value differs from the typed one (empty, allocating nothing, until one does),
/// the program the slots are laid out for, and the extras (`now`, or every attribute when
/// the rule set has no schema).
struct PreparedHeader {
    var count: Int
    var differing: [Value?]
    let program: Program
    var extra: EvaluationContext
}

/// The slots of a prepared context, tail-allocated after the object header in one block.
final class PreparedStorage: ManagedBuffer<PreparedHeader, PreparedSlot> {
    static func make(program: Program, extra: EvaluationContext = EvaluationContext()) -> PreparedStorage {
        let count = program.coercions.count
        let buffer = PreparedStorage.create(minimumCapacity: max(count, 1)) { _ in
            PreparedHeader(count: count, differing: [], program: program, extra: extra)
        }
        buffer.withUnsafeMutablePointerToElements {
            $0.initialize(repeating: PreparedSlot(typed: nil, givenDiffers: false, tag: -1), count: count)
        }
        return unsafeDowncast(buffer, to: PreparedStorage.self)
    }

    func copy() -> PreparedStorage {
        let copy = PreparedStorage.make(program: program, extra: extra)
        copy.header.differing = header.differing
        withUnsafeMutablePointerToElements { from in
            copy.withUnsafeMutablePointerToElements { to in
                for i in 0..<header.count { to[i] = from[i] }
            }
        }
        return copy
    }

    deinit {
        withUnsafeMutablePointers { header, slots in _ = slots.deinitialize(count: header.pointee.count) }
    }

    /// The number of entries, read through the header's pointer: reading `header` itself
    /// (a class's stored property) costs a dynamic exclusivity check on every call.
    @inline(__always)
    var count: Int { withUnsafeMutablePointerToHeader { $0.pointee.count } }

    /// The program the slots are laid out for (read through the header's pointer too).
    @inline(__always)
    var program: Program { withUnsafeMutablePointerToHeader { $0.pointee.program } }

    /// Runs `body` with the program borrowed from the header: no reference counting.
    @inline(__always)
    func withProgram<R>(_ body: (Program) -> R) -> R {
        withUnsafeMutablePointerToHeader { Unmanaged.passUnretained($0.pointee.program)._withUnsafeGuaranteedRef(body) }
    }

    /// Whether the slots are laid out for `other`, with no reference counting.
    @inline(__always)
    func isLaidOut(for other: Program) -> Bool { withUnsafeMutablePointerToHeader { $0.pointee.program === other } }

    /// The extras (read through the header's pointer too).
    @inline(__always)
    var extra: EvaluationContext { withUnsafeMutablePointerToHeader { $0.pointee.extra } }

    /// The value as given in a slot.
    @inline(__always)
    func given(_ slot: Int) -> Value? {
        withUnsafeMutablePointers { header, slots in slots[slot].givenDiffers ? header.pointee.differing[slot] : slots[slot].typed }
    }

    /// Sets a slot to a value as given (nil: absent), checked and converted by the slot's
    /// coercion.
    func set(_ slot: Int, given: Value?) {
        let typed = withProgram { program in given.flatMap(program.coercions[slot].apply) }
        let tag = withProgram { program in program.coercions[slot].tag(typed) }
        let differs = given != nil && typed != given
        // Through the header's pointer: `header` (a class's stored property) costs a
        // dynamic exclusivity check on every access.
        withUnsafeMutablePointers { header, slots in
            if differs && header.pointee.differing.isEmpty { header.pointee.differing = Array(repeating: nil, count: header.pointee.count) }
            if !header.pointee.differing.isEmpty { header.pointee.differing[slot] = differs ? given : nil }
            slots[slot] = PreparedSlot(typed: typed, givenDiffers: differs, tag: tag)
        }
    }
}

/// Holds a prepared context's storage (`ManagedBuffer` is not `Sendable`; the storage is
/// only mutated while uniquely referenced).
struct PreparedBox: @unchecked Sendable {
    var buffer: PreparedStorage
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
        handle.owner === program ? handle.index : program.names.index(of: handle.name)
    }

    /// Resolves a declaration by handle against a prepared context.
    public func evaluate(_ handle: DeclarationHandle, in context: PreparedContext) -> Resolution {
        guard let i = index(of: handle) else {
            return .error(.flagNotFound, "no declaration named '\(handle.name)'", default: .bool(false))
        }
        return withFrame(context) { program.resolution(i, $0) }
    }

    /// Resolves a declaration by name against a prepared context.
    public func evaluate(_ name: String, in context: PreparedContext) -> Resolution {
        guard let i = program.names.index(of: name) else {
            return .error(.flagNotFound, "no declaration named '\(name)'", default: .bool(false))
        }
        return withFrame(context) { program.resolution(i, $0) }
    }

    /// Whether a flag is on, by handle; `fallback` when the handle names no flag here.
    public func isEnabled(_ handle: DeclarationHandle, in context: PreparedContext, default fallback: Bool = false) -> Bool {
        guard let i = index(of: handle) else { return fallback }
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
        guard let i = index(of: handle) else { return Array(repeating: fallback, count: contexts.count) }
        return program.withDeclaration(i) { d in
            guard d.kind == .flag else { return Array(repeating: fallback, count: contexts.count) }
            return contexts.map { context in withFrame(context) { d.isOn($0) } }
        }
    }
}
