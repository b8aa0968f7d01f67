import FlagRules
import FlagRulesServer
import Foundation
import Testing

@testable import FlagsCLI

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A running `flags serve` on a free port.
final class ServeProcess {
    let process = Process()
    let port: Int
    /// What the server wrote to stderr up to its "listening on" line.
    let startup: String
    private let errors: FileHandle
    private let written = Locked("")

    /// Everything the server wrote to stderr so far (read as it comes, so that a server that
    /// logs much never blocks on a full pipe).
    var log: String { startup + written.withLock { $0 } }

    /// `descriptors`: the soft and hard limits on open descriptors to start it with (as a
    /// shell's `ulimit -Sn` and `-Hn` set them).
    init(_ arguments: [String], port: Int = 0, descriptors: (soft: Int, hard: Int)? = nil) throws {
        if let descriptors {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments =
                ["-c", "ulimit -Sn \(descriptors.soft) && ulimit -Hn \(descriptors.hard) && exec \"$0\" \"$@\"", flagsBinary.path]
                + ["serve", "--port", "\(port)"] + arguments
        } else {
            process.executableURL = flagsBinary
            process.arguments = ["serve", "--port", "\(port)"] + arguments
        }
        process.currentDirectoryURL = packageRoot
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        errors = err.fileHandleForReading
        try spawn(process)
        let process = self.process
        DispatchQueue.global().asyncAfter(deadline: .now() + 120) { if process.isRunning { process.terminate() } }
        var text = ""
        while !text.contains("listening on") {
            let data = errors.availableData
            guard !data.isEmpty else { throw TCPClient.Failure.closed(text) }
            text += String(decoding: data, as: UTF8.self)
        }
        // "listening on http://127.0.0.1:PORT (…": the port after the address's colon.
        let address = text[(text.range(of: "listening on http://")?.upperBound ?? text.startIndex)...]
        let afterColon = address.drop { $0 != ":" }.dropFirst()
        self.port = Int(afterColon.prefix { $0.isNumber }) ?? 0
        startup = text
        Thread { [errors, written] in
            while case let data = errors.availableData, !data.isEmpty {
                written.withLock { $0 += String(decoding: data, as: UTF8.self) }
            }
        }.start()
    }

    /// Sends SIGTERM and waits; returns the exit status.
    func stop() -> Int32 {
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit { if process.isRunning { process.terminate() } }
}

/// A client on a raw socket, for keep-alive, partial and oversized requests.
final class TCPClient {
    enum Failure: Error { case closed(String), connect }
    let fd: Int32
    private var buffer: [UInt8] = []

