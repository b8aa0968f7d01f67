/// A context laid out in a rule set's schema slots, with every value checked and parsed
/// once (versions and datetimes included): the fastest way to evaluate many declarations,
/// or the same declaration many times, for one user. (Preparing costs about as much as
/// ten evaluations save: for one or two flags, evaluate an `EvaluationContext`.)
///
/// ```swift
/// var context = rules.makeContext()
/// context["build"] = "alpha"
/// context["userId"] = .string(id)
/// let darkMode = rules.handle("darkMode")
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
    /// is kept as present (for `has`) but reads as absent in comparisons. The key is the
    /// attribute's name, dots and all, as in an ``EvaluationContext``: `"org.plan"` names an
    /// attribute of that name, not the field `plan` of `org`; set a field with
    /// ``set(_:atPath:)``.
    public subscript(name: String) -> Value? {
        get {
            if let slot = program.topLevelSlot(of: name) { return storage.given(slot) }
            return extra[name]
        }
        set {
            let (slot, hasSchema) = withStorage { storage in storage.withProgram { ($0.topLevelSlot(of: name), $0.schema != nil) } }
            guard let slot else {
                guard !hasSchema || name == "now" else { return }
                if !isKnownUniquelyReferenced(&box.buffer) { box.buffer = box.buffer.copy() }
                box.buffer.header.extra[name] = newValue
                return
            }
            if !isKnownUniquelyReferenced(&box.buffer) { box.buffer = box.buffer.copy() }
            box.buffer.set(slot, given: newValue)
            setFields(of: slot, newValue)
        }
    }

    /// The attribute or field a path names (`org.billing.country`): nil when an object on
    /// the way is absent or not an object, or lacks the field.
    public func value(atPath path: String) -> Value? {
        let names = Path.names(path)
        return self[names[0]]?.value(at: names.dropFirst())
    }

    /// Sets the attribute or field a path names (`org.plan`): the objects on the way are
    /// made, or replace a value that is not an object; nil removes the field. A path of
    /// more than 64 names sets nothing (no context nests deeper).
    public mutating func set(_ value: Value?, atPath path: String) {
        let names = Path.names(path)
        guard names.count <= Path.maxNames else { return }
        guard names.count > 1 else {
            self[path] = value
            return
        }
        self[names[0]] = Value.placing(value, in: self[names[0]], at: names.dropFirst())
    }

    /// Lays out an object's declared fields, at every depth, in their own slots (each
    /// absent when the object is absent, not an object, or lacks it), so that reading a
    /// path costs what reading an attribute does.
    private mutating func setFields(of slot: Int, _ value: Value?) {
        let fields = withStorage { storage in storage.withProgram { $0.fieldSlots[slot] } }
        for (name, field) in fields {
            let v = value?.objectValue?[name]
            box.buffer.set(field, given: v)
            setFields(of: field, v)
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
        for attribute in program.schema?.attributes ?? [] where attribute.parent == nil {
            if let v = storage.given(attribute.slot) { values[attribute.name] = v }
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

    /// A handle on the declaration called `name`, for evaluating it without a name lookup;
    /// a name these rules lack resolves to `FLAG_NOT_FOUND`.
    public func handle(_ name: String) -> DeclarationHandle {
        DeclarationHandle(name: name, index: index(of: name) ?? -1, owner: program)
    }

    /// Resolves a declaration by handle against a prepared context; an unknown name or a
    /// mistyped value answers as `evaluate(_:in:default:)` does.
    public func evaluate(_ handle: DeclarationHandle, in context: PreparedContext, default fallback: Value? = nil) -> Resolution {
        resolve(handle.name, index(of: handle), context, expecting: nil, default: fallback, nil)
    }

    /// Resolves a declaration by handle, checking its kind, as by name.
    public func evaluate(
        _ handle: DeclarationHandle, in context: PreparedContext, expecting kind: DeclarationKind, default fallback: Value
    ) -> Resolution {
        resolve(handle.name, index(of: handle), context, expecting: kind, default: fallback, nil)
    }

    /// Whether a flag is on, by handle; `fallback` when the handle names no flag here.
    public func isEnabled(_ handle: DeclarationHandle, in context: PreparedContext, default fallback: Bool = false) -> Bool {
        isOn(handle.name, index(of: handle), context, default: fallback, nil)
    }

    /// The chosen variant's name, by handle; `fallback` when the handle names no variant
    /// here (the same answer as `evaluate(_:in:expecting:default:)`'s value).
    public func variant(_ handle: DeclarationHandle, in context: PreparedContext, default fallback: String = "") -> String {
        chosenVariant(handle.name, index(of: handle), context, default: fallback)
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
        return contexts.map { isOn(handle.name, index, $0, default: fallback, nil) }
    }
}

extension RuleSet: FlagEvaluating {}
