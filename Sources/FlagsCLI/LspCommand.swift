import FlagRules
import FlagRulesLanguageServer
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

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

    /// How long the server waits for more input before publishing diagnostics.
    static let debounceMilliseconds: Int32 = 50

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
        let server = LanguageServer()
        var reader = MessageReader()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        func send(_ messages: [JSON]) {
            guard !messages.isEmpty else { return }
            var bytes: [UInt8] = []
            for m in messages { bytes += MessageReader.frame(m) }
            FileHandle.standardOutput.write(Data(bytes))
        }
        while true {
            do {
                while let message = try reader.next() {
                    send(server.handle(message))
                    if case .exited(let code) = server.state { return code }
                }
            } catch {
                Terminal.writeError("flags lsp: \(error.message)\n")
                return 1
            }
            if server.hasPendingDiagnostics {
                var pending = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
                if poll(&pending, 1, debounceMilliseconds) == 0 {
                    send(server.flushClosed() + server.flush())
                    continue
                }
            }
            let n = read(0, &buffer, buffer.count)
            if n <= 0 { return 1 }
            reader.append(buffer[0..<n])
        }
    }
}
