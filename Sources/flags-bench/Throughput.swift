import Foundation

// MARK: Requests a second, beside the machine's limit

/// `wrk` against `flags serve examples/app.flags` and against ``MinimalServer``, each server
/// pinned to the first core and `wrk` to the second (with `taskset`), one route at a time:
/// the requests a second of each route, and its fraction of the minimal server's measured
/// just before it (so that a machine whose load changes during the run compares like with
/// like). Beside each, the server's CPU time a request (user and system, read from
/// `/proc`), which moves less with the load than requests a second. Skipped (with a note)
/// where `wrk` or `taskset` is not installed, or the machine has one core.
struct ThroughputFigures {
    struct Route {
        let name: String
        let requestsPerSecond: Double
        /// The minimal server's requests a second, measured just before this route.
        let minimal: Double
        /// The server's CPU microseconds a request, and the minimal server's (nil where
        /// `/proc` cannot say).
        let cpuMicroseconds: Double?
        let minimalCPUMicroseconds: Double?
        /// The least fraction of the minimal server's requests a second it is held to.
        let target: Double

        var fraction: Double { minimal > 0 ? requestsPerSecond / minimal : .nan }
    }
    var routes: [Route] = []
    var skipped: String?
}

/// The routes measured: a name, a method and path, a JSON body for a `POST`, and the least
/// fraction of the minimal server's requests a second each is held to.
let throughputRoutes: [(name: String, path: String, body: String?, target: Double)] = [
    (
        "OFREP, one flag", "/ofrep/v1/evaluate/flags/newMediaPicker",
        #"{"context": {"targetingKey": "user-42", "build": "beta", "appVersion": "2.4.0"}}"#, 0.6
    ),
    ("OFREP, bulk", "/ofrep/v1/evaluate/flags", #"{"context": {"targetingKey": "user-42", "build": "beta", "appVersion": "2.4.0"}}"#, 0.3),
    ("GET /healthz", "/healthz", nil, 0.6),
    ("GET /rules/app.flags", "/rules/app.flags", nil, 0.6),
    ("GET /rules", "/rules", nil, 0.6),
]

/// The path of `name` on `PATH`, or nil.
func installed(_ name: String) -> String? {
    for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
        let path = "\(directory)/\(name)"
        if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    return nil
}

/// A server started pinned to core 0, up once it printed `listening on …PORT`.
final class PinnedServer {
    let process = Process()
    let port: Int

    init?(taskset: String, _ arguments: [String], readsStderr: Bool) {
        process.executableURL = URL(fileURLWithPath: taskset)
        process.arguments = ["-c", "0"] + arguments
        let pipe = Pipe()
        if readsStderr {
            process.standardError = pipe
            process.standardOutput = FileHandle.nullDevice
        } else {
            process.standardOutput = pipe
        }
        guard (try? process.run()) != nil else { return nil }
        var text = ""
        while !text.contains("listening on") || !text.contains("\n") {
            let data = pipe.fileHandleForReading.availableData
            if data.isEmpty { return nil }
            text += String(decoding: data, as: UTF8.self)
        }
        // "listening on PORT" or "listening on http://HOST:PORT (…": the digits that end the address.
        let address = text[text.range(of: "listening on ")!.upperBound...].prefix { $0 != "\n" && $0 != " " }
        guard let port = Int(String(address.reversed().prefix { $0.isNumber }.reversed())) else { return nil }
        self.port = port
    }

    deinit {
        process.terminate()
        process.waitUntilExit()
    }
}

/// `wrk`'s requests a second on `port` and `path` (a `POST` of `body` when given), and the
/// requests it made: 16 keep-alive connections on one thread pinned to core 1, for `seconds`.
func wrkRequestsPerSecond(wrk: String, taskset: String, port: Int, path: String, body: String?, seconds: Int) -> (
    perSecond: Double, requests: Int
)? {
    var arguments = ["-c", "1", wrk, "-t1", "-c16", "-d\(seconds)s"]
    var script: URL?
    if let body {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("flags-bench-\(getpid()).lua")
        let escaped = body.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        try? """
        wrk.method = "POST"
        wrk.body = "\(escaped)"
        wrk.headers["Content-Type"] = "application/json"
        """.write(to: url, atomically: true, encoding: .utf8)
        arguments += ["-s", url.path]
        script = url
    }
    defer { if let script { try? FileManager.default.removeItem(at: script) } }
    arguments.append("http://127.0.0.1:\(port)\(path)")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: taskset)
    process.arguments = arguments
    let out = Pipe()
    process.standardOutput = out
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return nil }
    let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    // Any answer that is no 2xx or 3xx fails the row: the figure would be of errors.
    if text.contains("Non-2xx or 3xx responses") { return nil }
    let lines = text.split(separator: "\n")
    guard let line = lines.first(where: { $0.hasPrefix("Requests/sec:") }),
        let rate = Double(line.dropFirst("Requests/sec:".count).trimmingCharacters(in: .whitespaces)),
        let made = lines.first(where: { $0.contains(" requests in ") }),
        let requests = Int(made.trimmingCharacters(in: .whitespaces).prefix { $0.isNumber })
    else { return nil }
    return (rate, requests)
}

