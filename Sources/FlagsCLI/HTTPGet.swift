import FlagRules
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A blocking `GET`, for commands that read one resource from a server (a relay's list of
/// files, a server's metrics).
enum HTTPGet {
    /// Why a resource could not be read.
    struct Failure: Error, Sendable {
        let message: String
    }

    /// The largest body read (32 MiB).
    static let maxBytes = 32 << 20

    /// The body of a `200` answer to `GET url`, or why not.
    static func body(_ url: URL, headers: [String: String] = [:], timeout: TimeInterval = 5) -> Result<Data, Failure> {
        var request = URLRequest(url: url, timeoutInterval: timeout)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let done = DispatchSemaphore(value: 0)
        let outcome = Locked<Result<Data, Failure>>(.failure(Failure(message: "no answer")))
        URLSession.shared.dataTask(with: request) { data, response, error in
            defer { done.signal() }
            let result: Result<Data, Failure>
            if let error {
                result = .failure(Failure(message: error.localizedDescription))
            } else if let status = (response as? HTTPURLResponse)?.statusCode, status != 200 {
                let hint = status == 401 || status == 403 ? " (the server asks for an API key)" : ""
                result = .failure(Failure(message: "HTTP \(status)\(hint)"))
            } else if let data, data.count <= maxBytes {
                result = .success(data)
            } else {
                result = .failure(Failure(message: "the answer is over \(maxBytes >> 20) MiB"))
            }
            outcome.withLock { $0 = result }
        }.resume()
        done.wait()
        return outcome.withLock { $0 }
    }

    /// The body of a `200` answer, as UTF-8 text.
    static func text(_ url: URL, headers: [String: String] = [:]) -> Result<String, Failure> {
        body(url, headers: headers).map { String(decoding: $0, as: UTF8.self) }
    }
}