    /// `receiveBuffer`: the socket's receive buffer, set before it connects (set after, the
    /// window the connection opened with still lets a larger amount in).
    init(port: Int, receiveBuffer: Int32? = nil) throws {
        #if canImport(Darwin)
            fd = socket(AF_INET, SOCK_STREAM, 0)
        #else
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #endif
        if var size = receiveBuffer { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard status == 0 else { throw Failure.connect }
        var timeout = timeval(tv_sec: 15, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        #if canImport(Darwin)
            var one: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    deinit { close(fd) }

    func send(_ text: String) { send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) {
        var sent = 0
        while sent < bytes.count {
            // A server that has answered and closed must not kill the tests with SIGPIPE.
            #if canImport(Darwin)
                let n = bytes.withUnsafeBytes { Darwin.send(fd, $0.baseAddress! + sent, bytes.count - sent, 0) }
            #else
                let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            #endif
            if n <= 0 { return }
            sent += n
        }
    }

    /// `POST path` with a JSON body.
    func post(_ path: String, _ body: String, headers: String = "") {
        send(
            "POST \(path) HTTP/1.1\r\nHost: test\r\n\(headers)Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        )
    }

    /// Reads one response: status, headers and a body of its Content-Length.
    func response() throws -> (status: Int, headers: [String: String], body: String) {
        while true {
            if let end = findHeaderEnd() {
                let head = String(decoding: buffer[..<end], as: UTF8.self).split(separator: "\r\n").map(String.init)
                let status = Int(head[0].split(separator: " ")[1]) ?? 0
                var headers: [String: String] = [:]
                for line in head.dropFirst() {
                    let parts = line.split(separator: ":", maxSplits: 1)
                    headers[parts[0].lowercased()] = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
                }
                let length = Int(headers["content-length"] ?? "0") ?? 0
                if buffer.count >= end + 4 + length {
                    let body = String(decoding: buffer[(end + 4)..<(end + 4 + length)], as: UTF8.self)
                    buffer.removeFirst(end + 4 + length)
                    return (status, headers, body)
                }
            }
            try fill()
        }
    }

    /// Reads until `text` has arrived; returns everything read so far.
    /// Reads until `done` holds for what has arrived, or `seconds` have passed (an event
    /// stream's keep-alive comments keep the receive timeout from ever firing); what arrived.
    func read(within seconds: TimeInterval = 10, untilItHolds done: (String) -> Bool) throws -> String {
        let deadline = Date().addingTimeInterval(seconds)
        while !done(String(decoding: buffer, as: UTF8.self)), Date() < deadline { try fill() }
        return String(decoding: buffer, as: UTF8.self)
    }

    func read(until text: String) throws -> String {
        while !String(decoding: buffer, as: UTF8.self).contains(text) { try fill() }
        return String(decoding: buffer, as: UTF8.self)
    }

    /// Hangs up (the descriptor is closed when the client goes).
    func hangUp() { shutdown(fd, Int32(SHUT_RDWR)) }

    /// Whether the server closed the connection (reads nothing more).
    func isClosed() -> Bool {
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, 0) == 0
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let n = recv(fd, &chunk, chunk.count, 0)
        guard n > 0 else { throw Failure.closed(String(decoding: buffer, as: UTF8.self)) }
        buffer += chunk[0..<n]
    }

    private func findHeaderEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for i in 0...(buffer.count - 4) where buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 {
            return i
        }
        return nil
    }
}

@Suite(.serialized) struct ServeCommandTests {
    static func temporaryRules(_ text: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flags-serve-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("rules.flags")
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    @Test func keepAliveAnswersSeveralRequestsOnOneConnection() async throws {
        try await offThePool {
            let server = try ServeProcess(["examples/"])
            let client = try TCPClient(port: server.port)
            client.post("/ofrep/v1/evaluate/flags/checkout", #"{"context": {"targetingKey": "user-3", "country": "US"}}"#)
            client.post("/ofrep/v1/evaluate/flags/nope", #"{"context": {}}"#)
            let first = try client.response()
            #expect(first.status == 200)
            #expect(first.body.contains(#""variant": "twoStep""#) && first.body.contains(#""reason": "SPLIT""#))
            let second = try client.response()
            #expect(second.status == 404 && second.body.contains("FLAG_NOT_FOUND"))
            client.send("GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n")
            let third = try client.response()
            #expect(third.status == 200 && third.body == "ok\n" && third.headers["connection"] == "close")
            #expect(client.isClosed())
            #expect(server.stop() == 0)
        }
    }

    @Test func editsAreServedAndBrokenOnesAreNot() async throws {
        try await offThePool {
            let file = try Self.temporaryRules("flag f = false\n")
            defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
            let server = try ServeProcess([file.path])
            let events = try TCPClient(port: server.port)
            events.send("GET /ofrep/v1/events HTTP/1.1\r\n\r\n")
            _ = try events.read(until: "text/event-stream")
            func value() throws -> String {
                let client = try TCPClient(port: server.port)
                client.post("/ofrep/v1/evaluate/flags/f", #"{"context": {}}"#)
                return try client.response().body
            }
            #expect(try value().contains(#""value": false"#))
            try "flag f = true\n".write(to: file, atomically: true, encoding: .utf8)
            let start = Date()
            while try !value().contains(#""value": true"#), Date().timeIntervalSince(start) < 5 { usleep(50_000) }
            #expect(Date().timeIntervalSince(start) < 1.5)
            let stream = try events.read(until: "refetchEvaluation")
            #expect(
                stream.contains("\nid: ")
                    && stream.contains("\nevent: message\nretry: 1000\ndata: {\"type\": \"refetchEvaluation\", \"etag\": "))
            try "flag f = \n".write(to: file, atomically: true, encoding: .utf8)
            #expect(try Self.waitForMetric(server, "flags_rejected_reloads_total 1\n"))
            #expect(try value().contains(#""value": true"#))
            #expect(server.stop() == 0)
        }
    }

    /// Reads `/metrics` until it holds `line` (up to 30 s worth of looks); whether it did.
    static func waitForMetric(_ server: ServeProcess, _ line: String) throws -> Bool {
        for _ in 0..<600 {
            let metrics = try TCPClient(port: server.port)
            metrics.send("GET /metrics HTTP/1.1\r\n\r\n")
            if try metrics.response().body.contains(line) { return true }
            usleep(50_000)
        }
        return false
    }

    /// The generation file's default place: `$XDG_STATE_HOME/flags` (an absolute one), else
    /// `~/.local/state/flags`, named by a hash of what is served.
    @Test func theGenerationFileIsKeptWhereXDGKeepsState() {
        let a = ServeCommand.defaultGenerationFile(serving: "/srv/rules", environment: ["XDG_STATE_HOME": "/var/state"])
        #expect(a.path.hasPrefix("/var/state/flags/serve-") && a.path.hasSuffix(".generation"))
        let b = ServeCommand.defaultGenerationFile(serving: "/srv/other", environment: ["XDG_STATE_HOME": "/var/state"])
        #expect(a != b)
        let home = ServeCommand.defaultGenerationFile(serving: "/srv/rules", environment: ["XDG_STATE_HOME": "relative"])
        #expect(home.path.hasPrefix(FileManager.default.homeDirectoryForCurrentUser.path + "/.local/state/flags/serve-"))
    }

    /// A directory is served as `flags check` checks it (recursively); a fix after an
    /// emptied file is served within a second, the failure counted; log lines carry a UTC
    /// time.
    @Test func aDirectoryIsServedRecursivelyAndAFixAfterAnEmptyFileComesAtOnce() async throws {
        try await offThePool {
            let file = try Self.temporaryRules("flag f = false\nsegment s = true\n")
            let root = file.deletingLastPathComponent()
            defer { try? FileManager.default.removeItem(at: root) }
            let nested = root.appendingPathComponent("team/more.flags")
            try FileManager.default.createDirectory(at: nested.deletingLastPathComponent(), withIntermediateDirectories: true)
            try "flag g = true\n".write(to: nested, atomically: true, encoding: .utf8)
            let server = try ServeProcess([root.path])
            let stamp = #/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z flags serve: listening on http:\S+ \(2 files, 3 declarations\)/#
            #expect(server.startup.contains(stamp), "\(server.startup)")
            func value(_ key: String) throws -> String {
                let client = try TCPClient(port: server.port)
                client.post("/ofrep/v1/evaluate/flags/\(key)", #"{"context": {}}"#)
                return try client.response().body
            }
            #expect(try value("g").contains(#""value": true"#))
            for round in 1...3 {
                try Data().write(to: file)
                #expect(try Self.waitForMetric(server, "flags_failed_reloads_total \(round)\n"))
                try "flag f = \(round % 2 == 1)\n".write(to: file, atomically: true, encoding: .utf8)
                let start = Date()
                while try !value("f").contains(#""value": \#(round % 2 == 1)"#), Date().timeIntervalSince(start) < 10 { usleep(20_000) }
                #expect(Date().timeIntervalSince(start) < 1, "round \(round)")
            }
            #expect(server.stop() == 0)
        }
    }

    /// A file added to a served directory is served, one removed is not, and a broken new
    /// one is rejected while the others go on.
    @Test func filesAddedToOrRemovedFromADirectoryAreServed() async throws {
        try await offThePool {
            let first = try Self.temporaryRules("flag a = true\n")
            let root = first.deletingLastPathComponent()
            defer { try? FileManager.default.removeItem(at: root) }
            let server = try ServeProcess([root.path])
            defer { _ = server.stop() }
            func status(_ key: String) throws -> Int {
                let client = try TCPClient(port: server.port)
                client.post("/ofrep/v1/evaluate/flags/\(key)", #"{"context": {}}"#)
                return try client.response().status
            }
            /// Waits (up to 20 s) for `key` to answer `expected`.
            func until(_ key: String, answers expected: Int) throws -> Bool {
                let start = Date()
                while Date().timeIntervalSince(start) < 20 {
                    if try status(key) == expected { return true }
                    usleep(50_000)
                }
                return false
            }
            #expect(try status("a") == 200 && status("b") == 404)
            try "flag b = true\n".write(to: root.appendingPathComponent("b.flags"), atomically: true, encoding: .utf8)
            #expect(try until("b", answers: 200))
            try FileManager.default.removeItem(at: first)
            #expect(try until("a", answers: 404))
            try "flag c = \n".write(to: root.appendingPathComponent("c.flags"), atomically: true, encoding: .utf8)
            #expect(try Self.waitForMetric(server, "flags_rejected_reloads_total 1\n"))
            #expect(try status("b") == 200 && status("c") == 404)
            try "flag c = false\n".write(to: root.appendingPathComponent("c.flags"), atomically: true, encoding: .utf8)
            #expect(try until("c", answers: 200))
            // A name two files declare is logged with both files; the shallower serves it.
            try FileManager.default.createDirectory(at: root.appendingPathComponent("sub"), withIntermediateDirectories: true)
            try "flag b = false\n".write(to: root.appendingPathComponent("sub/d.flags"), atomically: true, encoding: .utf8)
            let start = Date()
            while !server.log.contains("'b' is declared in"), Date().timeIntervalSince(start) < 20 { usleep(50_000) }
            #expect(server.log.contains("'b' is declared in b.flags and in sub/d.flags; b.flags's is served"), "\(server.log)")
            // The last files removed: none is served (not the last one kept).
            for name in ["b.flags", "c.flags", "sub/d.flags"] { try FileManager.default.removeItem(at: root.appendingPathComponent(name)) }
            #expect(try until("b", answers: 404))
            let list = try TCPClient(port: server.port)
            list.send("GET /rules HTTP/1.1\r\n\r\n")
            #expect(try list.response().body.contains(#""files": []"#))
        }
    }

    @Test func theStartLineCountsAsCheckCounts() throws {
        let one = try RuleSet(source: "flag f = true\n")
        let two = try RuleSet(source: "flag f = true\nsegment s = true\n")
        #expect(ServeCommand.summary([one]) == "1 file, 1 declaration")
        #expect(ServeCommand.summary([one, two]) == "2 files, 3 declarations")
        #expect(ServeCommand.servingOrder(["a/z.flags", "a/b/a.flags", "a/a.flags"]) == ["a/a.flags", "a/z.flags", "a/b/a.flags"])
    }

    @Test func aFileThatDeclaresNothingIsRefusedAsCheckRefusesIt() async throws {
        try await offThePool {
            let file = try Self.temporaryRules("# nothing yet\n")
            defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
            for command in [["serve", "--port", "0", file.path], ["check", file.path]] {
                let result = try flags(command)
                #expect(result.status == 1, "\(command)")
                #expect(result.stderr.contains("error: the rules declare nothing"), "\(command): \(result.stderr)")
            }
        }
    }

    @Test func aSlowClientDoesNotHoldUpOthersAndBigBodiesAreRefused() async throws {
        try await offThePool {
            let server = try ServeProcess(["examples/app.flags"])
            let slow = try TCPClient(port: server.port)
            slow.send("POST /ofrep/v1/evaluate/flags/darkMode HTTP/1.1\r\nContent-Le")
            let other = try TCPClient(port: server.port)
            other.post("/ofrep/v1/evaluate/flags/darkMode", #"{"context": {"build": "release"}}"#)
            #expect(try other.response().status == 200)
            let big = try TCPClient(port: server.port)
            big.send("POST /ofrep/v1/evaluate/flags/darkMode HTTP/1.1\r\nContent-Length: \(2 << 20)\r\n\r\n")
            big.send([UInt8](repeating: UInt8(ascii: "a"), count: 1 << 20))
            #expect(try big.response().status == 413)
            let chunked = try TCPClient(port: server.port)
            chunked.send("POST /ofrep/v1/evaluate/flags/darkMode HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n")
            #expect(try chunked.response().status == 501)
            // Every answer is counted by its status, those the parser gives too.
            let metrics = try TCPClient(port: server.port)
            metrics.send("GET /metrics HTTP/1.1\r\n\r\n")
            let counted = try metrics.response().body
            for status in [200, 413, 501] { #expect(counted.contains(#"flags_http_requests_total{status="\#(status)"} 1"#), "\(status)") }
            let unauthorized = try ServeProcess(["examples/app.flags", "--api-key", "secret"])
            let client = try TCPClient(port: unauthorized.port)
            client.post("/ofrep/v1/evaluate/flags/darkMode", "{}")
            #expect(try client.response().status == 401)
            client.post(
                "/ofrep/v1/evaluate/flags/darkMode", #"{"context": {"build": "release"}}"#, headers: "Authorization: Bearer secret\r\n")
            #expect(try client.response().status == 200)
            slow.hangUp()
            #expect(server.stop() == 0 && unauthorized.stop() == 0)
        }
    }

    /// Random requests over real connections, whole bodies of 1 MiB, and clients that hang
    /// up mid-request: the server keeps answering and its memory stays bounded.
    @Test(slowTests) func randomTrafficLeavesTheServerAnswering() throws {
        let server = try ServeProcess(["examples/"])
        var random = SeededGenerator(seed: 99)
        let real =
            "POST /ofrep/v1/evaluate/flags/checkout HTTP/1.1\r\nHost: x\r\nContent-Length: 46\r\n\r\n{\"context\": {\"targetingKey\": \"u\", \"n\": [1]}}"
        for i in 0..<400 {
            var bytes = Array(real.utf8)
            for _ in 0..<Int.random(in: 0...8, using: &random) {
                let at = Int.random(in: 0..<bytes.count, using: &random)
                if Bool.random(using: &random) { bytes[at] = UInt8.random(in: 0...255, using: &random) } else { bytes.remove(at: at) }
            }
            let client = try TCPClient(port: server.port)
            client.send(bytes)
            if i % 3 == 0 { client.hangUp() }
        }
        let big = try TCPClient(port: server.port)
        let body = [UInt8](repeating: UInt8(ascii: " "), count: (1 << 20) - 2) + Array("{}".utf8)
        big.send(Array("POST /ofrep/v1/evaluate/flags HTTP/1.1\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body)
        let answer = try big.response()
        #expect(answer.status == 200 && answer.body.contains("\"flags\""))
        let health = try TCPClient(port: server.port)
        health.send("GET /healthz HTTP/1.1\r\n\r\n")
        #expect(try health.response().body == "ok\n")
        #if os(Linux)
            let status = try String(contentsOfFile: "/proc/\(server.process.processIdentifier)/status", encoding: .utf8)
            let rss = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }.flatMap { Int($0.split(separator: " ")[1]) } ?? 0
            #expect(rss < 300_000, "resident \(rss) kB")
        #endif
        #expect(server.stop() == 0)
    }

    @Test func theCommandLineIsChecked() async throws {
        try await offThePool {
            let cases: [([String], Int32, String)] = [
                (["serve"], 2, "flags: error: 'serve' needs one file or directory\nhelp: flags serve examples/\n"),
                (["serve", "examples/", "--port", "70000"], 2, "flags: error: --port takes a number from 0 to 65535, got '70000'\n"),
                (["serve", "nowhere/"], 2, "flags: error: no such file or directory: nowhere/\n"),
                (["serve", "examples/", "--rate-limit", "0"], 2, "flags: error: --rate-limit takes requests a second from 1, got '0'\n"),
                (
                    ["serve", "examples/", "--host", "example.com", "--port", "0"], 1,
                    "flags serve: --host takes an IPv4 address such as 127.0.0.1 or 0.0.0.0, got 'example.com'\n"
                ),
            ]
            for (arguments, status, stderr) in cases {
                let run = try flags(arguments)
                // A usage error is the whole of stderr; a failure to start is the log's last line, after its time.
                let matches = status == 2 ? run.stderr == stderr : run.stderr.hasSuffix("Z " + stderr)
                #expect(run.status == status && matches, "\(arguments): \(run)")
            }
            let broken = try flags(["serve", "Tests/flagsTests/Fixtures/broken.flags"])
            #expect(broken.status == 1 && broken.stderr.contains("error:"))
        }
    }
}

/// The server's own lifecycle, in process.
@Suite struct HTTPServerLifecycleTests {
    /// `drain()` (a signal handler's call) stops the listener but leaves closing it to
    /// `run()`: a descriptor closed while `accept` may be blocked on it could be reused by
    /// another file and accepted on.
    @Test func drainLeavesTheListenerToRun() throws {
        let server = try HTTPServer(service: OFREPService(), host: "127.0.0.1", port: 0)
        server.drain()
        #expect(fcntl(server.listener, F_GETFD) != -1, "drain closed the listener")
        server.run()
        #expect(fcntl(server.listener, F_GETFD) == -1 && errno == EBADF)
    }

    /// A drain while `run()` waits for connections ends it.
    @Test func aDrainEndsARunningServer() throws {
        let server = try HTTPServer(service: OFREPService(), host: "127.0.0.1", port: 0)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            server.run()
            done.signal()
        }
        thread.start()
        let client = try TCPClient(port: server.port)
        client.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        server.drain()
        #expect(done.wait(timeout: .now() + 60) == .success)
        withExtendedLifetime(client) {}
    }
}
