import Foundation
import Testing

/// `flags refs` and `flags stale` end to end: the example app's reads through its generated
/// keys, an undeclared name, the JSON and SARIF outputs, and the usage errors.
@Suite struct RefsAndStaleCommandTests {
    static func json(_ text: String) throws -> Any { try JSONSerialization.jsonObject(with: Data(text.utf8)) }

    @Test func theExampleAppReadsEveryDeclarationThroughItsKeys() async throws {
        try await offThePool {
            let run = try flags([
                "refs", "examples/FlagsApp/Sources/FlagsApp/shop.flags", "--source", "examples/FlagsApp/Sources", "--format", "json",
            ])
            #expect(run.status == 0, "\(run)")
            let report = try #require(try Self.json(run.stdout) as? [String: Any])
            let declarations = try #require(report["declarations"] as? [[String: Any]])
            let counts = Dictionary(
                uniqueKeysWithValues: declarations.map { ($0["name"] as? String ?? "", ($0["references"] as? [Any])?.count ?? -1) })
            #expect(counts == ["darkMode": 1, "checkout": 3, "pageSize": 1])
            let first = try #require((declarations.first { $0["name"] as? String == "pageSize" }?["references"] as? [[String: Any]])?.first)
            #expect(first["file"] as? String == "examples/FlagsApp/Sources/FlagsApp/main.swift" && first["line"] as? Int == 21)
            #expect(first["kind"] as? String == "generated key")
            #expect((report["unread"] as? [String]) == [] && (report["undeclared"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func anUndeclaredNameFailsWithASuggestion() async throws {
        try await offThePool {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("refs-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            try Data("if client.get_boolean_value(\"darkMod\", False):\n    pass\n".utf8).write(
                to: directory.appendingPathComponent("app.py"))
            let file = directory.appendingPathComponent("app.py").path
            let run = try flags(["refs", "examples/FlagsApp/Sources/FlagsApp/shop.flags", "--source", directory.path])
            #expect(run.status == 1)
            #expect(
                run.stdout.contains(
                    "\(file):1:29: error: 'darkMod' is read as a flag but no rules file declares it; did you mean 'darkMode'?"))
            #expect(run.stdout.contains("3 declarations read by no code: darkMode, checkout, pageSize"))
            let sarif = try flags([
                "refs", "examples/FlagsApp/Sources/FlagsApp/shop.flags", "--source", directory.path, "--format", "sarif",
            ])
            let log = try #require(try Self.json(sarif.stdout) as? [String: Any])
            let results = try #require(((log["runs"] as? [[String: Any]])?.first?["results"]) as? [[String: Any]])
            #expect(
                results.map { $0["ruleId"] as? String ?? "" }.sorted() == [
                    "undeclared-flag", "unread-declaration", "unread-declaration", "unread-declaration",
                ])
            #expect(results.first { $0["ruleId"] as? String == "undeclared-flag" }?["level"] as? String == "error")
        }
    }

