import FlagRules
import FlagRulesTooling
import Foundation

/// `flags fmt [--check] [-w] FILE|DIR...|-`: the one canonical layout.
enum FmtCommand {
    static let help = """
        usage: flags fmt [--check] [-w] FILE|DIR...|-

        Prints each file (a directory: its .flags files, recursively) in the canonical layout: aligned context blocks, one rule per line,
        normalised spacing, operators and literals, every comment kept. There are no options
        for the layout.

        options:
          -w, --write   rewrite the files in place instead of printing them
          --check       print nothing but the names of files that are not formatted; exit 1
                        if there are any
          --help        show this help

        exit status: 0 formatted (or already formatted with --check), 1 a file would change
        (--check) or does not parse, 2 usage error

        """

    static func run(_ arguments: [String]) throws(UsageError) -> Int32 {
        let parsed = try ParsedArguments(
            arguments,
            specs: [
                OptionSpec(name: "help", short: "h"), OptionSpec(name: "check"), OptionSpec(name: "write", short: "w"),
            ], command: "fmt")
        if parsed.has("help") {
            Terminal.write(help)
            return 0
        }
        guard !parsed.positionals.isEmpty else {
            throw UsageError(message: "'fmt' needs at least one file ('-' for standard input)", help: "flags fmt -w examples/app.flags")
        }
        if parsed.has("write"), parsed.positionals.contains("-") {
            throw UsageError(message: "-w cannot rewrite standard input")
        }
        let renderer = DiagnosticRenderer(colored: Terminal.stderrWantsColor)
        var status: Int32 = 0
        for path in try Terminal.flagsFiles(parsed.positionals) {
            let bytes = try Terminal.read(path)
            let source = SourceText(bytes: bytes, name: path == "-" ? "<stdin>" : path)
            let formatted: String
            do {
                formatted = try FlagsFormatter.format(source)
            } catch {
                Terminal.writeError(renderer.render(error.diagnostics, in: source))
                status = 1
                continue
            }
            let changed = Array(formatted.utf8) != bytes
            if parsed.has("check") {
                if changed {
                    Terminal.write(source.name + "\n")
                    status = 1
                }
            } else if parsed.has("write") {
                if changed {
                    do {
                        try formatted.write(toFile: path, atomically: true, encoding: .utf8)
                    } catch {
                        throw UsageError(message: "cannot write \(path): \(error.localizedDescription)")
                    }
                }
            } else {
                Terminal.write(formatted)
            }
        }
        return status
    }
}
