import Foundation
import Testing

@testable import FlagRules

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The process's shared URL sessions make, resume and cancel tasks on a queue of their own:
/// a caller on one of the few threads every task of the process runs on never waits for a
/// session that is busy with a thousand streams.
@Suite struct SharedSessionTests {
    /// A handler that reports its task's end, and whose `started` runs `whenStarted`.
    final class Recorder: SessionTaskHandler, @unchecked Sendable {
        let whenStarted: @Sendable () -> Bool
        private let done = DispatchSemaphore(value: 0)
        private let lock = NSLock()
        private var body: [UInt8] = []
        private(set) var status: Int?

        init(whenStarted: @escaping @Sendable () -> Bool = { true }) { self.whenStarted = whenStarted }

        func started(_ task: URLSessionDataTask) -> Bool { whenStarted() }
        func received(_ response: URLResponse, on task: URLSessionDataTask) -> URLSession.ResponseDisposition {
            lock.withLock { status = (response as? HTTPURLResponse)?.statusCode }
            return .allow
        }
        func received(_ data: Data, on task: URLSessionDataTask) { lock.withLock { body += data } }
        func completed(_ task: URLSessionTask, error: (any Error)?) { done.signal() }

        /// The body once the task has ended; nil if it does not end within 10 s.
        func ended() -> String? {
            done.wait(timeout: .now() + 10) == .success ? lock.withLock { String(decoding: body, as: UTF8.self) } : nil
        }
    }

    @Test func startReturnsBeforeTheTaskIsMade() throws {
        let server = try TestHTTPServer { _ in .ok("flag f { enabled when true }") }
        let returned = DispatchSemaphore(value: 0)
        let waitedFor = Locked<Bool?>(nil)
        // `started` waits until `start` has returned: a `start` that made the task on the
        // caller's thread would wait here for the whole 10 s.
        let recorder = Recorder {
            waitedFor.withLock { $0 = returned.wait(timeout: .now() + 10) == .success }
            return true
        }
        SharedSession.fetches.start(URLRequest(url: server.url), handler: recorder)
        returned.signal()
        #expect(recorder.ended() == "flag f { enabled when true }")
        #expect(recorder.status == 200)
        #expect(waitedFor.withLock { $0 } == true)
    }

    @Test func aTaskItsHandlerDeclinesIsNeverSent() throws {
        let server = try TestHTTPServer { _ in .ok("flag f { enabled when true }") }
        let asked = DispatchSemaphore(value: 0)
        SharedSession.fetches.start(
            URLRequest(url: server.url),
            handler: Recorder {
                asked.signal(); return false
            })
        #expect(asked.wait(timeout: .now() + 10) == .success)
        // A request sent after this one reaches the server alone.
        let next = Recorder()
        SharedSession.fetches.start(URLRequest(url: server.url.appendingPathComponent("next")), handler: next)
        #expect(next.ended() != nil)
        #expect(server.requests.map(\.path) == ["/app.flags/next"])
    }

    @Test func aFetchCancelledBeforeItStartsSendsNothing() async throws {
        let server = try TestHTTPServer { _ in .ok("flag f { enabled when true }") }
        let client = HTTPClient()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await client.get(URLRequest(url: server.url), timeout: .seconds(5), maximumSize: 1_000)
        }
        guard case .failure(let reason, _) = await task.value else {
            Issue.record("a cancelled fetch succeeded")
            return
        }
        #expect(reason == "cancelled")
        // A fetch after it is the server's first request.
        guard
            case .success(let response, let body) = await client.get(URLRequest(url: server.url), timeout: .seconds(5), maximumSize: 1_000)
        else {
            Issue.record("the fetch failed")
            return
        }
        #expect(response.statusCode == 200 && body == Array("flag f { enabled when true }".utf8))
        #expect(server.requests.count == 1)
    }

    @Test func cancellingEveryTransferEndsOneInFlight() async throws {
        let server = try TestHTTPServer { _ in TestHTTPServer.Response(body: Array("late".utf8), delay: 20) }
        let client = HTTPClient()
        let fetch = Task { await client.get(URLRequest(url: server.url), timeout: .seconds(30), maximumSize: 1_000) }
        // Once the server holds the request, every transfer is cancelled.
        while server.requests.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        client.cancelAll()
        guard case .failure(let reason, _) = await fetch.value else {
            Issue.record("a cancelled fetch succeeded")
            return
        }
        #expect(reason == "cancelled")
    }

    @Test func aBodyOverTheLimitEndsTheFetch() async throws {
        let server = try TestHTTPServer { _ in .ok(String(repeating: "x", count: 5_000)) }
        guard
            case .failure(let reason, let outage) = await HTTPClient().get(
                URLRequest(url: server.url), timeout: .seconds(5), maximumSize: 100)
        else {
            Issue.record("a body over the limit was taken")
            return
        }
        #expect(reason == "the body is over 100 bytes, the limit" && !outage)
    }

    /// Stores of several tenants share the sessions: a cookie one server sets never goes
    /// with another store's request (nor with the same store's next one).
    @Test func noCookieSetByOneServerGoesWithAnotherStoresRequests() async throws {
        let server = try TestHTTPServer { request in
            TestHTTPServer.Response(
                status: 200, headers: ["Set-Cookie": "tenant=acme; Path=/", "ETag": "\"\(request.path)\""],
                body: Array("value v: int = 1\n".utf8))
        }
        let first = FlagStore(source: .url(server.url), refresh: .seconds(600))
        _ = try await first.ready(timeout: .seconds(30))
        first.stop()
        let second = FlagStore(source: .url(URL(string: "http://127.0.0.1:\(server.port)/other.flags")!), refresh: .seconds(600))
        _ = try await second.ready(timeout: .seconds(30))
        second.stop()
        #expect(server.requests.count == 2)
        #expect(server.requests.allSatisfy { $0.headers["cookie"] == nil }, "\(server.requests.map(\.headers))")
    }
}
