import FlagRules
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The Language Server Protocol server for `.flags` files, on a pair of file descriptors
/// (JSON-RPC with `Content-Length` framing): what `flags lsp` runs, for an editor plugin or
/// a tool that hosts the server in its own process.
///
/// It answers diagnostics with quick fixes, hover, completion, go to definition,
/// references, rename, the outline, formatting, semantic tokens and a "run test" lens, and
/// publishes a document's diagnostics once the client has sent nothing for
/// ``debounce``.
public enum FlagsLanguageServer {
    /// How long the server waits for more input before it publishes diagnostics.
    public static let debounce: Duration = .milliseconds(50)

    /// Serves until the client sends `exit` or the input ends.
    ///
    /// - Parameters:
    ///   - input: The descriptor messages are read from (standard input by default).
    ///   - output: Where messages are written (standard output by default).
    ///   - problem: Called with the reason when the input breaks the protocol's framing.
    /// - Returns: `0` after `shutdown` then `exit`, `1` when the input ends or breaks
    ///   first (as the protocol asks of an `exit` without `shutdown`).
    public static func run(
        input: Int32 = 0, output: FileHandle = .standardOutput, problem: (String) -> Void = { _ in }
    ) -> Int32 {
        let server = LanguageServer()
        var reader = MessageReader()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let wait = Int32(debounce.components.seconds * 1000 + debounce.components.attoseconds / 1_000_000_000_000_000)
        func send(_ messages: [JSON]) {
            guard !messages.isEmpty else { return }
            var bytes: [UInt8] = []
            for m in messages { bytes += MessageReader.frame(m) }
            output.write(Data(bytes))
        }
        while true {
            do {
                while let message = try reader.next() {
                    send(server.handle(message))
                    if case .exited(let code) = server.state { return code }
                }
            } catch {
                problem(error.message)
                return 1
            }
            if server.hasPendingDiagnostics {
                var pending = pollfd(fd: input, events: Int16(POLLIN), revents: 0)
                if poll(&pending, 1, wait) == 0 {
                    send(server.flushClosed() + server.flush())
                    continue
                }
            }
            let n = read(input, &buffer, buffer.count)
            if n <= 0 { return 1 }
            reader.append(buffer[0..<n])
        }
    }
}
