import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A store's subscription to the event stream of the server its rules come from (`flags
/// serve` names its stream in the `X-Flags-Events` header of a rules file): each
/// `refetchEvaluation` event, and each connection made (the first and every reconnection,
/// after which a change may have been missed), calls `changed`, and the store looks at its
/// source at once. The stream moves no rules itself: the look is the store's usual
/// conditional fetch. A dropped or refused connection is tried again after 1 s, doubling to
/// a minute (drawn between half and all of it, so that a fleet does not reconnect in step);
/// the store's polling goes on meanwhile.
final class EventSubscription: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // Unchecked: `session` is set once in `init`; everything else is behind `state`.
    private struct State {
        var reader = ServerSentEvents()
        var task: URLSessionDataTask?
        var failures = 0
        var cancelled = false
        var connected = false
    }

    let url: URL
    private let headers: [String: String]
    private let changed: @Sendable () -> Void
    private let state = Locked(State())
    private var session: URLSession!

    /// The header a `flags serve` rules file names its event stream with.
    static let header = "X-Flags-Events"

    init(url: URL, headers: [String: String], changed: @escaping @Sendable () -> Void) {
        self.url = url
        self.headers = headers
        self.changed = changed
        super.init()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        // The server sends a comment every 15 s: a minute of silence is a dead connection.
        configuration.timeoutIntervalForRequest = 60
        configuration.timeoutIntervalForResource = .infinity
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
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
        task?.cancel()
        session.invalidateAndCancel()
    }

    private func connect() {
        var request = URLRequest(url: url)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        let task: URLSessionDataTask? = state.withLock { s in
            guard !s.cancelled else { return nil }
            if let id = s.reader.lastEventID { request.setValue(id, forHTTPHeaderField: "Last-Event-ID") }
            s.reader = ServerSentEvents(lastEventID: s.reader.lastEventID)
            let task = session.dataTask(with: request)
            s.task = task
            return task
        }
        task?.resume()
    }

    /// The wait before reconnecting after `failures` failures in a row: 1 s doubled for
    /// each, at most a minute, times a factor between 0.5 and 1 drawn from `jitter`.
    static func reconnectDelay(after failures: Int, jitter: Double) -> Double {
        min(60, Double(1 << min(max(failures - 1, 0), 6))) * (0.5 + 0.5 * jitter)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        let http = response as? HTTPURLResponse
        let type = (http?.allHeaderFields.first { ($0.key as? String)?.lowercased() == "content-type" }?.value as? String) ?? ""
        guard http?.statusCode == 200, type.hasPrefix("text/event-stream") else {
            completionHandler(.cancel)
            return
        }
        state.withLock { s in
            s.connected = true
            s.failures = 0
        }
        completionHandler(.allow)
        // Connected (again): what changed while it was not is fetched now.
        changed()
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let outcome = state.withLock { s -> Result<[ServerSentEvents.Event], ServerSentEvents.Failure> in
            do throws(ServerSentEvents.Failure) {
                return .success(try s.reader.feed(data))
            } catch {
                return .failure(error)
            }
        }
        switch outcome {
        case .success(let events):
            if events.contains(where: Self.isRefetch) { changed() }
        case .failure:
            dataTask.cancel()
        }
    }

    /// Whether an event asks for a refetch: OFREP's `{"type": "refetchEvaluation", …}` (an
    /// unknown type is ignored, as the protocol asks).
    static func isRefetch(_ event: ServerSentEvents.Event) -> Bool {
        guard case .object(let members)? = try? JSON.parse(bytes: Array(event.data.utf8)),
            case .string("refetchEvaluation")? = members.first(where: { $0.0 == "type" })?.1
        else { return false }
        return true
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
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
