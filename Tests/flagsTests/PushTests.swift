import FlagRules
import Foundation
import Testing

/// Rules pushed, not polled: an origin `flags serve`, a relay (`flags serve --source`), and
/// stores subscribed to the relay that poll only every minute, so that only the event
/// stream can bring an edit within seconds.
@Suite(.serialized) struct PushTests {
    static func rulesDirectory(_ text: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flags-push-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try text.write(to: directory.appendingPathComponent("app.flags"), atomically: true, encoding: .utf8)
        return directory
    }

    /// Waits (up to `seconds`) until every store holds rules whose `f` is `value`; how long
    /// it took. It sleeps as a task, leaving the thread to the stores' own tasks (a test
    /// that blocked its thread could starve them on a two-core machine).
    static func until(_ stores: [FlagStore], see value: Bool, within seconds: Double) async -> Double? {
        let start = Date()
        while Date().timeIntervalSince(start) < seconds {
            if stores.allSatisfy({ $0.rules?.evaluate("f", in: [:]).value == .bool(value) }) { return Date().timeIntervalSince(start) }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    /// Waits until every store holds an open connection to the stream.
    static func subscribed(_ stores: [FlagStore]) async -> Bool {
        let start = Date()
        while Date().timeIntervalSince(start) < 60 {
            if stores.allSatisfy(\.isSubscribed) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    @Test func anEditReachesEveryStoreThroughARelay() async throws {
        let directory = try Self.rulesDirectory("flag f = false\n")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = directory.appendingPathComponent("relay-cache")
        var origin = try ServeProcess([directory.path])
        let originPort = origin.port
        let relay = try ServeProcess(["--source", "http://127.0.0.1:\(originPort)", "--cache", cache.path])
        defer { _ = relay.stop() }
        let list = try TCPClient(port: relay.port)
        list.send("GET /rules HTTP/1.1\r\n\r\n")
        #expect(PushProtocol.listedNames(Array(try list.response().body.utf8)) == ["app.flags"])
        let url = URL(string: "http://127.0.0.1:\(relay.port)/rules/app.flags")!
        let stores = (0..<20).map { _ in FlagStore(source: .url(url), refresh: .seconds(120)) }
        for store in stores { store.start() }
        defer { for store in stores { store.stop() } }
        #expect(await Self.until(stores, see: false, within: 60) != nil)
        #expect(await Self.subscribed(stores))

        // An edit: every store has it well within the two minutes they poll at (the figure
        // for 1,000 stores is flags-bench's; this bound holds on a loaded machine too).
        try "flag f = true\n".write(to: directory.appendingPathComponent("app.flags"), atomically: true, encoding: .utf8)
        let reached = await Self.until(stores, see: true, within: 30)
        #expect(reached != nil && reached! < 15, "took \(reached ?? -1) s")

        // A broken edit changes nothing anywhere.
        try "flag f = \n".write(to: directory.appendingPathComponent("app.flags"), atomically: true, encoding: .utf8)
        #expect(try ServeCommandTests.waitForMetric(origin, "flags_rejected_reloads_total 1\n"))
        #expect(await Self.until(stores, see: true, within: 0.5) != nil)

        // The origin goes away: the relay and the stores keep their rules; it comes back
        // on the same port with an edit made meanwhile, and the edit arrives.
        #expect(origin.stop() == 0)
        try "flag f = false\n".write(to: directory.appendingPathComponent("app.flags"), atomically: true, encoding: .utf8)
        #expect(await Self.until(stores, see: true, within: 0.5) != nil)
        origin = try ServeProcess([directory.path], port: originPort)
        defer { _ = origin.stop() }
        let recovered = await Self.until(stores, see: false, within: 60)
        #expect(recovered != nil, "the stores did not get the edit made while the origin was down")
    }

    /// A store given the server's base URL reads the one file it serves, subscribes, and
    /// takes an edit from the stream.
    @Test func aStoreOfTheServersBaseURLFollowsItsOneFile() async throws {
        let directory = try Self.rulesDirectory("flag f = false\n")
        defer { try? FileManager.default.removeItem(at: directory) }
        let origin = try ServeProcess([directory.path])
        defer { _ = origin.stop() }
        let store = FlagStore(source: .url(URL(string: "http://127.0.0.1:\(origin.port)")!), refresh: .seconds(120))
        store.start()
        defer { store.stop() }
        #expect(await Self.until([store], see: false, within: 60) != nil)
        #expect(await Self.subscribed([store]))
        try "flag f = true\n".write(to: directory.appendingPathComponent("app.flags"), atomically: true, encoding: .utf8)
        #expect(await Self.until([store], see: true, within: 30) != nil)
    }

    /// A file added upstream is relayed once the relay lists upstream's files again.
    @Test func aRelayServesAFileAddedUpstream() async throws {
        let directory = try Self.rulesDirectory("flag f = true\n")
        defer { try? FileManager.default.removeItem(at: directory) }
        let origin = try ServeProcess([directory.path])
        defer { _ = origin.stop() }
        let relay = try ServeProcess(["--source", "http://127.0.0.1:\(origin.port)", "--relist", "0.2"])
        defer { _ = relay.stop() }
        func value(_ key: String) throws -> String {
            let client = try TCPClient(port: relay.port)
            client.post("/ofrep/v1/evaluate/flags/\(key)", #"{"context": {}}"#)
            return try client.response().body
        }
        #expect(try value("extra").contains("FLAG_NOT_FOUND"))
        try "flag extra = true\n".write(to: directory.appendingPathComponent("extra.flags"), atomically: true, encoding: .utf8)
        let start = Date()
        while try !value("extra").contains(#""value": true"#), Date().timeIntervalSince(start) < 30 {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(try value("extra").contains(#""value": true"#))
        #expect(try value("f").contains(#""value": true"#))
        #expect(
            try flags(["serve", "--port", "0", "--relist", "0", "--source", "http://127.0.0.1:1"]).stderr.contains("--relist takes seconds")
        )
    }

    /// A relay whose upstream is down starts from its cache, and says so.
    @Test func aRelayStartsFromItsCacheWhileUpstreamIsDown() throws {
        let directory = try Self.rulesDirectory("flag f = true\n")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = directory.appendingPathComponent("relay-cache")
        let origin = try ServeProcess([directory.path])
        let first = try ServeProcess(["--source", "http://127.0.0.1:\(origin.port)", "--cache", cache.path])
        let client = try TCPClient(port: first.port)
        client.post("/ofrep/v1/evaluate/flags/f", #"{"context": {}}"#)
        #expect(try client.response().body.contains(#""value": true"#))
        #expect(first.stop() == 0)
        let port = origin.port
        #expect(origin.stop() == 0)
        let second = try ServeProcess(["--source", "http://127.0.0.1:\(port)", "--cache", cache.path])
        defer { _ = second.stop() }
        #expect(second.startup.contains("starting from the cache"))
        let again = try TCPClient(port: second.port)
        again.post("/ofrep/v1/evaluate/flags/f", #"{"context": {}}"#)
        #expect(try again.response().body.contains(#""value": true"#))
        // Without a cache there is nothing to serve: the relay says why and exits 1.
        let refused = try flags(["serve", "--port", "0", "--source", "http://127.0.0.1:\(port)"])
        #expect(refused.status == 1 && refused.stderr.contains("and no --cache holds an earlier list"))
    }

    /// The stream as OFREP's event-streams document gives it: `id`, `event: message`,
    /// `retry`, and JSON data of type `refetchEvaluation` with `etag` and `lastModified`;
    /// a reconnection naming an older version gets the event at once.
    @Test func theStreamFollowsOFREP() throws {
        let directory = try Self.rulesDirectory("flag f = false\n")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try ServeProcess([directory.path])
        defer { _ = server.stop() }
        let events = try TCPClient(port: server.port)
        events.send("GET /ofrep/v1/events HTTP/1.1\r\n\r\n")
        _ = try events.read(until: "text/event-stream")
        try "flag f = true\n".write(to: directory.appendingPathComponent("app.flags"), atomically: true, encoding: .utf8)
        let stream = try events.read(until: "}\n\n")
        let block = try #require(
            stream.components(separatedBy: "\r\n\r\n").last?.components(separatedBy: "\n\n").first { $0.contains("data:") })
        let fields = Dictionary(
            block.split(separator: "\n").map { line in
                let parts = line.split(separator: ":", maxSplits: 1)
                return (String(parts[0]), String(parts.count > 1 ? parts[1].dropFirst() : ""))
            }, uniquingKeysWith: { a, _ in a })
        #expect(fields["event"] == "message" && fields["retry"] == "1000")
        let data = try #require(try JSONSerialization.jsonObject(with: Data((fields["data"] ?? "").utf8)) as? [String: Any])
        #expect(data["type"] as? String == "refetchEvaluation")
        #expect(data["etag"] as? String == fields["id"])
        #expect((data["lastModified"] as? Int).map { abs(Double($0) - Date().timeIntervalSince1970) < 60 } == true)

        let behind = try TCPClient(port: server.port)
        behind.send("GET /ofrep/v1/events HTTP/1.1\r\nLast-Event-ID: 0\r\n\r\n")
        #expect(try behind.read(until: "refetchEvaluation").contains("id: \(fields["id"] ?? "?")\n"))

        let bulk = try TCPClient(port: server.port)
        bulk.post("/ofrep/v1/evaluate/flags", #"{"context": {}}"#)
        #expect(try bulk.response().body.contains(#""inactivityDelaySec": 120"#))
    }

    /// A store reconnecting to a `?rules=` stream names the text it holds and takes a newer
    /// one from the stream's first event, with no fetch: after the origin's restart with an
    /// edit made meanwhile, the only request the new origin answered is the stream.
    @Test func aStoreCatchesUpFromTheStreamWithoutAFetch() async throws {
        let directory = try Self.rulesDirectory("flag f = false\n")
        defer { try? FileManager.default.removeItem(at: directory) }
        var origin = try ServeProcess([directory.path])
        let port = origin.port
        let store = FlagStore(source: .url(URL(string: "http://127.0.0.1:\(port)")!), refresh: .seconds(120))
        store.start()
        defer { store.stop() }
        #expect(await Self.until([store], see: false, within: 60) != nil)
        #expect(await Self.subscribed([store]))
        #expect(origin.stop() == 0)
        try "flag f = true\n".write(to: directory.appendingPathComponent("app.flags"), atomically: true, encoding: .utf8)
        origin = try ServeProcess([directory.path], port: port)
        defer { _ = origin.stop() }
        #expect(await Self.until([store], see: true, within: 60) != nil)
        let metrics = try TCPClient(port: port)
        metrics.send("GET /metrics HTTP/1.1\r\n\r\n")
        let counts = try metrics.response().body.split(separator: "\n").filter { $0.hasPrefix("flags_http_requests_total{") }
        #expect(counts == [#"flags_http_requests_total{status="200"} 1"#], "\(counts)")
    }

    /// A `?rules=` stream starts from the text in force: a client naming another text
    /// (`If-None-Match`) gets the current one as the first event; one naming the current
    /// text, or none, gets nothing of it until the next change.
    @Test func aRulesStreamStartsFromTheTextInForce() throws {
        let directory = try Self.rulesDirectory("flag f = false\n")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try ServeProcess([directory.path])
        defer { _ = server.stop() }
        let path = "/ofrep/v1/events?rules=app.flags"
        let file = try TCPClient(port: server.port)
        file.send("GET /rules/app.flags HTTP/1.1\r\n\r\n")
        let etag = try #require(try file.response().headers["etag"])

        let behind = try TCPClient(port: server.port)
        behind.send("GET \(path) HTTP/1.1\r\nIf-None-Match: \"an-older-text\"\r\n\r\n")
        let caughtUp = try behind.read(until: "rulesAccepted")
        #expect(caughtUp.contains("X-Flags-Rules: current\r\n"))
        #expect(caughtUp.contains(#""type": "rulesChanged""#) && caughtUp.contains(#"flag f = false\n"#), "\(caughtUp)")
        #expect(caughtUp.contains(#""etag": "\#(etag.replacingOccurrences(of: "\"", with: "\\\""))""#), "\(caughtUp)")

        let current = try TCPClient(port: server.port)
        current.send("GET \(path) HTTP/1.1\r\nIf-None-Match: \(etag)\r\n\r\n")
        let unnamed = try TCPClient(port: server.port)
        unnamed.send("GET \(path) HTTP/1.1\r\n\r\n")
        for client in [current, unnamed] {
            let head = try client.read(until: "rulesAccepted")
            #expect(head.contains("X-Flags-Rules: current\r\n") && !head.contains("rulesChanged"), "\(head)")
        }
        // The first text either is sent is the next one.
        try "flag f = true\n".write(to: directory.appendingPathComponent("app.flags"), atomically: true, encoding: .utf8)
        for client in [current, unnamed] {
            let next = try client.read(until: "refetchEvaluation")
            #expect(next.contains(#"flag f = true\n"#) && !next.contains(#"flag f = false"#), "\(next)")
        }
    }

    @Test func rulesFilesAnswerWithTheirETag() throws {
        let directory = try Self.rulesDirectory("flag f = false\n")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("sub dir"), withIntermediateDirectories: true)
        try "flag g = true\n".write(to: directory.appendingPathComponent("sub dir/x.flags"), atomically: true, encoding: .utf8)
        // Named by their paths in the directory, however it was typed.
        let server = try ServeProcess([directory.path + "/"])
        defer { _ = server.stop() }
        let list = try TCPClient(port: server.port)
        list.send("GET /rules HTTP/1.1\r\n\r\n")
        let listed = try list.response()
        #expect(PushProtocol.listedNames(Array(listed.body.utf8)) == ["app.flags", "sub dir/x.flags"], "\(listed.body)")
        let listETag = try #require(listed.headers["etag"])
        list.send("GET /rules HTTP/1.1\r\nIf-None-Match: \(listETag)\r\n\r\n")
        #expect(try list.response().status == 304)
        list.send("GET \(PushProtocol.filePath("sub dir/x.flags")) HTTP/1.1\r\n\r\n")
        let nested = try list.response()
        #expect(nested.status == 200 && nested.body == "flag g = true\n", "\(PushProtocol.filePath("sub dir/x.flags"))")
        #expect(nested.headers["x-flags-events"] == "/ofrep/v1/events?rules=sub%20dir/x.flags")

        let path = "/rules/app.flags"
        let client = try TCPClient(port: server.port)
        client.send("GET \(path) HTTP/1.1\r\n\r\n")
        let first = try client.response()
        #expect(first.status == 200 && first.body == "flag f = false\n")
        let events = try #require(first.headers["x-flags-events"])
        #expect(events == "/ofrep/v1/events?rules=app.flags")
        // What a cache needs to keep and revalidate it, and the text's generation.
        #expect(first.headers["cache-control"] == "max-age=0, s-maxage=1, must-revalidate")
        #expect(first.headers["last-modified"].flatMap(HTTPDate.parse) != nil && first.headers["date"] != nil)
        let generation = try #require(PushProtocol.generation(first.headers["x-flags-generation"]))
        #expect(abs(Double(generation) / 1e6 - Date().timeIntervalSince1970) < 600)
        client.send("GET \(path) HTTP/1.1\r\nIf-Modified-Since: \(first.headers["last-modified"]!)\r\n\r\n")
        #expect(try client.response().status == 304)
        let etag = try #require(first.headers["etag"])
        client.send("GET \(path) HTTP/1.1\r\nIf-None-Match: \(etag)\r\n\r\n")
        #expect(try client.response().status == 304)
        // A subscriber of that stream gets the file's next text, then the refetch event.
        let stream = try TCPClient(port: server.port)
        stream.send("GET \(events) HTTP/1.1\r\n\r\n")
        _ = try stream.read(until: "text/event-stream")
        try "flag f = true\n".write(to: directory.appendingPathComponent("app.flags"), atomically: true, encoding: .utf8)
        let text = try stream.read(until: "refetchEvaluation")
        #expect(text.contains(#"data: {"type": "rulesChanged", "file": ""#) && text.contains(#""rules": "flag f = true\n"}"#))
        #expect(text.range(of: "rulesChanged")!.lowerBound < text.range(of: "refetchEvaluation")!.lowerBound)
        client.send("GET /rules/app.flag HTTP/1.1\r\n\r\n")
        let missing = try client.response()
        #expect(missing.status == 404 && missing.body.contains("no served file 'app.flag'"))
    }
}
