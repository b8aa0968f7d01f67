import FlagRules
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
        A directory serves the .flags files directly in it (a name declared in two files is
        served from the first, and logged). The files are watched: a good edit is served
        within a second; a broken one is logged and the last good rules stay.

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
        let files = try servedFiles(target)
        // Every file must load before the server starts; the stores then watch them.
        var failed = false
        for path in files where try Terminal.loadRules(path) == nil { failed = true }
        if failed { return 1 }

        let service = OFREPService(
            options: .init(apiKeys: Set(keys), targetingKey: parsed.value("targeting-key") ?? "userId", rateLimit: rateLimit))
        let stores = files.map { FlagStore(source: .file(URL(fileURLWithPath: $0)), refresh: .milliseconds(250)) }
        let install: @Sendable () -> Void = {
            let served = zip(files, stores).compactMap { path, store in store.rules.map { OFREPService.ServedFile(name: path, rules: $0) } }
            for name in service.install(served) {
                Terminal.writeError("flags serve: '\(name)' is declared in two files; the first is served\n")
            }
        }
        for (path, store) in zip(files, stores) {
            store.onEvent = { event in
                switch event {
                case .rulesLoaded:
                    install()
                    service.metrics.reload(rejected: false)
                case .updateRejected:
                    service.metrics.reload(rejected: true)
                    Terminal.writeError("flags serve: \(path): \(event)\n")
                case .fetchFailed:
                    Terminal.writeError("flags serve: \(path): \(event)\n")
                default: break
                }
            }
            store.start()
        }
        let ready = DispatchSemaphore(value: 0)
        let readyStores = stores
        Task {
            for store in readyStores { _ = try? await store.ready(timeout: .seconds(5)) }
            ready.signal()
        }
        ready.wait()
        install()

        let host = parsed.value("host") ?? "127.0.0.1"
        let server: HTTPServer
        do {
            server = try HTTPServer(service: service, host: host, port: port ?? 8016)
        } catch {
            Terminal.writeError("flags serve: \(error.message)\n")
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
        let count = stores.compactMap(\.rules).reduce(0) { $0 + $1.declarations.filter { $0.kind != .segment }.count }
        Terminal.writeError(
            "flags serve: listening on http://\(host):\(server.port) (\(files.count) file\(files.count == 1 ? "" : "s"), \(count) declarations)\n"
        )
        server.run()
        withExtendedLifetime((sources, stores)) {}
        for store in stores { store.stop() }
        return 0
    }

    /// The file, or the .flags files directly in the directory, sorted.
    static func servedFiles(_ path: String) throws(UsageError) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw UsageError(message: "no such file or directory: \(path)")
        }
        guard isDirectory.boolValue else { return [path] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        let base = path.hasSuffix("/") ? String(path.dropLast()) : path
        let files = names.filter { $0.hasSuffix(".flags") && !$0.hasPrefix(".") }.sorted().map { base + "/" + $0 }
        guard !files.isEmpty else { throw UsageError(message: "no .flags files in \(path)") }
        return files
    }
}
