import Foundation

/// When loading a file splits its work in two halves, run at once on two cores: lexing
/// and parsing by lines, checking and compiling by declarations. The halves' results are
/// those of the whole, or the work is done whole again (each stage says why).
package struct Halving: Sendable {
    /// Sources of at least this many bytes are lexed and parsed in halves.
    package var bytes: Int
    /// Files of at least this many declarations are checked and compiled in halves.
    package var declarations: Int
    /// Whether the halves run at once (else one after the other, on the calling thread:
    /// the same halves, for a fuzzer, whose leak check a pool thread's caches would set off).
    package var concurrently = true

    /// Halves for files large enough that a thread's start is a small part of the work
    /// (64 KiB, 512 declarations), on a machine with a second core.
    package static let standard = ProcessInfo.processInfo.activeProcessorCount > 1 ? Halving(bytes: 64 << 10, declarations: 512) : never
    /// Never in halves.
    package static let never = Halving(bytes: .max, declarations: .max)
    /// In halves whenever there are two (for tests: every file takes the halves' path).
    package static let always = Halving(bytes: 0, declarations: 2)
    /// In halves whenever there are two, one after the other.
    package static let alwaysInOrder = Halving(bytes: 0, declarations: 2, concurrently: false)

    /// Runs the two halves' work, at once when `concurrently`.
    func run<A, B>(_ first: @escaping () -> A, _ second: @escaping () -> B) -> (A, B) {
        concurrently ? TwoAtOnce.run(first, second) : (first(), second())
    }
}

/// Two pieces of work run at the same time, on the calling thread and one other.
enum TwoAtOnce {
    /// Runs `first` and `second` at once and returns both results. Neither may touch what
    /// the other writes: each works on values of its own, and reads shared ones only.
    static func run<A, B>(_ first: @escaping () -> A, _ second: @escaping () -> B) -> (A, B) {
        let work = Work(first, second)
        // The calling thread takes one iteration and a pool thread the other (or the
        // calling thread both, when the pool has none free): it never waits on itself.
        DispatchQueue.concurrentPerform(iterations: 2) { work.run($0) }
        guard let a = work.a, let b = work.b else { preconditionFailure("concurrentPerform ran both iterations") }
        return (a, b)
    }

    /// The two closures and their results.
    private final class Work<A, B>: @unchecked Sendable {
        // Invariant: iteration 0 touches only `first` and `a`, iteration 1 only `second`
        // and `b`; the caller reads `a` and `b` once `concurrentPerform` has returned,
        // which orders both iterations before it.
        private let first: () -> A
        private let second: () -> B
        var a: A?
        var b: B?

        init(_ first: @escaping () -> A, _ second: @escaping () -> B) {
            self.first = first
            self.second = second
        }

        func run(_ iteration: Int) {
            if iteration == 0 { a = first() } else { b = second() }
        }
    }
}
