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
/// A connection that fails or ends is made again after a short wait while the server
/// cannot be reached (a quarter of a second, doubling to 2 s), and after a longer one when
/// it answers with an error (1 s, doubling to a minute); each is drawn between half and all
/// of that, so that a fleet does not reconnect in step. The store's polling goes on
/// meanwhile.
final class EventSubscription: SessionTaskHandler, @unchecked Sendable {
    // Unchecked: everything that changes is behind `state`.
    private struct State {
        var reader = ServerSentEvents()
        var task: URLSessionDataTask?
        /// Connections in a row that failed, and whether the latest was answered with an error.
        var failures = 0
        var refused = false
        var cancelled = false
        var connected = false
        /// Whether the connection being made names the text the store holds.
        var namedHeld = false
        /// When the latest connection was lost (nil while connected, or before the first).
        var lostAt: Date?
    }

    /// What the stream told the store.
    enum Heard: Sendable, Equatable {
        /// Put this text in force (unless the store holds a newer one).
        case rules(text: [UInt8], etag: String, generation: Int?)
        /// Make a conditional fetch.
        case fetch
        /// The server rejected an update of the file (it serves its last good rules).
        case rejected(message: String, at: Date)
        /// The file's rejection no longer stands.
        case accepted
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
    private let heard: @Sendable (Heard) -> Void
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
        file = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "rules" }?.value
        self.headers = headers
        self.heard = heard
        lineLimit = max(ServerSentEvents.maxLineBytes, min(maximumSize, Int.max / 8) * 6 + 4_096)
    }

    /// Whether a connection is open now.
    var isConnected: Bool { state.withLock { $0.connected } }

    /// Whether the latest connection failed (the server could not be reached, or refused it).
    var isFailing: Bool { state.withLock { $0.failures > 0 } }

    func start() { connect() }

    /// Closes the stream for good.
    func cancel() {
        let task = state.withLock { s -> URLSessionDataTask? in
            s.cancelled = true
            s.connected = false
            return s.task
        }
        if let task { SharedSession.streams.cancel(task) }
    }

    private func connect() {
        // The server sends a comment every 15 s: a minute of silence is a dead connection.
        var request = URLRequest(url: url, timeoutInterval: 60)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        let held = carriesRules ? holding() : nil
        if let held {
            request.setValue(held.etag, forHTTPHeaderField: "If-None-Match")
            if let generation = held.generation { request.setValue(String(generation), forHTTPHeaderField: PushProtocol.generationHeader) }
        }
        let go = state.withLock { s in
            guard !s.cancelled else { return false }
            s.namedHeld = held != nil
            if let id = s.reader.lastEventID { request.setValue(id, forHTTPHeaderField: "Last-Event-ID") }
            s.reader = ServerSentEvents(lastEventID: s.reader.lastEventID, lineLimit: lineLimit)
            return true
        }
        if go { SharedSession.streams.start(request, handler: self) }
    }

    func started(_ task: URLSessionDataTask) -> Bool {
        state.withLock { s in
            guard !s.cancelled else { return false }
            s.task = task
            return true
        }
    }

    /// The wait before reconnecting after `failures` failures in a row, times a factor
    /// between 0.5 and 1 drawn from `jitter`: while the server cannot be reached, a quarter
    /// of a second doubled for each, at most 2 s (it is back within seconds of its return);
    /// after it `refused` (an HTTP error, not a stream), 1 s doubled for each, at most a
    /// minute.
    static func reconnectDelay(after failures: Int, refused: Bool = false, jitter: Double) -> Double {
        let doubling = Double(1 << min(max(failures - 1, 0), 8))
        let wait = refused ? min(60, doubling) : min(2, 0.25 * doubling)
        return wait * (0.5 + 0.5 * min(max(jitter, 0), 1))
    }

    func received(_ response: URLResponse, on task: URLSessionDataTask) -> URLSession.ResponseDisposition {
        let http = response as? HTTPURLResponse
        let type = (http?.allHeaderFields.first { ($0.key as? String)?.lowercased() == "content-type" }?.value as? String) ?? ""
        guard http?.statusCode == 200, type.hasPrefix("text/event-stream") else {
            state.withLock { $0.refused = true }
            return .cancel
        }
        let (namedHeld, lostFor) = state.withLock { s in
            s.connected = true
            s.failures = 0
            s.refused = false
            defer { s.lostAt = nil }
            return (s.namedHeld, s.lostAt.map { Date().timeIntervalSince($0) })
        }
        heard(.connected(after: lostFor))
        // Connected (again): what changed while it was not is fetched now, unless the stream
        // starts from the text in force and was told the one held.
        let current = http?.allHeaderFields.contains {
            ($0.key as? String)?.lowercased() == PushProtocol.rulesHeader.lowercased() && "\($0.value)" == "current"
        }
        if !Self.startsCurrent(namedHeld: namedHeld, rulesHeader: current == true) { heard(.fetch) }
        return .allow
    }

    /// Whether a connection needs no fetch: the stream said it starts from the text in
    /// force (`X-Flags-Rules: current`), and the request named the text held, so a newer
    /// one comes as its first event.
    static func startsCurrent(namedHeld: Bool, rulesHeader: Bool) -> Bool { namedHeld && rulesHeader }

    func received(_ data: Data, on dataTask: URLSessionDataTask) {
        let outcome = state.withLock { s -> Result<[ServerSentEvents.Event], ServerSentEvents.Failure> in
            do throws(ServerSentEvents.Failure) {
                return .success(try s.reader.feed(data))
            } catch {
                return .failure(error)
            }
        }
        switch outcome {
        case .success(let events):
            for action in Self.actions(for: events, file: file) { heard(action) }
        case .failure:
            SharedSession.streams.cancel(dataTask)
        }
    }

    /// What `events` ask of the store, in order: of the texts they carry only the last
    /// (the newest), a fetch for a `refetchEvaluation` unless the stream carries the text
    /// (then each change of it came as text), and the file's rejections and their
    /// clearing (another file's are not the store's).
    static func actions(for events: [ServerSentEvents.Event], file: String?) -> [Heard] {
        var out: [Heard] = []
        let parsed = events.compactMap { PushProtocol.Event(data: $0.data) }
        let lastText = parsed.lastIndex { if case .rulesChanged = $0 { true } else { false } }
        var fetch = false
        for (i, event) in parsed.enumerated() {
            switch event {
            case .rulesChanged(_, let etag, let generation, let rules) where i == lastText:
                out.append(.rules(text: Array(rules.utf8), etag: etag, generation: generation))
            case .refetch where file == nil:
                fetch = true
            case .rulesRejected(let name, let message, let at) where name == file:
                out.append(.rejected(message: message, at: Date(timeIntervalSince1970: Double(at))))
            case .rulesAccepted(let name, _) where name == file:
                out.append(.accepted)
            default:
                break
            }
        }
        if fetch { out.append(.fetch) }
        return out
    }

    func completed(_ task: URLSessionTask, error: (any Error)?) {
        let outcome = state.withLock { s -> (failures: Int, refused: Bool)? in
            guard !s.cancelled, s.task === task else { return nil }
            if s.connected || s.lostAt == nil { s.lostAt = Date() }
            s.connected = false
            s.task = nil
            s.failures += 1
            return (s.failures, s.refused)
        }
        guard let outcome else { return }
        let delay = Self.reconnectDelay(after: outcome.failures, refused: outcome.refused, jitter: Double.random(in: 0..<1))
        let reason = outcome.refused ? "the server refused the stream" : error.map { ($0 as NSError).localizedDescription } ?? "the stream ended"
        // Told once, when a connection is lost (or the first fails); the attempts after are not.
        if outcome.failures == 1 { heard(.lost(reason: reason, retry: delay)) }
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [weak self] in self?.connect() }
    }
}