/// The CPU seconds (user and system) a process has used so far, from `/proc/PID/stat`;
/// nil where there is no `/proc`.
func cpuSeconds(of pid: Int32) -> Double? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = text.lastIndex(of: ")")
    else { return nil }
    // After the command's closing parenthesis: state (field 3) … utime (14), stime (15).
    let fields = text[text.index(after: close)...].split(separator: " ")
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// One measured run of `wrk` against `server`: requests a second, and the server's CPU
/// microseconds a request.
func measure(_ server: PinnedServer, wrk: String, taskset: String, path: String, body: String?, seconds: Int) -> (
    perSecond: Double, cpuMicroseconds: Double?
)? {
    let before = cpuSeconds(of: server.process.processIdentifier)
    guard let run = wrkRequestsPerSecond(wrk: wrk, taskset: taskset, port: server.port, path: path, body: body, seconds: seconds)
    else { return nil }
    let after = cpuSeconds(of: server.process.processIdentifier)
    guard let before, let after, run.requests > 0 else { return (run.perSecond, nil) }
    return (run.perSecond, (after - before) * 1e6 / Double(run.requests))
}

func throughputFigures() -> ThroughputFigures? {
    guard options.only == nil || options.only == "throughput" else { return nil }
    var figures = ThroughputFigures()
    guard let wrk = installed("wrk"), let taskset = installed("taskset") else {
        figures.skipped = "wrk or taskset is not installed (Debian: apt-get install wrk util-linux)"
        return figures
    }
    guard ProcessInfo.processInfo.activeProcessorCount >= 2 else {
        figures.skipped = "one core: the server and wrk would share it"
        return figures
    }
    let bench = URL(fileURLWithPath: CommandLine.arguments[0]).path
    let flags = URL(fileURLWithPath: bench).deletingLastPathComponent().appendingPathComponent("flags").path
    let seconds = options.wrkSeconds
    guard let minimal = PinnedServer(taskset: taskset, [bench, "--minimal-server"], readsStderr: false),
        let serve = PinnedServer(taskset: taskset, [flags, "serve", "examples/app.flags", "--port", "0"], readsStderr: true)
    else {
        figures.skipped = "a server did not start"
        return figures
    }
    // A warm-up of each, then the measured runs.
    guard seconds > 0 else {
        figures.skipped = "--wrk-seconds 0"
        return figures
    }
    _ = wrkRequestsPerSecond(wrk: wrk, taskset: taskset, port: minimal.port, path: "/", body: nil, seconds: 1)
    for route in throughputRoutes {
        _ = wrkRequestsPerSecond(wrk: wrk, taskset: taskset, port: serve.port, path: route.path, body: route.body, seconds: 1)
        let limit = measure(minimal, wrk: wrk, taskset: taskset, path: "/", body: nil, seconds: seconds)
        let run = measure(serve, wrk: wrk, taskset: taskset, path: route.path, body: route.body, seconds: seconds)
        figures.routes.append(
            .init(
                name: route.name, requestsPerSecond: run?.perSecond ?? 0, minimal: limit?.perSecond ?? 0,
                cpuMicroseconds: run?.cpuMicroseconds,
                minimalCPUMicroseconds: limit?.cpuMicroseconds, target: route.target))
    }
    return figures
}
