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
    /// Copy-on-write storage: the slots, and in its header the program they are laid out
    /// for and the extras. One reference, so that passing a context costs one retain and
    /// one release, not one for each part.
    private var box: PreparedBox
    var storage: PreparedStorage { box.buffer }
    var program: Program { storage.program }

    /// Runs `body` with the storage borrowed, not copied: no reference counting.
    @inline(__always)
    func withStorage<R>(_ body: (PreparedStorage) -> R) -> R { body(box.buffer) }

    /// Runs `body` with the storage of the context at `p` (in an array, for a batch), read
    /// where it is and unretained: a context's one stored property is its storage's
    /// reference (a test pins the size), and copying the context out of the array would
    /// retain and release it.
    @inline(__always)
    static func withStorage<R>(at p: UnsafePointer<PreparedContext>, _ body: (PreparedStorage) -> R) -> R {
        // `body` wrapped in a closure, not passed on: passed on, the batch took 300
        // instructions a context instead of 240.
        UnsafeRawPointer(p).load(as: Unmanaged<PreparedStorage>.self)._withUnsafeGuaranteedRef { body($0) }
    }
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
            let program = program
            guard let slot = program.schema?.slots.index(of: name) else {
                guard program.schema == nil || name == "now" else { return }
                if !isKnownUniquelyReferenced(&box.buffer) { box.buffer = box.buffer.copy() }
                box.buffer.header.extra[name] = newValue
                return
            }
            if !isKnownUniquelyReferenced(&box.buffer) { box.buffer = box.buffer.copy() }
            box.buffer.set(slot, given: newValue, program.coercions[slot])
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

/// One attribute of a prepared context, in 24 bytes: its value checked against the schema
/// (nil when absent or mistyped), whether the value as given differs from that (mistyped,
/// or converted, like a version given as a string: the storage then keeps the given value
/// aside), and a tag worked out once: an enum's case ordinal, or a string's key hash. Small,
/// so that a million contexts held for a batch take less cache from the rules they are read
/// by.
struct PreparedSlot {
    var typed: Value?
    var givenDiffers: Bool
    /// For an enum slot, the case ordinal (-1: absent or mistyped); for a string slot, the
    /// string's key hash (`TableHash.key`), so that a lookup in a large literal list does
    /// not hash it on every evaluation; else -1 (`Coercion.tag`).
    var tag: Int32

    /// Whether a value was given (for `has`), of the right type or not.
    @inline(__always)
    var isGiven: Bool { typed != nil || givenDiffers }

    /// An enum slot's case ordinal (-1: absent or mistyped).
    @inline(__always)
    var ordinal: Int32 { tag }

    /// A string slot's key hash (meaningful only when `typed` holds a string).
    @inline(__always)
    var keyHash: UInt32 { UInt32(bitPattern: tag) }
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

    /// Sets a slot to a value as given (nil: absent), checked and converted by `coercion`.
    func set(_ slot: Int, given: Value?, _ coercion: Coercion) {
        let typed = given.flatMap(coercion.apply)
        let differs = given != nil && typed != given
        if differs && header.differing.isEmpty { header.differing = Array(repeating: nil, count: header.count) }
        if !header.differing.isEmpty { header.differing[slot] = differs ? given : nil }
        withUnsafeMutablePointerToElements { $0[slot] = PreparedSlot(typed: typed, givenDiffers: differs, tag: coercion.tag(typed)) }
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
        for (k, v) in context.values { prepared[k] = v }
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
        context.withStorage { storage in withFrame(storage, context, evaluatingWith: program, body) }
    }

    /// Starts loading what the lookups of `lists` will read for the context at `p`, when
    /// it is laid out for this rule set (else it is read by name, and nothing is loaded).
    @inline(__always)
    private func prefetch(_ lists: UnsafeBufferPointer<LargeList>, at p: UnsafePointer<PreparedContext>) {
        // By index, not `for list in lists`: a copied list would retain its table.
        for i in lists.indices { prefetch(lists[i].slot, lists[i].readAhead, at: p) }
    }

    /// `prefetch(_:at:)` for one list, looked up by the string in `slot`.
    @inline(__always)
    private func prefetch(_ slot: Int, _ readAhead: TableReadAhead, at p: UnsafePointer<PreparedContext>) {
        PreparedContext.withStorage(at: p) { storage in
            guard storage.isLaidOut(for: program) else { return }
            storage.withUnsafeMutablePointerToElements { slots in
                // The key hash prepared with the slot, read whatever the slot holds: when it
                // holds no string, the lines loaded are harmless and never read.
                readAhead.start(TableHash.spread(slots[slot].keyHash))
            }
        }
    }

    /// Starts loading the bytes of the long keys that the lookups of `lists` will compare
    /// for the context at `p`, when it holds a string longer than 15 bytes for a list
    /// whose lines hold such keys (the line itself was loaded a few contexts before).
    @inline(__always)
    private func prefetchKeyBytes(_ lists: UnsafeBufferPointer<LargeList>, at p: UnsafePointer<PreparedContext>) {
        PreparedContext.withStorage(at: p) { storage in
            guard storage.isLaidOut(for: program) else { return }
            storage.withUnsafeMutablePointerToElements { slots in
                for i in lists.indices where lists[i].readAhead.longKeyBytes != nil {
                    guard case .string(let s)? = slots[lists[i].slot].typed else { continue }
                    let length = s.utf8.count
                    if length > 15 { lists[i].readAhead.startKeyBytes(TableHash.spread(slots[lists[i].slot].keyHash), length: length) }
                }
            }
        }
    }