    @Test func staleListsTheDoneDeclarationsWithTheirFixes() async throws {
        try await offThePool {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stale-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let rules = directory.appendingPathComponent("app.flags")
            try Data(
                """
                context { userId: string; plan: enum(free, pro) }
                @expires("2026-10-01")
                flag oldBanner { enabled when plan == pro }
                flag everyone { enabled when rollout(userId) < 100% }
                flag live { enabled when plan == pro and rollout(userId) < 30% }
                value banner: string = "none" { "old" when oldBanner }

                """.utf8
            ).write(to: rules)
            let run = try flags(["stale", rules.path, "--today", "2026-11-27"])
            #expect(
                run
                    == Run(
                        status: 0,
                        stdout: """
                            \(rules.path):2: flag oldBanner
                              - expired on 2026-10-01
                              fix: remove lines 2–3 ('flag oldBanner'); replace its reads with the value it should keep: banner:6
                            \(rules.path):4: flag everyone
                              - line 4: rollout(userId) at 100%: write has(userId)
                              fix: remove lines 4–4 ('flag everyone')
                            2 done declarations

                            """, stderr: ""), "\(run)")
            let json = try flags(["stale", rules.path, "--today", "2026-11-27", "--json", "--source", "examples/FlagsApp/Sources"])
            let items = try #require(try Self.json(json.stdout) as? [[String: Any]])
            #expect(items.map { $0["name"] as? String ?? "" } == ["oldBanner", "everyone", "live", "banner"])
            let fix = try #require(items.first?["fix"] as? [String: Any])
            #expect(fix["removeLines"] as? [Int] == [2, 3])
            #expect((items.last?["reasons"] as? [[String: Any]])?.first?["code"] as? String == "unread")
        }
    }

    /// `--metrics`: what a `flags serve` served, from a saved file or its URL.
    @Test func staleReadsServesMetrics() async throws {
        try await offThePool {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stale-metrics-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let rules = directory.appendingPathComponent("app.flags")
            try Data(
                """
                context { plan: enum(free, pro) }
                flag proOnly { enabled when plan == pro }
                value limit: int = 5 { 50 when plan == pro }

                """.utf8
            ).write(to: rules)
            // Counting since 2026-10-01; proOnly served only `true` since 2026-10-20 (`false`
            // last on 2026-10-19), limit both values on 2026-11-26.
            let metrics = directory.appendingPathComponent("metrics.txt")
            try Data(
                """
                # TYPE flags_value_last_served_timestamp_seconds gauge
                flags_value_last_served_timestamp_seconds{flag="proOnly",value="false"} 1792368000
                flags_value_last_served_timestamp_seconds{flag="proOnly",value="true"} 1795651200
                flags_value_last_served_timestamp_seconds{flag="limit",value="5"} 1795651200
                flags_value_last_served_timestamp_seconds{flag="limit",value="50"} 1795651200
                flags_counting_since_timestamp_seconds 1790812800

                """.utf8
            ).write(to: metrics)
            let run = try flags(["stale", rules.path, "--metrics", metrics.path, "--days", "30", "--today", "2026-11-27"])
            #expect(
                run
                    == Run(
                        status: 0,
                        stdout: """
                            \(rules.path):2: flag proOnly
                              - served true to everyone for 30 days (since 2026-10-28, by flags serve's metrics)
                              fix: remove lines 2–2 ('flag proOnly')
                            1 done declaration

                            """, stderr: ""), "\(run)")
            // A window longer than the counting judges nothing, and says so.
            let young = try flags(["stale", rules.path, "--metrics", metrics.path, "--days", "90", "--today", "2026-11-27"])
            #expect(young.stdout == "0 done declarations\n")
            #expect(
                young.stderr
                    == "flags: note: the metrics have counted since 2026-10-01, less than the 90 days --days judges: no declaration is judged by them until 2026-12-30 (or give a shorter --days)\n"
            )

            // From a server's URL: it asks for its key.
            let server = try ServeProcess([rules.path, "--api-key", "k"])
            defer { _ = server.stop() }
            let url = "http://127.0.0.1:\(server.port)/metrics"
            let refused = try flags(["stale", rules.path, "--metrics", url])
            #expect(refused.status == 1 && refused.stderr.contains("HTTP 401 (the server asks for an API key)"), "\(refused)")
            let read = try flags(["stale", rules.path, "--metrics", url, "--metrics-key", "k", "--json"])
            #expect(read.status == 0 && read.stdout == "[]\n", "\(read)")

            // Errors name the place and the fix.
            let missing = try flags(["stale", rules.path, "--metrics", directory.appendingPathComponent("none.txt").path])
            #expect(missing.status == 1 && missing.stderr.contains("give a file saved from GET /metrics, or its URL"))
            try Data("up 1\n".utf8).write(to: metrics)
            #expect(
                try flags(["stale", rules.path, "--metrics", metrics.path]).stderr.contains("these are not the metrics of 'flags serve'"))
            #expect(try flags(["stale", rules.path, "--days", "30"]).stderr.contains("--days is the window of --metrics"))
            #expect(
                try flags(["stale", rules.path, "--metrics", metrics.path, "--days", "0"]).stderr.contains("--days takes a whole number"))
        }
    }

    /// `stale`'s fix names the rules' own tests that read the declaration (applying it
    /// without them breaks `flags test`); `refs` and `stale` give a declaration the same
    /// line; one `--source` takes several folders.
    @Test func staleNamesTestsAndAgreesWithRefs() async throws {
        try await offThePool {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stale-tests-\(UUID().uuidString)")
            let app = directory.appendingPathComponent("App"), more = directory.appendingPathComponent("More")
            try FileManager.default.createDirectory(at: app, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: more, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let rules = directory.appendingPathComponent("app.flags")
            try Data(
                """
                /// The old banner.
                @owner("growth")
                flag oldBanner = true
                flag newSearch { enabled when userId == "u-1" }

                test "the banner is on" {
                  expect oldBanner
                  expect newSearch == false
                }

                """.utf8
            ).write(to: rules)
            try Data(#"if flags.isEnabled("oldBanner") { show() }"#.utf8).write(to: app.appendingPathComponent("a.swift"))
            try Data(#"let s = flags.isEnabled("newSearch")"#.utf8).write(to: more.appendingPathComponent("b.swift"))
            let stale = try flags(["stale", rules.path, "--source", app.path, more.path, "--json"])
            let items = try #require(try Self.json(stale.stdout) as? [[String: Any]])
            let banner = try #require(items.first { $0["name"] as? String == "oldBanner" })
            let fix = try #require(banner["fix"] as? [String: Any])
            #expect((fix["removeLines"] as? [Int]) == [1, 3])
            let readers = (fix["readers"] as? [[String: Any]] ?? []).map { "\($0["kind"]!) \($0["place"]!):\($0["line"]!)" }
            #expect(readers == ["code \(app.path)/a.swift:1", "test the banner is on:7"], "\(readers)")
            #expect(
                (fix["text"] as? String)?.hasSuffix("; remove its tests' expectations: test \"the banner is on\" (line 7)") == true,
                "\(fix)")
            // Both folders were searched: newSearch is read, so it is not unread.
            #expect(!items.contains { $0["name"] as? String == "newSearch" })
            let refs = try flags(["refs", rules.path, "--source", app.path, more.path, "--format", "json"])
            #expect(refs.status == 0, "\(refs)")
            let declarations = try #require((try Self.json(refs.stdout) as? [String: Any])?["declarations"] as? [[String: Any]])
            let refsLine = declarations.first { $0["name"] as? String == "oldBanner" }?["line"] as? Int
            #expect(refsLine == banner["line"] as? Int && refsLine == 2)
        }
    }

    @Test func usageErrors() async throws {
        try await offThePool { () throws in
            #expect(try flags(["refs", "examples/app.flags"]).stderr.contains("'refs' needs --source DIR"))
            #expect(
                try flags(["refs", "examples/app.flags", "--source", "no/such/dir"]).stderr.contains("no file or directory 'no/such/dir'"))
            #expect(try flags(["refs", "examples/app.flags", "--source", "examples", "--format", "xml"]).status == 2)
            #expect(
                try flags(["stale", "examples/app.flags", "--today", "27/11/2026"]).stderr.contains("--today takes a day as YYYY-MM-DD"))
            #expect(try flags(["stale"]).status == 2)
        }
    }
}
