import FlagRules
import Foundation

/// `flags test FILE|DIR...`: runs the `test` declarations written next to the rules.
enum TestCommand {
    static let help = """
        usage: flags test FILE|DIR... [--quiet]

        Runs every 'test "…" { given { … } expect … }' declaration in the files (directories
        are searched for .flags files). Prints one line per test, PASS or FAIL with its
        location; a failure shows the expected and actual resolution and how the actual one
        came about. The last line counts them: '12 passed, 1 failed'.

          test "beta testers in the US are split" {
            given { build: beta, userId: "user-3", country: "US" }
            expect checkout == twoStep
            expect checkout.reason == SPLIT
            expect darkMode                      # a flag is on; 'expect not darkMode': off
          }

        options:
          --quiet     print only failures and the count
          --help      show this help

        exit status: 0 all passed, 1 a test failed, a file has errors or there are no tests,
        2 usage error

        """

    static func run(_ arguments: [String]) throws(UsageError) -> Int32 {
        let parsed = try ParsedArguments(
            arguments, specs: [OptionSpec(name: "help", short: "h"), OptionSpec(name: "quiet", short: "q")],
            command: "test")
        if parsed.has("help") {
            Terminal.write(help)
            return 0
        }
        guard !parsed.positionals.isEmpty else {
            throw UsageError(message: "'test' needs a file or directory", help: "flags test examples/")
        }
        let files = try Terminal.flagsFiles(parsed.positionals)
        let renderer = DiagnosticRenderer(colored: Terminal.stderrWantsColor)
        var passed = 0, failed = 0, broken = 0, total = 0
        for path in files {
            let source = SourceText(bytes: try Terminal.read(path), name: path == "-" ? "<stdin>" : path)
            let rules: RuleSet
            do {
                rules = try RuleSet(source: source, today: Date())
            } catch {
                Terminal.writeError(renderer.render(error.diagnostics, in: source))
                broken += 1
                continue
            }
            for result in rules.runTests() {
                total += 1
                let location = "\(source.name):\(result.test.line)"
                if result.passed {
                    passed += 1
                    if !parsed.has("quiet") { Terminal.write("PASS \(location) \(quoted(result.test.name))\n") }
                    continue
                }
                failed += 1
                var out = "FAIL \(location) \(quoted(result.test.name))\n"
                for failure in result.failures {
                    let e = failure.expectation
                    out += "  \(source.name):\(e.line): \(e.text)\n"
                    var expected = e.expected.description
                    if failure.actual.variant != nil, case .value(.string(let name)) = e.expected { expected = name }
                    out += "    expected: \(e.negated ? "not " : "")\(expected)\n"
                    out += "    actual:   \(failure.actual.summary(name: e.subject))\n"
                    for line in failure.explanation.text.split(separator: "\n").dropFirst() {
                        out += "    " + line + "\n"
                    }
                }
                Terminal.write(out)
            }
        }
        var summary = "\(passed) passed, \(failed) failed"
        if broken > 0 { summary += "\n\(broken) file\(broken == 1 ? "" : "s") with errors" }
        Terminal.write(summary + "\n")
        if total == 0, broken == 0 {
            Terminal.writeError("flags: no tests found in \(parsed.positionals.joined(separator: " "))\n")
            return 1
        }
        return failed > 0 || broken > 0 ? 1 : 0
    }

    static func quoted(_ s: String) -> String {
        "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
