import FlagRules
import FlagRulesTooling
import Foundation
import Testing

let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The `flags` binary built next to this test bundle.
let flagsBinary: URL = {
    let own = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    var candidates = [own.deletingLastPathComponent().appendingPathComponent("flags")]
    if let main = Bundle.main.executableURL { candidates.append(main.deletingLastPathComponent().appendingPathComponent("flags")) }
    candidates.append(packageRoot.appendingPathComponent(".build/debug/flags"))
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
}()

struct Run: Equatable, CustomStringConvertible {
    var status: Int32
    var stdout: String
    var stderr: String
    var description: String { "status \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }
}

func flags(_ arguments: [String], stdin: String? = nil, environment: [String: String] = [:]) throws -> Run {
    try run(flagsBinary, arguments, stdin: stdin, environment: environment)
}

/// Runs a binary in the package root (without colour), feeding it `stdin`.
func run(_ executable: URL, _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:]) throws -> Run {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    process.currentDirectoryURL = packageRoot
    var env = ProcessInfo.processInfo.environment
    env["NO_COLOR"] = "1"
    for (k, v) in environment { env[k] = v }
    process.environment = env
    let out = Pipe(), err = Pipe(), input = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = input
    try spawn(process)
    if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
    try input.fileHandleForWriting.close()
    let stdoutData = out.fileHandleForReading.readDataToEndOfFile()
    let stderrData = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return Run(
        status: process.terminationStatus, stdout: String(decoding: stdoutData, as: UTF8.self),
        stderr: String(decoding: stderrData, as: UTF8.self))
}

