import Foundation
import Testing

@testable import FlagRules

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

    @Test func onlyARefetchEventAsksForAFetch() {
        #expect(EventSubscription.isRefetch(.init(data: #"{"type": "refetchEvaluation", "etag": "x"}"#)))
        #expect(!EventSubscription.isRefetch(.init(data: #"{"type": "somethingNew"}"#)))
        #expect(!EventSubscription.isRefetch(.init(data: "not json")))
    }

    /// A stream that carries the file's text brings each change of it as text: its refetch
    /// events (for any file's change) ask for no fetch; another stream's do.
    @Test func aStreamCarryingTheTextNeedsNoFetchOnARefetch() {
        let refetch = ServerSentEvents.Event(data: #"{"type": "refetchEvaluation", "etag": "v2"}"#)
        let text = ServerSentEvents.Event(
            data: #"{"type": "rulesChanged", "file": "a.flags", "etag": "\"e\"", "rules": "flag a = true\n"}"#)
        let unknown = ServerSentEvents.Event(data: #"{"type": "rulesRejected", "file": "a.flags"}"#)
        #expect(EventSubscription.action(for: [refetch], carriesRules: true) == .none)
        #expect(EventSubscription.action(for: [refetch], carriesRules: false) == .fetch)
        #expect(EventSubscription.action(for: [text, refetch], carriesRules: true) == .deliver(Array("flag a = true\n".utf8), "\"e\""))
        #expect(EventSubscription.action(for: [unknown], carriesRules: false) == .none)
        let subscription = EventSubscription(
            url: URL(string: "http://127.0.0.1:1/ofrep/v1/events?rules=a.flags")!, headers: [:], maximumSize: 1 << 20, changed: {},
            delivered: { _, _ in })
        #expect(subscription.carriesRules)
        #expect(
            !EventSubscription(
                url: URL(string: "http://127.0.0.1:1/ofrep/v1/events")!, headers: [:], maximumSize: 1 << 20, changed: {},
                delivered: { _, _ in }
            ).carriesRules)
    }

    @Test func reconnectionBacksOff() {
        #expect(EventSubscription.reconnectDelay(after: 1, jitter: 1) == 1)
        #expect(EventSubscription.reconnectDelay(after: 3, jitter: 1) == 4)
        #expect(EventSubscription.reconnectDelay(after: 30, jitter: 1) == 60)
        #expect(EventSubscription.reconnectDelay(after: 30, jitter: 0) == 30)
    }
}
