import FlagRules
import FlagRulesTooling
import Foundation

/// The HTTP endpoints of `flags serve`, without sockets: OpenFeature's Remote Evaluation
/// Protocol (OFREP) over the rules in force, the page, its API and the metrics. The
/// transport hands each request to ``respond(_:)``; ``install(_:)`` puts new rules in force
/// (the files' stores call it on every reload).
package final class OFREPService: Sendable {
    /// One served file.
    package struct ServedFile: Sendable {
        package let name: String
        package let rules: RuleSet
        /// The ETag of its text, as `GET /rules/NAME` and the event stream give it.
        package var etag: String { "\"\(rules.contentVersion)\"" }
        package init(name: String, rules: RuleSet) {
            self.name = name
            self.rules = rules
        }
    }

    /// What is in force: the files, each declaration's file, and the version of the whole.
    struct InForce: Sendable {
        var files: [ServedFile] = []
        /// Every flag, variant and value: its file's position. The first file wins a name.
        var index: [String: Int] = [:]
        /// The served names in order (files in order, declarations in order).
        var names: [String] = []
        /// A hash of every file's text: the same rules give the same version on any host.
        var version = "0"
        /// Names declared in two files (the later one is not served).
        var conflicts: [String] = []
        /// When `version` was first in force (the event stream's `lastModified`).
        var since = Date()
    }

    /// An update of a served file that was rejected while its last good rules stay served.
    package struct Rejection: Sendable, Equatable {
        package let file: String
        /// The rejection as the store logged it (the first error, with its place).
        package let message: String
        package let at: Date
        /// Its position among every rejection recorded (1 for the first).
        package let number: Int
    }

    /// The rejections standing (a good update of the file clears its own), the latest ones
    /// recorded (what the event stream sends), and how many were ever recorded.
    private struct Rejections {
        var standing: [Rejection] = []
        var latest: [Rejection] = []
        var count = 0
        /// How many of the latest are kept for the event stream's thread to send.
        static let kept = 256
    }

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
    private let inForce = Locked(InForce())
    package let metrics: ServeMetrics
    private let buckets = Locked([String: (tokens: Double, at: Double)]())
    /// Waiters for the next rules version (the event stream).
    private let versionChanged = NSCondition()
    private let rejections = Locked(Rejections())

    package init(options: Options = Options(), metrics: ServeMetrics = ServeMetrics()) {
        self.options = options
        self.metrics = metrics
    }

    // MARK: Rules

    /// Puts `files` in force; returns the names declared in two files (served from the first).
    @discardableResult
    package func install(_ files: [ServedFile]) -> [String] {
        var next = InForce(files: files)
        var hash = FNV1a.offsetBasis
        for (i, file) in files.enumerated() {
            hash = FNV1a.hash(file.rules.contentVersion.utf8, from: hash)
            for d in file.rules.declarations where d.kind != .segment {
                if next.index[d.name] != nil {
                    next.conflicts.append(d.name)
                    continue
                }
                next.index[d.name] = i
                next.names.append(d.name)
            }
        }
        next.version = String(hash, radix: 36)
        let changed = inForce.withLock { current in
            let changed = current.version != next.version
            if !changed { next.since = current.since }
            current = next
            return changed
        }
        if changed {
            versionChanged.lock()
            versionChanged.broadcast()
            versionChanged.unlock()
        }
        return next.conflicts
    }

    /// Records that an update of `file` was rejected (its last good rules stay served):
    /// the page shows it, and every event-stream subscriber is told at once.
    package func reject(file: String, message: String) {
        rejections.withLock {
            $0.count += 1
            let rejection = Rejection(file: file, message: message, at: Date(), number: $0.count)
            $0.standing.removeAll { $0.file == file }
            $0.standing.append(rejection)
            $0.latest.append(rejection)
            if $0.latest.count > Rejections.kept { $0.latest.removeFirst($0.latest.count - Rejections.kept) }
        }
        wakeEventStreams()
    }

    /// Clears the rejection of `file` (a good update of it is in force).
    package func accepted(file: String) {
        rejections.withLock { $0.standing.removeAll { $0.file == file } }
    }

    /// The rejections standing, oldest first, and how many were ever recorded.
    package var standingRejections: (standing: [Rejection], count: Int) { rejections.withLock { ($0.standing, $0.count) } }

    /// The rejections recorded after the first `count`, oldest first (the latest 256 at most).
    package func rejections(after count: Int) -> [Rejection] {
        rejections.withLock { r in r.latest.filter { $0.number > count } }
    }

    /// Wakes every event stream (the server is draining).
    package func wakeEventStreams() {
        versionChanged.lock()
        versionChanged.broadcast()
        versionChanged.unlock()
    }

    /// The version of the rules in force.
    package var version: String { inForce.withLock { $0.version } }

    /// The served files, in order.
    package var servedFiles: [ServedFile] { inForce.withLock { $0.files } }

    /// The version of the rules in force and when it came in force.
    package var versionAndSince: (version: String, since: Date) { inForce.withLock { ($0.version, $0.since) } }

    /// The version in force, since when, and its files, read at one instant.
    package var versionSinceAndFiles: (version: String, since: Date, files: [ServedFile]) {
        inForce.withLock { ($0.version, $0.since, $0.files) }
    }

    /// Blocks until the rules version differs from `version`, a rejection is recorded after
    /// the first `rejected`, `timeout` passes or the streams are woken; returns the version
    /// and the count of rejections then.
    package func waitForChange(from version: String, rejected: Int, timeout: TimeInterval) -> (version: String, rejected: Int) {
        let deadline = Date().addingTimeInterval(timeout)
        versionChanged.lock()
        defer { versionChanged.unlock() }
        if self.version == version, rejections.withLock({ $0.count }) == rejected { _ = versionChanged.wait(until: deadline) }
        return (self.version, rejections.withLock { $0.count })
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
        if path == "/healthz" { return .text(200, "ok\n") }
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
            return rulesList()
        case "/metrics":
            guard request.method == "GET" else { return methodNotAllowed("GET") }
            return .text(200, metrics.text(), type: "text/plain; version=0.0.4; charset=utf-8")
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

    /// A token bucket per client: nil when a request may go, else the seconds to wait.
    func throttle(_ peer: String, limit: Int) -> Int? {
        let now = Date().timeIntervalSinceReferenceDate
        return buckets.withLock { buckets in
            var bucket = buckets[peer] ?? (Double(limit), now)
            bucket.tokens = min(Double(limit), bucket.tokens + (now - bucket.at) * Double(limit))
            bucket.at = now
            if buckets.count > 10_000 { buckets.removeAll() }
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
        let state = inForce.withLock { $0 }
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
        let state = inForce.withLock { $0 }
        // The same context in any key order has the same ETag.
        let etag = "\"\(state.version)-\(OFREPService.hash(given.canonical.serialized()))\""
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
    package static let eventsPath = "/ofrep/v1/events"
    /// The header a served rules file names the event stream with, so that a store
    /// fetching it subscribes (`FlagStore` reads it).
    package static let eventsHeader = "X-Flags-Events"

    // MARK: Rules files (what a relay or a subscribed store fetches)

    /// The served files' names and versions.
    private func rulesList() -> HTTPResponse {
        let files = inForce.withLock { $0.files }
        return .json(
            200,
            .object([
                (
                    "files",
                    .array(
                        files.map { .object([("name", .string($0.name)), ("etag", .string($0.etag))]) })
                )
            ]), headers: [(OFREPService.eventsHeader, OFREPService.eventsPath)])
    }

    /// One served file's text, with its ETag (`304` when `If-None-Match` names it) and the
    /// event-stream header.
    private func rulesFile(_ name: String, _ request: HTTPRequest) -> HTTPResponse {
        let files = inForce.withLock { $0.files }
        guard let file = files.first(where: { $0.name == name }) else {
            let suggestion = Suggestions.closest(to: name, in: files.map(\.name)).map { "; did you mean '\($0)'?" } ?? ""
            return .json(404, .object([("errorDetails", .string("no served file '\(name)'\(suggestion)"))]))
        }
        let etag = file.etag
        // The stream a store of this file subscribes to carries the file's new text.
        let events = OFREPService.eventsPath + "?rules=" + (name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? name)
        let headers = [("ETag", etag), (OFREPService.eventsHeader, events)]
        if let match = request.header("If-None-Match"), OFREPService.matches(match, etag) {
            return HTTPResponse(status: 304, headers: headers)
        }
        var response = HTTPResponse(
            status: 200, headers: headers + [("Content-Type", "text/plain; charset=utf-8")], body: file.rules.source.bytes)
        response.headers.append(("Cache-Control", "no-cache"))
        return response
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
        let state = inForce.withLock { $0 }
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
        let rejected = standingRejections.standing.map { r in
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
        let state = inForce.withLock { $0 }
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
