import Foundation

/// How a store's rules stand: where the rules in force came from and how old they are, and
/// the latest problem it met. Read it for a health check, a debug screen or a log line.
///
/// ```swift
/// let status = store.status
/// if let age = status.age(), age > 600 { logger.warning("flags: \(status)") }
/// ```
public struct FlagStoreStatus: Sendable, Hashable, CustomStringConvertible {
    /// Where the rules in force came from; nil while none have loaded.
    public let origin: RulesOrigin?
    /// When the rules in force were read from their origin: for cached rules, when they
    /// were fetched in an earlier run.
    public let fetchedAt: Date?
    /// The latest look at the source that found it still holding the rules in force (an
    /// unchanged file, a `304`); nil when none has since they were put in force, or they
    /// came from the cache and the source has not been reached yet.
    public let confirmedAt: Date?
    /// The latest problem met: a failed fetch, rules rejected, a cache ignored. It stays
    /// after the store recovers; compare ``lastProblemAt`` with ``confirmedAt``.
    public let lastProblem: String?
    /// When ``lastProblem`` happened.
    public let lastProblemAt: Date?
    /// Looks at the source in a row that found nothing usable (0 after a good look).
    public let failuresInARow: Int

    /// How long ago the rules in force were last known to be current: since ``confirmedAt``,
    /// else since ``fetchedAt``; nil while no rules have loaded.
    public func age(at now: Date = Date()) -> TimeInterval? {
        (confirmedAt ?? fetchedAt).map { now.timeIntervalSince($0) }
    }

    /// One line for a log: `rules from the source, 12 s old; 2 failures in a row, the latest: …`.
    public var description: String {
        guard let origin, let age = age() else {
            return "no rules in force" + (lastProblem.map { "; the latest problem: \($0)" } ?? "")
        }
        var line = "rules from the \(origin), \(Duration.seconds(max(age, 0)).readable) old"
        if failuresInARow > 0 { line += "; \(failuresInARow) failure\(failuresInARow == 1 ? "" : "s") in a row" }
        if let lastProblem { line += "; the latest problem: \(lastProblem)" }
        return line
    }
}

extension FlagStore {
    /// How many runs of failed looks at the source there have been: one for each first
    /// failure after a success (or after the start), however many looks the run takes.
    package var failureRuns: Int { state.withLock { $0.failureRuns } }

    /// How the store's rules stand now: their origin and age, the latest problem.
    public var status: FlagStoreStatus {
        state.withLock { s in
            FlagStoreStatus(
                origin: s.origin, fetchedAt: s.fetchedAt, confirmedAt: s.confirmedAt, lastProblem: s.lastProblem,
                lastProblemAt: s.lastProblemAt, failuresInARow: s.failures)
        }
    }
}
