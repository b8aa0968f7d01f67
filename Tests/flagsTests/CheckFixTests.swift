import FlagRules
import FlagRulesTooling
import Foundation
import Testing

/// `flags check --fix`: the fixes it makes, the ones it refuses, and how it reports them.
@Suite struct CheckFixTests {
    @Test func fixRewritesTheFileAndReportsWhatIsLeft() async throws {
        try await offThePool {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("fix-\(UUID()).flags")
            defer { try? FileManager.default.removeItem(at: file) }
            try """
            context { userId: string; age: int }

            flag f {
              enabled when age > 3
              enabled when age > 3 and rollout(userId) < 15
            }
            flag g { enabled when rollout(userId) < 0.5 }

            """.write(to: file, atomically: true, encoding: .utf8)
            let run = try flags(["check", "--fix", file.path])
            #expect(run.status == 0)
            #expect(run.stdout == "fixed 1 problem in \(file.path)\n\(file.path): ok (2 declarations)\n", "\(run)")
            // The bare fraction has two fixes (0.5% or 50%): it is left for a person to choose.
            #expect(run.stderr.contains("warning: rollout(…) compared with the bare number 0.5"))
            #expect(
                try String(contentsOf: file, encoding: .utf8) == """
                    context { userId: string; age: int }

                    flag f {
                      enabled when age > 3
                    }
                    flag g { enabled when rollout(userId) < 0.5 }

                    """)
            let again = try flags(["check", "--fix", "--quiet", file.path])
            #expect(again.status == 0 && again.stdout.isEmpty, "\(again)")
        }
    }

    /// The case: an ended ramp's fix would fail a test that pins day one. It is
    /// refused, named on stderr, the file is left as it was and the check fails.
    @Test func aFixThatWouldFailATestIsRefused() async throws {
        try await offThePool {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("fix-\(UUID()).flags")
            defer { try? FileManager.default.removeItem(at: file) }
            let text = """
                context { userId: string }
                flag promo {
                  enabled when rollout(userId) < ramp("2026-01-01", "2026-02-01", 5%, 100%)
                }
                test "ramp is at 5% on day one" {
                  given { userId: "u-0", now: "2026-01-01" }
                  expect not promo
                }

                """
            try text.write(to: file, atomically: true, encoding: .utf8)
            let run = try flags(["check", "--fix", file.path])
            #expect(run.status == 1 && !run.stdout.contains("fixed"), "\(run)")
            #expect(
                run.stderr.hasPrefix(
                    "\(file.path):3:34: FR109's fix not applied: test \"ramp is at 5% on day one\" (line 5) would fail\n"), "\(run)")
            #expect(try String(contentsOf: file, encoding: .utf8) == text)
        }
    }

    /// Over the examples and generated files with fixable warnings (some pinned by tests,
    /// some not): `--fix` never adds a warning and never fails a test that passed.
    @Test func noFixAddsAWarningOrFailsATest() async throws {
        try await offThePool {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fixes-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let pieces = [
                "flag bare { enabled when rollout(userId) < 15 }\n",
                "flag ramped { enabled when rollout(userId) < ramp(\"2026-01-01\", \"2026-02-01\", 5%, 100%) }\n",
                "flag rampedDown { enabled when rollout(userId) < ramp(\"2026-01-01\", \"2026-02-01\", 50%, 20%) }\n",
                "segment unused = age > 3\n",
                "flag twice {\n  enabled when age > 3\n  enabled when age > 3 and rollout(userId) < 15%\n}\n",
            ]
            let tests = [
                "test \"day one\" {\n  given { userId: \"u-0\", now: \"2026-01-01\" }\n  expect not ramped\n}\n",
                "test \"ramp down starts high\" {\n  given { userId: \"u-0\", now: \"2026-01-01\" }\n  expect rampedDown\n}\n",
                "test \"bare\" {\n  given { userId: \"u-3\" }\n  expect not bare\n}\n",
            ]
            var random = SeededGenerator(seed: 43)
            var paths: [String] = []
            for name in ["app", "checkout", "service", "targeting", "experiments"] {
                let path = directory.appendingPathComponent("\(name).flags").path
                try FileManager.default.copyItem(atPath: packageRoot.appendingPathComponent("examples/\(name).flags").path, toPath: path)
                paths.append(path)
            }
            for i in 0..<12 {
                var text = "context { userId: string; age: int }\n"
                for piece in pieces where Bool.random(using: &random) { text += piece }
                for test in tests where Bool.random(using: &random) {
                    let subject = test.split(separator: "\n")[2].split(separator: " ").last.map(String.init) ?? ""
                    if text.contains("flag \(subject) ") { text += test }
                }
                if !text.contains("flag ") { text += pieces[0] }
                let path = directory.appendingPathComponent("generated\(i).flags").path
                try text.write(toFile: path, atomically: true, encoding: .utf8)
                paths.append(path)
            }
            var (fixed, refused) = (0, 0)
            for path in paths {
                let before = try Self.state(path)
                let run = try flags(["check", "--fix", path])
                if run.stdout.contains("fixed ") { fixed += 1 }
                if run.stderr.contains("fix not applied") { refused += 1 }
                let after = try Self.state(path)
                for (code, n) in after.warnings { #expect(n <= before.warnings[code, default: 0], "\(path): \(code) added\n\(run)") }
                #expect(before.passing.isSubset(of: after.passing), "\(path): a test broke\n\(run)")
                #expect((run.status == 1) == run.stderr.contains("fix not applied"), "\(path)\n\(run)")
            }
            // Both kinds were met: files fixed, and fixes refused.
            #expect(fixed >= 3 && refused >= 2, "fixed \(fixed), refused \(refused)")
        }
    }

    /// A file's warnings by code, and its passing tests.
    static func state(_ path: String) throws -> (warnings: [String: Int], passing: Set<String>) {
        let check = try flags(["check", "--format", "json", path])
        let items = try JSONSerialization.jsonObject(with: Data(check.stdout.utf8)) as? [[String: Any]] ?? []
        var warnings: [String: Int] = [:]
        for item in items { warnings[item["code"] as? String ?? "", default: 0] += 1 }
        let test = try flags(["test", path])
        let passing = Set(
            test.stdout.split(separator: "\n").filter { $0.hasPrefix("PASS ") }.map {
                String($0.split(separator: " ", maxSplits: 2).last ?? "")
            })
        return (warnings, passing)
    }

    @Test func fixNeedsFiles() async throws {
        try await offThePool {
            let run = try flags(["check", "--fix", "-"], stdin: "flag f = true\n")
            #expect(run.status == 2 && run.stderr.hasPrefix("flags: error: --fix rewrites files"), "\(run)")
        }
    }

    @Test func jsonAndSarifCarryTheFixes() async throws {
        try await offThePool {
            let stdin = "context { userId: string }\nflag f { enabled when rollout(userId) < 15 }\n"
            let json = try flags(["check", "--format", "json", "-"], stdin: stdin)
            let items = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
            let fixes = try #require(items?.first?["fixes"] as? [[String: Any]])
            #expect(fixes.first?["message"] as? String == "write '15%'")
            let edit = try #require((fixes.first?["edits"] as? [[String: Any]])?.first)
            #expect(edit["line"] as? Int == 2 && edit["column"] as? Int == 41 && edit["endColumn"] as? Int == 43)
            #expect(edit["replacement"] as? String == "15%")
            let sarif = try flags(["check", "--format", "sarif", "-"], stdin: stdin)
            #expect(sarif.stdout.contains("\"insertedContent\"") && sarif.stdout.contains("\"columnKind\": \"unicodeCodePoints\""))
        }
    }
}
