import Foundation
import Testing

/// The README stays true: its first command prints what the README shows, and its rules
/// load and pass their tests.
@Suite struct ReadmeTests {
    static let readme = (try? String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)) ?? ""

    @Test func theFirstCommandPrintsWhatTheReadmeShows() async throws {
        try await offThePool {
            let lines = Self.readme.split(separator: "\n", omittingEmptySubsequences: false)
            let command = try #require(lines.first { $0.hasPrefix("swift run flags eval ") })
            #expect(lines.firstIndex(of: command).map { $0 < 20 } == true, "the first command is in the first 20 lines")
            #expect(lines.contains("swift test"))
            let arguments = command.dropFirst("swift run flags ".count).split(separator: " ").map(String.init)
            let run = try flags(arguments)
            #expect(run.status == 0)
            for shown in [
                "darkMode = true  (TARGETING_MATCH, rule 2, line 26)", "newMediaPicker = true  (TARGETING_MATCH, rule 3, line 34)",
                "raccoonImages = false  (DISABLED)",
            ] {
                #expect(Self.readme.contains(shown) && run.stdout.contains(shown), "\(shown)")
            }
            #expect(lines.count <= 300)
        }
    }

    @Test func theTourLoadsAndItsTestsPass() async throws {
        try await offThePool {
            let start = try #require(Self.readme.range(of: "```\ncontext {"))
            let end = try #require(Self.readme.range(of: "```", range: start.upperBound..<Self.readme.endIndex))
            let rules = String(Self.readme[start.upperBound..<end.lowerBound])
            let run = try flags(["test", "-"], stdin: "context {" + rules)
            #expect(run.status == 0 && run.stdout.hasSuffix("1 passed, 0 failed\n"), "\(run)")
        }
    }
}
