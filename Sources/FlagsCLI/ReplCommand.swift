import FlagRules
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// `flags repl [FILE]`: an interactive session on a terminal, a scriptable one on a pipe.
enum ReplCommand {
    static let help = """
        usage: flags repl [FILE]

        Type an expression or a declaration's name and see its value. Commands: :set key=value,
        :unset key, :context, :load FILE, :reload, :explain EXPR, :list, :help, :quit.

        On a terminal: a prompt, line editing (arrows, Home/End, Ctrl-A/E/U/K/W), history
        (up/down, kept across sessions in ~/.flags_history, or the file FLAGS_HISTORY
        names; the last 1,000 lines), Tab completion of names, commands and the cases an
        enum or a variant expects (after ==, !=, in [ and :set name=), and coloured
        diagnostics (not with NO_COLOR); Ctrl-C cancels the line, Ctrl-D quits. With piped
        input it reads line by line and prints only results (stdout) and errors (stderr,
        each naming the line it came from, as <repl>:3:14), so it can be scripted; it keeps
        no history then.

        exit status: 0 at the end of input or :quit, 1 a piped line failed, 2 usage error
        (a FILE that does not load)

        """

    static func run(_ arguments: [String]) throws(UsageError) -> Int32 {
        let parsed = try ParsedArguments(arguments, specs: [OptionSpec(name: "help", short: "h")], command: "repl")
        if parsed.has("help") {
            Terminal.write(help)
            return 0
        }
        guard parsed.positionals.count <= 1 else { throw UsageError(message: "'repl' takes at most one file") }
        var session = try ReplSession(path: parsed.positionals.first)
        if isatty(0) == 1 && isatty(1) == 1 {
            session.colored = Terminal.stderrWantsColor
            interactive(&session)
            return 0
        }
        while let line = readLine(strippingNewline: true) {
            let out = session.handle(line)
            if !out.stdout.isEmpty { Terminal.write(out.stdout) }
            if !out.stderr.isEmpty { Terminal.writeError(out.stderr) }
            if out.quit { break }
        }
        return session.anyFailed ? 1 : 0
    }

    /// Where the history is kept: `FLAGS_HISTORY`, else `~/.flags_history`.
    static var historyFile: URL? {
        if let path = ProcessInfo.processInfo.environment["FLAGS_HISTORY"], !path.isEmpty { return URL(fileURLWithPath: path) }
        guard let home = ProcessInfo.processInfo.environment["HOME"], !home.isEmpty else { return nil }
        return URL(fileURLWithPath: home).appendingPathComponent(".flags_history")
    }

    /// The most history lines kept.
    static let historyLimit = 1_000

    static func loadHistory() -> [String] {
        guard let url = historyFile, let data = try? Data(contentsOf: url), data.count <= 1 << 20 else { return [] }
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
        return Array(lines.suffix(historyLimit))
    }

    /// Writes the history (its last `historyLimit` lines) atomically; a failure to write is
    /// not an error of the session.
    static func saveHistory(_ history: [String]) {
        guard let url = historyFile else { return }
        let text = history.suffix(historyLimit).joined(separator: "\n") + "\n"
        try? Data(text.utf8).write(to: url, options: .atomic)
    }

    static let prompt = "flags> "

    static func interactive(_ session: inout ReplSession) {
        var original = termios()
        tcgetattr(0, &original)
        var raw = original
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO | ISIG | IEXTEN)
        raw.c_iflag &= ~tcflag_t(ICRNL | IXON)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        tcsetattr(0, TCSAFLUSH, &raw)
        defer { tcsetattr(0, TCSAFLUSH, &original) }

        var editor = LineEditor(history: loadHistory())
        defer { saveHistory(editor.history) }
        var decoder = KeyDecoder()
        Terminal.write(ReplSession.intro(session) + prompt)
        var byte: UInt8 = 0
        loop: while read(0, &byte, 1) == 1 {
            guard let key = decoder.feed(byte) else { continue }
            switch editor.handle(key) {
            case .none:
                redraw(editor)
            case .submit(let line):
                Terminal.write("\n")
                let out = session.handle(line)
                Terminal.write(out.stdout)
                Terminal.writeError(out.stderr)
                if out.quit { break loop }
                Terminal.write(prompt)
            case .cancel:
                Terminal.write("^C\n" + prompt)
            case .quit:
                Terminal.write("\n")
                break loop
            case .complete:
                let matches = editor.complete(from: session.completions(before: editor.textBeforeCursor))
                if !matches.isEmpty {
                    Terminal.write("\n" + matches.joined(separator: "  ") + "\n")
                }
                redraw(editor)
            case .clearScreen:
                Terminal.write("\u{1B}[H\u{1B}[2J")
                redraw(editor)
            }
        }
    }

    /// Rewrites the prompt line and puts the cursor where the editor has it.
    static func redraw(_ editor: LineEditor) {
        var s = "\r" + prompt + editor.line + "\u{1B}[K"
        let back = editor.buffer.count - editor.cursor
        if back > 0 { s += "\u{1B}[\(back)D" }
        Terminal.write(s)
    }
}

extension ReplSession {
    static func intro(_ session: ReplSession) -> String {
        let loaded = session.path.map { "rules from \($0), " } ?? ""
        return "flags repl — \(loaded):help for commands, Ctrl-D to quit\n"
    }
}
