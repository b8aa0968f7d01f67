#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A value guarded by a mutex (`pthread_mutex_t`, on every platform), for state that
/// several threads share: the store's rules in force, its subscribers, the build
/// configuration. Held only for a copy or a small update, never around a callback.
///
/// A function is kept as a field of a struct, never as the state itself (nor its
/// `Optional`): the state is stored as a generic value, and each `withLock` would wrap the
/// function in one more reabstraction thunk when it writes it back, so that every call
/// through it costs more than the last.
package final class Locked<State> {
    // Invariant: `state` is only read or written between `lock` and `unlock` of `mutex`.
    // Both are raw allocations: a stored `var` would add a dynamic exclusivity check to
    // every access, which the mutex makes redundant.
    // `@usableFromInline`, and `withLock` `@inlinable`: another module's call is then
    // specialized for its state, not made through the generic runtime's metadata.
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline let state: UnsafeMutablePointer<State>

    package init(_ initial: State) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
        state = .allocate(capacity: 1)
        state.initialize(to: initial)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// Runs `body` with the state, the mutex held.
    @inlinable @inline(__always)
    package func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state.pointee)
    }
}

// The state is reached only under the mutex, so sharing the lock is as safe as sending
// the state: a payload that is not `Sendable` is not shared.
extension Locked: @unchecked Sendable where State: Sendable {}
