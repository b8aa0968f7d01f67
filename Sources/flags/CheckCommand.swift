import Foundation
import FlagRules

/// `flags check FILE...`: every diagnostic of every file, exit 1 on any error.
enum CheckCommand {
    static let help = """
        usage: flags check FILE... [--quiet]

        Parses and checks each file (or '-' for standard input) and prints every error and
        warning as 'path:line:col: error: message' with the source line and a caret
        underline. Clean files print 'path: ok'.

        options:
          --quiet     print only diagnostics
          --help      show this help

        exit status: 0 no errors (warnings allowed), 1 errors found, 2 usage error

        """

    static func run(_ arguments: [String]) throws(UsageError) -> Int32 {
        let parsed = try ParsedArguments(arguments, specs: [OptionSpec(name: "help", short: "h"), OptionSpec(name: "quiet", short: "q")],
                                         command: "check")
        if parsed.has("help") {
            Terminal.write(help)
            return 0
        }
        guard !parsed.positionals.isEmpty else {
            throw UsageError(message: "'check' needs at least one file", help: "flags check examples/app.flags")
        }
        let renderer = DiagnosticRenderer(colored: Terminal.stderrWantsColor)
        var failed = false
        for path in parsed.positionals {
            let bytes = try Terminal.read(path)
            let source = SourceText(bytes: bytes, name: path == "-" ? "<stdin>" : path)
            do {
                let rules = try RuleSet(source: source, today: Date())
                if !rules.warnings.isEmpty {
                    Terminal.writeError(renderer.render(rules.warnings, in: source))
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
        return failed ? 1 : 0
    }
}
