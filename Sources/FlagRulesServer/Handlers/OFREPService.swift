import FlagRules
import FlagRulesTooling
import Foundation

/// The HTTP endpoints of `flags serve`, without sockets: OpenFeature's Remote Evaluation
/// Protocol (OFREP) over the rules in force, the page, its API and the metrics. The
/// transport hands each request to ``respond(_:)``; ``install(_:)`` puts new rules in force
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
        package init(apiKeys: Set<String> = [], targetingKey: String = "userId", rateLimit: Int? = nil) {
            self.apiKeys = apiKeys
            self.targetingKey = targetingKey
            self.rateLimit = rateLimit
        }
    }

    let options: Options
    /// The rules in force, their generation and the notices of the event stream.
    package let served: ServedRules
    package let metrics: ServeMetrics
    private let buckets = Locked([String: (tokens: Double, at: Double)]())
    /// What `/healthz` says besides `ok` (a relay's upstream); nil: plain `ok`.
    private let healthReport = Locked<(@Sendable () -> Health)?>(nil)

    package init(options: Options = Options(), metrics: ServeMetrics = ServeMetrics(), served: ServedRules = ServedRules()) {
        self.options = options
        self.metrics = metrics
        self.served = served
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

    // MARK: Health

    /// What `/healthz` answers: `ok` and, for a relay, a line on each upstream file.
    package struct Health: Sendable {
        /// One file fetched from another server (a relay's).
        package struct Upstream: Sendable {
            package var file: String
            package var source: String
            package var reachable: Bool
            /// Whether its event stream is open.
            package var connected: Bool
            package var lastSync: Date?
            package init(file: String, source: String, reachable: Bool, connected: Bool, lastSync: Date?) {
                self.file = file
                self.source = source
                self.reachable = reachable
                self.connected = connected
                self.lastSync = lastSync
            }
        }
        package var upstreams: [Upstream]
        /// Whether everything the server follows is reachable.
        package var ok: Bool { upstreams.allSatisfy(\.reachable) }
        /// Lines after the first (`upstream http://…: connected, last synced …`).
        package var detail: [String] {
            upstreams.map { u in
                let state = u.connected ? "connected" : u.reachable ? "reachable (no stream)" : "unreachable"
                let synced = u.lastSync.map { "last synced \(DateTime.format($0))" } ?? "never synced"
                return "upstream \(u.source): \(state), \(synced)"
            }
        }
        package init(upstreams: [Upstream] = []) { self.upstreams = upstreams }
    }

    /// Sets what `/healthz` reports besides `ok`.
    package func reportHealth(_ report: @escaping @Sendable () -> Health) { healthReport.withLock { $0 = report } }

    /// The gauges of what stands now: the generation, each file's rejection, a relay's
    /// upstream.
    private func statusMetrics() -> String {
        let (snapshot, _) = served.current
        let rejected = Set(served.standing.rejections.map(\.file))
        var out = "# HELP flags_rules_generation The generation of the rules in force (it only goes up).\n"
        out += "# TYPE flags_rules_generation gauge\nflags_rules_generation \(snapshot.generation)\n"
        out += "# HELP flags_rules_rejected Whether a served file's latest update stands rejected (its last good rules are served).\n"
        out += "# TYPE flags_rules_rejected gauge\n"
        for file in snapshot.files {
            out += "flags_rules_rejected{file=\"\(ServeMetrics.escape(file.name))\"} \(rejected.contains(file.name) ? 1 : 0)\n"
        }
        let upstreams = healthReport.withLock({ $0 })?().upstreams ?? []
        guard !upstreams.isEmpty else { return out }
        out += "# HELP flags_upstream_up Whether the server a relayed file comes from is reachable.\n# TYPE flags_upstream_up gauge\n"
        for u in upstreams { out += "flags_upstream_up{file=\"\(ServeMetrics.escape(u.file))\"} \(u.reachable ? 1 : 0)\n" }
        out += "# HELP flags_upstream_last_sync_timestamp_seconds When a relayed file was last known current (Unix time).\n"
        out += "# TYPE flags_upstream_last_sync_timestamp_seconds gauge\n"
        for u in upstreams {
            if let at = u.lastSync {
                out +=
                    "flags_upstream_last_sync_timestamp_seconds{file=\"\(ServeMetrics.escape(u.file))\"} \(Int(at.timeIntervalSince1970))\n"
            }
        }
        return out
    }

    private func health() -> HTTPResponse {
        guard let report = healthReport.withLock({ $0 })?(), !report.upstreams.isEmpty else { return .text(200, "ok\n") }
        // Serving its last good rules, a relay whose upstream is down is still of use: 200,
        // with the first word saying so.
        return .text(200, ([report.ok ? "ok" : "degraded"] + report.detail).joined(separator: "\n") + "\n")
    }

    // MARK: Requests

    /// The response to one request from `peer` (its address, for the rate limit).
    package func respond(_ request: HTTPRequest, peer: String = "") -> HTTPResponse {
        let started = Date()
        let response = route(request, peer: peer)
        metrics.request(status: response.status, seconds: Date().timeIntervalSince(started))
        return response
    }

    private func route(_ request: HTTPRequest, peer: String) -> HTTPResponse {
        let path = request.path
        if path == "/healthz" { return health() }
        if path == "/" || path == "/index.html" {
            guard request.method == "GET" || request.method == "HEAD" else { return methodNotAllowed("GET") }
            return .text(200, ServePage.html, type: "text/html; charset=utf-8")
        }
        let protected =
            path.hasPrefix("/ofrep/") || path.hasPrefix("/api/") || path == "/metrics" || path == "/rules" || path.hasPrefix("/rules/")
        guard protected else { return .json(404, .object([("errorDetails", .string("no resource at \(path)"))])) }
        if let refusal = authorize(request) { return refusal }
        if let limit = options.rateLimit, let retry = throttle(peer, limit: limit) {
            return HTTPResponse(status: 429, headers: [("Retry-After", String(retry))])
        }
        switch path {
        case "/ofrep/v1/evaluate/flags":
            guard request.method == "POST" else { return methodNotAllowed("POST") }
            return bulk(request)
        case "/ofrep/v1/events":
            // The transport serves the stream itself (it holds the connection); a request
            // that reaches here used another method.
            return methodNotAllowed("GET")
        case "/rules":
            guard request.method == "GET" || request.method == "HEAD" else { return methodNotAllowed("GET") }
            return rulesList(request)
        case "/metrics":
            guard request.method == "GET" else { return methodNotAllowed("GET") }
            return .text(200, metrics.text() + statusMetrics(), type: "text/plain; version=0.0.4; charset=utf-8")
        case "/api/rules":
            guard request.method == "GET" else { return methodNotAllowed("GET") }
            return rulesForPage()
        case "/api/evaluate":
            guard request.method == "POST" else { return methodNotAllowed("POST") }
            return evaluateForPage(request)
        default:
            if path.hasPrefix("/rules/") {
                guard request.method == "GET" || request.method == "HEAD" else { return methodNotAllowed("GET") }
                return rulesFile(String(path.dropFirst("/rules/".count)), request)
            }
            let prefix = "/ofrep/v1/evaluate/flags/"
            if path.hasPrefix(prefix), path.count > prefix.count {
                guard request.method == "POST" else { return methodNotAllowed("POST") }
                return single(String(path.dropFirst(prefix.count)), request)
            }
            return .json(404, .object([("errorDetails", .string("no resource at \(path)"))]))
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

    /// A token bucket per client: nil when a request may go, else the seconds to wait.
    func throttle(_ peer: String, limit: Int) -> Int? {
        let now = Date().timeIntervalSinceReferenceDate
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

    // MARK: OFREP

    /// The context of an OFREP body, or the failure to answer with.
    enum ContextFailure: Error {
        case parse(String)
        case invalid(String)
    }

    func context(of request: HTTPRequest) -> Result<(EvaluationContext, JSON), ContextFailure> {
        let body: JSON
        do {
            body = try JSON.parse(bytes: request.body)
        } catch {
            return .failure(.parse("the body is not JSON: \(error)"))
        }
        guard case .object = body else { return .failure(.parse("the body is \(body.kindName), not an object with a context")) }
        let given = body["context"] ?? .object([])
        guard case .object(var members) = given else {
            return .failure(.invalid("'context' is \(given.kindName), not an object"))
        }
        if let i = members.firstIndex(where: { $0.0 == "targetingKey" }) {
            let key = members.remove(at: i).1
            if !members.contains(where: { $0.0 == options.targetingKey }) { members.append((options.targetingKey, key)) }
        }
        do {
            return .success((try EvaluationContext(jsonMembers: members), given))
        } catch {
            return .failure(.invalid(error.message))
        }
    }

    private func single(_ key: String, _ request: HTTPRequest) -> HTTPResponse {
        let context: EvaluationContext
        switch self.context(of: request) {
        case .failure(.parse(let message)):
            return .json(400, failure(key, "PARSE_ERROR", message))
        case .failure(.invalid(let message)):
            return .json(400, failure(key, "INVALID_CONTEXT", message))
        case .success(let (c, _)):
            context = c
        }
        let state = served.snapshot
        guard let file = state.index[key] else {
            let suggestion = Suggestions.closest(to: key, in: state.names).map { "; did you mean '\($0)'?" } ?? ""
            return .json(404, failure(key, "FLAG_NOT_FOUND", "no flag, variant or value is named '\(key)'\(suggestion)"))
        }
        let (status, json) = evaluate(key, in: state.files[file].rules, context)
        return .json(status, json)
    }

    private func bulk(_ request: HTTPRequest) -> HTTPResponse {
        let context: EvaluationContext
        let given: JSON
        switch self.context(of: request) {
        case .failure(.parse(let message)):
            return .json(400, .object([("errorCode", .string("PARSE_ERROR")), ("errorDetails", .string(message))]))
        case .failure(.invalid(let message)):
            return .json(400, .object([("errorCode", .string("INVALID_CONTEXT")), ("errorDetails", .string(message))]))
        case .success(let (c, g)):
            context = c
            given = g
        }
        let state = served.snapshot
        // The same context in any key order has the same ETag.
        let etag = "\"\(state.contentVersion)-\(OFREPService.hash(given.canonical.serialized()))\""
        if let match = request.header("If-None-Match"), OFREPService.matches(match, etag) {
            return HTTPResponse(status: 304, headers: [("ETag", etag)])
        }
        let flags: [JSON] = state.names.map { name in evaluate(name, in: state.files[state.index[name]!].rules, context).1 }
        return .json(
            200,
            .object([
                ("flags", .array(flags)),
                ("metadata", .object([("version", .string(state.version))])),
                ("eventStreams", .array([OFREPService.eventStream])),
            ]), headers: [("ETag", etag)])
    }

    /// The bulk response's `eventStreams` entry: this server's stream, on its own origin.
    static let eventStream: JSON = .object([
        ("type", .string("sse")), ("endpoint", .object([("requestUri", .string(OFREPService.eventsPath))])),
        ("inactivityDelaySec", .int(120)),
    ])
    /// Where the event stream is served.
    package static let eventsPath = PushProtocol.eventsPath
    /// The header a served rules file names the event stream with, so that a store
    /// fetching it subscribes (`FlagStore` reads it).
    package static let eventsHeader = PushProtocol.eventsHeader

    // MARK: Rules files (what a relay or a subscribed store fetches)

    /// How a cache may keep `/rules` and `/rules/NAME`: a shared cache (a CDN, nginx's
    /// `proxy_cache`) for a second and then revalidates with `If-None-Match` (a 304 costs
    /// no body); a client's own cache revalidates each time. A `no-cache` would keep
    /// nginx from caching at all, and every look would download the whole file.
    static let cacheControl = "max-age=0, s-maxage=1, must-revalidate"

    /// The served files' names, ETags and generations, with an ETag of its own.
    private func rulesList(_ request: HTTPRequest) -> HTTPResponse {
        let state = served.snapshot
        let body = PushProtocol.list(state.files.map { .init(name: $0.name, etag: $0.etag, generation: $0.generation) })
        let text = body.serialized()
        let etag = "\"\(OFREPService.hash(text))\""
        return conditional(
            request, etag: etag, modified: state.since,
            headers: [(OFREPService.eventsHeader, OFREPService.eventsPath)],
            body: Array(text.utf8), type: "application/json")
    }

    /// One served file's text, with its ETag, generation and modification time (`304`
    /// when `If-None-Match` names it) and the event-stream header.
    private func rulesFile(_ name: String, _ request: HTTPRequest) -> HTTPResponse {
        let files = served.snapshot.files
        guard let file = files.first(where: { $0.name == name }) else {
            let suggestion = Suggestions.closest(to: name, in: files.map(\.name)).map { "; did you mean '\($0)'?" } ?? ""
            return .json(404, .object([("errorDetails", .string("no served file '\(name)'\(suggestion)"))]))
        }
        // The stream a store of this file subscribes to carries the file's new text.
        return conditional(
            request, etag: file.etag, modified: Date(timeIntervalSince1970: Double(file.generation) / 1e6),
            headers: [
                (OFREPService.eventsHeader, PushProtocol.streamPath(file: name)),
                (PushProtocol.generationHeader, String(file.generation)),
            ],
            body: file.rules.source.bytes, type: "text/plain; charset=utf-8")
    }

    /// A `GET` answered with its validators: `304` when `If-None-Match` names `etag` (or,
    /// without one, `If-Modified-Since` is not before `modified`), else `200` and `body`.
    private func conditional(
        _ request: HTTPRequest, etag: String, modified: Date, headers: [(String, String)], body: [UInt8], type: String
    ) -> HTTPResponse {
        let validators = [
            ("ETag", etag), ("Last-Modified", HTTPDate.format(modified)), ("Cache-Control", OFREPService.cacheControl),
            ("Date", HTTPDate.format(Date())),
        ]
        let notModified: Bool
        if let match = request.header("If-None-Match") {
            notModified = OFREPService.matches(match, etag)
        } else if let since = request.header("If-Modified-Since").flatMap(HTTPDate.parse) {
            notModified = modified.timeIntervalSince1970.rounded(.down) <= since.timeIntervalSince1970
        } else {
            notModified = false
        }
        if notModified { return HTTPResponse(status: 304, headers: validators + headers) }
        return HTTPResponse(status: 200, headers: validators + headers + [("Content-Type", type)], body: body)
    }

    /// Whether an `If-None-Match` list names `etag`: `*`, or a tag equal to it by the weak
    /// comparison (RFC 9110 §13.1.2: a proxy that compresses a body weakens its ETag to
    /// `W/"…"`).
    static func matches(_ list: String, _ etag: String) -> Bool {
        list.split(separator: ",").contains { item in
            var tag = item.trimmingCharacters(in: .whitespaces)
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            return tag == etag
        }
    }

    func failure(_ key: String, _ code: String, _ details: String) -> JSON {
        .object([("key", .string(key)), ("errorCode", .string(code)), ("errorDetails", .string(details))])
    }

    /// One declaration's OFREP answer: 200 and a success, or 400 and a failure.
    func evaluate(_ key: String, in rules: RuleSet, _ context: EvaluationContext) -> (Int, JSON) {
        guard let info = rules.declaration(named: key) else { return (404, failure(key, "FLAG_NOT_FOUND", "no declaration '\(key)'")) }
        // A value of the wrong type for an attribute the declaration reads fails it; other
        // attributes are not its concern.
        for read in info.reads {
            guard let value = context[read.name] else { continue }
            let fits: Bool
            if read.name == "now" {
                if case .string(let s) = value { fits = DateTime.parse(s) != nil } else { fits = value.isDatetime }
            } else if let type = rules.schema?[read.name]?.type {
                fits = Coercion(type).apply(value) != nil
            } else {
                fits = true
            }
            if !fits {
                metrics.evaluation(key, reason: "ERROR")
                let problem = ContextProblem(
                    attribute: read.name,
                    kind: .mistyped(expected: read.name == "now" ? "an ISO 8601 datetime" : ContextSchema.describe(read.type)))
                return (400, failure(key, "INVALID_CONTEXT", problem.description))
            }
        }
        let r = rules.evaluate(key, in: context)
        metrics.evaluation(key, reason: r.reason.rawValue, value: r.reason == .error ? nil : r.value)
        if r.reason == .error {
            return (400, failure(key, "GENERAL", r.errorMessage ?? "evaluation failed"))
        }
        var metadata: [(String, JSON)] = [("kind", .string(info.kind.rawValue))]
        if let rule = r.rule { metadata.append(("rule", .int(rule))) }
        if let line = r.line { metadata.append(("line", .int(line))) }
        if let owner = info.owner { metadata.append(("owner", .string(owner))) }
        // A rollout or split whose unit is absent does not match (the language's rule, the
        // same in Swift and `flags eval`); say so, so that a keyless context is not taken
        // for an assignment.
        let absent = rules.absentUnits(of: key, resolution: r, in: context)
        if !absent.isEmpty { metadata.append(("absentUnits", .string(absent.joined(separator: ",")))) }
        return (
            200,
            .object([
                ("key", .string(key)), ("value", r.value.json), ("reason", .string(r.reason.rawValue)),
                ("variant", .string(OFREPService.variant(r))), ("metadata", .object(metadata)),
            ])
        )
    }

    /// The OFREP variant: a variant's name; for a flag or value, what decided, as a stable
    /// name (`rule2`, `default`, `static`, `disabled`).
    static func variant(_ r: Resolution) -> String {
        if let v = r.variant { return v }
        if let rule = r.rule { return "rule\(rule)" }
        return r.reason.rawValue.lowercased()
    }

    /// FNV-1a of a text, in base 36.
    static func hash(_ text: String) -> String {
        String(FNV1a.hash(text.utf8), radix: 36)
    }

    // MARK: The page's API

    private func rulesForPage() -> HTTPResponse {
        let state = served.snapshot
        var declarations: [JSON] = []
        var schema: [(String, JSON)] = []
        for file in state.files {
            let lines = String(decoding: file.rules.source.bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            let stale = Dictionary(file.rules.staleDeclarations().map { ($0.name, $0.reasons) }, uniquingKeysWith: { a, _ in a })
            for d in file.rules.declarations
            where d.kind != .segment && state.index[d.name].map({ state.files[$0].name == file.name }) == true {
                guard case .object(var m) = d.json else { continue }
                m.append(("file", .string(file.name)))
                // Its text as written, from its keyword to its closing line.
                let text = lines[max(0, d.line - 1)..<min(lines.count, d.endLine)].joined(separator: "\n")
                m.append(("source", .string(text)))
                let reasons = (stale[d.name] ?? []).map { JSON.object([("code", .string($0.code)), ("detail", .string($0.detail))]) }
                m.append(("stale", .array(reasons)))
                declarations.append(.object(m))
            }
            for a in file.rules.schema?.attributes ?? [] where !schema.contains(where: { $0.0 == a.name }) {
                var field: [(String, JSON)] = [("type", .string(a.type.description))]
                if let cases = a.type.cases ?? a.type.element?.cases { field.append(("cases", .array(cases.map(JSON.string)))) }
                field.append(("list", .bool(a.type.isList)))
                schema.append((a.name, .object(field)))
            }
        }
        // The instant rules are evaluated at (a schedule or a ramp, previewed).
        if !schema.contains(where: { $0.0 == "now" }) {
            schema.append(("now", .object([("type", .string("datetime")), ("list", .bool(false))])))
        }
        let rejected = served.standing.rejections.map { r in
            JSON.object([("file", .string(r.file)), ("message", .string(r.message)), ("at", .int(Int(r.at.timeIntervalSince1970)))])
        }
        return .json(
            200,
            .object([
                ("declarations", .array(declarations)), ("schema", .object(schema)), ("version", .string(state.version)),
                ("since", .int(Int(state.since.timeIntervalSince1970))), ("rejected", .array(rejected)),
            ]))
    }

    private func evaluateForPage(_ request: HTTPRequest) -> HTTPResponse {
        guard case .success(let (context, _)) = self.context(of: request) else {
            return .json(400, .object([("errorDetails", .string("send {\"context\": {…}}"))]))
        }
        let state = served.snapshot
        let results: [(String, JSON)] = state.names.map { name in
            let rules = state.files[state.index[name]!].rules
            let r = rules.evaluate(name, in: context)
            var m: [(String, JSON)] = [("resolution", r.json)]
            if let e = rules.explain(name, in: context) { m.append(("explanation", .string(e.text))) }
            return (name, .object(m))
        }
        return .json(200, .object(results))
    }
}
