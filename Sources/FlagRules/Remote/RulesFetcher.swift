import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a `.flags` file was served with, to ask only for a newer one next time.
struct Validators: Sendable, Hashable, Codable {
    var etag: String?
    var lastModified: String?
}

/// What one look at a source found.
enum FetchResult: Sendable {
    /// The same rules as last time (an unchanged file, a `304`; its generation when the
    /// answer named one).
    case unchanged(generation: Int? = nil)
    /// New text, with what identifies it (to be committed once the text is taken).
    case fetched([UInt8], Seen)
    /// A file that changed and may still be being written: looked at again after `wait`,
    /// and taken once it has stopped changing.
    case settling(wait: Duration)
    /// Why the source could not be read or what it held was refused. `outage`: the source
    /// could not be reached (a timeout, a refused connection, an HTTP error status), and the
    /// next look backs off; otherwise it answered with something unusable (a missing or
    /// oversized file, an empty or oversized body) and the next look is at the usual pace.
    /// `unreachable`: no answer at all, or a proxy's saying the server behind it is down
    /// (``ErrorAnswers``): it may be back any second. `retryAfter`: the wait the answer asked
    /// for.
    case failed(String, outage: Bool, unreachable: Bool = false, retryAfter: Duration? = nil)
}

/// What identifies a text read: a URL's validators, a file's stamp, and the generation its
/// server gave it (see ``PushProtocol``).
struct Seen: Sendable {
    var validators = Validators()
    var fileStamp: RulesFetcher.FileStamp?
    var generation: Int?
}

/// Reads a store's source when asked, remembering what it last took: a file's
/// modification time, size and identity, or a URL's validators, so that an unchanged
/// source is not read or compiled again. A text is remembered only once it is committed
/// (an empty body is not, so that it is read again).
///
/// A file is taken only once it has stopped changing: when it was last modified at least
/// ``settleTime`` ago, or when its stamp has stayed the same for that long (a clock that
/// disagrees with the file system's cannot hold it back for longer). A file written in
/// place in parts is read whole, not as its first part; one that changes while it is read
/// is read again. A file that replaced the one last looked at (another file renamed over
/// it, as editors and atomic writes do) was whole before it was renamed, and is read at
/// once.
struct RulesFetcher: Sendable {
    let source: RulesSource
    /// The longest a request may take, headers and body.
    let timeout: Duration
    /// The largest body or file read; larger is a failure, not a truncation.
    let maximumSize: Int
    /// The validators of the last text taken from a URL (sent with the next request).
    var validators = Validators()
    /// The last file taken, as (modification time, size, identity).
    private var fileStamp: FileStamp?
    /// A changed file's stamp, and when it was first seen: it is taken once unchanged for
    /// ``settleTime``.
    private var settlingStamp: (stamp: FileStamp, since: ContinuousClock.Instant)?
    /// The identity of the file last looked at (taken or not).
    private var lastIdentity: Int?
    /// How long a changed file must go unchanged before it is taken.
    static let settleTime: Duration = .seconds(1)
    /// One HTTP session for every request of a URL source.
    private let client: HTTPClient?
    /// The event stream the source's server named (`X-Flags-Events`), resolved against
    /// the source's URL (or kept in the cache from an earlier run): the store subscribes
    /// to it.
    var eventsURL: URL?
    /// For a source that is a server's base URL (no path), the file it names: the one file
    /// a `flags serve` lists at `/rules`, or the base URL itself for another server.
    private var resolved: URL?

    init(source: RulesSource, timeout: Duration, maximumSize: Int) {
        self.source = source
        self.timeout = timeout
        self.maximumSize = max(maximumSize, 1)
        if case .url = source { client = HTTPClient() } else { client = nil }
    }

    mutating func fetch() async -> FetchResult {
        switch source {
        case .file(let url): return readSettledFile(url)
        case .url(let url, let headers): return await download(url, headers: headers)
        }
    }

    /// Remembers a text as taken: the next look asks only for a newer one.
    mutating func commit(_ seen: Seen) {
        switch source {
        case .file: fileStamp = seen.fileStamp
        case .url: validators = seen.validators
        }
    }

    /// Ends the HTTP session (a store's, when it is released).
    func close() { client?.close() }

    /// Cancels every request in flight: each ends as a failure at once.
    func cancelInFlight() { client?.cancelAll() }

    // MARK: Files

    struct FileStamp: Hashable, Sendable {
        let modified: Date?
        let size: Int
        let identity: Int?
    }