@Suite(.serialized) struct CheckCommandTests {
    @Test func cleanFilesPass() async throws {
        try await offThePool {
            let run = try flags(["check", "examples/app.flags", "examples/checkout.flags", "examples/service.flags"])
            #expect(
                run
                    == Run(
                        status: 0,
                        stdout: """
                            examples/app.flags: ok (9 declarations)
                            examples/checkout.flags: ok (5 declarations)
                            examples/service.flags: ok (7 declarations)

                            """, stderr: ""))
        }
    }

    @Test func errorsAreRenderedWithCaretsAndExitOne() async throws {
        try await offThePool {
            let run = try flags(
                ["check", "-"], stdin: "context { userId: string }\nflag f { enabled when userid == \"x\" }\nflag g { enabled when x < }\n")
            #expect(
                run
                    == Run(
                        status: 1, stdout: "",
                        stderr: """
                            <stdin>:3:27: error: expected an expression, found '}'
                            3 | flag g { enabled when x < }
                              |                           ^
                            <stdin>: 1 error

                            """))
            let semantic = try flags(["check", "-"], stdin: "context { userId: string }\nflag f { enabled when userid == \"x\" }\n")
            #expect(
                semantic
                    == Run(
                        status: 1, stdout: "",
                        stderr: """
                            <stdin>:2:23: error: unknown name 'userid'; did you mean 'userId'?
                            2 | flag f { enabled when userid == "x" }
                              |                       ^~~~~~
                            <stdin>: 1 error

                            """))
        }
    }

    @Test func warningsDoNotFail() async throws {
        try await offThePool {
            let run = try flags(["check", "-"], stdin: "@expires(\"2020-01-01\") flag old = true\n")
            #expect(run.status == 0)
            #expect(run.stdout == "<stdin>: ok (1 declaration)\n")
            #expect(run.stderr.hasPrefix("<stdin>:1:1: warning: 'old' expired on 2020-01-01\n"))
        }
    }

    /// Lints are warnings; `--strict` makes them (and every warning) errors.
    @Test func lintsWarnAndStrictFails() async throws {
        try await offThePool {
            let rules = "context { userId: string }\nflag f { enabled when rollout(userId) < 15 }\n"
            let run = try flags(["check", "-"], stdin: rules)
            #expect(run.status == 0)
            #expect(run.stdout == "<stdin>: ok (1 declaration)\n")
            #expect(
                run.stderr == """
                    <stdin>:2:41: warning: rollout(…) compared with the bare number 15, read as 15% [FR102]
                    2 | flag f { enabled when rollout(userId) < 15 }
                      |                                         ^~
                    help: write '15%'

                    """)
            let strict = try flags(["check", "--strict", "-"], stdin: rules)
            #expect(strict.status == 1)
            #expect(strict.stdout == "")
            #expect(strict.stderr.hasPrefix("<stdin>:2:41: error: rollout(…) compared with the bare number 15, read as 15% [FR102]\n"))
            #expect(strict.stderr.hasSuffix("<stdin>: 1 error (warnings, with --strict)\n"))
            let json = try flags(["check", "--strict", "--format", "json", "-"], stdin: rules)
            #expect(json.status == 1)
            #expect(json.stdout.contains(#""code": "FR102""#) && json.stdout.contains(#""severity": "error""#))
            let silenced = try flags(
                ["check", "--strict", "-"], stdin: rules.replacingOccurrences(of: "< 15 }", with: "< 15 }  # flags:ignore FR102"))
            #expect(silenced.status == 0)
        }
    }

    /// `--format sarif` writes a SARIF 2.1.0 log: the lints as the driver's rules, each
    /// diagnostic a result with its level, message and region; errors too.
    @Test func sarifLogs() async throws {
        try await offThePool {
            let run = try flags(
                ["check", "--format", "sarif", "-"], stdin: "context { userId: string }\nflag f { enabled when rollout(userId) < 15 }\n")
            #expect(run.status == 0)
            let log = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
            #expect(log["version"] as? String == "2.1.0")
            let runs = try #require(log["runs"] as? [[String: Any]])
            let driver = try #require((runs.first?["tool"] as? [String: Any])?["driver"] as? [String: Any])
            #expect(driver["name"] as? String == "flags")
            let ruleIDs = (driver["rules"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            #expect(ruleIDs.contains("FR101") && ruleIDs.contains("FR110"))
            let result = try #require((runs.first?["results"] as? [[String: Any]])?.first)
            #expect(result["ruleId"] as? String == "FR102")
            #expect(result["level"] as? String == "warning")
            #expect(
                (result["message"] as? [String: Any])?["text"] as? String
                    == "rollout(…) compared with the bare number 15, read as 15% (help: write '15%')")
            let location = try #require((result["locations"] as? [[String: Any]])?.first?["physicalLocation"] as? [String: Any])
            #expect((location["artifactLocation"] as? [String: Any])?["uri"] as? String == "<stdin>")
            let region = try #require(location["region"] as? [String: Any])
            #expect(region["startLine"] as? Int == 2 && region["startColumn"] as? Int == 41 && region["endColumn"] as? Int == 43)
            // Errors are results too, with their checker codes as rules, and exit 1.
            let broken = try flags(["check", "--format", "sarif", "-"], stdin: "flag f { enabled when x < }\n")
            #expect(broken.status == 1)
            #expect(broken.stdout.contains(#""level" : "error""#) || broken.stdout.contains(#""level": "error""#))
        }
    }

    @Test func expiriesAndOwnersOnRequest() async throws {
        try await offThePool {
            let rules = "flag a = true\n"
            #expect(try flags(["check", "--strict", "-"], stdin: rules).status == 0)
            let owners = try flags(["check", "--strict", "--require-owners", "-"], stdin: rules)
            #expect(owners.status == 1)
            #expect(owners.stderr.hasPrefix("<stdin>:1:1: error: flag 'a' has no @owner [FR112]\n"))
            let bad = try flags(["check", "--expiring-within", "two weeks", "-"], stdin: rules)
            #expect(bad.status == 2)
            #expect(
                bad.stderr
                    == "flags: error: --expiring-within takes a number of days, got 'two weeks'\nhelp: write --expiring-within 14 (or 14d)\n"
            )
            #expect(try flags(["check", "--expiring-within", "14d", "-"], stdin: rules).status == 0)
        }
    }

    @Test func usageErrorsExitTwo() async throws {
        try await offThePool { () throws in
            #expect(
                try flags(["check"])
                    == Run(
                        status: 2, stdout: "",
                        stderr: "flags: error: 'check' needs at least one file\nhelp: flags check examples/app.flags\n"))
            #expect(
                try flags(["check", "nope.flags"])
                    == Run(status: 2, stdout: "", stderr: "flags: error: no such file or directory: nope.flags\n"))
            #expect(
                try flags(["check", "Tests/flagsTests/Golden"])
                    == Run(status: 2, stdout: "", stderr: "flags: error: no .flags files in Tests/flagsTests/Golden\n"))
            #expect(
                try flags(["check", "--quite", "x"])
                    == Run(
                        status: 2, stdout: "",
                        stderr:
                            "flags: error: unknown option '--quite' for 'check'; did you mean '--quiet'?\nhelp: run 'flags check --help' for the options\n"
                    ))
            #expect(
                try flags(["chek"])
                    == Run(
                        status: 2, stdout: "",
                        stderr: "flags: error: unknown command 'chek'; did you mean 'check'?\nhelp: run 'flags --help' for the commands\n"))
        }
    }

    @Test func hostileBytesAreDiagnosedNotCrashed() async throws {
        try await offThePool {
            let run = try flags(["check", "-"], stdin: "\u{FEFF}flag f { enabled when x == \"\u{0}\" }\r\nflag g\r")
            #expect(run.status == 1)
            #expect(run.stderr.contains("<stdin>:1:29: error: NUL byte in source"))
        }
    }
}

