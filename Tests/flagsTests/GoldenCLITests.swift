import Foundation
import Testing

/// Each case runs the built `flags` with arguments (and standard input) and compares
/// status, stdout and stderr with `Golden/NAME.txt`. Re-record: `FLAGRULES_RECORD=1 swift test`.
@Suite struct GoldenCLITests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")
    static let fixtures = "Tests/flagsTests/Fixtures/"

    static let cases: [(String, [String], String?)] = [
        ("help", ["--help"], nil),
        ("version", ["--version"], nil),
        ("no-command", [], nil),
        ("unknown-command", ["evl"], nil),
        ("check-help", ["check", "--help"], nil),
        ("check-ok", ["check", "examples/app.flags", "examples/service.flags"], nil),
        ("check-errors", ["check", fixtures + "broken.flags", "examples/app.flags"], nil),
        ("check-json", ["check", "--format", "json", fixtures + "broken.flags"], nil),
        ("check-json-clean", ["check", "--format=json", "examples/app.flags"], nil),
        ("check-bad-format", ["check", "--format", "jsn", "examples/app.flags"], nil),
        ("check-stdin", ["check", "-"], "flag f { enabled when x == 'y' }\n"),
        ("eval-help", ["eval", "--help"], nil),
        ("eval-text", ["eval", "examples/service.flags", "-c", "now=2026-12-02T00:00:00Z", "-c", "region=usEast", "-c", "tier=free"], nil),
        ("eval-json", ["eval", "examples/checkout.flags", "--json", "-c", "userId=user-3", "-c", "country=US"], nil),
        (
            "eval-explain",
            [
                "eval", "examples/app.flags", "darkMode", "newMediaPicker", "raccoonImages", "--explain",
                "-c", "build=beta", "-c", "userId=user-42", "-c", "appVersion=2.2.0",
            ], nil
        ),
        (
            "eval-explain-json",
            ["eval", "examples/checkout.flags", "checkout", "--explain", "--json", "-c", "userId=user-3", "-c", "country=US"], nil
        ),
        ("eval-errors", ["eval", fixtures + "broken.flags"], nil),
        (
            "eval-values-as-json-reads-them",
            [
                "eval", fixtures + "values.flags", "-c", "userId=00123", "-c", "code=+1",
                "-c", "email=\"a@b.com\"", "-c", "beta=true",
            ], nil
        ),
        ("eval-values-number", ["eval", fixtures + "values.flags", "-c", "userId=123", "-c", "code=1e3"], nil),
        ("eval-values-quoted-number", ["eval", fixtures + "values.flags", "-c", "userId=\"123\"", "-c", "beta=\"true\""], nil),
        (
            "eval-values-schema",
            [
                "eval", fixtures + "values-schema.flags", "-c", "userId=00123", "-c", "email=\"a@b.com\"",
                "-c", "age=+18",
            ], nil
        ),
        ("eval-unknown-name", ["eval", "examples/app.flags", "darkmode"], nil),
        ("test-help", ["test", "--help"], nil),
        ("test-examples", ["test", "examples/"], nil),
        ("test-quiet", ["test", "--quiet", "examples"], nil),
        ("test-failing", ["test", fixtures + "failing.flags"], nil),
        ("test-broken", ["test", fixtures + "broken.flags", fixtures + "failing.flags"], nil),
        ("test-no-tests", ["test", fixtures + "notests.flags"], nil),
        ("test-missing", ["test", "nowhere/"], nil),
        ("test-usage", ["test"], nil),
        ("test-coverage", ["test", "--coverage", "--quiet", "examples/"], nil),
        ("test-coverage-json", ["test", "--coverage", "--json", "examples/checkout.flags"], nil),
        ("test-coverage-failing-json", ["test", "--coverage", "--json", fixtures + "failing.flags"], nil),
        ("test-coverage-below-minimum", ["test", "--min-coverage", "90%", "--quiet", "examples/"], nil),
        ("test-coverage-minimum-met", ["test", "--min-coverage=80", "--quiet", "examples/"], nil),
        ("test-json-without-coverage", ["test", "--json", "examples/"], nil),
        ("test-bad-minimum", ["test", "--min-coverage", "eighty", "examples/"], nil),
        ("fmt-help", ["fmt", "--help"], nil),
        ("fmt-print", ["fmt", fixtures + "unformatted.flags"], nil),
        ("fmt-check", ["fmt", "--check", fixtures + "unformatted.flags", "examples/app.flags"], nil),
        ("fmt-check-clean", ["fmt", "--check", "examples/app.flags", "examples/checkout.flags"], nil),
        ("fmt-stdin", ["fmt", "-"], "segment s=a&&b\n"),
        ("fmt-broken", ["fmt", fixtures + "broken.flags"], nil),
        ("fmt-write-stdin", ["fmt", "-w", "-"], ""),
        ("fmt-usage", ["fmt"], nil),
        ("list-help", ["list", "--help"], nil),
        ("list-text", ["list", fixtures + "listing.flags"], nil),
        ("list-json", ["list", "--json", fixtures + "listing.flags"], nil),
        ("list-usage", ["list"], nil),
        ("list-several", ["list", fixtures + "listing.flags", "examples/checkout.flags"], nil),
        ("list-directory-json", ["list", "--json", "examples/"], nil),
        ("check-directory", ["check", "examples/"], nil),
        ("check-no-flags-files", ["check", "Sources/flags"], nil),
        ("fmt-check-directory", ["fmt", "--check", "examples"], nil),
        ("list-broken", ["list", fixtures + "broken.flags"], nil),
        ("repl-help", ["repl", "--help"], nil),
        ("repl-usage", ["repl", "a", "b"], nil),
        ("diff-help", ["diff", "--help"], nil),
        ("lsp-help", ["lsp", "--help"], nil),
        ("serve-help", ["serve", "--help"], nil),
        ("lsp-usage", ["lsp", "extra"], nil),
        ("diff-generated", ["diff", fixtures + "diff-old.flags", fixtures + "diff-new.flags"], nil),
        (
            "check-lint-codes",
            ["check", "-"],
            "context { email: string; userId: string }\nflag a { enabled when lower(email) ends with \"@DailyLedger.com\" }\n"
                + "flag b { enabled when rollout(userId) < 15 }\n"
        ),
        ("check-sarif", ["check", "--format", "sarif", "-"], "context { userId: string }\nflag b { enabled when rollout(userId) < 15 }\n"),
        (
            "eval-explain-unknown-or",
            ["eval", "-", "--explain"],
            "context { country: string; plan: string }\nsegment pro = plan == \"pro\" and country != \"FR\"\n"
                + "flag b { enabled when country == \"US\" or plan == \"pro\" }\nflag c { enabled when pro and country == \"US\" }\n"
        ),
    ]

    static var names: [String] { cases.map(\.0) }

    static func render(_ run: Run, _ arguments: [String]) -> String {
        "$ flags \(arguments.joined(separator: " "))\n--- status \(run.status)\n--- stdout\n\(run.stdout)--- stderr\n\(run.stderr)"
    }

    @Test(arguments: names)
    func golden(_ name: String) async throws {
        try await offThePool {
            let (_, arguments, stdin) = try #require(Self.cases.first { $0.0 == name })
            let actual = Self.render(try flags(arguments, stdin: stdin), arguments)
            let url = Self.directory.appendingPathComponent(name + ".txt")
            if ProcessInfo.processInfo.environment["FLAGRULES_RECORD"] == "1" {
                try actual.write(to: url, atomically: true, encoding: .utf8)
                return
            }
            #expect(actual == (try String(contentsOf: url, encoding: .utf8)))
        }
    }

    @Test func fmtWriteRewritesInPlace() async throws {
        try await offThePool {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("fmt-\(UUID()).flags")
            try "flag  a=true\n".write(to: file, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: file) }
            #expect(try flags(["fmt", "-w", file.path]) == Run(status: 0, stdout: "", stderr: ""))
            #expect(try String(contentsOf: file, encoding: .utf8) == "flag a = true\n")
            #expect(try flags(["fmt", "--check", file.path]) == Run(status: 0, stdout: "", stderr: ""))
        }
    }

    @Test func everyCommandHasGoldenHelp() {
        for command in ["check", "eval", "test", "fmt", "list", "repl", "diff", "lsp", "serve"] {
            #expect(Self.names.contains("\(command)-help"))
        }
    }
}
