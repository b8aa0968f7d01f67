import Foundation
import Testing

@testable import FlagsCLI

#if canImport(Glibc)
    import Glibc
#endif

@Suite(.serialized) struct ReplPipeTests {
    @Test func scriptedThroughAPipe() async throws {
        try await offThePool {
            let script = """
                darkMode
                :set build=alpha
                :set userId=42
                darkMode
                build == alpha and rollout(userId, "darkMode") < 20%
                country != "US"
                :context
                :explain internalBuilds
                :set build=prod
                :sett x
                userid
                :unset build
                :unset build
                :context
                :quit
                never reached

                """
            let run = try flags(["repl", "examples/app.flags"], stdin: script)
            // A line failed: status 1; each error names the line it came from.
            #expect(
                run
                    == Run(
                        status: 1,
                        stdout: """
                            darkMode = false  (DEFAULT)
                            darkMode = true  (TARGETING_MATCH, rule 1, line 25)
                            true
                            unknown (country is absent)
                            build = "alpha"
                            userId = "42"
                            internalBuilds = true  (TARGETING_MATCH)
                              build in [debug, alpha] → true
                                build → "alpha"
                            userId = "42"

                            """,
                        stderr: """
                            <repl>:9: error: attribute 'build' expects one of debug, alpha, beta, release, got 'prod'
                            <repl>:10: error: unknown command ':sett'; did you mean ':set'?
                            <repl>:11:1: error: unknown name 'userid'; did you mean 'userId'?
                            11 | userid
                               | ^~~~~~
                            <repl>:13: error: 'build' is not set

                            """))
        }
    }

    @Test func withoutAFileAndWithLoads() async throws {
        try await offThePool {
            let run = try flags(
                ["repl"],
                stdin: """
                    x > 1
                    :set x=2
                    x > 1
                    :reload
                    :load examples/service.flags
                    :list
                    :load nope.flags

                    """)
            #expect(run.status == 1)
            #expect(
                run.stdout.hasPrefix(
                    "unknown (x is absent)\ntrue\nloaded examples/service.flags (7 declarations)\nbigCustomers     segment  bool  (line 16)\n"
                ))
            #expect(run.stderr == "<repl>:4: error: no file is loaded; use :load FILE\n<repl>:7: error: no such file: nope.flags\n")
            let broken = try flags(["repl", "nope.flags"], stdin: "")
            #expect(
                broken
                    == Run(
                        status: 2, stdout: "",
                        stderr: "error: no such file: nope.flags\nflags: error: cannot start the REPL with nope.flags\n")
            )
        }
    }
}

/// A `flags repl` running on a pseudo-terminal, driven by keystrokes.
final class PseudoTerminalSession {
    let master: Int32
    let process = Process()
    var output = ""

    /// A session of `flags` with `arguments`, its history kept in `history` (a new
    /// temporary file unless given).
    init(_ arguments: [String], noColor: Bool = true, history: URL? = nil) throws {
        // posix_openpt and friends are not in Swift's Glibc module; look them up in libc.
        typealias OpenFunction = @convention(c) (Int32) -> Int32
        typealias FDFunction = @convention(c) (Int32) -> Int32
        typealias NameFunction = @convention(c) (Int32) -> UnsafeMutablePointer<CChar>?
        let libc = dlopen(nil, RTLD_NOW)
        guard let openSymbol = dlsym(libc, "posix_openpt"), let grantSymbol = dlsym(libc, "grantpt"),
            let unlockSymbol = dlsym(libc, "unlockpt"), let nameSymbol = dlsym(libc, "ptsname")
        else {
            throw POSIXError(.ENOSYS)
        }
        master = unsafeBitCast(openSymbol, to: OpenFunction.self)(O_RDWR | O_NOCTTY)
        guard master >= 0, unsafeBitCast(grantSymbol, to: FDFunction.self)(master) == 0,
            unsafeBitCast(unlockSymbol, to: FDFunction.self)(master) == 0,
            let name = unsafeBitCast(nameSymbol, to: NameFunction.self)(master)
        else {
            throw POSIXError(.ENOTTY)
        }
        let slave = open(String(cString: name), O_RDWR | O_NOCTTY)
        guard slave >= 0 else { throw POSIXError(.ENOTTY) }
        let handle = FileHandle(fileDescriptor: slave, closeOnDealloc: true)
        process.executableURL = flagsBinary
        process.arguments = arguments
        process.currentDirectoryURL = packageRoot
        var env = ProcessInfo.processInfo.environment
        if noColor { env["NO_COLOR"] = "1" } else { env["NO_COLOR"] = nil }
        env["TERM"] = "xterm"
        env["FLAGS_HISTORY"] =
            (history
            ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("flags-history-\(UUID().uuidString)")).path
        process.environment = env
        process.standardInput = handle
        process.standardOutput = handle
        process.standardError = handle
        try spawn(process)
        try handle.close()
    }

