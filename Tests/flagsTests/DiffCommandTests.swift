import FlagRules
import Foundation
import Testing

@Suite(.serialized) struct DiffCommandTests {
    static let old = "Tests/flagsTests/Fixtures/diff-old.flags"
    static let new = "Tests/flagsTests/Fixtures/diff-new.flags"
    static let contexts = "Tests/flagsTests/Fixtures/contexts.jsonl"

    @Test func realContextsAreCountedOneByOne() async throws {
        try await offThePool {
            let run = try flags(["diff", Self.old, Self.new, "--contexts", Self.contexts])
            #expect(
                run
                    == Run(
                        status: 0,
                        stdout: """
                            darkMode: 40.0 % of 5 contexts change
                              false → true  40.0 %
                            checkout: 20.0 % of 5 contexts change
                              control → oneStep  20.0 %
                            added: flag searchV2
                            removed: flag legacyPicker
                            schema: added plan: enum(free, pro)
                            1 declaration unchanged over 5 contexts

                            """, stderr: ""))
        }
    }

    @Test func generatedContextsSampleTheRolloutAndTheSplitInProportion() async throws {
        try await offThePool {
            let run = try flags(["diff", Self.old, Self.new, "--json"])
            #expect(run.status == 0, "\(run)")
            let json = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
            let declarations = try #require(json?["declarations"] as? [[String: Any]])
            func share(_ name: String) -> Double? { declarations.first { $0["name"] as? String == name }?["share"] as? Double }
            #expect(json?["contexts"] as? Int == 10_000)
            // 20 % → 30 % of everyone; a tenth of the US and CA users, who are two in three
            // of the generated countries (US, CA, or one no rule names), nineteen in twenty
            // times present.
            #expect((0.09...0.11).contains(share("darkMode") ?? -1))
            #expect((0.055...0.072).contains(share("checkout") ?? -1))
            #expect(share("steady") == 0)
            #expect((json?["added"] as? [[String: String]]) == [["name": "searchV2", "kind": "flag"]])
            #expect((json?["removed"] as? [[String: String]]) == [["name": "legacyPicker", "kind": "flag"]])
            let schema = try #require(json?["schema"] as? [[String: Any]])
            #expect(schema.count == 1 && schema[0]["name"] as? String == "plan" && schema[0]["from"] is NSNull)
            // The same seed gives the same figures; another seed, others.
            #expect(try flags(["diff", Self.old, Self.new, "--json"]).stdout == run.stdout)
            #expect(try flags(["diff", Self.old, Self.new, "--json", "--seed", "8"]).stdout != run.stdout)
        }
    }

    @Test func maxChangeGatesOnTheLargestShare() async throws {
        try await offThePool {
            let pass = try flags(["diff", Self.old, Self.new, "--max-change", "12%"])
            #expect(pass.status == 0 && pass.stderr.isEmpty, "\(pass)")
            let fail = try flags(["diff", Self.old, Self.new, "--max-change", "8"])
            #expect(fail.status == 1)
            #expect(
                fail.stderr.hasPrefix("flags: darkMode changes for 10.") && fail.stderr.hasSuffix("more than --max-change 8 %\n"), "\(fail)"
            )
            #expect(!fail.stderr.contains("checkout"))
            let same = try flags(["diff", Self.old, Self.old, "--max-change", "0"])
            #expect(same.status == 0 && same.stdout == "4 declarations unchanged over 10,000 contexts\n", "\(same)")
        }
    }

    @Test func aSampleOfRealContextsIsSeeded() async throws {
        try await offThePool {
            let a = try flags(["diff", Self.old, Self.new, "--contexts", Self.contexts, "--sample", "2", "--seed", "3"])
            #expect(a.status == 0 && a.stdout.contains("of 2 contexts"), "\(a)")
            #expect(try flags(["diff", Self.old, Self.new, "--contexts", Self.contexts, "--sample", "2", "--seed", "3"]) == a)
        }
    }

    @Test func badInputIsAUsageErrorNamingThePlace() async throws {
        try await offThePool {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("contexts-\(UUID()).jsonl")
            defer { try? FileManager.default.removeItem(at: file) }
            try Data("{\"userId\": \"u\"}\n\n{\"userId\": \n".utf8).write(to: file)
            let cases: [([String], String)] = [
                (["diff", Self.old], "flags: error: 'diff' needs the old and the new file\nhelp: flags diff old.flags new.flags\n"),
                (
                    ["diff", Self.old, Self.new, Self.new],
                    "flags: error: 'diff' compares two files, got 3\nhelp: flags diff old.flags new.flags\n"
                ),
                (
                    ["diff", Self.old, Self.new, "--sample", "0"],
                    "flags: error: --sample takes a count from 1 to 1000000, got '0'\nhelp: --sample 10000\n"
                ),
                (
                    ["diff", Self.old, Self.new, "--max-change", "120%"],
                    "flags: error: --max-change takes a percentage from 0 to 100, got '120%'\nhelp: --max-change 5%\n"
                ),
                (
                    ["diff", Self.old, Self.new, "--seed", "-1"],
                    "flags: error: --seed takes a whole number from 0, got '-1'\nhelp: --seed 7\n"
                ),
                (["diff", Self.old, Self.new, "--contexts", "nowhere.jsonl"], "flags: error: no such file: nowhere.jsonl\n"),
                (["diff", "-", "-"], "flags: error: the old and the new rules cannot both come from standard input\n"),
                (
                    ["diff", Self.old, Self.new, "--sampel", "3"],
                    "flags: error: unknown option '--sampel' for 'diff'; did you mean '--sample'?\nhelp: run 'flags diff --help' for the options\n"
                ),
            ]
            for (arguments, stderr) in cases {
                let run = try flags(arguments)
                #expect(run == Run(status: 2, stdout: "", stderr: stderr), "\(arguments)")
            }
            let bad = try flags(["diff", Self.old, Self.new, "--contexts", file.path])
            #expect(bad.status == 2)
            #expect(bad.stderr.hasPrefix("flags: error: \(file.path):3: "), "\(bad)")
            #expect(bad.stderr.contains("help: each line of --contexts is one JSON object"))
            try Data("\n \n".utf8).write(to: file)
            let empty = try flags(["diff", Self.old, Self.new, "--contexts", file.path])
            #expect(empty.status == 2 && empty.stderr.hasPrefix("flags: error: \(file.path) holds no contexts"), "\(empty)")
        }
    }

    @Test func aFileWithErrorsStopsTheComparison() async throws {
        try await offThePool {
            let run = try flags(["diff", Self.old, "Tests/flagsTests/Fixtures/broken.flags"])
            #expect(run.status == 1 && run.stdout.isEmpty && run.stderr.contains("error:"), "\(run)")
        }
    }
}
