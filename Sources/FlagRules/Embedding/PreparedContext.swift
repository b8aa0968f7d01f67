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
    /// Copy-on-write storage of the slots.
    private(set) var storage: PreparedStorage
    /// `now`, and every attribute when the rule set has no schema.
    var extra = EvaluationContext()

    init(program: Program) {
        self.program = program
        storage = PreparedStorage(count: program.coercions.count)
    }

    /// The attribute's value as given; setting nil removes it. A value of the wrong type
    /// is kept as present (for `has`) but reads as absent in comparisons.
    public subscript(name: String) -> Value? {
        get {
            if let slot = program.schema?.slots[name] { return storage.raw[slot] }
            return extra[name]
        }
        set {
            guard let slot = program.schema?.slots[name] else {
                if program.schema == nil || name == "now" { extra[name] = newValue }
                return
            }
            if !isKnownUniquelyReferenced(&storage) { storage = PreparedStorage(copying: storage) }
            storage.raw[slot] = newValue
            storage.slots[slot] = newValue.flatMap(program.coercions[slot].apply)
            storage.ordinals[slot] = program.coercions[slot].ordinal(newValue)
        }
    }

    /// The value in a schema slot (`rules.schema?["userId"]?.slot`) as given: the way
    /// hand-written code reads a prepared context without a name lookup.
    public subscript(slot slot: Int) -> Value? {
        slot >= 0 && slot < storage.count ? storage.raw[slot] : nil
    }

    /// The context as a plain dictionary.
    public var dictionary: EvaluationContext {
        var values = extra
        for (slot, attribute) in (program.schema?.attributes ?? []).enumerated() {
            if let v = storage.raw[slot] { values[attribute.name] = v }
        }
        return values
    }
}

/// The slots of a prepared context in one allocation: schema-typed values, the values as
/// given (for `has`), and enum case ordinals (-1: absent, mistyped or not an enum).
/// Mutated only through a uniquely referenced `PreparedContext`, so sharing it is safe.
final class PreparedStorage: @unchecked Sendable {
    let count: Int
    let slots: UnsafeMutablePointer<Value?>
    let raw: UnsafeMutablePointer<Value?>
    let ordinals: UnsafeMutablePointer<Int32>

    init(count: Int) {
        self.count = count
        slots = .allocate(capacity: max(count, 1))
        slots.initialize(repeating: nil, count: count)
        raw = .allocate(capacity: max(count, 1))
        raw.initialize(repeating: nil, count: count)
        ordinals = .allocate(capacity: max(count, 1))
        ordinals.initialize(repeating: -1, count: count)
    }

    init(copying other: PreparedStorage) {
        count = other.count
        slots = .allocate(capacity: max(count, 1))
        slots.initialize(from: other.slots, count: count)
        raw = .allocate(capacity: max(count, 1))
        raw.initialize(from: other.raw, count: count)
        ordinals = .allocate(capacity: max(count, 1))
        ordinals.initialize(from: other.ordinals, count: count)
    }

    deinit {
        slots.deinitialize(count: count)
        slots.deallocate()
        raw.deinitialize(count: count)
        raw.deallocate()
        ordinals.deinitialize(count: count)
        ordinals.deallocate()
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
        guard context.program === program else {
            let dictionary = context.dictionary
            return withExtendedLifetime(dictionary) { body(Frame(dictionary, program: program)) }
        }
        guard program.schema != nil else { return body(Frame(context.extra, program: program)) }
        return withExtendedLifetime(context.storage) { body(Frame(context.storage, extra: context.extra, program: program)) }
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
        unowned(unsafe) let d = program.declarations[i]
        return withFrame(context) { d.resolution($0) }
    }

    /// Resolves a declaration by name against a prepared context.
    public func evaluate(_ name: String, in context: PreparedContext) -> Resolution {
        guard let i = program.index[name] else {
            return .error(.flagNotFound, "no declaration named '\(name)'", default: .bool(false))
        }
        let d = program.declarations[i]
        return withFrame(context) { d.resolution($0) }
    }

    /// Whether a flag is on, by handle; `fallback` when the handle names no flag here.
    public func isEnabled(_ handle: DeclarationHandle, in context: PreparedContext, default fallback: Bool = false) -> Bool {
        guard let i = index(of: handle) else { return fallback }
        unowned(unsafe) let d = program.declarations[i]
        guard d.kind == .flag, case .bool(let b) = withFrame(context, { d.resolve($0).value }) else { return fallback }
        return b
    }
}
