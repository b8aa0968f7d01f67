#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One object shared by many reader threads and replaced now and then (a store's rules in
/// force), read under a lock without touching its reference count.
///
/// A single lock, or retaining the object on each read, would have every reader write
/// to the same cache line: the cost grows with the threads reading. Here the reference is
/// kept in `stripes` copies, each with its own mutex on its own 128-byte line; a reader
/// locks the copy its thread hashes to and runs its closure with the object borrowed. A
/// writer takes every stripe's lock, in order, and replaces all the copies at once, so
/// that no reader can see the new object and then the old one (a task may move between
/// threads, and so between stripes).
final class StripedReference<Object: AnyObject>: @unchecked Sendable {
    // Invariant: a stripe's `Unmanaged` reference is read or written only with its mutex
    // held, and owns one retain of its object.
    private let stripes: Int
    private let memory: UnsafeMutableRawPointer
    private static var stride: Int { 128 }
    private static var referenceOffset: Int { 64 }

    init(_ object: Object) {
        var count = 1
        #if canImport(Darwin) || canImport(Glibc) || canImport(Musl)
            let cores = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
            while count < min(max(cores, 1), 16) { count *= 2 }
        #endif
        stripes = count
        memory = .allocate(byteCount: count * Self.stride, alignment: Self.stride)
        for i in 0..<count {
            let mutex = mutexOf(i)
            mutex.initialize(to: pthread_mutex_t())
            pthread_mutex_init(mutex, nil)
            referenceOf(i).initialize(to: Unmanaged.passRetained(object))
        }
    }

    deinit {
        for i in 0..<stripes {
            referenceOf(i).pointee.release()
            pthread_mutex_destroy(mutexOf(i))
        }
        memory.deallocate()
    }

    private func mutexOf(_ i: Int) -> UnsafeMutablePointer<pthread_mutex_t> {
        (memory + i * Self.stride).assumingMemoryBound(to: pthread_mutex_t.self)
    }

    private func referenceOf(_ i: Int) -> UnsafeMutablePointer<Unmanaged<Object>> {
        (memory + i * Self.stride + Self.referenceOffset).assumingMemoryBound(to: Unmanaged<Object>.self)
    }

    /// The calling thread's stripe: its thread id, mixed (ids are aligned addresses).
    @inline(__always)
    private var stripe: Int {
        #if canImport(Darwin)
            let id = UInt(bitPattern: pthread_self())
        #else
            let id = UInt(pthread_self())
        #endif
        return Int(truncatingIfNeeded: (id &* 0x9E37_79B9_7F4A_7C15) >> 40) & (stripes - 1)
    }

    /// Runs `body` with the current object, borrowed (no retain), under the calling
    /// thread's stripe lock: keep it short, and never call back into the owner.
    @inline(__always)
    func withCurrent<R>(_ body: (Object) -> R) -> R {
        let i = stripe
        let mutex = mutexOf(i)
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return referenceOf(i).pointee._withUnsafeGuaranteedRef(body)
    }

    /// The current object, retained: for reads that outlive a lock.
    var current: Object { withCurrent { $0 } }

    /// Replaces the object in every stripe, all stripes locked at once; returns the new one.
    @discardableResult
    func replace(_ change: (Object) -> Object) -> Object {
        for i in 0..<stripes { pthread_mutex_lock(mutexOf(i)) }
        defer { for i in 0..<stripes { pthread_mutex_unlock(mutexOf(i)) } }
        let new = change(referenceOf(0).pointee.takeUnretainedValue())
        for i in 0..<stripes {
            referenceOf(i).pointee.release()
            referenceOf(i).pointee = Unmanaged.passRetained(new)
        }
        return new
    }
}
