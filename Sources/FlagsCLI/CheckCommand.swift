import FlagRules
import FlagRulesTooling
import Foundation

/// `flags check FILE|DIR...`: every diagnostic of every file, exit 1 on any error.
enum CheckCommand {
    static let help = """
        usage: flags check FILE|DIR... [--format text|json|sarif] [--strict] [--expiring-within DAYS]
                           [--require-owners] [--fix] [--quiet]

        Parses and checks each file (a directory: its .flags files, recursively; '-':
        standard input) and prints every error and warning as 'path:line:col: error: message' with the source line and a caret
        underline. Clean files print 'path: ok'. The lints (FR101…) warn of rules that
        can never match, rollouts out of range, unused segments and attributes and more;
        '# flags:ignore FR104' silences one on its line (alone on a line: the next),
        '# flags:ignore-file FR104' in the whole file.

        options:
          --format F  'text' (default); 'json': one array of objects with file, line,
                      column, endLine, endColumn, severity, code, message, help, notes
                      and fixes (each a message and edits: a range and its replacement);
                      'sarif': a SARIF 2.1.0 log, for code-scanning views
          --strict    report warnings as errors (exit 1 on any)
          --expiring-within DAYS
                      warn of @expires dates DAYS days ahead or fewer (14 or 14d)
          --require-owners
                      warn of flags, variants and values without @owner
          --fix       rewrite the files with the fixes of the warnings that have exactly
                      one (a bare rollout number gets its '%', an ended ramp becomes its
                      value, an unreachable rule or unused segment alone on its lines is
                      removed), then report what is left; 'fixed N problems in FILE'.
                      A fix that would add a warning or fail a test of the file that
                      passed is not applied: it is named on stderr, and the check fails
          --quiet     print only diagnostics
          --help      show this help

        exit status: 0 no errors (warnings allowed), 1 errors found or a fix refused,
        2 usage error

        """

