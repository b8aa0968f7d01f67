import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a task on a shared session reports to: a store's event stream, or its fetches.
protocol SessionTaskHandler: AnyObject, Sendable {
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
final class SharedSession: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // Unchecked: `session` is set once in `init`; the handlers are behind their lock.
    /// The session of the event streams (no resource timeout: a stream lasts).
    static let streams = SharedSession(streams: true)
    /// The session of the fetches (each request carries its own timeout).
    static let fetches = SharedSession(streams: false)

    private(set) var session: URLSession!
    private let handlers = Locked<[Int: any SessionTaskHandler]>([:])

    private init(streams: Bool) {
        super.init()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        if streams { configuration.timeoutIntervalForResource = .infinity }
        configuration.httpMaximumConnectionsPerHost = 4_096
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
    }

    /// A task for `request`, reported to `handler` until it completes; not yet resumed.
    func task(_ request: URLRequest, handler: any SessionTaskHandler) -> URLSessionDataTask {
        let task = session.dataTask(with: request)
        handlers.withLock { $0[task.taskIdentifier] = handler }
        return task
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