    /// The stamp of the file the path leads to, through any symbolic links (a ConfigMap's key
    /// is a link whose target is swapped: a new target is a new file); nil when it cannot be
    /// read.
    static func stamp(_ url: URL) -> FileStamp? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.resolvingSymlinksInPath().path) else {
            return nil
        }
        return FileStamp(
            modified: attributes[.modificationDate] as? Date, size: (attributes[.size] as? NSNumber)?.intValue ?? -1,
            identity: (attributes[.systemFileNumber] as? NSNumber)?.intValue)
    }

    /// The file, once it has stopped changing (see ``settleTime``).
    private mutating func readSettledFile(_ url: URL, now: ContinuousClock.Instant = .now, date: Date = Date()) -> FetchResult {
        guard let stamp = RulesFetcher.stamp(url) else { return .failed("cannot read \(url.path): no such file", outage: false) }
        let replaced = lastIdentity != nil && stamp.identity != nil && stamp.identity != lastIdentity
        lastIdentity = stamp.identity
        if stamp == fileStamp {
            settlingStamp = nil
            return .unchanged()
        }
        let age = replaced ? .infinity : stamp.modified.map { date.timeIntervalSince($0) } ?? .infinity
        let settle = RulesFetcher.settleTime.inSeconds
        if age < settle {
            guard let settling = settlingStamp, settling.stamp == stamp else {
                settlingStamp = (stamp, now)
                return .settling(wait: min(RulesFetcher.settleTime, .milliseconds(Int(((settle - max(0, age)) * 1_000).rounded(.up)))))
            }
            let unchangedFor = now - settling.since
            if unchangedFor < RulesFetcher.settleTime { return .settling(wait: RulesFetcher.settleTime - unchangedFor) }
        }
        let result = readFile(url, stamp: stamp)
        // Changed while it was read: what was read may be part of a write.
        if case .fetched = result, RulesFetcher.stamp(url) != stamp {
            settlingStamp = nil
            return .settling(wait: .milliseconds(100))
        }
        settlingStamp = nil
        return result
    }

    private func readFile(_ url: URL, stamp: FileStamp) -> FetchResult {
        guard stamp.size <= maximumSize else {
            return .failed("\(url.path) is \(stamp.size) bytes; the limit is \(maximumSize)", outage: false)
        }
        guard let handle = FileHandle(forReadingAtPath: url.path) else { return .failed("cannot open \(url.path)", outage: false) }
        defer { try? handle.close() }
        let data: Data
        do {
            // One byte past the limit tells a file that grew past it from one at it.
            data = try handle.read(upToCount: maximumSize == .max ? .max : maximumSize + 1) ?? Data()
        } catch {
            return .failed("cannot read \(url.path): \((error as NSError).localizedDescription)", outage: false)
        }
        guard data.count <= maximumSize else {
            return .failed("\(url.path) is over \(maximumSize) bytes, the limit", outage: false)
        }
        return .fetched(Array(data), Seen(fileStamp: stamp))
    }

    // MARK: URLs

    private mutating func download(_ source: URL, headers: [String: String]) async -> FetchResult {
        guard let client else { return .failed("\(source.absoluteString): no HTTP session", outage: true) }
        let url: URL
        if let resolved {
            url = resolved
        } else if Self.isBase(source) {
            switch await resolve(source, headers: headers, client: client) {
            case .success(let file):
                resolved = file
                url = file
            case .failure(let failure):
                return .failed(failure.reason, outage: failure.outage, unreachable: failure.unreachable, retryAfter: failure.retryAfter)
            }
        } else {
            url = source
        }
        var request = URLRequest(url: url)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let etag = validators.etag { request.setValue(etag, forHTTPHeaderField: "If-None-Match") }
        if let date = validators.lastModified { request.setValue(date, forHTTPHeaderField: "If-Modified-Since") }
        switch await client.get(request, timeout: timeout, maximumSize: maximumSize) {
        case .failure(let reason, let outage):
            return .failed("\(url.absoluteString): \(reason)", outage: outage, unreachable: outage)
        case .success(let response, let body):
            let fields = response.lowercasedFields
            if [200, 304].contains(response.statusCode) {
                eventsURL = fields[EventSubscription.header.lowercased()].flatMap { URL(string: $0, relativeTo: url)?.absoluteURL }
            }
            switch response.statusCode {
            case 304:
                return .unchanged(generation: PushProtocol.generation(fields[PushProtocol.generationHeader.lowercased()]))
            case 200:
                let lastModified = fields["last-modified"].flatMap { Validators.strongLastModified($0, date: fields["date"]) }
                return .fetched(
                    body,
                    Seen(
                        validators: Validators(etag: fields["etag"], lastModified: lastModified),
                        generation: PushProtocol.generation(fields[PushProtocol.generationHeader.lowercased()])))
            default:
                // The file a base URL named may be gone (renamed): the next look asks again.
                if url != source { resolved = nil }
                let status = response.statusCode
                let retryAfter = ErrorAnswers.retryAfter(status: status, field: fields["retry-after"])
                return .failed(
                    "\(url.absoluteString): HTTP \(status)", outage: true,
                    unreachable: ErrorAnswers.isUnreachable(status: status, retryAfter: retryAfter), retryAfter: retryAfter)
            }
        }
    }

    // MARK: A server's base URL

    /// Why a base URL names no file.
    struct Unresolved: Error {
        let reason: String
        let outage: Bool
        var unreachable = false
        var retryAfter: Duration?
    }

    /// Whether `url` is a server's base URL: no path (or `/`), no query.
    static func isBase(_ url: URL) -> Bool {
        guard let parts = URLComponents(url: url, resolvingAgainstBaseURL: false), parts.host != nil else { return false }
        return (parts.path.isEmpty || parts.path == "/") && parts.query == nil
    }

    /// The file a base URL names: asks the server for `/rules`, the list a `flags serve`
    /// answers. One file: that file's URL. Several, or none: a failure naming them. A
    /// server that answers with no such list: the base URL itself.
    private func resolve(_ base: URL, headers: [String: String], client: HTTPClient) async -> Result<URL, Unresolved> {
        let root = base.absoluteString.hasSuffix("/") ? String(base.absoluteString.dropLast()) : base.absoluteString
        guard let listURL = URL(string: root + PushProtocol.listPath) else { return .success(base) }
        var request = URLRequest(url: listURL)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        switch await client.get(request, timeout: timeout, maximumSize: min(maximumSize, 1 << 20)) {
        case .failure(let reason, let outage):
            return .failure(Unresolved(reason: "\(listURL.absoluteString): \(reason)", outage: outage, unreachable: outage))
        case .success(let response, let body):
            if [401, 403].contains(response.statusCode) {
                return .failure(
                    Unresolved(reason: "\(listURL.absoluteString): HTTP \(response.statusCode) (the server wants a key)", outage: true))
            }
            // A server that is busy or down (or a proxy saying so) names nothing yet: asked
            // again, not taken for a server that lists no files.
            let status = response.statusCode
            if status == 429 || status >= 500 {
                let fields = response.lowercasedFields
                let retryAfter = ErrorAnswers.retryAfter(status: status, field: fields["retry-after"])
                return .failure(
                    Unresolved(
                        reason: "\(listURL.absoluteString): HTTP \(status)", outage: true,
                        unreachable: ErrorAnswers.isUnreachable(status: status, retryAfter: retryAfter), retryAfter: retryAfter))
            }
            guard status == 200, let names = Self.servedFiles(body) else { return .success(base) }
            return Self.file(of: root, among: names)
        }
    }

    /// The names a `flags serve` rules list (`{"files": [{"name": …}, …]}`) holds; nil for
    /// any other body.
    static func servedFiles(_ body: [UInt8]) -> [String]? { PushProtocol.listedNames(body) }

    /// `root/rules/NAME` when `names` holds one name; else a failure naming them.
    static func file(of root: String, among names: [String]) -> Result<URL, Unresolved> {
        func url(_ name: String) -> String { root + PushProtocol.filePath(name) }
        switch names.count {
        case 1:
            guard let file = URL(string: url(names[0])) else {
                return .failure(Unresolved(reason: "\(root) serves '\(names[0])', which makes no URL", outage: false))
            }
            return .success(file)
        case 0:
            return .failure(Unresolved(reason: "\(root) serves no file yet", outage: false))
        default:
            let shown = names.prefix(5).map { "'\($0)'" }.joined(separator: ", ") + (names.count > 5 ? ", …" : "")
            return .failure(
                Unresolved(
                    reason: "\(root) serves \(names.count) files (\(shown)): name one, as \(url(names[0]))", outage: false))
        }
    }
}

