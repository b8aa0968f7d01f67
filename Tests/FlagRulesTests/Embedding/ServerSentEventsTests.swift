import Foundation
import Testing

@testable import FlagRules

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The event-stream reader a subscribed store uses: the format's rules one by one, and the
/// same events whatever the chunks the bytes arrive in.
@Suite struct ServerSentEventsTests {
    static func events(_ text: String) throws -> [ServerSentEvents.Event] {
        var reader = ServerSentEvents()
        return try reader.feed(Array(text.utf8))
    }

    @Test func theFormatsRules() throws {
        let ofrep = "id: v2\nevent: message\nretry: 1000\ndata: {\"type\":\"refetchEvaluation\",\"etag\":\"v2\"}\n\n"
        #expect(try Self.events(ofrep) == [.init(type: "message", data: #"{"type":"refetchEvaluation","etag":"v2"}"#, id: "v2")])
        // Comments, CR LF and CR line ends, several data lines joined, no space after the colon.
        #expect(try Self.events(": keep-alive\r\n\r\ndata:a\rdata: b\r\n\r\n") == [.init(data: "a\nb")])
        // No data, no event; an unknown field is ignored; the id carries over.
        #expect(try Self.events("id: 7\n\nfoo: bar\ndata: x\n\n") == [.init(data: "x", id: "7")])
        // An event is dispatched only at its blank line.
        #expect(try Self.events("data: pending") == [])
        var reader = ServerSentEvents()
        _ = try reader.feed(Array("retry: 2500\nretry: x\n".utf8))
        #expect(reader.retryMilliseconds == 2500)
    }

