import Foundation
import Testing

@testable import FlagRules

/// What a store does with a server's (or a proxy's) error answers: `Retry-After` on a `429`
/// or `503` is kept to, bounded; a proxy's `502`, `504` or bare `503` is an outage asked
/// again within seconds, not an answer to back off from for minutes.
@Suite struct ErrorAnswerTests {
    @Test func retryAfterIsReadAndBounded() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(ErrorAnswers.retryAfter(status: 503, field: "5", now: now) == .seconds(5))
        #expect(ErrorAnswers.retryAfter(status: 429, field: " 2 ", now: now) == .seconds(2))
        #expect(ErrorAnswers.retryAfter(status: 503, field: "0", now: now) == .seconds(1))
        #expect(
            ErrorAnswers.wait(after: .seconds(2), jitter: 0) == .seconds(2)
                && ErrorAnswers.wait(after: .seconds(2), jitter: 1) == .seconds(3))
        #expect(ErrorAnswers.retryAfter(status: 503, field: "86400", now: now) == ErrorAnswers.longestRetryAfter)
        #expect(ErrorAnswers.retryAfter(status: 503, field: "99999999999999999999", now: now) == ErrorAnswers.longestRetryAfter)
        #expect(ErrorAnswers.retryAfter(status: 503, field: "Tue, 14 Nov 2023 22:13:30 GMT", now: now) == .seconds(10))
        #expect(ErrorAnswers.retryAfter(status: 503, field: "soon", now: now) == nil)
        #expect(ErrorAnswers.retryAfter(status: 503, field: "-3", now: now) == nil)
        #expect(ErrorAnswers.retryAfter(status: 500, field: "5", now: now) == nil)
        #expect(ErrorAnswers.retryAfter(status: 503, field: nil, now: now) == nil)
        #expect(ErrorAnswers.isUnreachable(status: 502, retryAfter: nil) && ErrorAnswers.isUnreachable(status: 504, retryAfter: nil))
        #expect(
            ErrorAnswers.isUnreachable(status: 503, retryAfter: nil) && !ErrorAnswers.isUnreachable(status: 503, retryAfter: .seconds(1)))
        #expect(!ErrorAnswers.isUnreachable(status: 500, retryAfter: nil) && !ErrorAnswers.isUnreachable(status: 404, retryAfter: nil))
    }

    /// A store holding rules, refreshed every ten minutes, whose server answers errors a
    /// few times before the new text: it has the text within seconds, not minutes.
    @Test(
        arguments: [
            (503, ["Retry-After": "1"]), (429, ["Retry-After": "1"]), (502, [:]), (504, [:]), (503, [:]),
        ] as [(Int, [String: String])])
    func errorAnswersAreAskedAgainSoon(status: Int, headers: [String: String]) async throws {
        let answered = Locked(0)
        let server = try TestHTTPServer { _ in
            let n = answered.withLock { n in
                n += 1
                return n
            }
            if n == 1 { return TestHTTPServer.Response(status: 200, headers: ["ETag": "\"1\""], body: Array("value v: int = 1\n".utf8)) }
            if n <= 4 { return TestHTTPServer.Response(status: status, headers: headers, body: []) }
            return TestHTTPServer.Response(status: 200, headers: ["ETag": "\"2\""], body: Array("value v: int = 2\n".utf8))
        }
        let store = FlagStore(source: .url(server.url), refresh: .seconds(600))
        await store.refreshNow()
        #expect(store.value("v", default: 0) == 1)
        let (events, event) = AsyncStream.makeStream(of: StoreEvent.self)
        store.onEvent = { event.yield($0) }
        // The wait is for the text's event, ended after 30 s so that a store that never
        // asks again fails the test rather than hangs it.
        let bound = Task {
            try? await Task.sleep(for: .seconds(30))
            event.finish()
        }
        defer { bound.cancel() }
        let start = ContinuousClock.now
        // Asks now (an error), then again on its own as the answer said.
        store.start()
        defer { store.stop() }
        for await e in events {
            if case .rulesLoaded = e { break }
        }
        let took = ContinuousClock.now - start
        #expect(store.value("v", default: 0) == 2, "HTTP \(status)")
        // Three errors: at most a few seconds each, not ten minutes doubled (the bound leaves
        // room for a machine loaded by the other suites).
        #expect(took < .seconds(25), "HTTP \(status) \(headers): the new text came after \(took)")
    }
}
