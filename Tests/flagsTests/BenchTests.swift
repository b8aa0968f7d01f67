import Foundation
import Testing

/// `flags-bench` runs end to end on a few contexts: every row agrees on the ON fraction
/// (each evaluated the same rule), and its JSON report parses. Speed itself is measured by
/// `swift run -c release flags-bench`, never by a test.
@Suite(slowTests) struct BenchTests {
    /// The `flags-bench` built beside the tests, or `FLAGRULES_BENCH` (CI names its release
    /// build, which runs the rows in a fraction of the debug build's time).
    let bench =
        ProcessInfo.processInfo.environment["FLAGRULES_BENCH"].map { URL(fileURLWithPath: $0) }
        ?? flagsBinary.deletingLastPathComponent().appendingPathComponent("flags-bench")

    @Test func runsAndRowsAgree() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: bench.path))
        let bench = self.bench
        let result = try await offThePool {
            try run(
                bench,
                [
                    "--contexts", "1000", "--runs", "1", "--long-chain", "5000", "--relay-stores", "40", "--idle-subscribers", "200",
                    "--subscribers", "100", "--wrk-seconds", "1", "--json",
                ])
        }
        #expect(result.status == 0)
        let report = try #require(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect((report["failures"] as? [Any])?.isEmpty == true)
        let rules = try #require(report["rules"] as? [[String: Any]])
        #expect(rules.count == 2)
        for rule in rules {
            let rows = try #require(rule["rows"] as? [[String: Any]])
            #expect(rows.count == 6)
            let fractions = Set(rows.compactMap { $0["onFraction"] as? Double })
            #expect(fractions.count == 1)
            #expect((fractions.first ?? 0) > 0)
        }
        let targets = try #require(report["ratioGoals"] as? [String: Bool])
        #expect(targets.count >= 11)
        #expect(report["allocationCounting"] as? Bool == BenchTests.countsAllocations)
        // Half the values the in-list rows look up are members.
        let lists = try #require(report["in"] as? [[String: Any]])
        #expect(lists.compactMap { $0["literals"] as? Int } == [3, 1_000, 100_000])
        for list in lists {
            let on = try #require(list["onFraction"] as? Double)
            #expect(on > 0.4 && on < 0.6, "\(list)")
        }
        // Each list size is also measured as one batch call and on the plain path (their ON
        // fractions are checked against the one-call-a-context row's: a disagreement is a
        // failure), and the cost of setting the value on a prepared context.
        for key in ["batchNsPerEvaluation", "plainNsPerEvaluation", "prepareNsPerValue"] {
            #expect(lists.allSatisfy { ($0[key] as? Double).map { $0 > 0 } == true }, "\(key)")
        }
        // The targeting rows (lists and networks) run beside the seed rule's plain path.
        let targeting = try #require(report["targeting"] as? [[String: Any]])
        #expect(targeting.count == 5)
        #expect(targeting.dropFirst().allSatisfy { ($0["onFraction"] as? Double).map { $0 > 0.05 && $0 < 0.95 } == true }, "\(targeting)")
        #expect(targets.keys.contains("ip in 10,000 blocks within 2× of the seed rule's plain path"))
        let check = try #require(report["check10k"] as? [String: Any])
        #expect((check["lintMilliseconds"] as? Double ?? 0) > 0)
        #expect(targets.keys.contains("flags check on 10,000 declarations with every lint under 2× without"))
        let chain = try #require(report["longChain"] as? [String: Any])
        #expect(chain["operands"] as? Int == 5_000 && (chain["loadMilliseconds"] as? Double ?? 0) > 0)
        // The push row: every store subscribed, took the edits, and kept its rules.
        let relay = try #require(report["relay"] as? [String: Any])
        #expect(relay["stores"] as? Int == 40 && relay["keptAfterOriginStopped"] as? Int == 40, "\(relay)")
        #expect((relay["p99Seconds"] as? Double ?? 0) > 0 && (relay["secondsToSubscribe"] as? Double ?? 0) > 0)
        // The subscribers row: every one held from a soft limit of 1,024, the edit reached the
        // readers, and evaluations were answered meanwhile.
        let subscribers = try #require(report["subscribers"] as? [String: Any])
        #expect(subscribers["held"] as? Int == 100 && subscribers["refused"] as? Int == 0, "\(subscribers)")
        #expect((subscribers["editSeconds"] as? Double ?? 99) < 30 && (subscribers["evaluationP99Milliseconds"] as? Double ?? 0) > 0)
        let load = try #require(report["load10k"] as? [String: Any])
        let held = try #require(load["bytes"] as? Int), peak = try #require(load["peakBytesWhileLoading"] as? Int)
        if BenchTests.countsAllocations {
            #expect(held > 1_000_000 && peak >= held)
            #expect(targets.keys.contains("seed: no heap allocation per evaluation on the fastest path"))
        }
    }

    /// Allocations are counted where the counting allocator works (glibc).
    static var countsAllocations: Bool {
        #if canImport(Glibc)
            return true
        #else
            return false
        #endif
    }

    /// The branch other platforms take, selected here: no allocation counts, no target
    /// that needs them, and the rows still run and agree.
    @Test func withoutAllocationCounting() throws {
        let result = try run(
            bench,
            [
                "--contexts", "2000", "--runs", "1", "--long-chain", "1000", "--relay-stores", "20", "--idle-subscribers", "50",
                "--subscribers", "60", "--wrk-seconds", "0", "--json",
            ],
            environment: ["FLAGS_BENCH_NO_ALLOCATION_COUNTING": "1"])
        #expect(result.status == 0)
        let report = try #require(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(report["allocationCounting"] as? Bool == false)
        #expect((report["failures"] as? [Any])?.isEmpty == true)
        let targets = try #require(report["ratioGoals"] as? [String: Bool])
        #expect(!targets.keys.contains { $0.contains("allocation") || $0.contains("occupy") })
        let load = try #require(report["load10k"] as? [String: Any])
        #expect(load["bytes"] as? Int == 0)
    }

    /// The `in` rows with ids (11 bytes) and UUIDs (36 bytes) in place of short codes:
    /// FlagRules and `Set<String>` agree, and half the values looked up are members.
    @Test(arguments: ["ids", "uuids"])
    func inListsOfOtherKeyShapes(_ keys: String) throws {
        let result = try run(bench, ["--in-keys", keys, "--contexts", "2000", "--runs", "1", "--only", "literals", "--json"])
        #expect(result.status == 0)
        let report = try #require(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect((report["failures"] as? [Any])?.isEmpty == true)
        #expect(report["inKeys"] as? String == keys)
        let lists = try #require(report["in"] as? [[String: Any]])
        #expect(lists.count == 3)
        for list in lists {
            let on = try #require(list["onFraction"] as? Double)
            #expect(on > 0.4 && on < 0.6, "\(list)")
        }
    }

    /// `--only` measures some rows: the others are reported as not measured (null), left
    /// out of the checks that rows agree, and no target is judged.
    @Test func onlySomeRows() throws {
        let result = try run(bench, ["--contexts", "2000", "--runs", "1", "--only", "in over 100000", "--json"])
        #expect(result.status == 0, "\(result.stdout)")
        let report = try #require(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect((report["failures"] as? [Any])?.isEmpty == true)
        #expect(report["ratioGoals"] == nil)
        let lists = try #require(report["in"] as? [[String: Any]])
        #expect(lists.map { $0["onFraction"] is Double } == [false, false, true])
        #expect(lists.map { $0["handWrittenSetNsPerEvaluation"] is Double } == [false, false, false])
        #expect(lists.map { $0["batchNsPerEvaluation"] is Double } == [false, false, true])  // "batch: in over 100000 …
        let text = try run(bench, ["--contexts", "2000", "--runs", "1", "--only", "in over 100000"])
        #expect(text.status == 0)
        #expect(text.stdout.contains("\n  3      ") && !text.stdout.contains("nan") && !text.stdout.contains("targets"))
    }

    /// `--only micro` times the plain path's fixed costs, one line a flag.
    @Test func microRows() throws {
        let result = try run(bench, ["--contexts", "500", "--runs", "1", "--only", "micro"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.map { $0.prefix(while: { $0 != ":" }) } == ["constant", "enumOnly", "rolloutOnly", "inList", "seed"])
        #expect(lines.allSatisfy { $0.hasSuffix(" ns") })
    }

    @Test func refusesAnUnknownKindOfInKeys() throws {
        let result = try run(bench, ["--in-keys", "emails"])
        #expect(result == Run(status: 2, stdout: "", stderr: "flags-bench: --in-keys takes codes, ids or uuids, not 'emails'\n"))
    }

    @Test func refusesAnUnknownKindOfInValues() throws {
        let result = try run(bench, ["--in-values", "some"])
        #expect(result == Run(status: 2, stdout: "", stderr: "flags-bench: --in-values takes both, hits or misses, not 'some'\n"))
    }
}
