import FlagRules
import FlagRulesServer
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// `flags serve FILE|DIR`: the rules over OpenFeature's Remote Evaluation Protocol.
enum ServeCommand {
    static let help = """
        usage: flags serve FILE|DIR [--port 8016] [--host 127.0.0.1] [--api-key KEY]...
                                    [--targeting-key ATTR] [--rate-limit N]

        Serves the rules over OFREP (OpenFeature's Remote Evaluation Protocol), so that any
        OpenFeature SDK with an OFREP provider evaluates them:
          POST /ofrep/v1/evaluate/flags/KEY   one declaration: {key, value, reason, variant, metadata}
          POST /ofrep/v1/evaluate/flags       every declaration, with an ETag (If-None-Match: 304)
          GET  /ofrep/v1/events               server-sent events: refetchEvaluation on a change
          GET  /                              a page: declarations, a context form, explanations
          GET  /metrics                       Prometheus text: evaluations, reloads, latency
          GET  /healthz                       'ok'
        A directory serves its .flags files, recursively (not in hidden directories), as
        'flags check' checks them; a name declared in two files is served from the shallower
        (then the first by path), and logged. The files are watched: a good edit is served
        within a second, and so is a fix after a broken or emptied file; a broken one is
        logged and the last good rules stay. Log lines on stderr start with the UTC time.

        options:
          --port N           the TCP port (default 8016; 0: any free port, printed)
          --host ADDRESS     the IPv4 address to listen on (default 127.0.0.1; 0.0.0.0: all)
          --api-key KEY      require 'Authorization: Bearer KEY' or 'X-API-Key: KEY' (repeatable);
                             401 without a key, 403 with another
          --targeting-key ATTR
                             the attribute OpenFeature's targetingKey fills (default userId)
          --rate-limit N     at most N requests a second from one client address (429 and
                             Retry-After beyond)
          --help             show this help

        exit status: 0 after SIGTERM or SIGINT (requests in flight are answered first),
        1 the rules have errors or the port cannot be opened, 2 usage error

        """

    static func run(_ arguments: [String]) throws(UsageError) -> Int32 {
        let parsed = try ParsedArguments(
            arguments,
            specs: [
                OptionSpec(name: "help", short: "h"), OptionSpec(name: "port", takesValue: true),
                OptionSpec(name: "host", takesValue: true), OptionSpec(name: "api-key", takesValue: true, repeatable: true),
                OptionSpec(name: "targeting-key", takesValue: true), OptionSpec(name: "rate-limit", takesValue: true),
            ], command: "serve")
        if parsed.has("help") {
            Terminal.write(help)
            return 0
        }
        guard parsed.positionals.count == 1, let target = parsed.positionals.first, target != "-" else {
            throw UsageError(message: "'serve' needs one file or directory", help: "flags serve examples/")
        }
        let port = try parsed.value("port").map { text throws(UsageError) -> Int in
            guard let p = Int(text), (0...65_535).contains(p) else {
                throw UsageError(message: "--port takes a number from 0 to 65535, got '\(text)'")
            }
            return p
        }
        let rateLimit = try parsed.value("rate-limit").map { text throws(UsageError) -> Int in
            guard let n = Int(text), n >= 1, n <= 1_000_000 else {
                throw UsageError(message: "--rate-limit takes requests a second from 1, got '\(text)'")
            }
            return n
        }
        let keys = parsed.all("api-key")
        if keys.contains(where: { $0.isEmpty || $0.contains(where: \.isWhitespace) }) {
            throw UsageError(message: "an --api-key cannot be empty or hold spaces")
        }
        let files = servingOrder(try Terminal.flagsFiles([target]))
        // Every file must load before the server starts; the stores then watch them, starting
        // from what was loaded here (so every file is served from the first request on).
        var failed = false
        var loaded: [RuleSet] = []
        for path in files {
            guard let rules = try Terminal.loadRules(path) else {
                failed = true
                continue
            }
            if let nothing = rules.declaresNothing {
                Terminal.writeError(DiagnosticRenderer().render([nothing], in: rules.source))
                failed = true
            }
            loaded.append(rules)
        }
        if failed { return 1 }

        let stores = zip(files, loaded).map { path, rules in
            FlagStore(
                source: .file(URL(fileURLWithPath: path)), refresh: .milliseconds(250),
                bundled: BundledRules(source: String(decoding: rules.source.bytes, as: UTF8.self), name: path, publishedAt: .distantPast))
        }
        let options = FlagServer.Options(
            host: parsed.value("host") ?? "127.0.0.1", port: port ?? 8016, apiKeys: Set(keys),
            targetingKey: parsed.value("targeting-key") ?? "userId", rateLimit: rateLimit)
        let server: FlagServer
        do {
            server = try FlagServer(files: zip(files, stores).map { ($0, $1) }, options: options) { log($0) }
        } catch {
            log(error.message)
            return 1
        }
        signal(SIGPIPE, SIG_IGN)
        var sources: [DispatchSourceSignal] = []
        for s in [SIGTERM, SIGINT] {
            signal(s, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: s, queue: .global())
            source.setEventHandler { server.drain() }
            source.resume()
            sources.append(source)
        }
        log("listening on http://\(options.host):\(server.port) (\(summary(stores.compactMap(\.rules))))")
        server.run()
        withExtendedLifetime(sources) {}
        return 0
    }

    /// The files in the order their names are served: shallower files first (a
    /// directory's own before its subdirectories'), then by path; the first file to declare
    /// a name serves it.
    static func servingOrder(_ files: [String]) -> [String] {
        files.sorted { a, b in
            let (da, db) = (a.split(separator: "/").count, b.split(separator: "/").count)
            return da != db ? da < db : a < b
        }
    }

    /// `3 files, 20 declarations` (segments counted, as `flags check` counts them).
    static func summary(_ rules: [RuleSet]) -> String {
        let files = rules.count
        let declarations = rules.reduce(0) { $0 + $1.declarations.count }
        return "\(files) file\(files == 1 ? "" : "s"), \(declarations) declaration\(declarations == 1 ? "" : "s")"
    }

    /// Writes a log line to stderr: the UTC time, then `flags serve: ` and `message`.
    static func log(_ message: String, at date: Date = Date()) {
        Terminal.writeError(logLine(message, at: date))
    }

    static func logLine(_ message: String, at date: Date) -> String {
        "\(DateTime.format(date)) flags serve: \(message)\n"
    }
}
