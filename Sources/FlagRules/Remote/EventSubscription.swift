import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A store's subscription to the event stream of the server its rules come from (`flags
/// serve` names its stream in the `X-Flags-Events` header of a rules file). What the stream
/// says goes to the store through `heard`, in the order it came:
///
/// - a `rulesChanged` event carries the file's new text, ETag and generation (checked as
///   any fetched text is, and never put in force over a newer one). On a stream that
///   carries the file's text (`?rules=NAME`, what `flags serve` names), that event is how
///   each change of the file comes, and the `refetchEvaluation` events (sent for a change
///   of any file) need no fetch; on any other stream a `refetchEvaluation` asks for one.
/// - `rulesRejected` and `rulesAccepted` for the file: its server rejected an update (and
///   serves its last good rules), or no longer does.
/// - each connection made (the first and every reconnection, after which a change may have
///   been missed) asks for a fetch too; except on a stream that starts from the text in
///   force (`X-Flags-Rules: current`), asked with the ETag and generation the store holds
///   (`If-None-Match`, `X-Flags-Generation`): a newer text is then its first event.
///
/// A stream of `http://` is read on a plain socket, every stream of the process on one
/// thread (``PlainStreams``); one of `https://` on the process's shared URL session.
/// A connection that fails or ends is made again after a short wait while the server
/// cannot be reached (a quarter of a second, doubling to 2 s), and after a longer one when
/// it answers with an error (1 s, doubling to a minute); each is drawn between half and all
/// of that, so that a fleet does not reconnect in step. The store's polling goes on
/// meanwhile.
final class EventSubscription: SessionTaskHandler, PlainStreamReceiver, @unchecked Sendable {
    // Unchecked: everything that changes is behind `state`.
    /// The connection: a plain socket for `http://` (``PlainStreams``), a URL session task
    /// otherwise.
    private enum Link {
        case session(URLSessionDataTask)
        case plain(PlainStreams.Stream)

        func isSame(as other: Link?) -> Bool {
            switch (self, other) {
            case (.session(let a), .session(let b)?): return a === b
            case (.plain(let a), .plain(let b)?): return a === b
            default: return false
            }
        }
    }

    private struct State {
        var reader = ServerSentEvents()
        var task: Link?
        /// Connections in a row that failed, and whether the latest was answered with an error.
        var failures = 0
        var refused = false
        /// What the latest refusal asked (``ErrorAnswers``): a wait, or that the server
        /// behind a proxy is down.
        var retryAfter: Duration?
        var proxyOutage = false
        var cancelled = false
        var connected = false
        /// Whether the connection being made names the text the store holds.
        var namedHeld = false
        /// When the latest connection was lost (nil while connected, or before the first).
        var lostAt: Date?
        /// When the connection open now was made, and whether it has brought an event: one
        /// that ends at once (a proxy that answers and hangs up) is a failure in a row.
        var connectedAt: Date?
        var broughtEvent = false
    }

    /// What the stream told the store.
    enum Heard: Sendable, Equatable {
        /// Put this text in force (unless the store holds a newer one).
        case rules(text: [UInt8], etag: String, generation: Int?)
        /// Make a conditional fetch.
        case fetch
        /// The server rejected an update of the file (it serves its last good rules).
        case rejected(message: String, at: Date)
        /// The file's rejection no longer stands; the text in force upstream is `etag`, of
        /// `generation` when the server said.
        case accepted(etag: String, generation: Int?)
        /// A connection is open (`after`: how long the stream was lost, if it was).
        case connected(after: TimeInterval?)
        /// The connection was lost; the next attempt is after `retry` seconds.
        case lost(reason: String, retry: Double)
    }

    let url: URL
    /// The file whose text the stream carries (its URL asks `?rules=NAME`).
    let file: String?
    /// Whether the stream carries the file's text.
    var carriesRules: Bool { file != nil }
    private let headers: [String: String]
    private let holding: @Sendable () -> (etag: String, generation: Int?)?
    private let hear: @Sendable (Heard) -> Void
    /// Where what the stream says is handed to the store, in order: never on the thread
    /// that reads every stream of the process (the store's hooks run user code).
    private let telling: DispatchQueue
    private let lineLimit: Int
    private let state = Locked(State())

    /// The header a `flags serve` rules file names its event stream with.
    static let header = PushProtocol.eventsHeader

