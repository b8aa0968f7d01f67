import Foundation
import Testing

/// Suites that take most of the run's time (long randomized sequences, stress, whole
/// tables against Swift's Regex) run when `FLAGRULES_SLOW_TESTS=1`, as CI runs them;
/// a developer's `swift test` skips them and says so. CI runs them in a process of their
/// own, by the names in `.ci/slow-tests`.
let slowTests: ConditionTrait = .enabled(
    if: ProcessInfo.processInfo.environment["FLAGRULES_SLOW_TESTS"] == "1",
    "a slow suite: FLAGRULES_SLOW_TESTS=1 swift test runs it, as CI does")
