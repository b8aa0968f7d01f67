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

    /// The body of a `200` answer to `GET url`, or why not: on the library's HTTP client
    /// (what stores fetch with), waited for here.
    static func body(_ url: URL, headers: [String: String] = [:], timeout: TimeInterval = 5) -> Result<Data, Failure> {
        var request = URLRequest(url: url)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let done = DispatchSemaphore(value: 0)
        let outcome = Locked<HTTPClient.Outcome>(.failure("no answer"))
        let sendable = request
        Task.detached {
            let answer = await HTTPClient().get(sendable, timeout: .milliseconds(Int(timeout * 1_000)), maximumSize: maxBytes)
            outcome.withLock { $0 = answer }
            done.signal()
        }
        done.wait()
        switch outcome.withLock({ $0 }) {
        case .failure(let reason, _):
            return .failure(Failure(message: reason))
        case .success(let response, let body):
            guard response.statusCode == 200 else {
                let hint = response.statusCode == 401 || response.statusCode == 403 ? " (the server asks for an API key)" : ""
                return .failure(Failure(message: "HTTP \(response.statusCode)\(hint)"))
            }
            return .success(Data(body))
        }
    }

    /// The body of a `200` answer, as UTF-8 text.
    static func text(_ url: URL, headers: [String: String] = [:]) -> Result<String, Failure> {
        body(url, headers: headers).map { String(decoding: $0, as: UTF8.self) }
    }
}
