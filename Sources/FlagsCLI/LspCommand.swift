import FlagRules
import FlagRulesLanguageServer
import Foundation

/// `flags lsp`: the language server on standard input and output.
enum LspCommand {
    static let help = """
        usage: flags lsp

        Serves the Language Server Protocol on standard input and output (JSON-RPC with
        Content-Length framing), for editors: diagnostics with quick fixes, hover, completion,
        go to definition, references, rename, the outline, formatting, semantic tokens, a
        "run test" lens above each test, the value of each declaration for the context in a
        '.flags-context.json' beside the file, and the value of each ramp now.
        Diagnostics are published once the editor has sent nothing for 50 ms.

        options:
          --help   show this help

        exit status: 0 after 'shutdown' and 'exit', 1 when the input ends or breaks first,
        2 usage error

        """

    static func run(_ arguments: [String]) throws(UsageError) -> Int32 {
        let parsed = try ParsedArguments(arguments, specs: [OptionSpec(name: "help", short: "h")], command: "lsp")
        if parsed.has("help") {
            Terminal.write(help)
            return 0
        }
        if let extra = parsed.positionals.first {
            throw UsageError(message: "'lsp' takes no arguments, got '\(extra)'", help: "an editor runs 'flags lsp'")
        }
        return serve()
    }

    static func serve() -> Int32 {
        FlagsLanguageServer.run { problem in Terminal.writeError("flags lsp: \(problem)\n") }
    }
}