    static func run(_ arguments: [String]) throws(UsageError) -> Int32 {
        let parsed = try ParsedArguments(
            arguments,
            specs: [
                OptionSpec(name: "help", short: "h"), OptionSpec(name: "quiet", short: "q"), OptionSpec(name: "format", takesValue: true),
                OptionSpec(name: "strict"), OptionSpec(name: "expiring-within", takesValue: true), OptionSpec(name: "require-owners"),
                OptionSpec(name: "fix"),
            ], command: "check")
        if parsed.has("help") {
            Terminal.write(help)
            return 0
        }
        guard !parsed.positionals.isEmpty else {
            throw UsageError(message: "'check' needs at least one file", help: "flags check examples/app.flags")
        }
        let format = parsed.value("format") ?? "text"
        guard format == "text" || format == "json" || format == "sarif" else {
            let suggestion = Suggestions.closest(to: format, in: ["text", "json", "sarif"]).map { "; did you mean '\($0)'?" } ?? ""
            throw UsageError(message: "unknown format '\(format)'" + suggestion, help: "--format takes text, json or sarif")
        }
        let renderer = DiagnosticRenderer(colored: Terminal.stderrWantsColor)
        let strict = parsed.has("strict")
        var options = LintOptions(requiresOwners: parsed.has("require-owners"))
        if let text = parsed.value("expiring-within") {
            let digits = text.hasSuffix("d") ? String(text.dropLast()) : text
            guard let days = Int(digits), days >= 0, days <= 36_500, digits.allSatisfy(\.isASCII) else {
                throw UsageError(
                    message: "--expiring-within takes a number of days, got '\(text)'", help: "write --expiring-within 14 (or 14d)")
            }
            options.expiringWithinDays = days
        }
        /// The checker's warnings and the lints', in file order; errors with --strict.
        func warnings(_ rules: RuleSet) -> [Diagnostic] {
            let all = (rules.warnings + rules.lint(options)).sorted { $0.range.start.offset < $1.range.start.offset }
            guard strict else { return all }
            return all.map { d in
                var promoted = d
                promoted.severity = .error
                return promoted
            }
        }
        // A fix that would change what the file's tests pin is refused, and the check fails.
        var fixRefused = false
        if parsed.has("fix") {
            if parsed.positionals.contains("-") {
                throw UsageError(message: "--fix rewrites files; it cannot fix standard input", help: "flags check --fix rules.flags")
            }
            for path in try Terminal.flagsFiles(parsed.positionals) {
                let (fixed, refused) = try fix(path, options)
                if fixed > 0 { Terminal.write("fixed \(fixed) problem\(fixed == 1 ? "" : "s") in \(path)\n") }
                for line in refused { Terminal.writeError(line + "\n") }
                if !refused.isEmpty { fixRefused = true }
            }
        }
        var failed = fixRefused
        var json: [JSON] = []
        var found: [(file: String, diagnostic: Diagnostic)] = []
        for path in try Terminal.flagsFiles(parsed.positionals) {
            let bytes = try Terminal.read(path)
            let source = SourceText(bytes: bytes, name: path == "-" ? "<stdin>" : path)
            if format != "text" {
                let diagnostics: [Diagnostic]
                do {
                    let rules = try RuleSet(source: source, today: Date())
                    if let nothing = rules.declaresNothing {
                        diagnostics = [nothing]
                        failed = true
                    } else {
                        diagnostics = warnings(rules)
                        if strict, !diagnostics.isEmpty { failed = true }
                    }
                } catch {
                    diagnostics = error.diagnostics
                    failed = true
                }
                json += diagnostics.map { $0.json(file: source.name) }
                found += diagnostics.map { (source.name, $0) }
                continue
            }
            do throws(RuleSetError) {
                let rules = try RuleSet(source: source, today: Date())
                if let nothing = rules.declaresNothing {
                    throw .invalid(source: source, diagnostics: [nothing])
                }
                let found = warnings(rules)
                if !found.isEmpty {
                    Terminal.writeError(renderer.render(found, in: source))
                }
                if strict, !found.isEmpty {
                    failed = true
                    Terminal.writeError("\(source.name): \(found.count) error\(found.count == 1 ? "" : "s") (warnings, with --strict)\n")
                    continue
                }
                if !parsed.has("quiet") {
                    let n = rules.declarations.count
                    Terminal.write("\(source.name): ok (\(n) declaration\(n == 1 ? "" : "s"))\n")
                }
            } catch {
                failed = true
                Terminal.writeError(renderer.render(error.diagnostics, in: source))
                let count = error.errors.count
                Terminal.writeError("\(source.name): \(count) error\(count == 1 ? "" : "s")\n")
            }
        }
        if format == "json" { Terminal.write(JSON.array(json).serialized(pretty: true) + "\n") }
        if format == "sarif" { Terminal.write(SARIF.log(found).serialized(pretty: true) + "\n") }
        return failed ? 1 : 0
    }

    /// Applies the fixes of the warnings with exactly one, one at a time, each only if it
    /// keeps the file's meaning (``FixSafety``: it loads, warns of nothing new and fails no
    /// test that passed), again until none is left (a fix can reveal another; five rounds
    /// at most). Returns how many were applied and the refused ones, each as
    /// `file:line:col: CODE's fix not applied: reason`.
    static func fix(_ path: String, _ options: LintOptions) throws(UsageError) -> (applied: Int, refused: [String]) {
        var total = 0
        var refused: [String: String] = [:]
        for _ in 0..<5 {
            var source = SourceText(bytes: try Terminal.read(path), name: path)
            guard var rules = try? RuleSet(source: source, today: Date()) else { break }
            var applied = 0
            while let (d, fix) = (rules.warnings + rules.lint(options)).lazy.compactMap({ d in
                d.fixIts.count == 1 && refused[d.code + d.message] == nil ? (d, d.fixIts[0]) : nil
            }).first {
                if let refusal = FixSafety.refusal(of: fix, for: d, in: rules, options: options) {
                    let at = "\(path):\(d.range.start.line):\(d.range.start.column)"
                    refused[d.code + d.message] = "\(at): \(d.code)'s fix not applied: \(refusal)"
                    continue
                }
                source = SourceText(bytes: FixApplier.apply([fix], to: source).bytes, name: path)
                guard let next = try? RuleSet(source: source, today: Date()) else { break }
                rules = next
                applied += 1
            }
            guard applied > 0 else { break }
            do {
                try Data(source.bytes).write(to: URL(fileURLWithPath: path), options: .atomic)
            } catch {
                throw UsageError(message: "cannot write \(path): \(error.localizedDescription)")
            }
            total += applied
        }
        return (total, refused.values.sorted())
    }
}
