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
/// A thread's copy keeps the object it last read alive until that thread reads again or
/// exits (each thread holds at most `ThreadCache.capacity` such objects).
final class CachedReference<Object: AnyObject>: @unchecked Sendable {
    // Invariant: `generation` is written only inside `object`'s lock and read atomically
    // anywhere.
    private let id: Int
    private let object: Locked<Object>
    private let generation: UnsafeMutablePointer<Int>
    /// `ThreadCache.key`, read once here: the static's lazy initialisation check would
    /// otherwise be on every read.
    private let threadKey: pthread_key_t

    init(_ object: Object) {
        self.object = Locked(object)
        id = cachedReferenceIDs.withLock { id in
            id += 1
            return id
        }
        generation = .allocate(capacity: 1)
        generation.initialize(to: 1)
        threadKey = ThreadCache.key
    }

    deinit { generation.deallocate() }

    /// Runs `body` with the current object, borrowed: from this thread's copy when it is
    /// current, else read under the lock (and copied for next time).
    @inline(__always)
    func withCurrent<R>(_ body: (Object) -> R) -> R {
        let now = flagrules_atomic_load_long(generation)
        if let copy = ThreadCache.copy(of: id, generation: now, key: threadKey) {
            return copy._withUnsafeGuaranteedRef { body(unsafeDowncast($0, to: Object.self)) }
        }
        return body(refresh())
    }

    @inline(never)
    private func refresh() -> Object {
        let (current, now) = object.withLock { ($0, generation.pointee) }
        ThreadCache.current.store(current, for: id, generation: now)
        return current
    }

    /// The current object, retained: for reads that outlive the call.
    var current: Object { object.withLock { $0 } }

    /// Replaces the object under the lock and bumps the generation; returns the new one.
    @discardableResult
    func replace(_ change: (Object) -> Object) -> Object {
        object.withLock { object in
            object = change(object)
            flagrules_atomic_store_long(generation, generation.pointee + 1)
            return object
        }
    }
}

/// The last identity given to a `CachedReference`. Identities are never reused: a new
/// reference at a freed one's address must not match a thread's copy of the old one.
private let cachedReferenceIDs = Locked(0)

/// A thread's copies of the objects it read through `CachedReference`s: a few slots of
/// (reference id, generation, retained object), replaced in turn. Only its own thread
/// touches it; it is released when the thread exits.
final class ThreadCache {
    static let capacity = 4

    private struct Slot {
        var id = 0
        var generation = 0
        var object: Unmanaged<AnyObject>?
    }

    private let slots: UnsafeMutablePointer<Slot>
    private var next = 0

    private init() {
        slots = .allocate(capacity: ThreadCache.capacity)
        slots.initialize(repeating: Slot(), count: ThreadCache.capacity)
    }

    deinit {
        for i in 0..<ThreadCache.capacity { slots[i].object?.release() }
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

    /// Keeps `object` as this thread's copy of reference `id`, in its slot or the next one.
    func store(_ object: AnyObject, for id: Int, generation: Int) {
        var index = (0..<ThreadCache.capacity).first { slots[$0].id == id }
        if index == nil {
            index = next
            next = (next + 1) % ThreadCache.capacity
        }
        let i = index!
        let old = slots[i].object
        slots[i] = Slot(id: id, generation: generation, object: Unmanaged.passRetained(object))
        old?.release()
    }

    /// The calling thread's copy of reference `id` if it is of `generation`, borrowed
    /// (no reference counting).
    @inline(__always)
    static func copy(of id: Int, generation: Int, key: pthread_key_t) -> Unmanaged<AnyObject>? {
        guard let pointer = pthread_getspecific(key) else { return nil }
        return Unmanaged<ThreadCache>.fromOpaque(pointer)._withUnsafeGuaranteedRef { $0.object(for: id, generation: generation) }
    }

    /// The calling thread's cache, made on its first read.
    static var current: ThreadCache {
        if let pointer = pthread_getspecific(key) { return Unmanaged<ThreadCache>.fromOpaque(pointer).takeUnretainedValue() }
        return make()
    }

    @inline(never)
    private static func make() -> ThreadCache {
        let cache = ThreadCache()
        pthread_setspecific(key, Unmanaged.passRetained(cache).toOpaque())
        return cache
    }

    /// The thread-specific key, whose destructor releases a thread's cache when it exits.
    static let key: pthread_key_t = {
        var key = pthread_key_t()
        #if canImport(Darwin)
            pthread_key_create(&key) { Unmanaged<ThreadCache>.fromOpaque($0).release() }
        #else
            pthread_key_create(&key) { pointer in
                if let pointer { Unmanaged<ThreadCache>.fromOpaque(pointer).release() }
            }
        #endif
        return key
    }()
}
