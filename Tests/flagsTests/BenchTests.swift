import Foundation
import Testing

/// `flags-bench` runs end to end on a few contexts: every row agrees on the ON fraction
/// (each evaluated the same rule), and its JSON report parses. Speed itself is measured by
/// `swift run -c release flags-bench`, never by a test.
@Suite struct BenchTests {
    @Test func runsAndRowsAgree() throws {
        let bench = flagsBinary.deletingLastPathComponent().appendingPathComponent("flags-bench")
        try #require(FileManager.default.isExecutableFile(atPath: bench.path))
        let process = Process()
        process.executableURL = bench
        process.arguments = ["--contexts", "3000", "--runs", "1", "--json"]
        process.currentDirectoryURL = packageRoot
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let report = try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect((report["failures"] as? [Any])?.isEmpty == true)
        let rules = try #require(report["rules"] as? [[String: Any]])
        #expect(rules.count == 2)
        for rule in rules {
            let rows = try #require(rule["rows"] as? [[String: Any]])
            #expect(rows.count == 5)
            let fractions = Set(rows.compactMap { $0["onFraction"] as? Double })
            #expect(fractions.count == 1)
            #expect((fractions.first ?? 0) > 0)
        }
        let targets = try #require(report["targets"] as? [String: Bool])
        #expect(targets.count >= 9)
        #expect(report["allocationCounting"] as? Bool == true)
    }
}
