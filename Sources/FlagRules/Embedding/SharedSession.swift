import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a task on the shared session reports to: a store's event stream.
protocol SessionTaskHandler: AnyObject, Sendable {
    /// The response's head; answer whether to go on reading the body.
    func received(_ response: URLResponse, on task: URLSessionDataTask) -> URLSession.ResponseDisposition
    func received(_ data: Data, on task: URLSessionDataTask)
    func completed(_ task: URLSessionTask, error: (any Error)?)
}

/// One URL session for the event streams of every store of the process: a session holds a
/// connection pool and, on Linux, a transfer engine and its thread, so a session per
/// stream would multiply them by the stores (a service with hundreds of tenants' stores, a
/// relay's benchmark with a thousand). Each task is routed to the handler that made it. A
/// store's fetches keep a session of their own, so that no other store's stream or slow
/// server can delay them.
final class SharedSession: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // Unchecked: `session` is set once in `init`; the handlers are behind their lock.
    static let shared = SharedSession()

    private(set) var session: URLSession!
    private let handlers = Locked<[Int: any SessionTaskHandler]>([:])

    private override init() {
        super.init()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.timeoutIntervalForResource = .infinity
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