@Suite(.serialized) struct EvalCommandTests {
    @Test func resolvesEveryDeclaration() async throws {
        try await offThePool {
            let run = try flags(["eval", "examples/app.flags", "-c", "build=beta", "-c", "userId=user-42", "-c", "appVersion=2.4.0"])
            #expect(
                run
                    == Run(
                        status: 0,
                        stdout: """
                            darkMode = false  (DEFAULT)
                            newMediaPicker = true  (TARGETING_MATCH, rule 3, line 34)
                            raccoonImages = false  (DISABLED)
                            tabletLayout = false  (DEFAULT)
                            apiBaseURL = "https://api.example.com"  (DEFAULT)
                            logLevel = "warning"  (DEFAULT)
                            pageSize = 30  (DEFAULT)

                            """, stderr: ""))
        }
    }

    @Test func namedDeclarationsAsJSON() async throws {
        try await offThePool {
            let run = try flags([
                "eval", "examples/checkout.flags", "checkout", "freeShippingThreshold", "expressPay", "--json",
                "-c", "userId=user-3", "-c", "country=US", "-c", "cartTotal=25", "-c", "platform=web",
            ])
            #expect(
                run
                    == Run(
                        status: 0,
                        stdout: """
                            {"checkout": {"value": "twoStep", "variant": "twoStep", "reason": "SPLIT", "exposure": true, "rule": 3, "line": 23}, \
                            "freeShippingThreshold": {"value": 35.0, "reason": "TARGETING_MATCH", "rule": 2, "line": 32}, \
                            "expressPay": {"value": false, "reason": "DEFAULT"}}

                            """, stderr: ""))
        }
    }

    @Test func contextFromJSONWithOverrides() async throws {
        try await offThePool {
            let run = try flags(
                ["eval", "examples/service.flags", "searchTimeoutMs", "newSearchIndex", "--context-json", "-", "-c", "tier=free"],
                stdin: #"{"now": "2026-12-24T12:00:00Z", "region": "usEast", "tier": "enterprise", "tenant": null}"#)
            #expect(
                run
                    == Run(
                        status: 0,
                        stdout: """
                            searchTimeoutMs = 400  (TARGETING_MATCH, rule 2, line 32)
                            newSearchIndex = true  (TARGETING_MATCH, rule 2, line 23)

                            """, stderr: ""))
        }
    }

    /// `--contexts` resolves against each line, one JSON object a line (blank lines
    /// skipped), with -c values over each: line for line what `--context-json` gives.
    @Test func contextsOneALineAgreeWithOneContextAtATime() async throws {
        try await offThePool {
            let lines = [
                #"{"build": "alpha", "userId": "u-1", "appVersion": "2.4.0"}"#, #"{"build": "release", "country": "DE"}"#, "{}",
            ]
            let input = lines[0] + "\n\n" + lines[1] + "\r\n" + lines[2] + "\n"
            let batch = try flags(["eval", "examples/app.flags", "--json", "--contexts", "-", "-c", "userId=u-9"], stdin: input)
            #expect(batch.status == 0 && batch.stderr == "")
            let each = try lines.map {
                try flags(["eval", "examples/app.flags", "--json", "--context-json", "-", "-c", "userId=u-9"], stdin: $0)
            }
            #expect(batch.stdout == each.map(\.stdout).joined())
            let text = try flags(["eval", "examples/app.flags", "darkMode", "--contexts", "-"], stdin: input)
            #expect(
                text.stdout == """
                    # <stdin>:1
                    darkMode = true  (TARGETING_MATCH, rule 1, line 25)

                    # <stdin>:3
                    darkMode = false  (DEFAULT)

                    # <stdin>:4
                    darkMode = false  (DEFAULT)

                    """)
        }
    }

    /// A key the schema does not declare is evaluated as a service reads it (no rule reads
    /// it), with a warning naming its line, once however many lines give it.
    @Test func contextsLinesWithUndeclaredKeysAreWarnedOf() async throws {
        try await offThePool {
            let run = try flags(
                ["eval", "examples/app.flags", "darkMode", "--contexts", "-"],
                stdin: "{\"build\": \"alpha\"}\n\n{\"biuld\": \"beta\"}\n{\"biuld\": \"beta\", \"build\": \"alpha\"}\n")
            #expect(run.status == 0)
            #expect(
                run.stdout
                    == "# <stdin>:1\ndarkMode = true  (TARGETING_MATCH, rule 1, line 25)\n\n# <stdin>:3\ndarkMode = false  (DEFAULT)\n\n"
                    + "# <stdin>:4\ndarkMode = true  (TARGETING_MATCH, rule 1, line 25)\n")
            #expect(
                run.stderr
                    == "flags: warning: <stdin>:3: unknown attribute 'biuld'; did you mean 'build'?; no rule reads it (and in 1 more context)\n"
            )
        }
    }

    /// A line that is not a context stops the run before anything is printed, naming its
    /// line; the context comes from one place.
    @Test(arguments: [
        (
            ["--contexts", "-"], "{\"build\": \"alpha\"}\n[1]\n",
            "flags: error: <stdin>:2: the context must be a JSON object, as in {\"userId\": \"u-1\"}\n"
        ),
        (["--contexts", "-", "--context-json", "-"], "{}", "flags: error: --context-json and --contexts both give the context; use one\n"),
    ])
    func contextsLinesThatAreNotContexts(_ options: [String], _ stdin: String, _ stderr: String) async throws {
        try await offThePool { () throws in
            #expect(try flags(["eval", "examples/app.flags"] + options, stdin: stdin) == Run(status: 2, stdout: "", stderr: stderr))
            #expect(
                try flags(["eval", "-", "--contexts", "-"], stdin: "flag f")
                    == Run(status: 2, stdout: "", stderr: "flags: error: the rules and the context cannot both come from standard input\n"))
        }
    }

    @Test func schemalessValuesAreTypedByTheirText() async throws {
        try await offThePool {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("schemaless-\(UUID()).flags")
            try "flag f { enabled when n > 5 and b and s == \"x1\" and d < 1 }\n".write(to: file, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: file) }
            let on = try flags(["eval", file.path, "-c", "n=6", "-c", "b=true", "-c", "s=x1", "-c", "d=0.5"])
            #expect(on.stdout == "f = true  (TARGETING_MATCH, rule 1, line 1)\n")
            let off = try flags(["eval", file.path, "-c", "n=six", "-c", "b=true", "-c", "s=x1", "-c", "d=nan"])
            #expect(off.stdout == "f = false  (DEFAULT)\n")
        }
    }

    @Test(arguments: [
        (["eval"], "flags: error: 'eval' needs a file\nhelp: flags eval examples/app.flags -c build=alpha\n"),
        (
            ["eval", "examples/app.flags", "-c", "build=prod"],
            "flags: error: attribute 'build' expects one of debug, alpha, beta, release, got 'prod'\n"
        ),
        (
            ["eval", "examples/app.flags", "-c", "buld=beta"],
            "flags: error: the context declares no attribute 'buld'; did you mean 'build'?\n"
        ),
        (
            ["eval", "examples/app.flags", "-c", "appVersion=2.4.beta"],
            "flags: error: attribute 'appVersion' expects a semantic version such as 2.3.0, got '2.4.beta'\n"
        ),
        (["eval", "examples/checkout.flags", "-c", "cartTotal=inf"], "flags: error: attribute 'cartTotal' expects a double, got 'inf'\n"),
        (["eval", "examples/checkout.flags", "-c", "cartTotal=nan"], "flags: error: attribute 'cartTotal' expects a double, got 'nan'\n"),
        (["eval", "examples/service.flags", "-c", "seats=1e3"], "flags: error: attribute 'seats' expects an int, got '1e3'\n"),
        (["eval", "examples/service.flags", "-c", "now=tomorrow"], "flags: error: 'now' expects an ISO 8601 datetime, got 'tomorrow'\n"),
        (["eval", "examples/app.flags", "-c", "build"], "flags: error: -c expects key=value, got 'build'\nhelp: as in -c build=alpha\n"),
        (["eval", "examples/app.flags", "darkMod"], "flags: error: examples/app.flags declares no 'darkMod'; did you mean 'darkMode'?\n"),
        (
            ["eval", "examples/app.flags", "--jsn"],
            "flags: error: unknown option '--jsn' for 'eval'; did you mean '--json'?\nhelp: run 'flags eval --help' for the options\n"
        ),
        (["eval", "examples/app.flags", "-c"], "flags: error: option '--context' needs a value\n"),
        (["eval", "examples/app.flags", "--context-json", "missing.json"], "flags: error: no such file: missing.json\n"),
    ])
    func usageErrors(_ arguments: [String], _ stderr: String) async throws {
        try await offThePool { () throws in
            #expect(try flags(arguments) == Run(status: 2, stdout: "", stderr: stderr))
        }
    }

    @Test(arguments: [
        (#"{"build": "#, "flags: error: <stdin>: invalid JSON: unexpected end of input at byte 10\n"),
        (String(repeating: "[", count: 200), "flags: error: <stdin>: invalid JSON: nested more than 64 levels deep at byte 64\n"),
    ])
    func badJSONContexts(_ json: String, _ stderr: String) async throws {
        try await offThePool { () throws in
            #expect(
                try flags(["eval", "examples/app.flags", "--context-json", "-"], stdin: json) == Run(status: 2, stdout: "", stderr: stderr))
        }
    }

    @Test func rulesWithErrorsExitOne() async throws {
        try await offThePool {
            let run = try flags(["eval", "-"], stdin: "flag f { enabled when }\n")
            #expect(
                run
                    == Run(
                        status: 1, stdout: "",
                        stderr: """
                            <stdin>:1:23: error: expected an expression, found '}'
                            1 | flag f { enabled when }
                              |                       ^

                            """))
        }
    }
}

