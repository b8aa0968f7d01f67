import FlagRules
import Foundation

/// Serves live rules over OpenFeature's Remote Evaluation Protocol (OFREP), as
/// `flags serve` does: one evaluation, every evaluation with an ETag, an event stream of
/// changes, a page, Prometheus metrics and a health check.
///
/// Each served file is a `FlagStore`: a good update is served as soon as its store puts it
/// in force, and a broken one is logged while the last good rules stay. A name declared by
/// two files is served from the first given. Whatever order the stores load in, the server
/// ends on each store's newest rules.
///
/// ```swift
/// let store = FlagStore(source: .file(rulesURL))
/// let server = try FlagServer(files: [("app.flags", store)], options: .init(port: 8016))
/// server.run()  // returns after drain(), once requests in flight are answered
/// ```
public final class FlagServer: Sendable {
    /// How the server listens and whom it answers.
    public struct Options: Sendable {
        /// The IPv4 address to listen on (`0.0.0.0`: every interface).
        public var host: String
        /// The TCP port; 0 lets the system choose (read it from ``FlagServer/port``).
        public var port: Int
        /// Keys accepted in `Authorization: Bearer …` or `X-API-Key`; none: no key needed.
        public var apiKeys: Set<String>
        /// The context attribute OpenFeature's `targetingKey` fills.
        public var targetingKey: String
        /// Requests a second from one client address (a burst of as many); nil: no limit.
        public var rateLimit: Int?
        /// Receives each OFREP evaluation as a JSON line: OpenTelemetry's
        /// `feature_flag.evaluation` event, its attributes keyed as
        /// `FlagEvaluation.openTelemetryEvent` keys them; nil: none.
        public var evaluationLog: (@Sendable (String) -> Void)?
        /// Where the server keeps the last generation it served (a number in a text file),
        /// read back when it starts: generations then only go up across restarts whatever
        /// the clock does (one stepped back would make a new text look older than what
        /// stores hold, and they would keep the old one). Nil: none kept, and generations
        /// follow the clock.
        public var generationFile: URL?

        /// Options; by default the loopback address, port 8016, no key, no limit, no log and
        /// no generation kept.
        public init(
            host: String = "127.0.0.1", port: Int = 8016, apiKeys: Set<String> = [], targetingKey: String = "userId",
            rateLimit: Int? = nil, evaluationLog: (@Sendable (String) -> Void)? = nil, generationFile: URL? = nil
        ) {
            self.host = host
            self.port = port
            self.apiKeys = apiKeys
            self.targetingKey = targetingKey
            self.rateLimit = rateLimit
            self.evaluationLog = evaluationLog
            self.generationFile = generationFile
        }
    }

    /// The server could not listen (the port is taken, the address is not one).
    public struct StartError: Error, Sendable, CustomStringConvertible {
        /// What went wrong, naming the address.
        public let message: String
        /// The message.
        public var description: String { message }
    }

    package let service: OFREPService
    private let http: HTTPServer
    /// The files served, in order.
    private let files: Locked<[(name: String, store: FlagStore)]>
    private let log: @Sendable (String) -> Void
    /// The names declared twice that were logged (once each, not at every reload).
    private let reported = Locked(Set<String>())
    /// For each store, the runs of failed looks counted in `flags_failed_reloads_total`.
    private let countedRuns = Locked([ObjectIdentifier: Int]())