    @Test func aLineWithoutEndIsRefused() {
        var reader = ServerSentEvents()
        #expect(throws: ServerSentEvents.Failure.lineTooLong(ServerSentEvents.maxLineBytes)) {
            _ = try reader.feed([UInt8](repeating: 97, count: ServerSentEvents.maxLineBytes + 1))
        }
    }

    /// Random streams cut at random places read as they do whole.
    @Test(arguments: 0..<30) func chunksDoNotMatter(seed: Int) throws {
        var g = SeededGenerator(seed: UInt64(seed) &+ 301)
        let pieces = ["data: a", "data: {\"type\":\"refetchEvaluation\"}", "id: v\(seed)", ": c", "event: message", "retry: 9", ""]
        let ends = ["\n", "\r\n", "\r"]
        var text = ""
        for _ in 0..<40 { text += pieces[Int(g.next() % UInt64(pieces.count))] + ends[Int(g.next() % 3)] }
        text += "\n\n"
        let whole = try Self.events(text)
        var reader = ServerSentEvents()
        var chunked: [ServerSentEvents.Event] = []
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = min(bytes.count, 1 + Int(g.next() % 7))
            chunked += try reader.feed(bytes.prefix(n))
            bytes = bytes.dropFirst(n)
        }
        // A CR LF split across chunks ends one line, as it does whole.
        #expect(chunked == whole)
    }

    @Test func eventsReadAsTheProtocolWritesThem() {
        let events: [PushProtocol.Event] = [
            .refetch(version: "17", lastModified: 1_700_000_000),
            .rulesChanged(file: "sub/a.flags", etag: "\"e\"", generation: 42, rules: "flag a = true\n"),
            .rulesChanged(file: "a.flags", etag: "\"e\"", generation: nil, rules: ""),
            .rulesRejected(file: "a.flags", message: "a.flags:1:1: expected a declaration", at: 1_700_000_001),
            .rulesAccepted(file: "a.flags", etag: ""),
            .rulesAccepted(file: "a.flags", etag: "\"e\"", generation: 42),
        ]
        for event in events {
            let data = event.text.split(separator: "\n").first { $0.hasPrefix("data: ") }!.dropFirst(6)
            #expect(PushProtocol.Event(data: String(data)) == event)
        }
        #expect(PushProtocol.Event(data: #"{"type": "somethingNew"}"#) == nil)
        #expect(PushProtocol.Event(data: "not json") == nil)
        #expect(PushProtocol.Event(data: #"{"type": "rulesChanged", "file": "a.flags"}"#) == nil)
        #expect(PushProtocol.Event.refetch(version: "17", lastModified: 0).text.hasPrefix("id: 17\nevent: message\nretry: 1000\n"))
    }

    /// A stream that carries the file's text brings each change of it as text: its refetch
    /// events (for any file's change) ask for no fetch; another stream's do. Of several
    /// texts only the last is taken; another file's rejections are not the store's.
    @Test func aStreamCarryingTheTextNeedsNoFetchOnARefetch() {
        let refetch = ServerSentEvents.Event(data: #"{"type": "refetchEvaluation", "etag": "v2"}"#)
        let text = { (value: Bool, generation: Int) in
            ServerSentEvents.Event(
                data:
                    #"{"type": "rulesChanged", "file": "a.flags", "etag": "\"e\#(generation)\"", "generation": \#(generation), "rules": "flag a = \#(value)\n"}"#
            )
        }
        let rejected = ServerSentEvents.Event(data: #"{"type": "rulesRejected", "file": "a.flags", "message": "no", "at": 5}"#)
        let otherRejected = ServerSentEvents.Event(data: #"{"type": "rulesRejected", "file": "b.flags", "message": "no", "at": 5}"#)
        let accepted = ServerSentEvents.Event(data: #"{"type": "rulesAccepted", "file": "a.flags", "etag": "\"e\"", "generation": 3}"#)
        let unknown = ServerSentEvents.Event(data: #"{"type": "somethingNew", "file": "a.flags"}"#)
        #expect(EventSubscription.actions(for: [refetch], file: "a.flags") == [])
        #expect(EventSubscription.actions(for: [refetch], file: nil) == [.fetch])
        #expect(
            EventSubscription.actions(for: [text(false, 1), text(true, 2), refetch], file: "a.flags") == [
                .rules(text: Array("flag a = true\n".utf8), etag: "\"e2\"", generation: 2)
            ])
        #expect(
            EventSubscription.actions(for: [rejected, otherRejected, accepted], file: "a.flags") == [
                .rejected(message: "no", at: Date(timeIntervalSince1970: 5)), .accepted(etag: "\"e\"", generation: 3),
            ])
        #expect(EventSubscription.actions(for: [unknown, otherRejected], file: "a.flags") == [])
        // Another file's text, or a text on a stream that asked for none, is not the store's.
        #expect(EventSubscription.actions(for: [text(true, 3)], file: "b.flags") == [])
        #expect(EventSubscription.actions(for: [text(true, 3)], file: nil) == [])
        #expect(EventSubscription.actions(for: [rejected], file: nil) == [])
        let subscription = EventSubscription(
            url: URL(string: "http://127.0.0.1:1/ofrep/v1/events?rules=sub%2Fa.flags")!, headers: [:], maximumSize: 1 << 20, heard: { _ in }
        )
        #expect(subscription.carriesRules && subscription.file == "sub/a.flags")
        #expect(
            !EventSubscription(url: URL(string: "http://127.0.0.1:1/ofrep/v1/events")!, headers: [:], maximumSize: 1 << 20, heard: { _ in })
                .carriesRules)
    }

    /// A stream whose store stopped while it was being opened (between connect and the
    /// answer's head) is not reported connected when the head comes: it is closed.
    @Test func aStreamCancelledWhileOpeningIsClosedNotConnected() throws {
        let url = URL(string: "https://127.0.0.1:1/ofrep/v1/events")!
        let subscription = EventSubscription(url: url, headers: [:], maximumSize: 1 << 20, heard: { _ in })
        subscription.cancel()
        let head = try #require(
            HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Content-Type": "text/event-stream"]))
        #expect(subscription.received(head, on: URLSession.shared.dataTask(with: url)) == .cancel)
        #expect(!subscription.isConnected)
    }

    /// Reconnecting: within 2 s while the server cannot be reached, so that a stream is back
    /// within seconds of its return; doubling to a minute when it answers with an error.
    @Test func reconnectionBacksOff() {
        #expect(EventSubscription.reconnectDelay(after: 1, jitter: 1) == 0.25)
        #expect(EventSubscription.reconnectDelay(after: 3, jitter: 1) == 1)
        #expect(EventSubscription.reconnectDelay(after: 30, jitter: 1) == 2)
        #expect(EventSubscription.reconnectDelay(after: 30, jitter: 0) == 1)
        #expect(EventSubscription.reconnectDelay(after: 1, refused: true, jitter: 1) == 1)
        #expect(EventSubscription.reconnectDelay(after: 3, refused: true, jitter: 1) == 4)
        #expect(EventSubscription.reconnectDelay(after: 30, refused: true, jitter: 1) == 60)
        #expect(EventSubscription.reconnectDelay(after: 30, refused: true, jitter: 0) == 30)
    }

    /// The store's inbox of pushed work: one taker at a time, the newest text (an older one
    /// arriving late is dropped), fetches merged, a text before a fetch.
    @Test func theInboxKeepsTheNewestTextAndOneFetch() {
        let inbox = PushInbox()
        let text = { (generation: Int?) in PushInbox.Work.rules(text: [UInt8(generation ?? 0)], etag: "e", generation: generation) }
        #expect(inbox.add(text(2)))
        #expect(!inbox.add(text(3)))
        #expect(!inbox.add(text(1)))
        #expect(!inbox.add(.fetch))
        #expect(!inbox.add(.fetch))
        #expect(inbox.next() == text(3))
        #expect(inbox.next() == .fetch)
        #expect(inbox.next() == nil)
        // Stopped taking: the next add starts a taker again.
        #expect(inbox.add(text(nil)))
        #expect(!inbox.add(text(nil)))
        #expect(inbox.next() == text(nil) && inbox.next() == nil)
        #expect(inbox.add(.fetch))
        inbox.abandon()
        #expect(inbox.waiting.text == nil && !inbox.waiting.fetch)
        #expect(inbox.add(.fetch))
    }
}

/// Event streams over plain `http://` (``PlainStreams``): a body in chunks, as a proxy
/// sends it, is de-chunked whatever the pieces it comes in.
@Suite struct PlainStreamsTests {
    static func chunked(_ text: String, sizes: [Int]) -> [UInt8] {
        var out: [UInt8] = []
        var rest = Array(text.utf8)[...]
        var k = 0
        while !rest.isEmpty {
            let n = min(rest.count, max(1, sizes[k % sizes.count]))
            out += Array(String(n, radix: 16).utf8) + (k % 3 == 0 ? Array(";ext=1".utf8) : []) + [13, 10] + rest.prefix(n) + [13, 10]
            rest = rest.dropFirst(n)
            k += 1
        }
        return out + Array("0\r\nX-Trailer: t\r\n\r\n".utf8)
    }

    @Test(arguments: 0..<20) func chunksAreReadInAnyPieces(seed: Int) throws {
        var random = SeededGenerator(seed: UInt64(seed) &+ 9)
        let text = (0..<50).map { "data: {\"n\": \($0)}\n\n" }.joined()
        let body = Self.chunked(text, sizes: (0..<7).map { _ in 1 + Int(random.next() % 90) })
        var decoder = ChunkedDecoder()
        var out: [UInt8] = []
        var i = 0
        while i < body.count {
            let n = 1 + Int(random.next() % 30)
            out += try decoder.feed(Array(body[i..<min(body.count, i + n)]))
            i += n
        }
        #expect(String(decoding: out, as: UTF8.self) == text)
        #expect(decoder.isDone)
    }

    @Test func malformedChunksAreRefused() {
        for bad in ["zz\r\nab\r\n", "2\r\nabc\r\n", "2\r\nabXY", String(repeating: "1", count: 2_000) + "\r\n", "-1\r\nab", "+2\r\nab"] {
            var decoder = ChunkedDecoder()
            #expect(throws: ChunkedDecoder.Malformed.self, "\(bad)") { try decoder.feed(Array(bad.utf8)) }
        }
    }

    /// An event's data is bounded as a line is: endless empty `data:` lines are an error,
    /// not memory without bound.
    @Test func anEventsDataIsBounded() {
        var reader = ServerSentEvents(lineLimit: 1_000)
        #expect(throws: ServerSentEvents.Failure.self) { try reader.feed(Array(String(repeating: "data:\n", count: 2_000).utf8)) }
        var fine = ServerSentEvents(lineLimit: 1_000)
        #expect((try? fine.feed(Array((String(repeating: "data: x\n", count: 100) + "\n").utf8)))?.count == 1)
    }

    /// The request is one request whatever the URL and headers hold: its target stays
    /// percent-encoded, and a line break, a space or a control character (a hostile
    /// `X-Flags-Events` could name one) makes no request at all.
    @Test func aRequestCarriesItsHeadersAndNoLineBreaksOfTheirs() throws {
        let url = try #require(URL(string: "http://flags.internal:8016/ofrep/v1/events?rules=sub%2Fa%20b.flags"))
        let bytes = try #require(PlainStreams.requestBytes(url, headers: [("If-None-Match", "\"e\"")]))
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == "GET /ofrep/v1/events?rules=sub%2Fa%20b.flags HTTP/1.1\r\nHost: flags.internal:8016\r\nIf-None-Match: \"e\"\r\n\r\n")
        #expect(PlainStreams.requestBytes(url, headers: [("X-Bad", "a\r\nInjected: 1")]) == nil)
        #expect(PlainStreams.requestBytes(url, headers: [("X Bad", "a")]) == nil)
        let injected = try #require(URL(string: "http://flags.internal:8016/x%0D%0AEvil:%201"))
        let decoded = String(decoding: try #require(PlainStreams.requestBytes(injected, headers: [])), as: UTF8.self)
        #expect(decoded.hasPrefix("GET /x%0D%0AEvil:%201 HTTP/1.1\r\n") && !decoded.contains("\r\nEvil"))
    }

    /// A store whose server's stream comes in chunks (a proxy's) takes the text it carries.
    @Test func aStoreTakesAChunkedStream() async throws {
        let event = PushProtocol.Event.rulesChanged(file: "app.flags", etag: "\"5\"", generation: 50, rules: "value v: int = 5\n")
        let server = try TestHTTPServer { request in
            if request.path.hasPrefix("/events") {
                return TestHTTPServer.Response(
                    status: 200,
                    headers: ["Content-Type": "text/event-stream", "Transfer-Encoding": "chunked", "X-Flags-Rules": "current"],
                    body: Self.chunked(event.text, sizes: [7, 30, 1]))
            }
            return TestHTTPServer.Response(
                status: 200, headers: ["ETag": "\"1\"", "X-Flags-Generation": "10", "X-Flags-Events": "/events?rules=app.flags"],
                body: Array("value v: int = 1\n".utf8))
        }
        let store = FlagStore(source: .url(server.url), refresh: .seconds(600))
        store.start()
        defer { store.stop() }
        let start = Date()
        // (Up to 90 s: on a machine loaded by every other suite, the store's tasks can wait long
        // for a thread.)
        while store.rules?.evaluate("v", in: [:]).value != .int(5), Date().timeIntervalSince(start) < 90 {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(store.rules?.evaluate("v", in: [:]).value == .int(5) && store.rulesGeneration == 50)
    }

    /// A server (or a proxy) that answers the stream and hangs up at once is not asked again
    /// four times a second: a connection that brought nothing and ended at once is a
    /// failure in a row, and the waits grow.
    @Test func aServerThatAnswersAndHangsUpIsNotStormed() async throws {
        let server = try TestHTTPServer { request in
            if request.path.hasPrefix("/events") {
                return TestHTTPServer.Response(status: 200, headers: ["Content-Type": "text/event-stream"], body: [])
            }
            return TestHTTPServer.Response(
                status: 200, headers: ["ETag": "\"1\"", "X-Flags-Events": "/events?rules=app.flags"], body: Array("value v: int = 1\n".utf8)
            )
        }
        let store = FlagStore(source: .url(server.url), refresh: .seconds(600))
        store.start()
        defer { store.stop() }
        _ = try await store.ready(timeout: .seconds(30))
        try await Task.sleep(for: .seconds(4))
        let streams = server.requests.filter { $0.path.hasPrefix("/events") }.count
        // 0.25, 0.5, 1, 2, 2 s at most (drawn down to half): not the 16-32 of a storm.
        #expect(streams >= 2 && streams <= 9, "\(streams) connections in 4 s")
    }
}