@Suite struct ToolTests {
    @Test func helpAndVersion() async throws {
        try await offThePool {
            let help = try flags(["--help"])
            #expect(help.status == 0)
            #expect(help.stdout.contains("usage: flags <command> [options]"))
            #expect(help.stdout.contains("exit status: 0 success, 1 errors in the rules, 2 usage error"))
            #expect(try flags(["--version"]) == Run(status: 0, stdout: "flags 0.1.0\n", stderr: ""))
            for command in ["check", "eval"] {
                let run = try flags([command, "--help"])
                #expect(run.status == 0)
                #expect(run.stdout.hasPrefix("usage: flags \(command)"))
            }
            let none = try flags([])
            #expect(none.status == 2)
            #expect(none.stderr.contains("usage: flags <command>"))
        }
    }
}

/// An `Explanation` prints as `flags eval --explain` shows it.
@Suite struct ExplanationPrintingTests {
    @Test func printingAnExplanationShowsWhatTheCommandShows() async throws {
        try await offThePool {
            let rules = try RuleSet(contentsOf: packageRoot.appendingPathComponent("examples/app.flags"))
            let context: EvaluationContext = ["build": "beta", "userId": "42", "appVersion": "2.4"]
            let explanation = try #require(rules.explain("darkMode", in: context))
            let command = try flags([
                "eval", "examples/app.flags", "darkMode", "--explain", "-c", "build=beta", "-c", "userId=42", "-c", "appVersion=2.4",
            ])
            #expect(command.status == 0)
            #expect("\(explanation)" == command.stdout)
            #expect(!"\(explanation)".contains("Explanation("))
        }
    }
}

