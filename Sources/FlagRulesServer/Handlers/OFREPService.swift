import FlagRules
import FlagRulesTooling
import Foundation

/// The HTTP endpoints of `flags serve`, without sockets: OpenFeature's Remote Evaluation
/// Protocol (OFREP) over the rules in force, the page, its API and the metrics. The
/// transport hands each request to ``respond(_:)``, which counts it, checks its key and
/// its client's rate and routes it to its handler: OFREP's evaluations
/// (`OFREPService+Evaluation`), the rules files (`+RulesFiles`), the page's API (`+Page`),
/// the health check and the gauges (`+Health`). ``install(_:)`` puts new rules in force
/// (the files' stores call it on every reload).
package final class OFREPService: Sendable {
    /// One served file.
    package typealias ServedFile = ServedRules.File
    package typealias Rejection = ServedRules.Rejection

    /// How the service answers.
    package struct Options: Sendable {
        /// Keys accepted in `Authorization: Bearer …` or `X-API-Key`; none: no key needed.
        package var apiKeys: Set<String> = []
        /// The attribute `targetingKey` fills.
        package var targetingKey = "userId"
        /// Requests a second from one client address (a burst of as many); nil: no limit.
        package var rateLimit: Int?
        /// Receives each evaluation as an OpenTelemetry event's JSON line, on a thread of its
        /// own (``LineLog``): a sink that stalls costs lines, never answers; nil: none.
        package var evaluationLog: (@Sendable (String) -> Void)?
        package init(
            apiKeys: Set<String> = [], targetingKey: String = "userId", rateLimit: Int? = nil,
            evaluationLog: (@Sendable (String) -> Void)? = nil
        ) {
            self.apiKeys = apiKeys
            self.targetingKey = targetingKey
            self.rateLimit = rateLimit
            self.evaluationLog = evaluationLog
        }
    }

    let options: Options
    /// The rules in force, their generation and the notices of the event stream.
    package let served: ServedRules
    package let metrics: ServeMetrics
    private let buckets = Locked([String: (tokens: Double, at: Double)]())
    /// What `/healthz` says besides `ok` (a relay's upstream); nil: plain `ok`.
    let healthReport = Locked<Report<Health>?>(nil)
    /// What the metrics say of the transport (set by the HTTP server); nil: nothing.
    let transportReport = Locked<Report<TransportLoad>?>(nil)

    /// A function that reads what a report says, kept in a `Locked` as a struct's field: a
    /// function kept as the lock's state itself would be wrapped once more (a reabstraction
    /// thunk) at every access, each call slower than the last.
    struct Report<Value>: Sendable {
        let read: @Sendable () -> Value
    }

    /// The evaluation log's queue, when there is a log.
    let evaluationLines: LineLog?
    /// The files served that have no rules yet (a relay's, before upstream's first answer):
    /// `GET /rules/NAME` asks a client to come back in a second rather than saying 404.
    package let awaitedFiles = Locked(Set<String>())

    package init(options: Options = Options(), metrics: ServeMetrics = ServeMetrics(), served: ServedRules = ServedRules()) {
        self.options = options
        self.metrics = metrics
        self.served = served
        evaluationLines = options.evaluationLog.map { sink in
            LineLog(sink: sink) { dropped in OFREPService.eventLine("flags.evaluation_log.dropped", [("count", .int(dropped))]) }
        }
    }

    // MARK: Rules

    /// Puts `files` in force; returns the names declared in two files (served from the first).
    @discardableResult
    package func install(_ files: [ServedFile]) -> [ServedRules.Conflict] { served.install(files) }

    /// Records that an update of `file` was rejected (its last good rules stay served):
    /// the page shows it, and every event-stream subscriber is told at once.
    package func reject(file: String, message: String) { served.reject(file: file, message: message) }

    /// Clears the rejection of `file` (a good update of it is in force): subscribers are told.
    package func accepted(file: String) { served.accept(file: file) }

    /// The version of the rules in force (their generation).
    package var version: String { served.snapshot.version }

    /// The served files, in order.
    package var servedFiles: [ServedFile] { served.snapshot.files }

    // MARK: Requests

    /// The response to one request from `peer` (its address, for the rate limit).
    package func respond(_ request: HTTPRequest, peer: String = "") -> HTTPResponse {
        let started = Date()
        let response = route(request, peer: peer)
        metrics.request(status: response.status, seconds: Date().timeIntervalSince(started))
        return response
    }

    /// What a path names, read from its bytes once.
    enum Resource: Equatable {
        case health, upstreamHealth, page, bulk, events, list, metrics, pageRules, pageEvaluation
        /// `/rules/NAME`.
        case rulesFile(String)
        /// `/ofrep/v1/evaluate/flags/KEY`.
        case single(String)
        /// Nothing, under a path that needs a key (`/ofrep/…`, `/api/…`).
        case protectedNothing
        case nothing

        /// Whether a request for it needs an API key and counts toward its client's rate.
        var isProtected: Bool {
            switch self {
            case .health, .upstreamHealth, .page, .nothing: false
            default: true
            }
        }

        init(path: String) {
            self =
                path.utf8.withContiguousStorageIfAvailable { Resource(bytes: $0) }
                ?? Array(path.utf8).withUnsafeBufferPointer { Resource(bytes: $0) }
        }

        private init(bytes: UnsafeBufferPointer<UInt8>) {
            func starts(_ prefix: StaticString) -> Bool {
                guard let base = bytes.baseAddress, bytes.count >= prefix.utf8CodeUnitCount else { return false }
                return memcmp(base, prefix.utf8Start, prefix.utf8CodeUnitCount) == 0
            }
            func rest(after prefix: StaticString) -> String {
                String(decoding: UnsafeBufferPointer(rebasing: bytes[prefix.utf8CodeUnitCount...]), as: UTF8.self)
            }
            func `is`(_ path: StaticString) -> Bool { bytes.count == path.utf8CodeUnitCount && starts(path) }
            if `is`("/healthz") {
                self = .health
            } else if starts("/ofrep/") {
                if starts("/ofrep/v1/evaluate/flags/"), bytes.count > 25 {
                    self = .single(rest(after: "/ofrep/v1/evaluate/flags/"))
                } else if `is`("/ofrep/v1/evaluate/flags") {
                    self = .bulk
                } else {
                    self = `is`("/ofrep/v1/events") ? .events : .protectedNothing
                }
            } else if `is`("/healthz/upstream") {
                self = .upstreamHealth
            } else if `is`("/") || `is`("/index.html") {
                self = .page
            } else if `is`("/rules") {
                self = .list
            } else if starts("/rules/") {
                self = .rulesFile(rest(after: "/rules/"))
            } else if `is`("/metrics") {
                self = .metrics
            } else if `is`("/api/rules") {
                self = .pageRules
            } else if `is`("/api/evaluate") {
                self = .pageEvaluation
            } else {
                self = starts("/api/") ? .protectedNothing : .nothing
            }
        }
    }

    private func route(_ request: HTTPRequest, peer: String) -> HTTPResponse {
        let resource = Resource(path: request.path)
        if resource.isProtected {
            if let refusal = authorize(request) { return refusal }
            if let limit = options.rateLimit, let retry = throttle(peer, limit: limit) {
                return HTTPResponse(status: 429, headers: [("Retry-After", String(retry))])
            }
        }
        let method = request.method
        switch resource {
        case .single(let key):
            guard method == "POST" else { return methodNotAllowed("POST") }
            return single(key, request)
        case .bulk:
            guard method == "POST" else { return methodNotAllowed("POST") }
            return bulk(request)
        case .health:
            return health()
        case .upstreamHealth:
            return health(statusTells: true)
        case .page:
            guard method == "GET" || method == "HEAD" else { return methodNotAllowed("GET") }
            return .text(200, ServePage.html, type: "text/html; charset=utf-8")
        case .events:
            // The transport serves the stream itself (it holds the connection); a request
            // that reaches here used another method.
            return methodNotAllowed("GET")
        case .list:
            guard method == "GET" || method == "HEAD" else { return methodNotAllowed("GET") }
            return rulesList(request)
        case .rulesFile(let name):
            guard method == "GET" || method == "HEAD" else { return methodNotAllowed("GET") }
            return rulesFile(name, request)
        case .metrics:
            guard method == "GET" else { return methodNotAllowed("GET") }
            return .text(200, metrics.text() + statusMetrics() + transportMetrics(), type: "text/plain; version=0.0.4; charset=utf-8")
        case .pageRules:
            guard method == "GET" else { return methodNotAllowed("GET") }
            return rulesForPage()
        case .pageEvaluation:
            guard method == "POST" else { return methodNotAllowed("POST") }
            return evaluateForPage(request)
        case .protectedNothing, .nothing:
            return .json(404, .object([("errorDetails", .string("no resource at \(request.path)"))]))
        }
    }

    private func methodNotAllowed(_ allowed: String) -> HTTPResponse {
        HTTPResponse(status: 405, headers: [("Allow", allowed)])
    }

    /// 401 without a key, 403 with a wrong one (no body, as OFREP says); nil when allowed.
    package func authorize(_ request: HTTPRequest) -> HTTPResponse? {
        guard !options.apiKeys.isEmpty else { return nil }
        var given: String?
        if let auth = request.header("Authorization") {
            let parts = auth.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" { given = String(parts[1]).trimmingCharacters(in: .whitespaces) }
        }
        if given == nil { given = request.header("X-API-Key") }
        guard let given else { return HTTPResponse(status: 401, headers: [("WWW-Authenticate", "Bearer")]) }
        return options.apiKeys.contains(given) ? nil : HTTPResponse(status: 403)
    }

    /// The most client addresses the rate limit tracks at once.
    static let trackedClients = 10_000

    /// A token bucket per client: nil when a request at `now` may go, else the seconds to wait.
    func throttle(_ peer: String, limit: Int, at now: TimeInterval = Date().timeIntervalSinceReferenceDate) -> Int? {
        return buckets.withLock { buckets in
            var bucket = buckets[peer] ?? (Double(limit), now)
            bucket.tokens = min(Double(limit), bucket.tokens + (now - bucket.at) * Double(limit))
            bucket.at = now
            if buckets.count > OFREPService.trackedClients {
                // Let go of the clients whose bucket is full again (a full bucket is what a new
                // client gets); if more are left than half, of the fullest: a client held back
                // is the last to be forgotten.
                let level = { (b: (tokens: Double, at: Double)) in min(Double(limit), b.tokens + (now - b.at) * Double(limit)) }
                buckets = buckets.filter { level($0.value) < Double(limit) }
                if buckets.count > OFREPService.trackedClients / 2 {
                    let emptiest = buckets.sorted { level($0.value) < level($1.value) }.prefix(OFREPService.trackedClients / 2)
                    buckets = Dictionary(uniqueKeysWithValues: emptiest.map { ($0.key, $0.value) })
                }
            }
            guard bucket.tokens >= 1 else {
                buckets[peer] = bucket
                return max(1, Int(((1 - bucket.tokens) / Double(limit)).rounded(.up)))
            }
            bucket.tokens -= 1
            buckets[peer] = bucket
            return nil
        }
    }

}