    deinit {
        if process.isRunning { process.terminate() }
        close(master)
    }

    func send(_ keys: String) {
        let bytes = Array(keys.utf8)
        _ = bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
    }

    /// Reads until `text` has appeared after `since`, or 10 seconds pass.
    @discardableResult
    func waitFor(_ text: String, since: String.Index? = nil) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date() < deadline {
            if output[(since ?? output.startIndex)...].contains(text) { return true }
            var fds = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            if poll(&fds, 1, 100) > 0 {
                let n = read(master, &buffer, buffer.count)
                if n <= 0 { break }
                output += String(decoding: buffer[0..<n], as: UTF8.self)
            }
        }
        return output[(since ?? output.startIndex)...].contains(text)
    }

    /// Waits for the process to end; its status, or nil after 10 seconds.
    func exitStatus() -> Int32? {
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning, Date() < deadline {
            waitFor("\u{0}")  // drain output
        }
        return process.isRunning ? nil : process.terminationStatus
    }
}

@Suite(.serialized) struct ReplTerminalTests {
    @Test func completionHistoryAndControlKeys() throws {
        let t = try PseudoTerminalSession(["repl", "examples/app.flags"])
        #expect(t.waitFor("flags> "))
        // Tab completes a declaration's name; Enter evaluates it.
        var mark = t.output.endIndex
        t.send("darkM\t")
        #expect(t.waitFor("darkMode", since: mark))
        mark = t.output.endIndex
        t.send("\r")
        #expect(t.waitFor("darkMode = false  (DEFAULT)", since: mark))
        // Commands complete too.
        mark = t.output.endIndex
        t.send(":se\tbuild=alpha\r")
        #expect(t.waitFor(":set build=alpha", since: mark))
        // Two ambiguous candidates are listed.
        mark = t.output.endIndex
        t.send("new\t")
        #expect(t.waitFor("newMediaPicker", since: mark))
        t.send("\u{15}")  // Ctrl-U clears the line
        // Up twice recalls 'darkMode' from history; it now resolves on alpha.
        mark = t.output.endIndex
        t.send("\u{1B}[A\u{1B}[A\r")
        #expect(t.waitFor("darkMode = true  (TARGETING_MATCH, rule 1, line 25)", since: mark))
        // Line editing: type, move left, insert.
        mark = t.output.endIndex
        t.send("buid == alpha\u{1B}[D\u{1B}[D\u{1B}[D\u{1B}[D\u{1B}[D\u{1B}[D\u{1B}[D\u{1B}[D\u{1B}[D\u{1B}[Dl\r")
        #expect(t.waitFor("true", since: mark))
        // Ctrl-C cancels the line being typed.
        mark = t.output.endIndex
        t.send("garbage\u{3}")
        #expect(t.waitFor("^C", since: mark))
        mark = t.output.endIndex
        t.send("1 < 2\r")
        #expect(t.waitFor("true", since: mark))
        #expect(!t.output[mark...].contains("garbage"))
        // Ctrl-D on an empty line quits with status 0.
        t.send("\u{4}")
        #expect(t.exitStatus() == 0)
    }
}

