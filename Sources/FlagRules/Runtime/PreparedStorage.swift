/// One attribute of a prepared context: its value checked against the schema (nil when
/// absent or mistyped), whether the value as given differs from that (mistyped, or
/// converted, like a version given as a string: the storage then keeps the given value
/// aside), and a tag worked out once: an enum's case ordinal, or which of the large literal
/// sets that read a string hold it. 24 bytes, so that a million contexts held for a batch
/// take little cache from the rules.
struct PreparedSlot {
    var typed: Value?
    var givenDiffers: Bool
    /// For an enum slot, the case ordinal (-1: absent or mistyped); for a string slot that
    /// large literal sets read, a bit for each set that holds the string (-1: absent or
    /// mistyped), so that an evaluation does not look it up; else -1 (`Coercion.tag`).
    var tag: Int32

    /// Whether a value was given (for `has`), of the right type or not.
    @inline(__always)
    var isGiven: Bool { typed != nil || givenDiffers }

    /// An enum slot's case ordinal (-1: absent or mistyped).
    @inline(__always)
    var ordinal: Int32 { tag }
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

    /// Whether a slot holds a value of the wrong type (given, but absent once checked).
    func isMistyped(_ slot: Int) -> Bool {
        withUnsafeMutablePointerToElements { $0[slot].givenDiffers && $0[slot].typed == nil }
    }

    /// The value as given in a slot.
    @inline(__always)
    func given(_ slot: Int) -> Value? {
        withUnsafeMutablePointers { header, slots in slots[slot].givenDiffers ? header.pointee.differing[slot] : slots[slot].typed }
    }

    /// Sets a slot to a value as given (nil: absent), checked and converted by the slot's
    /// coercion.
    func set(_ slot: Int, given: Value?) {
        let given = given?.refusingNonFinite
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