    /// Listens on `options.host` and `options.port` and serves each store's rules under its
    /// name. The stores are started (a store started already is left as it is); `log` gets
    /// one line for each rejected or failed update and each name two files declare.
    public init(
        files: [(name: String, store: FlagStore)], options: Options = Options(), log: @escaping @Sendable (String) -> Void = { _ in }
    ) throws(StartError) {
        let kept = options.generationFile.map(GenerationRecord.init)
        let service = OFREPService(
            options: .init(
                apiKeys: options.apiKeys, targetingKey: options.targetingKey, rateLimit: options.rateLimit,
                evaluationLog: options.evaluationLog),
            served: ServedRules(generationFloor: kept?.read() ?? 0))
        do {
            http = try HTTPServer(service: service, host: options.host, port: options.port)
        } catch {
            throw StartError(message: error.message)
        }
        self.service = service
        self.files = Locked(files)
        self.log = log
        if let kept {
            service.served.onChange { [weak served = service.served] in
                if let served { kept.write(served.snapshot.generation, log: log) }
            }
        }
        for (_, store) in files { follow(store) }
        install()
        service.reportHealth { [weak self] in self?.upstreamHealth() ?? OFREPService.Health() }
    }

    /// Serves `files` from now on, in their order: a store served already goes on as it is
    /// (under its new name, if it has one), a new one is started, and one no longer given is
    /// stopped. A name no longer served loses its standing rejected update. The rules in force
    /// change at once (an event-stream subscriber is told).
    public func replaceFiles(with files: [(name: String, store: FlagStore)]) {
        let (added, removed, gone) = self.files.withLock { current -> ([FlagStore], [FlagStore], Set<String>) in
            let kept = Set(files.map { ObjectIdentifier($0.store) })
            let before = Set(current.map { ObjectIdentifier($0.store) })
            defer { current = files }
            return (
                files.filter { !before.contains(ObjectIdentifier($0.store)) }.map(\.store),
                current.filter { !kept.contains(ObjectIdentifier($0.store)) }.map(\.store),
                Set(current.map(\.name)).subtracting(files.map(\.name))
            )
        }
        for store in removed { store.stop() }
        for name in gone { service.accepted(file: name) }
        for store in added { follow(store) }
        install()
    }

    /// Puts the served files' rules in force: one install at a time, each reading the
    /// stores' rules once those before it are done, so that two stores loading at once
    /// never leave an older text served.
    private func install() {
        let conflicts = service.served.install {
            let read = files.withLock { $0 }.map { name, store in
                let (rules, generation) = store.rulesAndGeneration
                return (name, rules.map { ServedRules.File(name: name, rules: $0, generation: generation ?? 0) })
            }
            service.awaitedFiles.withLock { $0 = Set(read.filter { $0.1 == nil }.map(\.0)) }
            return read.compactMap(\.1)
        }
        for c in conflicts where reported.withLock({ $0.insert(c.name).inserted }) {
            log("'\(c.name)' is declared in \(c.servedFrom) and in \(c.alsoIn); \(c.servedFrom)'s is served")
        }
    }

    /// What subscribers are told of a rejected update: its errors' count and the first, at
    /// its place in the file by the name it is served under (never a path of this host's
    /// disk): `2 errors: app.flags:12:1: expected a declaration`.
    static func rejection(_ error: RuleSetError, servedAs name: String) -> String {
        let count = error.errors.count
        let first = error.errors.first.map { ": \(name):\($0.range.start.line):\($0.range.start.column): \($0.message)" } ?? ""
        return "\(count) error\(count == 1 ? "" : "s")\(first)"
    }

