import FlagRulesAtomics

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One object that many threads read on every call and that is replaced now and then (a
/// store's rules in force), read without a lock or a reference count in the common case.
///
/// Each thread keeps the object it last read, with the generation it was read at, in a
/// small cache of its own (`ThreadCache`). A read loads the current generation (one atomic
/// load, a plain move); when it matches the thread's copy, the copy is used as it is.
/// Otherwise the read takes the lock, and the thread's copy is refreshed. A replacement
/// takes the lock, swaps the object and bumps the generation, so every thread's next read
/// sees the new object: no read can see a newer object and then an older one.
///
/// A thread's copy keeps the object it last read alive until that thread reads this
/// reference again, reads `ThreadCache.capacity` other references, or exits. When the
/// reference itself is released, it empties the holder its threads' copies point to, so
/// that a released store's last rules (and what they hold: the source, the base context,
/// the hook's captures) do not outlive it in a pool thread that never reads again; only
/// the empty holder does.
///
/// The borrow rule: `body` of ``withCurrent(_:)`` runs with the object borrowed from this
/// thread's cache, so it must not read any `CachedReference` (this one or another, which
/// may refresh or evict the slot and release the object under it) nor call code that
/// might (a user's hook, an observer). Compute inside, return a value, act outside.
final class CachedReference<Object: AnyObject & Sendable>: @unchecked Sendable {
    // Unchecked: `generation` is a raw pointer written under `state`'s lock and read
    // atomically; every other part is immutable or behind the lock.
    private struct State {
        var object: Object
        /// The holder of `object`, which thread caches retain.
        var holder: Holder
        /// Every holder some thread's cache may still retain, weakly: one no cache keeps
        /// is gone with its object.
        var holders: [WeakHolder]
    }

    private let id: Int
    private let state: Locked<State>
    private let generation: UnsafeMutablePointer<Int>
    /// `ThreadCache.key`, read once here: the static's lazy initialisation check would
    /// otherwise be on every read.
    private let threadKey: pthread_key_t?

    init(_ object: Object) {
        let holder = Holder(object)
        state = Locked(State(object: object, holder: holder, holders: [WeakHolder(holder: holder)]))
        id = cachedReferenceIDs.withLock { id in
            id += 1
            return id
        }
        generation = .allocate(capacity: 1)
        generation.initialize(to: 1)
        threadKey = ThreadCache.key
    }

    deinit {
        // No thread can borrow through this reference any more: empty the holders that
        // threads' caches may keep, so that they keep nothing of the objects.
        for entry in state.withLock({ $0.holders }) { entry.holder?.object = nil }
        generation.deallocate()
    }

    /// Runs `body` with the current object, borrowed: from this thread's copy when it is
    /// current, else read under the lock (and copied for next time). See the borrow rule
    /// above: `body` reads no `CachedReference` and calls no user code.
    @inline(__always)
    func withCurrent<R>(_ body: (Object) -> R) -> R {
        let now = flagrules_atomic_load_long(generation)
        if let threadKey, let copy = ThreadCache.copy(of: id, generation: now, key: threadKey) {
            return copy._withUnsafeGuaranteedRef { body(unsafeDowncast($0, to: Object.self)) }
        }
        // `body` is called here, not passed on: passed to a function that is not inlined,
        // its captures would be retained on every call, the common one included.
        return body(refreshed())
    }

    /// The current object, read under the lock and kept as this thread's copy.
    @inline(never)
    private func refreshed() -> Object {
        let (object, holder, now) = state.withLock { ($0.object, $0.holder, generation.pointee) }
        if let threadKey { ThreadCache.current(threadKey)?.store(holder, object, for: id, generation: now) }
        return object
    }

    /// The current object, retained: for reads that outlive the call.
    var current: Object { state.withLock { $0.object } }

    /// Replaces the object under the lock and bumps the generation; returns the old and
    /// the new one. Nothing is released under the lock: the old object goes back to the
    /// caller, and holders no thread keeps any more are released after it.
    @discardableResult
    func replace(_ change: (Object) -> Object) -> (old: Object, new: Object) {
        let (old, new, previous) = state.withLock { s -> (Object, Object, Holder) in
            let old = s.object
            let previous = s.holder
            s.object = change(old)
            s.holder = Holder(s.object)
            s.holders.removeAll { $0.holder == nil }
            s.holders.append(WeakHolder(holder: s.holder))
            flagrules_atomic_store_long(generation, generation.pointee + 1)
            return (old, s.object, previous)
        }
        withExtendedLifetime(previous) {}
        return (old, new)
    }
}

/// A holder, not retained.
struct WeakHolder {
    weak var holder: Holder?
}

/// What a thread's cache retains for one generation of a `CachedReference`: the object,
/// until the reference is released and empties it.
final class Holder: @unchecked Sendable {
    // Unchecked: `object` is written at init and by the owning reference's deinit, when
    // no thread reads it.
    var object: AnyObject?
    init(_ object: AnyObject) { self.object = object }
}

/// The last identity given to a `CachedReference`. Identities are never reused: a new
/// reference at a freed one's address must not match a thread's copy of the old one.
private let cachedReferenceIDs = Locked(0)

/// A thread's copies of the objects it read through `CachedReference`s: a few slots of
/// (reference id, generation, retained holder, the object it holds), replaced in turn.
/// Only its own thread touches it; it is released when the thread exits.
final class ThreadCache {
    static let capacity = 4

    private struct Slot {
        var id = 0
        var generation = 0
        /// Retained: keeps `object` alive while its reference lives.
        var holder: Unmanaged<Holder>?
        /// Not retained: the holder's object, read without reference counting.
        var object: Unmanaged<AnyObject>?
    }

    private let slots: UnsafeMutablePointer<Slot>
    private var next = 0

    private init() {
        slots = .allocate(capacity: ThreadCache.capacity)
        slots.initialize(repeating: Slot(), count: ThreadCache.capacity)
    }

    deinit {
        for i in 0..<ThreadCache.capacity { slots[i].holder?.release() }
        slots.deinitialize(count: ThreadCache.capacity)
        slots.deallocate()
    }

    /// This thread's copy of reference `id` if it is of `generation`.
    @inline(__always)
    func object(for id: Int, generation: Int) -> Unmanaged<AnyObject>? {
        for i in 0..<ThreadCache.capacity where slots[i].id == id {
            return slots[i].generation == generation ? slots[i].object : nil
        }
        return nil
    }

    /// Keeps `object`, held by `holder`, as this thread's copy of reference `id`, in its
    /// slot or the next one.
    func store(_ holder: Holder, _ object: AnyObject, for id: Int, generation: Int) {
        var index = (0..<ThreadCache.capacity).first { slots[$0].id == id }
        if index == nil {
            index = next
            next = (next + 1) % ThreadCache.capacity
        }
        let i = index ?? 0
        let old = slots[i].holder
        slots[i] = Slot(id: id, generation: generation, holder: Unmanaged.passRetained(holder), object: Unmanaged.passUnretained(object))
        old?.release()
    }

    /// The calling thread's copy of reference `id` if it is of `generation`, borrowed
    /// (no reference counting).
    @inline(__always)
    static func copy(of id: Int, generation: Int, key: pthread_key_t) -> Unmanaged<AnyObject>? {
        guard let pointer = pthread_getspecific(key) else { return nil }
        return Unmanaged<ThreadCache>.fromOpaque(pointer)._withUnsafeGuaranteedRef { $0.object(for: id, generation: generation) }
    }

    /// The calling thread's cache, made on its first read; nil when the thread cannot
    /// keep one (then every read takes the lock).
    static func current(_ key: pthread_key_t) -> ThreadCache? {
        if let pointer = pthread_getspecific(key) { return Unmanaged<ThreadCache>.fromOpaque(pointer).takeUnretainedValue() }
        let cache = ThreadCache()
        let retained = Unmanaged.passRetained(cache)
        guard pthread_setspecific(key, retained.toOpaque()) == 0 else {
            retained.release()
            return nil
        }
        return cache
    }

    /// The thread-specific key, whose destructor releases a thread's cache when it exits;
    /// nil when the system has no key left (then no thread keeps a copy).
    static let key: pthread_key_t? = {
        var key = pthread_key_t()
        #if canImport(Darwin)
            let status = pthread_key_create(&key) { Unmanaged<ThreadCache>.fromOpaque($0).release() }
        #else
            let status = pthread_key_create(&key) { pointer in
                if let pointer { Unmanaged<ThreadCache>.fromOpaque(pointer).release() }
            }
        #endif
        return status == 0 ? key : nil
    }()
}