/// The REPL's own conveniences: errors naming their input line, a piped session's status,
/// completion of the cases an enum or a variant expects, history kept across sessions,
/// coloured diagnostics on a terminal.
@Suite(.serialized) struct ReplConvenienceTests {
    @Test func aPipedSessionWithNoFailureExitsZero() async throws {
        try await offThePool {
            #expect(try flags(["repl", "examples/app.flags"], stdin: "darkMode\n1 < 2\n").status == 0)
            let failing = try flags(["repl", "examples/app.flags"], stdin: "darkMode\n\n  build == alpah\n")
            #expect(failing.status == 1)
            #expect(
                failing.stderr.hasPrefix(
                    "<repl>:3:12: error: 'alpah' is not a case of enum(debug, alpha, beta, release); did you mean 'alpha'?\n"))
        }
    }

    @Test func casesCompleteWhereACaseIsExpected() throws {
        var session = try ReplSession(path: "examples/checkout.flags")
        _ = session.handle(":set country=US")
        let plans = ["free", "plus", "pro"]
        #expect(session.rules.schema?["plan"]?.type == .enumeration(plans))
        #expect(session.completions(before: "plan == ") == plans)
        #expect(session.completions(before: "plan != p") == plans)
        #expect(session.completions(before: "plan in [free, ") == plans)
        #expect(session.completions(before: "plan not in [p") == plans)
        #expect(session.completions(before: ":set plan=") == plans)
        #expect(session.completions(before: "checkout == ") == ["control", "oneStep", "twoStep"])
        #expect(session.completions(before: "country == ") == session.completions)  // a string: names
        #expect(session.completions(before: "pla") == session.completions)
        var targeting = try ReplSession(path: "examples/targeting.flags")
        let roles = ["admin", "editor", "viewer"]
        #expect(targeting.completions(before: "roles contains ") == roles)
        #expect(targeting.completions(before: "roles contains any [admin, ") == roles)
        #expect(targeting.completions(before: "roles contains all [e") == roles)
        #expect(targeting.completions(before: "groups contains ") == targeting.completions)  // strings: names
        #expect(targeting.completions.contains("count") && targeting.completions.contains("ramp"))
        _ = targeting.handle(#":set groups=["qa"]"#)
        #expect(targeting.handle("count(groups)").stdout.contains("1"))
        var editor = LineEditor()
        for c in "plan == fr" { _ = editor.handle(.text(String(c))) }
        #expect(editor.complete(from: session.completions(before: editor.textBeforeCursor)) == [])
        #expect(editor.line == "plan == free")
    }

    @Test func historyIsKeptAcrossSessions() async throws {
        try await offThePool {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("flags-history-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: file) }
            let first = try PseudoTerminalSession(["repl", "examples/app.flags"], history: file)
            #expect(first.waitFor("flags> "))
            first.send("1 < 2\r")
            #expect(first.waitFor("true"))
            first.send("\u{4}")
            #expect(first.exitStatus() == 0)
            #expect(try String(contentsOf: file, encoding: .utf8) == "1 < 2\n")
            let second = try PseudoTerminalSession(["repl", "examples/app.flags"], history: file)
            #expect(second.waitFor("flags> "))
            let mark = second.output.endIndex
            second.send("\u{1B}[A\r")  // up: the line from the first session
            #expect(second.waitFor("true", since: mark))
            second.send("\u{4}")
            #expect(second.exitStatus() == 0)
            // The line recalled and run again is not repeated; a piped session writes no history.
            _ = try flags(["repl", "examples/app.flags"], stdin: "2 < 3\n", environment: ["FLAGS_HISTORY": file.path])
            #expect(try String(contentsOf: file, encoding: .utf8) == "1 < 2\n")
        }
    }

    @Test func historyIsBounded() {
        let many = (0..<(ReplCommand.historyLimit + 50)).map { "line \($0)" }
        #expect(LineEditor(history: Array(many.suffix(ReplCommand.historyLimit))).history.count == ReplCommand.historyLimit)
    }

    @Test func diagnosticsAreColouredOnATerminal() throws {
        let t = try PseudoTerminalSession(["repl", "examples/app.flags"], noColor: false)
        #expect(t.waitFor("flags> "))
        t.send("build == alpah\r")
        #expect(t.waitFor("\u{1B}[1;31merror\u{1B}[0m"))
        t.send("\u{4}")
        #expect(t.exitStatus() == 0)
    }
}

@Suite(.serialized) struct ColourTests {
    @Test func colourOnATerminalOnlyWithoutNoColor() throws {
        let coloured = try PseudoTerminalSession(["check", "Tests/flagsTests/Fixtures/broken.flags"], noColor: false)
        #expect(coloured.exitStatus() == 1)
        #expect(coloured.output.contains("\u{1B}[1;31merror\u{1B}[0m"))
        let plain = try PseudoTerminalSession(["check", "Tests/flagsTests/Fixtures/broken.flags"], noColor: true)
        #expect(plain.exitStatus() == 1)
        #expect(plain.output.contains("error: expected an expression"))
        #expect(!plain.output.contains("\u{1B}["))
    }
}

@Suite struct LineEditorTests {
    func keys(_ bytes: String) -> [Key] {
        var decoder = KeyDecoder()
        return Array(bytes.utf8).compactMap { decoder.feed($0) }
    }

    @Test func decodesKeys() {
        #expect(
            keys("a\u{1B}[A\u{1B}[B\u{1B}[C\u{1B}[D\u{1B}[H\u{1B}[F\u{1B}[3~\u{7F}\t\r\u{3}\u{4}é") == [
                .text("a"), .up, .down, .right, .left, .home, .end, .delete, .backspace, .tab, .enter, .interrupt, .endOfInput, .text("é"),
            ])
        #expect(keys("\u{1B}OH\u{1B}OF\u{1}\u{5}\u{15}\u{B}\u{17}") == [.home, .end, .home, .end, .killToStart, .killToEnd, .deleteWord])
    }

    @Test func editsAndRemembers() {
        var e = LineEditor()
        for k in keys("helo\u{1B}[Dl") { _ = e.handle(k) }
        #expect(e.line == "hello")
        #expect(e.handle(.enter) == .submit("hello"))
        #expect(e.line == "")
        for k in keys("second") { _ = e.handle(k) }
        _ = e.handle(.enter)
        for k in keys("draft") { _ = e.handle(k) }
        _ = e.handle(.up)
        #expect(e.line == "second")
        _ = e.handle(.up)
        #expect(e.line == "hello")
        _ = e.handle(.up)
        #expect(e.line == "hello")
        _ = e.handle(.down)
        _ = e.handle(.down)
        #expect(e.line == "draft")
        _ = e.handle(.deleteWord)
        #expect(e.line == "")
        #expect(e.handle(.endOfInput) == .quit)
    }

    @Test func completes() {
        var e = LineEditor()
        for k in keys("new") { _ = e.handle(k) }
        // 'new' is already the common prefix: the candidates are listed.
        #expect(e.complete(from: ["newMediaPicker", "newSearch", "darkMode"]) == ["newMediaPicker", "newSearch"])
        #expect(e.line == "new")
        _ = e.handle(.text("M"))
        _ = e.handle(.backspace)
        #expect(e.complete(from: ["newMediaPicker1", "newMediaPicker2"]) == [])
        #expect(e.line == "newMediaPicker")
        _ = e.handle(.killToStart)
        for k in keys("new") { _ = e.handle(k) }
        _ = e.handle(.text("M"))
        #expect(e.complete(from: ["newMediaPicker", "newSearch"]) == [])
        #expect(e.line == "newMediaPicker")
        var c = LineEditor()
        _ = c.handle(.text(":"))
        _ = c.handle(.text("q"))
        #expect(c.complete(from: [":quit", ":set"]) == [])
        #expect(c.line == ":quit ")
    }
}

/// `:set` types a value as `-c` does: a quoted value is a string without its quotes, and
/// without a schema a number only where JSON reads one.
@Suite(.serialized) struct ReplSetValueTests {
    @Test func quotedAndNumberLikeValues() async throws {
        try await offThePool {
            let script = """
                :set email="a@b.com"
                :set userId=00123
                quotedEmail
                leadingZeros
                :set userId=123
                number
                :context

                """
            let run = try flags(["repl", "Tests/flagsTests/Fixtures/values.flags"], stdin: script)
            #expect(run.status == 0)
            #expect(
                run.stdout == """
                    quotedEmail = true  (TARGETING_MATCH, rule 1, line 5)
                    leadingZeros = true  (TARGETING_MATCH, rule 1, line 2)
                    number = true  (TARGETING_MATCH, rule 1, line 3)
                    email = "a@b.com"
                    userId = 123

                    """)
        }
    }
}
