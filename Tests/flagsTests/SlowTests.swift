import Foundation
import Testing

/// Suites that take most of the run's time (long randomized sequences, stress, whole
/// tables against Swift's Regex) run when `FLAGRULES_SLOW_TESTS=1`, as CI runs them;
/// a developer's `swift test` skips them and says so. CI runs them in a process of their
/// own, by the names in `.ci/slow-tests`.
let slowTests: ConditionTrait = .enabled(
    if: ProcessInfo.processInfo.environment["FLAGRULES_SLOW_TESTS"] == "1",
    "a slow suite: FLAGRULES_SLOW_TESTS=1 swift test runs it, as CI does")

/// `.ci/run` runs the slow suites in a process of their own, by the names in
/// `.ci/slow-tests`: the list must name exactly the suites and tests marked `slowTests`.
@Suite struct SlowTestsListTests {
    @Test func theListNamesEverySlowSuiteAndTest() throws {
        let listed = Set(
            try String(contentsOf: packageRoot.appendingPathComponent(".ci/slow-tests"), encoding: .utf8)
                .split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("#") })
        var marked = Set<String>()
        let tests = packageRoot.appendingPathComponent("Tests")
        for case let url as URL in FileManager.default.enumerator(at: tests, includingPropertiesForKeys: nil)!
        where url.pathExtension == "swift" {
            for line in try String(contentsOf: url, encoding: .utf8).split(separator: "\n")
            where line.contains("slowTests)") && !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                // `@Suite(…slowTests) struct Name` or `@Test(slowTests) func name(`.
                let words = line.split(whereSeparator: { " (){:".contains($0) })
                if let k = words.firstIndex(where: { $0 == "struct" || $0 == "func" }), k + 1 < words.count {
                    marked.insert(String(words[k + 1]))
                }
            }
        }
        #expect(!marked.isEmpty)
        #expect(listed == marked, "in .ci/slow-tests only: \(listed.subtracting(marked)); marked only: \(marked.subtracting(listed))")
    }
}
