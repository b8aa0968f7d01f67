import FlagRules
import Foundation

/// `flags check FILE|DIR...`: every diagnostic of every file, exit 1 on any error.
enum CheckCommand {
    static let help = """
        usage: flags check FILE|DIR... [--format text|json|sarif] [--strict] [--expiring-within DAYS]
                           [--require-owners] [--quiet]

        Parses and checks each file (a directory: its .flags files, recursively; '-':
        standard input) and prints every error and warning as 'path:line:col: error: message' with the source line and a caret
        underline. Clean files print 'path: ok'. The lints (FR101…) warn of rules that
        can never match, rollouts out of range, unused segments and attributes and more;
        '# flags:ignore FR104' silences one on its line (alone on a line: the next),
        '# flags:ignore-file FR104' in the whole file.

        options:
          --format F  'text' (default); 'json': one array of objects with file, line,
                      column, endLine, endColumn, severity, code, message, help and notes;
                      'sarif': a SARIF 2.1.0 log, for code-scanning views
          --strict    report warnings as errors (exit 1 on any)
          --expiring-within DAYS
                      warn of @expires dates DAYS days ahead or fewer (14 or 14d)
          --require-owners
                      warn of flags, variants and values without @owner
          --quiet     print only diagnostics
          --help      show this help

        exit status: 0 no errors (warnings allowed), 1 errors found, 2 usage error

        """

    static func run(_ arguments: [String]) throws(UsageError) -> Int32 {
        let parsed = try ParsedArguments(
            arguments,
            specs: [
                OptionSpec(name: "help", short: "h"), OptionSpec(name: "quiet", short: "q"), OptionSpec(name: "format", takesValue: true),
                OptionSpec(name: "strict"), OptionSpec(name: "expiring-within", takesValue: true), OptionSpec(name: "require-owners"),
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
        var failed = false
        var json: [JSON] = []
        var found: [(file: String, diagnostic: Diagnostic)] = []
        for path in try Terminal.flagsFiles(parsed.positionals) {
            let bytes = try Terminal.read(path)
            let source = SourceText(bytes: bytes, name: path == "-" ? "<stdin>" : path)
            if format != "text" {
                let diagnostics: [Diagnostic]
                do {
                    diagnostics = warnings(try RuleSet(source: source, today: Date()))
                    if strict, !diagnostics.isEmpty { failed = true }
                } catch {
                    diagnostics = error.diagnostics
                    failed = true
                }
                json += diagnostics.map { $0.json(file: source.name) }
                found += diagnostics.map { (source.name, $0) }
                continue
            }
            do {
                let rules = try RuleSet(source: source, today: Date())
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
}
