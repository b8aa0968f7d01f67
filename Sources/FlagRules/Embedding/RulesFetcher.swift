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
    /// The same rules as last time (an unchanged file, a `304`).
    case unchanged
    /// New text, with the validators it came with.
    case fetched([UInt8], Validators)
    /// Why the source could not be read.
    case failed(String)
}

/// Reads a store's source when asked, remembering what it saw: a file's modification
/// time, size and identity, or a URL's validators, so that an unchanged source is not
/// read or compiled again.
struct RulesFetcher: Sendable {
    let source: RulesSource
    /// The longest a request may take, headers and body.
    let timeout: Duration
    /// The largest body or file read; larger is a failure, not a truncation.
    let maximumSize: Int
    /// The validators of the last text read from a URL (sent with the next request).
    var validators = Validators()
    /// The last file seen, as (modification time, size, identity).
    private var fileStamp: FileStamp?

    init(source: RulesSource, timeout: Duration, maximumSize: Int) {
        self.source = source
        self.timeout = timeout
        self.maximumSize = maximumSize
    }

    mutating func fetch() async -> FetchResult {
        switch source {
        case .file(let url): return readFile(url)
        case .url(let url, let headers): return await download(url, headers: headers)
        }
    }

    // MARK: Files

    struct FileStamp: Hashable {
        let modified: Date?
        let size: Int
        let identity: Int?
    }

    private mutating func readFile(_ url: URL) -> FetchResult {
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        } catch {
            fileStamp = nil
            return .failed("cannot read \(url.path): no such file")
        }
        let stamp = FileStamp(
            modified: attributes[.modificationDate] as? Date, size: (attributes[.size] as? NSNumber)?.intValue ?? -1,
            identity: (attributes[.systemFileNumber] as? NSNumber)?.intValue)
        if stamp == fileStamp { return .unchanged }
        guard stamp.size <= maximumSize else {
            return .failed("\(url.path) is \(stamp.size) bytes; the limit is \(maximumSize)")
        }
        guard let handle = FileHandle(forReadingAtPath: url.path) else { return .failed("cannot open \(url.path)") }
        defer { try? handle.close() }
        let data: Data
        do {
            data = try handle.read(upToCount: maximumSize + 1) ?? Data()
        } catch {
            return .failed("cannot read \(url.path): \((error as NSError).localizedDescription)")
        }
        guard data.count <= maximumSize else {
            return .failed("\(url.path) is over \(maximumSize) bytes, the limit")
        }
        fileStamp = stamp
        return .fetched(Array(data), Validators())
    }

    // MARK: URLs

    private mutating func download(_ url: URL, headers: [String: String]) async -> FetchResult {
        var request = URLRequest(url: url)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let etag = validators.etag { request.setValue(etag, forHTTPHeaderField: "If-None-Match") }
        if let date = validators.lastModified { request.setValue(date, forHTTPHeaderField: "If-Modified-Since") }
        switch await BoundedDownload.run(request, timeout: timeout, maximumSize: maximumSize) {
        case .failure(let reason):
            return .failed("\(url.absoluteString): \(reason)")
        case .success(let response, let body):
            switch response.statusCode {
            case 304:
                return .unchanged
            case 200:
                let fields = Dictionary(
                    response.allHeaderFields.compactMap { k, v in (k as? String).map { ($0.lowercased(), "\(v)") } },
                    uniquingKeysWith: { a, _ in a })
                validators = Validators(etag: fields["etag"], lastModified: fields["last-modified"])
                return .fetched(body, validators)
            default:
                return .failed("\(url.absoluteString): HTTP \(response.statusCode)")
            }
        }
    }
}

/// One HTTP request whose body is read up to a limit (a larger body cancels the request)
/// and which fails after a deadline, whatever the server does.
final class BoundedDownload: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    enum Outcome: Sendable {
        case success(HTTPURLResponse, [UInt8])
        case failure(String)
    }

    private struct State {
        var body: [UInt8] = []
        var continuation: CheckedContinuation<Outcome, Never>?
    }

    private let maximumSize: Int
    private let timeout: Duration
    private let state = Locked(State())

    private init(maximumSize: Int, timeout: Duration) {
        self.maximumSize = maximumSize
        self.timeout = timeout
    }

    static func run(_ request: URLRequest, timeout: Duration, maximumSize: Int) async -> Outcome {
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        let configuration = URLSessionConfiguration.ephemeral
        // The deadline below is the timeout; the session's own (whole seconds with some
        // implementations, where 0.3 would be 0) only backs it up.
        configuration.timeoutIntervalForRequest = seconds.rounded(.up) + 1
        configuration.timeoutIntervalForResource = seconds.rounded(.up) + 1
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        let download = BoundedDownload(maximumSize: maximumSize, timeout: timeout)
        let session = URLSession(configuration: configuration, delegate: download, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: request)
        return await withCheckedContinuation { continuation in
            download.state.withLock { $0.continuation = continuation }
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
                download.finish(.failure("no complete response within \(timeout)"))
                task.cancel()
            }
            task.resume()
        }
    }

    /// Resumes the caller once; later outcomes (a cancellation's error) are dropped.
    private func finish(_ outcome: Outcome) {
        let continuation = state.withLock { s in
            defer { s.continuation = nil }
            return s.continuation
        }
        continuation?.resume(returning: outcome)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let expected = dataTask.response?.expectedContentLength ?? -1
        let over = state.withLock { s in
            s.body.append(contentsOf: data)
            return s.body.count > maximumSize || expected > maximumSize
        }
        if over {
            finish(.failure("the body is over \(maximumSize) bytes, the limit"))
            dataTask.cancel()
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let error {
            let timedOut = (error as NSError).domain == NSURLErrorDomain && (error as NSError).code == NSURLErrorTimedOut
            finish(.failure(timedOut ? "no complete response within \(timeout)" : (error as NSError).localizedDescription))
        } else if let response = task.response as? HTTPURLResponse {
            finish(.success(response, state.withLock { $0.body }))
        } else {
            finish(.failure("not an HTTP response"))
        }
    }
}
