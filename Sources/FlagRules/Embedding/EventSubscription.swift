import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A store's subscription to the event stream of the server its rules come from (`flags
/// serve` names its stream in the `X-Flags-Events` header of a rules file). A
/// `rulesChanged` event carries the file's new text and ETag, which `delivered` hands to
/// the store (checked as any fetched text is). On a stream that carries the file's text
/// (`?rules=NAME`, what `flags serve` names), that event is how each change of the file
/// comes, and the `refetchEvaluation` events (sent for a change of any file) need no fetch;
/// on any other stream a `refetchEvaluation` calls `changed`. Each connection made (the
/// first and every reconnection, after which a change may have been missed) calls
/// `changed` too, and the store makes its usual conditional fetch; except on a stream that
/// starts from the text in force (`X-Flags-Rules: current`), asked with the ETag the store
/// holds (`If-None-Match`): a newer text is then its first event. A dropped or refused
/// connection is tried again after 1 s, doubling to a minute (drawn between half and all of
/// it, so that a fleet does not reconnect in step); the store's polling goes on meanwhile.
final class EventSubscription: SessionTaskHandler, @unchecked Sendable {
    // Unchecked: everything that changes is behind `state`.
    private struct State {
        var reader = ServerSentEvents()
        var task: URLSessionDataTask?
        var failures = 0
        var cancelled = false
        var connected = false
        /// Whether the connection being made names the text the store holds.
        var namedHeld = false
    }

    let url: URL
    /// Whether the stream carries the file's text (its URL asks `?rules=NAME`).
    let carriesRules: Bool
    private let headers: [String: String]
    private let holding: @Sendable () -> String?
    private let changed: @Sendable () -> Void
    private let delivered: @Sendable ([UInt8], String) -> Void
    private let lineLimit: Int
    private let state = Locked(State())

    /// The header a `flags serve` rules file names its event stream with.
    static let header = "X-Flags-Events"

    /// `maximumSize`: the largest rules text taken from an event (its JSON line may be up
    /// to six times longer, escaped).
    /// `holding`: the ETag of the text the store holds, named to the server on connecting.
    init(
        url: URL, headers: [String: String], maximumSize: Int, holding: @escaping @Sendable () -> String? = { nil },
        changed: @escaping @Sendable () -> Void, delivered: @escaping @Sendable ([UInt8], String) -> Void
    ) {
        self.url = url
        self.holding = holding
        carriesRules = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.contains { $0.name == "rules" } ?? false
        self.headers = headers
        self.changed = changed
        self.delivered = delivered
        lineLimit = max(ServerSentEvents.maxLineBytes, min(maximumSize, Int.max / 8) * 6 + 4_096)
    }

    /// Whether a connection is open now.
    var isConnected: Bool { state.withLock { $0.connected } }

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
        if let held { request.setValue(held, forHTTPHeaderField: "If-None-Match") }
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

    /// The wait before reconnecting after `failures` failures in a row: 1 s doubled for
    /// each, at most a minute, times a factor between 0.5 and 1 drawn from `jitter`.
    static func reconnectDelay(after failures: Int, jitter: Double) -> Double {
        min(60, Double(1 << min(max(failures - 1, 0), 6))) * (0.5 + 0.5 * jitter)
    }

    func received(_ response: URLResponse, on task: URLSessionDataTask) -> URLSession.ResponseDisposition {
        let http = response as? HTTPURLResponse
        let type = (http?.allHeaderFields.first { ($0.key as? String)?.lowercased() == "content-type" }?.value as? String) ?? ""
        guard http?.statusCode == 200, type.hasPrefix("text/event-stream") else { return .cancel }
        let namedHeld = state.withLock { s in
            s.connected = true
            s.failures = 0
            return s.namedHeld
        }
        // Connected (again): what changed while it was not is fetched now, unless the stream
        // starts from the text in force and was told the one held.
        let current = http?.allHeaderFields.contains { ($0.key as? String)?.lowercased() == "x-flags-rules" && "\($0.value)" == "current" }
        if !Self.startsCurrent(namedHeld: namedHeld, rulesHeader: current == true) { changed() }
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
            switch Self.action(for: events, carriesRules: carriesRules) {
            case .deliver(let text, let etag): delivered(text, etag)
            case .fetch: changed()
            case .none: break
            }
        case .failure:
            SharedSession.streams.cancel(dataTask)
        }
    }

    /// What a batch of events asks of the store.
    enum Action: Equatable {
        /// Put this text (with its ETag) in force: the last `rulesChanged` of the batch.
        case deliver([UInt8], String)
        /// Make a conditional fetch.
        case fetch
        case none
    }

    /// What `events` ask: the last text they carry; else a fetch for a `refetchEvaluation`,
    /// unless the stream carries the text (then each change of it came as text).
    static func action(for events: [ServerSentEvents.Event], carriesRules: Bool) -> Action {
        if let rules = events.compactMap(Self.rules).last { return .deliver(rules.text, rules.etag) }
        return !carriesRules && events.contains(where: isRefetch) ? .fetch : .none
    }

    /// Whether an event asks for a refetch: OFREP's `{"type": "refetchEvaluation", …}` (an
    /// unknown type is ignored, as the protocol asks).
    static func isRefetch(_ event: ServerSentEvents.Event) -> Bool {
        guard case .object(let members)? = try? JSON.parse(bytes: Array(event.data.utf8)),
            case .string("refetchEvaluation")? = members.first(where: { $0.0 == "type" })?.1
        else { return false }
        return true
    }

    /// The text and ETag a `rulesChanged` event carries.
    static func rules(_ event: ServerSentEvents.Event) -> (text: [UInt8], etag: String)? {
        guard case .object(let members)? = try? JSON.parse(bytes: Array(event.data.utf8)),
            case .string("rulesChanged")? = members.first(where: { $0.0 == "type" })?.1,
            case .string(let text)? = members.first(where: { $0.0 == "rules" })?.1,
            case .string(let etag)? = members.first(where: { $0.0 == "etag" })?.1
        else { return nil }
        return (Array(text.utf8), etag)
    }

    func completed(_ task: URLSessionTask, error: (any Error)?) {
        let failures = state.withLock { s -> Int? in
            guard !s.cancelled, s.task === task else { return nil }
            s.connected = false
            s.task = nil
            s.failures += 1
            return s.failures
        }
        guard let failures else { return }
        let delay = Self.reconnectDelay(after: failures, jitter: Double.random(in: 0..<1))
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [weak self] in self?.connect() }
    }
}