    /// The batch over the `count` contexts at `base` for a flag with large lists: `start`
    /// starts loading what a context's lookups will read, `batchPrefetchDistance` contexts
    /// ahead, and `startKeyBytes` (for lists of long keys) the bytes of its long keys, half
    /// as far ahead, once their line is in. The contexts are evaluated with the program's
    /// twin that loads ahead (`Program.loadingAhead`).
    @inline(__always)
    private func evaluateLoadingAhead(_ d: CompiledDeclaration, _ base: UnsafePointer<PreparedContext>, _ count: Int,
                                      into out: UnsafeMutableBufferPointer<Bool>,
                                      start: (UnsafePointer<PreparedContext>) -> Void,
                                      startKeyBytes: ((UnsafePointer<PreparedContext>) -> Void)? = nil) {
        let ahead = RuleSet.batchPrefetchDistance, bytesAhead = ahead / 2
        let twin = program.loadingAhead
        for k in 0..<min(ahead, count) { start(base + k) }
        // While there are contexts `ahead` further on, with no test of the distance left.
        let steady = max(0, count - ahead)
        for k in 0..<steady {
            start(base + (k &+ ahead))
            startKeyBytes?(base + (k &+ bytesAhead))
            out[k] = withFrame(at: base + k, evaluatingWith: twin) { d.isOn($0) }
        }
        for k in steady..<count {
            if let startKeyBytes, k + bytesAhead < count { startKeyBytes(base + k + bytesAhead) }
            out[k] = withFrame(at: base + k, evaluatingWith: twin) { d.isOn($0) }
        }
    }

    /// `withFrame` for the context at `p` (in a batch), read where it is, its frame over
    /// `evaluated`: the program, or its twin for a batch that loads ahead.
    @inline(__always)
    private func withFrame<R>(at p: UnsafePointer<PreparedContext>, evaluatingWith evaluated: Program, _ body: (Frame) -> R) -> R {
        PreparedContext.withStorage(at: p) { storage in withFrame(storage, p.pointee, evaluatingWith: evaluated, body) }
    }

    @inline(__always)
    private func withFrame<R>(_ storage: PreparedStorage, _ context: @autoclosure () -> PreparedContext, evaluatingWith evaluated: Program,
                              _ body: (Frame) -> R) -> R {
        guard storage.isLaidOut(for: program) else {
            let dictionary = context().dictionary
            return withExtendedLifetime(dictionary) { body(Frame(dictionary, program: evaluated)) }
        }
        guard program.schema != nil else { return body(Frame(storage.extra, program: evaluated)) }
        return body(Frame(storage, program: evaluated))
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

    /// How many contexts ahead a batch starts loading what a flag's large literal lists
    /// will read (4, 8 and 16 measured alike over 100,000 literals; 8 leaves time for a
    /// read from memory, not only from the last-level cache).
    static let batchPrefetchDistance = 8

    /// Whether a flag is on for each context, in order: the same answers as one
    /// `isEnabled(_:in:)` call a context, faster over many users (a rollout's reach, the
    /// users a change moves). When the flag tests an attribute against a literal list too
    /// large for the cache (16,384 strings or more), the lookup eight contexts ahead starts
    /// loading while this one is evaluated, so a lookup seldom waits for memory.
    ///
    /// ```swift
    /// let on = rules.isEnabled(handle, in: users.map(rules.prepare))
    /// let share = Double(on.filter { $0 }.count) / Double(on.count)
    /// ```
    public func isEnabled(_ handle: DeclarationHandle, in contexts: [PreparedContext], default fallback: Bool = false) -> [Bool] {
        guard let i = index(of: handle) else { return Array(repeating: fallback, count: contexts.count) }
        return program.withDeclaration(i) { d in
            guard d.kind == .flag else { return Array(repeating: fallback, count: contexts.count) }
            return [Bool](unsafeUninitializedCapacity: contexts.count) { out, initialized in
                contexts.withUnsafeBufferPointer { cs in
                    guard let base = cs.baseAddress else { return }
                    if !d.largeLists.isEmpty {
                        d.largeLists.withUnsafeBufferPointer { lists in
                            // Three copies of the loop: lists of short keys test nothing more,
                            // and one list (the most common case) is read once, not per context.
                            if lists.contains(where: { $0.readAhead.longKeyBytes != nil }) {
                                evaluateLoadingAhead(d, base, cs.count, into: out, start: { prefetch(lists, at: $0) },
                                                     startKeyBytes: { prefetchKeyBytes(lists, at: $0) })
                            } else if lists.count == 1 {
                                let slot = lists[0].slot, readAhead = lists[0].readAhead
                                evaluateLoadingAhead(d, base, cs.count, into: out, start: { prefetch(slot, readAhead, at: $0) })
                            } else {
                                evaluateLoadingAhead(d, base, cs.count, into: out, start: { prefetch(lists, at: $0) })
                            }
                        }
                    } else {
                        for k in cs.indices { out[k] = withFrame(at: base + k, evaluatingWith: program) { d.isOn($0) } }
                    }
                }
                initialized = contexts.count
            }
        }
    }
}
