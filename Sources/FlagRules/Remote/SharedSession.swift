import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a task on a shared session reports to: a store's event stream, or one fetch.
protocol SessionTaskHandler: AnyObject, Sendable {
    /// The task made for the handler, before it is resumed; false to cancel it at once (the
    /// handler was done with before it started).
    func started(_ task: URLSessionDataTask) -> Bool
    /// The response's head; answer whether to go on reading the body.
    func received(_ response: URLResponse, on task: URLSessionDataTask) -> URLSession.ResponseDisposition
    func received(_ data: Data, on task: URLSessionDataTask)
    func completed(_ task: URLSessionTask, error: (any Error)?)
}

/// URL sessions shared by every store of the process, one for the event streams and one for
/// the fetches: a session holds a connection pool and, on Linux, a transfer engine with
/// its own queue and timers, so a session per store would multiply them by the stores (a
/// service with hundreds of tenants' stores, a relay's benchmark with a thousand, whose
/// thousand engines stalled every store's stream for seconds). Each task is routed to the
/// handler that made it. Connections to one host are not capped (a thousand stores of one
/// server never wait in line), and the streams are apart from the fetches, so a held stream
/// never takes a fetch's place.
///
/// Making, resuming and cancelling a task wait, on Linux, for the session's work queue,
/// which is busy while a thousand streams take in an event: those calls are made on a queue
/// of the session's own (``start(_:handler:)``, ``cancel(_:)``), never on the caller's
/// thread, which may be one of the two or so threads every task of the process runs on.
final class SharedSession: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // Unchecked: `session` is set once in `init`; the handlers are behind their lock.
    /// The session of the event streams (no resource timeout: a stream lasts).
    static let streams = SharedSession(streams: true)
    /// The session of the fetches (each request carries its own timeout).
    static let fetches = SharedSession(streams: false)

    private(set) var session: URLSession!
    private let handlers = Locked<[Int: any SessionTaskHandler]>([:])
    /// Where the session's calls are made, in the order they were asked for.
    private let calls: DispatchQueue

    private init(streams: Bool) {
        calls = DispatchQueue(label: streams ? "FlagRules.SharedSession.streams" : "FlagRules.SharedSession.fetches")
        super.init()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        // Stores of several tenants share the session: a cookie or a credential one server
        // sets must not go with another store's requests.
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        configuration.urlCredentialStorage = nil
        if streams { configuration.timeoutIntervalForResource = .infinity }
        configuration.httpMaximumConnectionsPerHost = 4_096
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
    }

    /// Makes a task for `request`, reported to `handler` until it completes, and resumes it
    /// unless the handler's `started` declines it. Returns at once.
    func start(_ request: URLRequest, handler: any SessionTaskHandler) {
        calls.async { [self] in
            let task = session.dataTask(with: request)
            handlers.withLock { $0[task.taskIdentifier] = handler }
            if handler.started(task) {
                task.resume()
            } else {
                handlers.withLock { _ = $0.removeValue(forKey: task.taskIdentifier) }
                task.cancel()
            }
        }
    }

    /// Cancels `task` (its handler hears `completed` with a cancellation). Returns at once.
    func cancel(_ task: URLSessionTask) {
        calls.async { task.cancel() }
    }

    private func handler(_ task: URLSessionTask) -> (any SessionTaskHandler)? { handlers.withLock { $0[task.taskIdentifier] } }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        completionHandler(handler(dataTask)?.received(response, on: dataTask) ?? .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        handler(dataTask)?.received(data, on: dataTask)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let handler = handlers.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        handler?.completed(task, error: error)
    }
}