/// `flags eval` shows what a service would get for a mistyped context value: unknown, in
/// `--explain`, with a warning naming the attribute; an undeclared key stays a usage error.
@Suite struct EvalMistypedContextTests {
    static let rules = """
        context { groups: [string]; clientIP: ip; age: int }
        flag staff { enabled when groups contains "staff" }
        flag office { enabled when clientIP in ["10.0.0.0/8"] }

        """

    @Test func mistypedValuesAreUnknownWithAWarning() async throws {
        try await offThePool {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mistyped-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("rules.flags")
            try Self.rules.write(to: file, atomically: true, encoding: .utf8)
            let run = try flags(
                ["eval", file.path, "--context-json", "-", "--explain"], stdin: #"{"groups": ["staff", 5], "clientIP": "10.1.2"}"#)
            #expect(run.status == 0, "\(run)")
            #expect(
                run.stdout.contains(#"groups contains "staff" → unknown  (groups is ["staff", 5] (list), expected [string])"#), "\(run)")
            #expect(run.stdout.contains(#"clientIP in ["10.0.0.0/8"] → unknown  (clientIP is "10.1.2" (string), expected ip)"#))
            #expect(run.stderr.contains("flags: warning: <stdin>: attribute 'groups' expects a list of strings"), "\(run)")
            #expect(run.stderr.contains("flags: warning: <stdin>: attribute 'clientIP' expects an IPv4 or IPv6 address"))
            // The library gives the same.
            let rules = try RuleSet(source: Self.rules)
            let context = try EvaluationContext(json: #"{"groups": ["staff", 5], "clientIP": "10.1.2"}"#)
            #expect(rules.evaluate("staff", in: context).reason == .default && rules.evaluate("office", in: context).reason == .default)
            // What a person types with -c is checked as typed: a usage error with its fix.
            let typed = try flags(["eval", file.path, "staff", "-c", "age=abc"])
            #expect(typed.status == 2 && typed.stderr.contains("attribute 'age' expects an int, got 'abc'"), "\(typed)")
            // An undeclared key is read by no rule, as in the library and OFREP: a warning, with
            // "did you mean".
            let unknown = try flags(["eval", file.path, "--context-json", "-"], stdin: #"{"grups": []}"#)
            #expect(
                unknown.status == 0 && unknown.stderr.contains("unknown attribute 'grups'; did you mean 'groups'?; no rule reads it"),
                "\(unknown)")
        }
    }
}
