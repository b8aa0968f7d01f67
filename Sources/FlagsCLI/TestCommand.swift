import FlagRules
import FlagRulesTooling
import Foundation

/// `flags test FILE|DIR...`: runs the `test` declarations written next to the rules.
enum TestCommand {
    static let help = """
        usage: flags test FILE|DIR... [--quiet] [--coverage [--json]] [--min-coverage PCT]

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

        With --coverage, a report follows: for each flag, variant and value with rules, how
        many of its rules some test made decide, and each rule only tried (its condition
        never held) or never reached; then 'coverage: 30 of 41 rules matched (73.2 %)'. A
        declaration a test reads through another is reached too; @disabled ones are not
        counted.

        options:
          --quiet            print only failures and the count
          --coverage         report which rules the tests made match
          --json             with --coverage: print the report as JSON (files → covered
                             and not_covered rules with their rows, and the totals, as
                             'opa test --coverage' does); failures go to standard error
          --min-coverage PCT exit 1 when fewer than PCT percent of the rules match (80, 80%)
          --help             show this help

        exit status: 0 all passed, 1 a test failed, a file has errors, there are no tests or
        coverage is below --min-coverage, 2 usage error

        """

    static func run(_ arguments: [String]) throws(UsageError) -> Int32 {
        let parsed = try ParsedArguments(
            arguments,
            specs: [
                OptionSpec(name: "help", short: "h"), OptionSpec(name: "quiet", short: "q"), OptionSpec(name: "coverage"),
                OptionSpec(name: "json"), OptionSpec(name: "min-coverage", takesValue: true),
            ],
            command: "test")
        if parsed.has("help") {
            Terminal.write(help)
            return 0
        }
        guard !parsed.positionals.isEmpty else {
            throw UsageError(message: "'test' needs a file or directory", help: "flags test examples/")
        }
        let minimum = try parsed.value("min-coverage").map { text throws(UsageError) -> Double in
            let digits = text.hasSuffix("%") ? String(text.dropLast()) : text
            guard let p = Double(digits), p.isFinite, p >= 0, p <= 100 else {
                throw UsageError(
                    message: "--min-coverage takes a percentage from 0 to 100, got '\(text)'", help: "--min-coverage 80%")
            }
            return p
        }
        let json = parsed.has("json")
        if json, !parsed.has("coverage") {
            throw UsageError(message: "--json is the coverage report's format", help: "flags test --coverage --json examples/")
        }
        let measuring = parsed.has("coverage") || minimum != nil
        var coverage: [(file: String, coverage: TestCoverage)] = []
        /// Test lines go to standard output, or to standard error when it holds the JSON.
        func report(_ text: String) {
            if json { Terminal.writeError(text) } else { Terminal.write(text) }
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
            if measuring { coverage.append((source.name, rules.testCoverage())) }
            for result in rules.runTests() {
                total += 1
                let location = "\(source.name):\(result.test.line)"
                if result.passed {
                    passed += 1
                    if !parsed.has("quiet") && !json { Terminal.write("PASS \(location) \(quoted(result.test.name))\n") }
                    continue
                }
                failed += 1
                var out = "FAIL \(location) \(quoted(result.test.name))\n"
                for failure in result.failures { out += failure.lines(file: source.name) }
                report(out)
            }
        }
        var summary = "\(passed) passed, \(failed) failed"
        if broken > 0 { summary += "\n\(broken) file\(broken == 1 ? "" : "s") with errors" }
        report(summary + "\n")
        if total == 0, broken == 0 {
            Terminal.writeError("flags: no tests found in \(parsed.positionals.joined(separator: " "))\n")
            return 1
        }
        var belowMinimum = false
        if measuring {
            let all = coverage.map(\.coverage).reduce(TestCoverage(), +)
            if json {
                let files = JSON.object(coverage.map { ($0.file, $0.coverage.json) })
                let object = JSON.object([
                    ("files", files), ("covered_rules", .int(all.matched)), ("not_covered_rules", .int(all.counted - all.matched)),
                    ("coverage", .double((all.percent * 10).rounded() / 10)), ("passed", .int(passed)), ("failed", .int(failed)),
                ])
                Terminal.write(object.serialized(pretty: true) + "\n")
            } else if parsed.has("coverage") {
                var out = "\n"
                for (file, c) in coverage {
                    out += "\(file): \(c.matched) of \(c.counted) rules matched (\(TestCoverage.format(c.percent)))\n" + c.text
                }
                Terminal.write(out + all.summary + "\n")
            }
            if let minimum, all.percent < minimum {
                belowMinimum = true
                Terminal.writeError(
                    "flags: coverage \(TestCoverage.format(all.percent)) is below --min-coverage \(TestCoverage.format(minimum))\n")
            }
        }
        return failed > 0 || broken > 0 || belowMinimum ? 1 : 0
    }

    static func quoted(_ s: String) -> String {
        "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
