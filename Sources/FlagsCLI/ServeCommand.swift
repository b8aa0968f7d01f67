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
                                    [--targeting-key ATTR] [--rate-limit N] [--log-evaluations]
               flags serve --source URL [--cache DIR] [--source-key KEY] [--relist N]
                           [options above]

        Serves the rules over OFREP (OpenFeature's Remote Evaluation Protocol), so that any
        OpenFeature SDK with an OFREP provider evaluates them:
          POST /ofrep/v1/evaluate/flags/KEY   one declaration: {key, value, reason, variant, metadata}
          POST /ofrep/v1/evaluate/flags       every declaration, with an ETag (If-None-Match: 304)
          GET  /ofrep/v1/events               server-sent events: refetchEvaluation on a change
          GET  /rules, /rules/NAME            the served files' names, and one file's text (ETag,
                                              Last-Modified, X-Flags-Generation)
          GET  /                              a page: declarations, a context form, explanations
          GET  /metrics                       Prometheus text: evaluations, reloads, latency,
                                              rejections standing, a relay's upstream
          GET  /healthz                       'ok'; a relay adds a line for each upstream file
                                              ('degraded' first while upstream is unreachable)
        A directory serves its .flags files, recursively (not in hidden directories), as
        'flags check' checks them, each named by its path in the directory (app.flags,
        sub/x.flags: GET /rules/sub/x.flags); a file alone is named by its file name. A name
        declared in two files is served from the shallower (then the first by path), and
        logged with both files. The files are watched: a good edit is served
        within a second, and so is a fix after a broken or emptied file; a broken one is
        logged and the last good rules stay. A file added to the directory is served, and
        one removed is no longer served, within a second or two. Log lines on stderr start with the UTC time.

        Each text put in force has a generation, a number that only goes up; a relay or a
        store never takes a text older than the one it holds, whoever answered (a cache
        that still holds an older text, an event that came late).

        With --source, it relays another 'flags serve' instead: it serves the files that
        server serves, each taken from its stream as it changes (and checked every 30 s),
        so that relays chain and an edit reaches every subscriber within a second. Each
        file's last good rules stay while upstream is down; with --cache they are kept on
        disk, and a relay starts from them. Upstream's rejected edits are served as its
        own (logged, on the page, in /metrics and the stream) until upstream clears them.
        While upstream is unreachable the stream is tried again every 2 s at most, and the
        log says when it is lost and back. Upstream's list of files is read again every
        --relist seconds: a file added there is served, and one removed there is no longer
        served.

        options:
          --port N           the TCP port (default 8016; 0: any free port, printed)
          --host ADDRESS     the IPv4 address to listen on (default 127.0.0.1; 0.0.0.0: all)
          --api-key KEY      require 'Authorization: Bearer KEY' or 'X-API-Key: KEY' (repeatable);
                             401 without a key, 403 with another
          --targeting-key ATTR
                             the attribute OpenFeature's targetingKey fills (default userId)
          --rate-limit N     at most N requests a second from one client address (429 and
                             Retry-After beyond)
          --log-evaluations  write each OFREP evaluation to standard output as a JSON line:
                             OpenTelemetry's feature_flag.evaluation event ({"time", "name",
                             "attributes": {"feature_flag.key", …}}), on a thread of its own
                             (past 10,000 lines waiting, lines are dropped and counted)
          --generation-file FILE
                             keep the last generation served in FILE and start above it, so
                             that generations only go up across restarts whatever the clock
                             does (default: serve-HASH.generation in $XDG_STATE_HOME/flags or
                             ~/.local/state/flags, HASH of what is served; 'none': keep none)
          --source URL       relay the 'flags serve' at URL (its base, as http://host:8016)
          --cache DIR        with --source: keep the last good rules in DIR, and start from them
          --source-key KEY   with --source: the API key upstream asks for
          --relist N         with --source: list upstream's files again every N seconds
                             (default 10)
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
                OptionSpec(name: "source", takesValue: true), OptionSpec(name: "cache", takesValue: true),
                OptionSpec(name: "source-key", takesValue: true), OptionSpec(name: "relist", takesValue: true),
                OptionSpec(name: "log-evaluations"), OptionSpec(name: "generation-file", takesValue: true),
            ], command: "serve")
        if parsed.has("help") {
            Terminal.write(help)
            return 0
        }
        let upstream = try parsed.value("source").map { text throws(UsageError) -> URL in
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                throw UsageError(
                    message: "--source takes the http(s) URL of a 'flags serve', got '\(text)'", help: "--source http://127.0.0.1:8016")
            }
            guard parsed.positionals.isEmpty else {
                throw UsageError(message: "'serve --source' relays a server; it takes no file or directory")
            }
            return url
        }
        if upstream == nil {
            for option in ["cache", "source-key", "relist"] where parsed.value(option) != nil {
                throw UsageError(message: "--\(option) goes with --source URL")
            }
        }
        let target = parsed.positionals.first ?? ""
        guard upstream != nil || (parsed.positionals.count == 1 && target != "-") else {
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
        var options = FlagServer.Options(
            host: parsed.value("host") ?? "127.0.0.1", port: port ?? 8016, apiKeys: Set(keys),
            targetingKey: parsed.value("targeting-key") ?? "userId", rateLimit: rateLimit)
        if parsed.has("log-evaluations") {
            options.evaluationLog = { @Sendable line in Terminal.write(line + "\n") }
        }
        switch parsed.value("generation-file") {
        case "none": break
        case let path?:
            guard !path.isEmpty else { throw UsageError(message: "--generation-file takes a file, or 'none'") }
            options.generationFile = URL(fileURLWithPath: path)
        case nil:
            let served = upstream?.absoluteString ?? URL(fileURLWithPath: target).standardizedFileURL.path
            options.generationFile = defaultGenerationFile(serving: served)
        }
        let relist =
            try parsed.value("relist").map { text throws(UsageError) -> TimeInterval in
                guard let n = Double(text), n >= 0.1, n <= 86_400 else {
                    throw UsageError(message: "--relist takes seconds from 0.1 to 86400, got '\(text)'")
                }
                return n
            } ?? 10
        if let upstream {
            let relayed = RelaySource(
                base: upstream, key: parsed.value("source-key"), cache: parsed.value("cache").map { URL(fileURLWithPath: $0) })
            let stores: [(String, FlagStore)]
            do {
                stores = try relayed.stores()
            } catch {
                log(error.message)
                return 1
            }
            return serve(stores, options: options, what: "relaying \(upstream.absoluteString)") { server in
                follow(
                    server, serving: stores, every: relist, what: "upstream's files",
                    names: { if case .success(let names) = relayed.list() { names } else { nil } },
                    store: relayed.store, listed: relayed.saveList)
            }
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: target, isDirectory: &isDirectory) else {
            throw UsageError(message: "no such file or directory: \(target)")
        }
        // A file is served by its name; a directory's files by their paths relative to it,
        // however the directory was typed (no absolute path is published).
        let directory = isDirectory.boolValue ? (target.hasSuffix("/") ? String(target.dropLast()) : target) : nil
        @Sendable func path(_ name: String) -> String { directory.map { $0 + "/" + name } ?? target }
        let names = directory.map { servingOrder(Terminal.flagsFiles(in: $0)) } ?? [URL(fileURLWithPath: target).lastPathComponent]
        guard !names.isEmpty else { throw UsageError(message: "no .flags files in \(target)") }
        // Every file must load before the server starts; the stores then watch them, starting
        // from what was loaded here (so every file is served from the first request on).
        var failed = false
        var loaded: [RuleSet] = []
        for name in names {
            guard let rules = try Terminal.loadRules(path(name)) else {
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

        let stores = zip(names, loaded).map { name, rules in
            FlagStore(
                source: .file(URL(fileURLWithPath: path(name))), refresh: .milliseconds(250),
                bundled: BundledRules(
                    source: String(decoding: rules.source.bytes, as: UTF8.self), name: path(name), publishedAt: .distantPast))
        }
        let served = zip(names, stores).map { ($0, $1) }
        guard let directory else { return serve(served, options: options, what: "") }
        // A directory is looked at again every second for files added or removed (its last
        // file removed, it serves none).
        return serve(served, options: options, what: "") { server in
            follow(
                server, serving: served, every: 1, what: "the directory's files",
                names: {
                    var isDirectory: ObjCBool = false
                    guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
                        return nil
                    }
                    return servingOrder(Terminal.flagsFiles(in: directory))
                },
                store: { FlagStore(source: .file(URL(fileURLWithPath: path($0))), refresh: .milliseconds(250)) }, listed: { _ in })
        }
    }

    /// Every `interval`, asks `names` for the files to serve (nil: it cannot tell, and the
    /// files served stay); when they differ from those served, serves a store for each new
    /// one, stops serving each one gone, calls `listed` and logs the change. Returns the
    /// timer, which runs while it is held.
    static func follow(
        _ server: FlagServer, serving first: [(String, FlagStore)], every interval: TimeInterval, what: String,
        names: @escaping @Sendable () -> [String]?, store: @escaping @Sendable (String) -> FlagStore,
        listed: @escaping @Sendable ([String]) -> Void
    ) -> DispatchSourceTimer {
        let serving = Locked(first)
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "flags-serve-files"))
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler {
            guard let names = names() else { return }
            let current = serving.withLock { $0 }
            guard names != current.map(\.0) else { return }
            let next = names.map { name in (name, current.first { $0.0 == name }?.1 ?? store(name)) }
            let added = names.filter { name in !current.contains { $0.0 == name } }
            let removed = current.map(\.0).filter { !names.contains($0) }
            serving.withLock { $0 = next }
            listed(names)
            server.replaceFiles(with: next)
            log(
                "\(what) changed: now \(names.count)" + (added.isEmpty ? "" : "; added \(added.joined(separator: ", "))")
                    + (removed.isEmpty ? "" : "; removed \(removed.joined(separator: ", "))"))
        }
        timer.resume()
        return timer
    }

    /// Where a server of `served` (a path, or an upstream's URL) keeps its generation by
    /// default: `serve-HASH.generation` in `$XDG_STATE_HOME/flags`, or in
    /// `~/.local/state/flags` (the XDG base directories' place for state).
    static func defaultGenerationFile(serving served: String, environment: [String: String] = ProcessInfo.processInfo.environment)
        -> URL
    {
        let base =
            environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? URL(fileURLWithPath: $0) : nil }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/state")
        return base.appendingPathComponent("flags/serve-\(String(FNV1a.hash(served.utf8), radix: 36)).generation")
    }

    /// Serves `stores` until SIGTERM or SIGINT; the exit status. `started` is given the
    /// server once it listens, and what it returns is held while it serves.
    static func serve(
        _ stores: [(String, FlagStore)], options: FlagServer.Options, what: String, started: (FlagServer) -> Any? = { _ in nil }
    ) -> Int32 {
        let server: FlagServer
        do {
            server = try FlagServer(files: stores, options: options) { log($0) }
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
        let serving = what.isEmpty ? "" : "\(what), "
        log(
            "listening on http://\(options.host):\(server.port) (\(serving)\(summary(stores.compactMap(\.1.rules)))); "
                + "up to \(server.capacity) connections at once (descriptor limit \(server.descriptorLimit))")
        let held = started(server)
        server.run()
        withExtendedLifetime((sources, held)) {}
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