    /// `maximumSize`: the largest rules text taken from an event (its JSON line may be up
    /// to six times longer, escaped).
    /// `holding`: the ETag and generation of the text the store holds, named to the server
    /// on connecting.
    init(
        url: URL, headers: [String: String], maximumSize: Int,
        holding: @escaping @Sendable () -> (etag: String, generation: Int?)? = { nil }, heard: @escaping @Sendable (Heard) -> Void
    ) {
        self.url = url
        self.holding = holding
        file = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == PushProtocol.fileQueryKey }?.value
        self.headers = headers
        self.hear = heard
        telling = DispatchQueue(label: "FlagRules.EventSubscription", target: .global())
        lineLimit = max(ServerSentEvents.maxLineBytes, min(maximumSize, Int.max / 8) * 6 + 4_096)
    }

    /// Whether a connection is open now.
    var isConnected: Bool { state.withLock { $0.connected } }

    /// Whether the latest connection failed (the server could not be reached, or refused it).
    var isFailing: Bool { state.withLock { $0.failures > 0 } }

    func start() { connect() }

    /// Hands `what` to the store, after what came before it.
    private func heard(_ what: Heard) {
        telling.async { [hear] in hear(what) }
    }

    /// Closes the stream for good.
    func cancel() {
        let task = state.withLock { s -> Link? in
            s.cancelled = true
            s.connected = false
            return s.task
        }
        switch task {
        case .session(let task)?: SharedSession.streams.cancel(task)
        case .plain(let stream)?: PlainStreams.shared.close(stream)
        case nil: break
        }
    }

    private func connect() {
        // The server sends a comment every 15 s: a minute of silence is a dead connection.
        var fields: [(String, String)] = headers.map { ($0.key, $0.value) }
        fields.append(("Accept", "text/event-stream"))
        let held = carriesRules ? holding() : nil
        if let held {
            fields.append(("If-None-Match", held.etag))
            if let generation = held.generation { fields.append((PushProtocol.generationHeader, String(generation))) }
        }
        let plain = url.scheme?.lowercased() == "http" ? PlainStreams.shared.stream(url) : nil
        let go = state.withLock { s in
            guard !s.cancelled else { return false }
            s.namedHeld = held != nil
            s.refused = false
            s.retryAfter = nil
            s.proxyOutage = false
            if let id = s.reader.lastEventID { fields.append(("Last-Event-ID", id)) }
            s.reader = ServerSentEvents(lastEventID: s.reader.lastEventID, lineLimit: lineLimit)
            if let plain {
                s.task = .plain(plain)
                // Opened under the lock: a `cancel()` comes before (nothing is opened) or
                // after (the stream is connecting, and its close is kept until it is made).
                PlainStreams.shared.open(plain, headers: fields, receiver: self)
            }
            return true
        }
        guard go, plain == nil else { return }
        var request = URLRequest(url: url, timeoutInterval: PlainStreams.idleLimit)
        for (name, value) in fields { request.setValue(value, forHTTPHeaderField: name) }
        SharedSession.streams.start(request, handler: self)
    }

    func started(_ task: URLSessionDataTask) -> Bool {
        state.withLock { s in
            guard !s.cancelled else { return false }
            s.task = .session(task)
            return true
        }
    }

    // MARK: A plain stream's reports

    func opened(_ stream: PlainStreams.Stream, status: Int, headers: [String: String]) -> Bool {
        guard state.withLock({ Link.plain(stream).isSame(as: $0.task) }) else { return false }
        return opened(status: status, headers: headers)
    }

    func received(_ stream: PlainStreams.Stream, _ bytes: [UInt8]) {
        guard state.withLock({ Link.plain(stream).isSame(as: $0.task) }) else { return }
        if !take(bytes) { PlainStreams.shared.close(stream); ended(.plain(stream), error: "an event's line is too long") }
    }

    func ended(_ stream: PlainStreams.Stream, error: String?) { ended(.plain(stream), error: error) }

    /// The wait before reconnecting after `failures` failures in a row, times a factor
    /// between 0.5 and 1 drawn from `jitter`: while the server cannot be reached, a quarter
    /// of a second doubled for each, at most 2 s (it is back within seconds of its return);
    /// after it `refused` (an HTTP error, not a stream), 1 s doubled for each, at most a
    /// minute.
    static func reconnectDelay(after failures: Int, refused: Bool = false, jitter: Double) -> Double {
        let policy = refused ? BackOff(first: .seconds(1), longest: .seconds(60)) : BackOff(first: .milliseconds(250), longest: .seconds(2))
        let wait = policy.wait(after: failures, jitter: jitter).components
        return Double(wait.seconds) + Double(wait.attoseconds) / 1e18
    }

    func received(_ response: URLResponse, on task: URLSessionDataTask) -> URLSession.ResponseDisposition {
        let http = response as? HTTPURLResponse
        return opened(status: http?.statusCode ?? 0, headers: http?.lowercasedFields ?? [:]) ? .allow : .cancel
    }

    /// A response's head: a stream (`200`, `text/event-stream`) is connected; anything else
    /// is refused (false: close it).
    private func opened(status: Int, headers: [String: String]) -> Bool {
        guard status == 200, (headers["content-type"] ?? "").hasPrefix("text/event-stream") else {
            let retryAfter = ErrorAnswers.retryAfter(status: status, field: headers["retry-after"])
            let outage = ErrorAnswers.isUnreachable(status: status, retryAfter: retryAfter)
            state.withLock { s in
                s.refused = !outage
                s.retryAfter = retryAfter
                s.proxyOutage = outage
            }
            return false
        }
        let connected = state.withLock { s -> (namedHeld: Bool, lostFor: TimeInterval?)? in
            // Cancelled while it was being opened: closed, and not reported.
            guard !s.cancelled else { return nil }
            s.connected = true
            s.connectedAt = Date()
            s.broughtEvent = false
            s.refused = false
            defer { s.lostAt = nil }
            return (s.namedHeld, s.lostAt.map { Date().timeIntervalSince($0) })
        }
        guard let (namedHeld, lostFor) = connected else { return false }
        heard(.connected(after: lostFor))
        // Connected (again): what changed while it was not is fetched now, unless the stream
        // starts from the text in force and was told the one held.
        let current = headers[PushProtocol.rulesHeader.lowercased()] == "current"
        if !Self.startsCurrent(namedHeld: namedHeld, rulesHeader: current) { heard(.fetch) }
        return true
    }

    /// Whether a connection needs no fetch: the stream said it starts from the text in
    /// force (`X-Flags-Rules: current`), and the request named the text held, so a newer
    /// one comes as its first event.
    static func startsCurrent(namedHeld: Bool, rulesHeader: Bool) -> Bool { namedHeld && rulesHeader }

    func received(_ data: Data, on dataTask: URLSessionDataTask) {
        if !take(data) { SharedSession.streams.cancel(dataTask) }
    }

    /// Reads a stream's bytes and tells the store what its events ask; false when the
    /// stream must be dropped (a line over the limit).
    private func take(_ bytes: some Sequence<UInt8>) -> Bool {
        let outcome = state.withLock { s -> Result<[ServerSentEvents.Event], ServerSentEvents.Failure> in
            do throws(ServerSentEvents.Failure) {
                return .success(try s.reader.feed(bytes))
            } catch {
                return .failure(error)
            }
        }
        guard case .success(let events) = outcome else { return false }
        if !events.isEmpty { state.withLock { $0.broughtEvent = true } }
        for action in Self.actions(for: events, file: file) { heard(action) }
        return true
    }

    /// What `events` ask of the store, in order: of the texts they carry only the last
    /// (the newest), a fetch for a `refetchEvaluation` unless the stream carries the text
    /// (then each change of it came as text), and the file's rejections and their
    /// clearing (another file's are not the store's).
    static func actions(for events: [ServerSentEvents.Event], file: String?) -> [Heard] {
        var out: [Heard] = []
        let parsed = events.compactMap { PushProtocol.Event(data: $0.data) }
        let lastText = parsed.lastIndex { if case .rulesChanged(let name, _, _, _) = $0 { name == file } else { false } }
        var fetch = false
        for (i, event) in parsed.enumerated() {
            switch event {
            case .rulesChanged(let name, let etag, let generation, let rules) where i == lastText && name == file:
                out.append(.rules(text: Array(rules.utf8), etag: etag, generation: generation))
            case .refetch where file == nil:
                fetch = true
            case .rulesRejected(let name, let message, let at) where name == file:
                out.append(.rejected(message: message, at: Date(timeIntervalSince1970: Double(at))))
            case .rulesAccepted(let name, let etag, let generation) where name == file:
                out.append(.accepted(etag: etag, generation: generation))
            default:
                break
            }
        }
        if fetch { out.append(.fetch) }
        return out
    }

    func completed(_ task: URLSessionTask, error: (any Error)?) {
        guard let task = task as? URLSessionDataTask else { return }
        ended(.session(task), error: error.map { ($0 as NSError).localizedDescription })
    }

    /// The connection `link` ended (`error`: why, nil when the server closed it): it is
    /// made again after the back-off.
    private func ended(_ link: Link, error: String?) {
        let outcome = state.withLock { s -> (failures: Int, refused: Bool, retryAfter: Duration?, proxyOutage: Bool)? in
            guard !s.cancelled, link.isSame(as: s.task) else { return nil }
            if s.connected || s.lostAt == nil { s.lostAt = Date() }
            // A connection that lasted, or brought an event, ends a run of failures; one that
            // ended at once adds to it (so a server that answers and hangs up is not asked
            // again four times a second).
            if s.connected, s.broughtEvent || (s.connectedAt.map { Date().timeIntervalSince($0) > 5 } ?? false) { s.failures = 0 }
            s.connected = false
            s.connectedAt = nil
            s.task = nil
            s.failures += 1
            return (s.failures, s.refused, s.retryAfter, s.proxyOutage)
        }
        guard let outcome else { return }
        // A wait the server asked for is kept to; a proxy's "the server is down" is an outage.
        let delay =
            outcome.retryAfter.map { ErrorAnswers.wait(after: $0, jitter: Double.random(in: 0..<1)).inSeconds }
            ?? Self.reconnectDelay(after: outcome.failures, refused: outcome.refused, jitter: Double.random(in: 0..<1))
        let reason =
            outcome.retryAfter != nil
            ? "the server asked to be asked again later"
            : outcome.proxyOutage
                ? "the server behind the proxy is down"
                : outcome.refused ? "the server refused the stream" : error ?? "the stream ended"
        // Told once, when a connection is lost (or the first fails); the attempts after are not.
        if outcome.failures == 1 { heard(.lost(reason: reason, retry: delay)) }
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [weak self] in self?.connect() }
    }
}
