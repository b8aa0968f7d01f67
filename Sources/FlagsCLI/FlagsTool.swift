import FlagRules
import Foundation

/// The `flags` command: dispatches to one command per file.
package enum FlagsTool {
    static let version = "0.1.0"

    struct Command: Sendable {
        let name: String
        let summary: String
        let run: @Sendable ([String]) throws(UsageError) -> Int32
    }

    static let commands: [Command] = [
        Command(name: "check", summary: "report every error and warning in .flags files", run: CheckCommand.run),
        Command(name: "eval", summary: "resolve declarations against a context", run: EvalCommand.run),
        Command(name: "test", summary: "run the tests written next to the rules", run: TestCommand.run),
        Command(name: "diff", summary: "measure how a rules change moves resolutions", run: DiffCommand.run),
        Command(name: "list", summary: "list every declaration with its metadata", run: ListCommand.run),
        Command(name: "refs", summary: "find where code reads each declaration", run: RefsCommand.run),
        Command(name: "stale", summary: "list the declarations that are done, with the edit that removes each", run: StaleCommand.run),
        Command(name: "repl", summary: "evaluate expressions interactively", run: ReplCommand.run),
        Command(name: "fmt", summary: "print files in the canonical layout (-w to rewrite them)", run: FmtCommand.run),
        Command(name: "serve", summary: "serve the rules over OpenFeature's OFREP (HTTP)", run: ServeCommand.run),
        Command(name: "lsp", summary: "serve the Language Server Protocol to an editor", run: LspCommand.run),
        Command(name: "generate", summary: "write typed Swift keys for the declarations", run: GenerateCommand.run),
        Command(name: "import", summary: "turn another flag system's file into a .flags file", run: ImportCommand.run),
    ]

    static var help: String {
        """
        flags — check and evaluate .flags feature-flag rules

        usage: flags <command> [options]

        commands:
        \(commands.map { "  " + $0.name.padding(toLength: 10, withPad: " ", startingAt: 0) + $0.summary }.joined(separator: "\n"))

        options:
          --help       show this help (or 'flags <command> --help')
          --version    print the version

        exit status: 0 success, 1 errors in the rules, 2 usage error

        """
    }

    /// Runs the tool with the arguments after the program name; returns the exit status.
    package static func run(_ arguments: [String]) -> Int32 {
        guard let first = arguments.first else {
            Terminal.writeError(help)
            return 2
        }
        if first == "--help" || first == "-h" || first == "help" {
            Terminal.write(help)
            return 0
        }
        if first == "--version" {
            Terminal.write("flags \(version)\n")
            return 0
        }
        do throws(UsageError) {
            guard let command = commands.first(where: { $0.name == first }) else {
                let suggestion = Suggestions.closest(to: first, in: commands.map(\.name)).map { "; did you mean '\($0)'?" } ?? ""
                throw UsageError(message: "unknown command '\(first)'" + suggestion, help: "run 'flags --help' for the commands")
            }
            return try command.run(Array(arguments.dropFirst()))
        } catch {
            Terminal.writeError("flags: error: \(error.message)\n")
            if let help = error.help { Terminal.writeError("help: \(help)\n") }
            return 2
        }
    }
}