extension Validators {
    /// `lastModified`, when it can tell one version from the next: at least a second
    /// before the response's `Date` (RFC 9110 §8.8.2.2). A file changed again within the
    /// second it was served in would keep that date, and `If-Modified-Since` would then
    /// answer `304` for the newer text forever. Nil when it is weak or either date does
    /// not parse.
    static func strongLastModified(_ lastModified: String, date: String?) -> String? {
        guard let modified = HTTPDate.parse(lastModified), let date = date.flatMap(HTTPDate.parse) else { return nil }
        return date.timeIntervalSince(modified) >= 1 ? lastModified : nil
    }
}

/// The HTTP requests of stores and of the `flags` command, on the process's shared fetch
/// session (``SharedSession``): each read up to a limit (a larger body cancels the request)
/// and failed after a deadline or when its task is cancelled, whatever the server does.
package final class HTTPClient: Sendable {
    package enum Outcome: Sendable {
        case success(HTTPURLResponse, [UInt8])
        /// Why there is no response; `outage` unless the body was refused (over the limit).
        case failure(String, outage: Bool = true)
    }

    /// The transfers in flight, for ``cancelAll()``.
    private let inFlight = Locked<[ObjectIdentifier: Transfer]>([:])

    package init() {}

    /// Ends every transfer in flight (the session is the process's, shared).
    func close() { cancelAll() }

    package func get(_ request: URLRequest, timeout: Duration, maximumSize: Int) async -> Outcome {
        let seconds = timeout.inSeconds
        var request = request
        // The deadline below is the timeout; the request's own (whole seconds with some
        // implementations, where 0.3 would be 0) only backs it up.
        request.timeoutInterval = seconds.rounded(.up) + 1
        let transfer = Transfer(maximumSize: maximumSize, timeout: timeout)
        inFlight.withLock { $0[ObjectIdentifier(transfer)] = transfer }
        defer { inFlight.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(transfer)) } }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                guard transfer.wait(continuation) else { return }
                DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
                    transfer.finish(.failure("no complete response within \(timeout.readable)"))
                }
                SharedSession.fetches.start(request, handler: transfer)
            }
        } onCancel: {
            transfer.finish(.failure("cancelled"))
        }
    }

    /// Ends every transfer in flight as cancelled.
    func cancelAll() {
        for transfer in inFlight.withLock({ Array($0.values) }) { transfer.finish(.failure("cancelled")) }
    }

    /// One request: its body so far, and its caller, resumed once with the first outcome
    /// (later ones, such as a cancellation's error, are dropped).
    private final class Transfer: SessionTaskHandler, @unchecked Sendable {
        // Unchecked: everything that changes is behind `state`.
        private struct State {
            var body: [UInt8] = []
            var continuation: CheckedContinuation<Outcome, Never>?
            var task: URLSessionDataTask?
            /// The outcome, once there is one (it may come before the caller waits).
            var outcome: Outcome?
        }

        let maximumSize: Int
        let timeout: Duration
        private let state = Locked(State())

        init(maximumSize: Int, timeout: Duration) {
            self.maximumSize = maximumSize
            self.timeout = timeout
        }

        /// The caller waits; false when the transfer had already ended (it is resumed now).
        func wait(_ continuation: CheckedContinuation<Outcome, Never>) -> Bool {
            let ended = state.withLock { s -> Outcome? in
                if s.outcome == nil { s.continuation = continuation }
                return s.outcome
            }
            if let ended { continuation.resume(returning: ended) }
            return ended == nil
        }

        /// Ends the transfer with `outcome` unless it has ended, and cancels its task.
        func finish(_ outcome: Outcome) {
            let (continuation, task) = state.withLock { s -> (CheckedContinuation<Outcome, Never>?, URLSessionDataTask?) in
                guard s.outcome == nil else { return (nil, nil) }
                s.outcome = outcome
                defer { s.continuation = nil }
                return (s.continuation, s.task)
            }
            continuation?.resume(returning: outcome)
            if let task, case .failure = outcome { SharedSession.fetches.cancel(task) }
        }

        func started(_ task: URLSessionDataTask) -> Bool {
            state.withLock { s in
                s.task = task
                return s.outcome == nil
            }
        }

        func received(_ response: URLResponse, on task: URLSessionDataTask) -> URLSession.ResponseDisposition { .allow }

        func received(_ data: Data, on dataTask: URLSessionDataTask) {
            let expected = dataTask.response?.expectedContentLength ?? -1
            let over = state.withLock { s -> Bool in
                // Appended in place: the body is never copied (a copy per chunk would make a
                // large body quadratic).
                s.body.append(contentsOf: data)
                return s.body.count > maximumSize || expected > maximumSize
            }
            if over { finish(.failure("the body is over \(maximumSize) bytes, the limit", outage: false)) }
        }

        func completed(_ task: URLSessionTask, error: (any Error)?) {
            if let error {
                let timedOut = (error as NSError).domain == NSURLErrorDomain && (error as NSError).code == NSURLErrorTimedOut
                finish(.failure(timedOut ? "no complete response within \(timeout.readable)" : (error as NSError).localizedDescription))
            } else if let response = task.response as? HTTPURLResponse {
                finish(.success(response, state.withLock { $0.body }))
            } else {
                finish(.failure("not an HTTP response"))
            }
        }
    }
}

extension HTTPURLResponse {
    /// The header fields, their names in lower case (the first of a name given twice).
    var lowercasedFields: [String: String] {
        Dictionary(allHeaderFields.compactMap { k, v in (k as? String).map { ($0.lowercased(), "\(v)") } }, uniquingKeysWith: { a, _ in a })
    }
}