    /// Serves `store`'s updates under the name it is served by (and starts it). A store no
    /// longer served says nothing: its late rejection is not left standing. A store of
    /// another server's file (a relay's) passes on that server's rejections and their
    /// clearing, and its log says when the stream to it is lost and back.
    private func follow(_ store: FlagStore) {
        store.onEvent = { [weak self, weak store] event in
            guard let self, let store, let name = self.name(of: store) else { return }
            switch event {
            case .rulesLoaded:
                service.accepted(file: name)
                install()
                service.metrics.reload(.loaded)
            case .updateRejected(_, let error):
                service.metrics.reload(.rejected)
                service.reject(file: name, message: Self.rejection(error, servedAs: name))
                // Removed meanwhile: `replaceFiles` may have cleared the file before this.
                if self.name(of: store) != name { service.accepted(file: name) }
                log("\(name): \(event)")
            case .upstreamRejected(let source, let message, _):
                service.metrics.reload(.rejected)
                service.reject(file: name, message: "rejected upstream (\(source)): \(message)")
                if self.name(of: store) != name { service.accepted(file: name) }
                log("\(name): \(event)")
            case .upstreamAccepted:
                service.accepted(file: name)
                log("\(name): \(event)")
            case .fetchFailed:
                // Once for each run of failed looks, however many looks the run takes (a
                // relay's retries within seconds during an outage, an origin's look at an
                // emptied file every quarter second): one meaning on origin and relay. The
                // store counts the runs; the runs not counted yet are counted now.
                let runs = store.failureRuns
                let uncounted = countedRuns.withLock { counted in
                    defer { counted[ObjectIdentifier(store)] = max(counted[ObjectIdentifier(store)] ?? 0, runs) }
                    return max(0, runs - (counted[ObjectIdentifier(store)] ?? 0))
                }
                for _ in 0..<uncounted { service.metrics.reload(.failed) }
                log("\(name): \(event)")
            case .eventStreamConnected, .eventStreamLost, .olderRulesIgnored:
                log("\(name): \(event)")
            default: break
            }
        }
        store.start()
    }

    /// How the stores of another server's files (a relay's) stand: the health check's and
    /// the metrics' upstream lines.
    private func upstreamHealth() -> OFREPService.Health {
        let upstreams = files.withLock { $0 }.compactMap { name, store -> OFREPService.Health.Upstream? in
            guard case .url = store.source else { return nil }
            let link = store.upstream
            return .init(
                file: name, source: store.source.map { "\($0)" } ?? name, reachable: link.reachable, connected: link.connected,
                lastSync: link.lastSync)
        }
        return OFREPService.Health(upstreams: upstreams)
    }

    /// The name `store` is served under; nil once it is not served.
    private func name(of store: FlagStore) -> String? { files.withLock { $0.first { $0.store === store }?.name } }

    /// The port listened on (the one asked for, or the one the system chose for 0).
    public var port: Int { http.port }

    /// The connections the server holds at once (requests and event-stream subscribers):
    /// the process's descriptor limit, raised to its hard limit at start, less those kept
    /// for its own files. A connection beyond is answered 503 at once.
    public var capacity: Int { http.capacity }

    /// The process's limit on open descriptors, once the server raised it.
    public var descriptorLimit: Int { http.descriptorLimit }

    /// Answers requests until ``drain()``; then waits for the requests in flight and stops
    /// the stores.
    public func run() {
        http.run()
        for (_, store) in files.withLock({ $0 }) { store.stop() }
    }

    /// Stops accepting connections; requests in flight are answered, then ``run()`` returns.
    /// Safe from a signal handler's queue.
    public func drain() { http.drain() }
}

/// The file a server keeps its last generation in (``FlagServer/Options/generationFile``):
/// read once at start; written (whole, by a rename) whenever the generation goes up. A file
/// that cannot be written is said once in the log, and the server goes on without it.
final class GenerationRecord: Sendable {
    let url: URL
    /// The generation last written, and whether a failure was logged; held across the
    /// write, so that a write of an older generation never lands after a newer one.
    private let written = Locked((generation: 0, failed: false))

    init(_ url: URL) { self.url = url }

    /// The generation kept, or nil when there is none (or it is no positive number).
    func read() -> Int? {
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return nil }
        return PushProtocol.generation(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Keeps `generation` when it is above the one last kept.
    func write(_ generation: Int, log: (String) -> Void) {
        let failure = written.withLock { w -> String? in
            guard generation > w.generation else { return nil }
            w.generation = generation
            do {
                try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try "\(generation)\n".write(to: url, atomically: true, encoding: .utf8)
                return nil
            } catch {
                defer { w.failed = true }
                return w.failed ? nil : error.localizedDescription
            }
        }
        if let failure { log("cannot keep the generation in \(url.path) (\(failure)): generations follow the clock") }
    }
}
