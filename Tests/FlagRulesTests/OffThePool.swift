import Foundation

/// Runs `body` in the calling test's task, but on a thread beside Swift's cooperative pool:
/// a test that blocks (waits for a program or a socket, sleeps) or computes for seconds
/// leaves the pool's threads, two on a two-core machine, to the other tests' tasks and
/// their stores' looks, which would otherwise wait behind it. Being the test's own task,
/// `#expect` and `#require` in `body` are the test's (on a thread out of the task, they
/// would belong to no test).
///
/// A body that waits runs on a thread of `SideThreads.waiting`; one that is `computing`, on
/// a thread of `SideThreads.computing`. Both give way to the pool's threads (and what waits
/// to what computes): the tasks on the pool, some of which time what they check, are not
/// slowed by the tests moved off it, nor these by long computations.
func offThePool<T, Failure: Error>(computing: Bool = false, _ body: () throws(Failure) -> T) async throws(Failure) -> T {
    if #available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *) {
        let threads = computing ? SideThreads.computing : SideThreads.waiting
        return try await withTaskExecutorPreference(threads) { () throws(Failure) -> T in try body() }
    } else {
        return try body()
    }
}

/// A task executor of as many threads as there are cores, as the pool has: no more tests
/// that block or compute run at once than ran on the pool, so that the tests that time what
/// they check have the cores they had. A thread takes the job enqueued last: the next step
/// of a test under way goes before a test not started yet. Each thread has 8 MiB of stack,
/// as a deep parse needs.
@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
final class SideThreads: TaskExecutor {
    /// At a nice value of 5 (on Linux, which keeps one for each thread; the programs and
    /// threads a test starts take its thread's).
    static let waiting = SideThreads(niceness: 5)
    /// At a nice value of 10.
    static let computing = SideThreads(niceness: 10)

    // (An NSLock, not a Mutex: the thread sanitizer sees a pthread mutex's ordering, and
    // not that of the futex under Synchronization's Mutex on Linux.)
    private let lock = NSLock()
    nonisolated(unsafe) private var jobs: [UnownedJob] = []
    private let queued = DispatchSemaphore(value: 0)

    init(niceness: Int32) {
        for _ in 0..<max(2, ProcessInfo.processInfo.activeProcessorCount) {
            let thread = Thread { [self] in
                #if os(Linux)
                    if niceness != 0 { setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, niceness) }
                #endif
                while true {
                    queued.wait()
                    let job = lock.withLock { jobs.removeLast() }
                    job.runSynchronously(on: asUnownedTaskExecutor())
                }
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        lock.withLock { jobs.append(job) }
        queued.signal()
    }
}
