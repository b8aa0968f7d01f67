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
        var origin = try ServeProcess([directory.path], port: StablePort.next())
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
    @Test func aRelayStartsFromItsCacheWhileUpstreamIsDown() async throws {
        try await offThePool {
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
    }

    /// The stream as OFREP's event-streams document gives it: `id`, `event: message`,
    /// `retry`, and JSON data of type `refetchEvaluation` with `etag` and `lastModified`;
    /// a reconnection naming an older version gets the event at once.
    @Test func theStreamFollowsOFREP() async throws {
        try await offThePool {
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
    }

    /// A rejected update is told to the subscribers of that file and of every change, not
    /// to another file's; its message names the file as it is served, never where it lies
    /// on the server's disk; its clearing names the generation in force.
    @Test func aRejectionIsToldToItsFilesSubscribersByItsServedName() async throws {
        try await offThePool {
            let directory = try Self.rulesDirectory("flag f = false\n")
            defer { try? FileManager.default.removeItem(at: directory) }
            let a = directory.appendingPathComponent("app.flags")
            let b = directory.appendingPathComponent("b.flags")
            try "flag g = false\n".write(to: b, atomically: true, encoding: .utf8)
            let server = try ServeProcess([directory.path])
            defer { _ = server.stop() }
            let all = try TCPClient(port: server.port)
            all.send("GET /ofrep/v1/events HTTP/1.1\r\n\r\n")
            _ = try all.read(until: "text/event-stream")
            let other = try TCPClient(port: server.port)
            other.send("GET /ofrep/v1/events?rules=b.flags HTTP/1.1\r\n\r\n")
            _ = try other.read(until: "rulesAccepted")
            try "flag f = \n".write(to: a, atomically: true, encoding: .utf8)
            /// The text of the first event of `type` a client has, once all of it has come.
            func event(_ client: TCPClient, _ type: String) throws -> String {
                let text = try client.read(within: 30) { text in
                    guard let start = text.range(of: #""type": "\#(type)""#) else { return false }
                    return text[start.upperBound...].contains("\n\n")
                }
                let start = text.range(of: #""type": "\#(type)""#)!
                return String(text[start.lowerBound...].prefix { $0 != "\n" })
            }
            let rejected = try event(all, "rulesRejected")
            #expect(rejected.contains(#""message": "1 error: app.flags:1:"#), "\(rejected)")
            #expect(!rejected.contains(directory.path) && !rejected.contains("/app.flags"), "\(rejected)")
            try "flag f = true\n".write(to: a, atomically: true, encoding: .utf8)
            let accepted = try event(all, "rulesAccepted")
            #expect(accepted.contains(#""file": "app.flags""#) && accepted.contains(#""generation": "#), "\(accepted)")
            #expect(!accepted.contains(#""etag": """#), "\(accepted)")
            // b's subscriber hears b's next change and nothing of app.flags before it.
            try "flag g = true\n".write(to: b, atomically: true, encoding: .utf8)
            _ = try event(other, "rulesChanged")
            let heard = try other.read(until: "rulesChanged")
            #expect(!heard.contains("rulesRejected") && !heard.contains("app.flags"), "\(heard)")
        }
    }

    /// A store reconnecting to a `?rules=` stream names the text it holds and takes a newer
    /// one from the stream's first event, with no fetch: after the origin's restart with an
    /// edit made meanwhile, the only request the new origin answered is the stream.
    @Test func aStoreCatchesUpFromTheStreamWithoutAFetch() async throws {
        let directory = try Self.rulesDirectory("flag f = false\n")
        defer { try? FileManager.default.removeItem(at: directory) }
        var origin = try ServeProcess([directory.path], port: StablePort.next())
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
        // One text fetched (before the outage); the edit came by the stream. A look the
        // outage's back-off had already planned may land after it: a 304, no text.
        let counts = try metrics.response().body.split(separator: "\n").filter { $0.hasPrefix("flags_http_requests_total{") }
        #expect(counts.filter { !$0.contains(#"status="304""#) } == [#"flags_http_requests_total{status="200"} 1"#], "\(counts)")
    }

    /// A `?rules=` stream starts from the text in force: a client naming another text
    /// (`If-None-Match`) gets the current one as the first event; one naming the current
    /// text, or none, gets nothing of it until the next change.
    @Test func aRulesStreamStartsFromTheTextInForce() async throws {
        try await offThePool {
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
    }

    @Test func rulesFilesAnswerWithTheirETag() async throws {
        try await offThePool {
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

    /// A single file served by its absolute path is named by its file name: the list
    /// publishes no path of the server's, and `/rules/NAME` answers as the docs write it.
    @Test func aSingleFileIsServedByItsFileName() async throws {
        try await offThePool {
            let directory = try Self.rulesDirectory("flag f = false\n")
            defer { try? FileManager.default.removeItem(at: directory) }
            let server = try ServeProcess([directory.appendingPathComponent("app.flags").path])
            defer { _ = server.stop() }
            let listed = try Self.get(server.port, PushProtocol.listPath)
            #expect(PushProtocol.listedNames(Array(listed.utf8)) == ["app.flags"], "\(listed)")
            #expect(!listed.contains(directory.path))
            #expect(try Self.get(server.port, PushProtocol.filePath("app.flags")) == "flag f = false\n")
        }
    }

    /// `GET path` on `port`: the response's body.
    static func get(_ port: Int, _ path: String) throws -> String {
        let client = try TCPClient(port: port)
        client.send("GET \(path) HTTP/1.1\r\n\r\n")
        return try client.response().body
    }

    /// Waits (up to `seconds`) as a task for `condition`; how long it took.
    static func until(within seconds: Double = 30, _ condition: () throws -> Bool) async rethrows -> Double? {
        let start = Date()
        while Date().timeIntervalSince(start) < seconds {
            if try condition() { return Date().timeIntervalSince(start) }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    /// An edit the origin rejects is reported at every hop: the relay serves it as its own
    /// standing rejection (page API, metrics, log), naming the origin, and a store of the
    /// relay reports it (an event, `status.lastProblem`) while its rules stay. The last good
    /// text restored clears it everywhere with an event, and so does a fix.
    @Test func aRejectedEditIsReportedAtEveryHopAndClearedByTheFix() async throws {
        let directory = try Self.rulesDirectory("flag f = false\n")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("app.flags")
        let origin = try ServeProcess([directory.path])
        defer { _ = origin.stop() }
        let relay = try ServeProcess(["--source", "http://127.0.0.1:\(origin.port)"])
        defer { _ = relay.stop() }
        let events = Locked<[StoreEvent]>([])
        let store = FlagStore(source: .url(URL(string: "http://127.0.0.1:\(relay.port)/rules/app.flags")!), refresh: .seconds(120))
        store.onEvent = { event in events.withLock { $0.append(event) } }
        store.start()
        defer { store.stop() }
        #expect(await Self.until([store], see: false, within: 60) != nil)
        #expect(await Self.subscribed([store]))
        func told(_ kind: String) -> Int {
            events.withLock { $0.filter { "\($0)".contains(kind) }.count }
        }
        func relayRejections() throws -> [JSON] {
            try JSON.parse(Self.get(relay.port, "/api/rules"))["rejected"]?.elements ?? []
        }

        for (round, ending) in [(1, "flag f = false\n"), (2, "flag f = true\n")] {
            // A broken edit: the store hears of it within a second or two of the write (the
            // origin looks at its file every 250 ms), and keeps its rules.
            try "flag f = \n".write(to: file, atomically: true, encoding: .utf8)
            let atOrigin = try await Self.until {
                try (JSON.parse(Self.get(origin.port, "/api/rules"))["rejected"]?.elements ?? []).count == 1
            }
            #expect(atOrigin != nil, "round \(round): the origin did not reject the edit")
            // Within a second of the origin's rejection, the relay and the store report it.
            let atRelay = try await Self.until { try relayRejections().count == 1 }
            let atStore = await Self.until { told("rejected an update") == round }.map { $0 + (atRelay ?? 0) }
            #expect(atRelay != nil && atRelay! < 1, "round \(round): the relay reported it after \(atRelay ?? -1) s")
            #expect(atStore != nil && atStore! < 1, "round \(round): the store heard after \(atStore ?? -1) s")
            print(
                "round \(round): after the origin's rejection, the relay reported it in \(atRelay ?? -1) s, a store of the relay in \(atStore ?? -1) s"
            )
            #expect(store.status.lastProblem?.contains("rejected an update") == true)
            #expect(store.rules?.evaluate("f", in: [:]).value == .bool(false))
            let standing = try relayRejections()
            #expect(standing.count == 1 && standing.first?["file"]?.string == "app.flags", "\(standing)")
            #expect(
                standing.first?["message"]?.string?.contains("rejected upstream (http://127.0.0.1:\(origin.port)/rules/app.flags)") == true)
            #expect(try Self.get(relay.port, "/metrics").contains(#"flags_rules_rejected{file="app.flags"} 1"#))
            #expect(relay.log.contains("app.flags: http://127.0.0.1:\(origin.port)/rules/app.flags rejected an update"))

            // Round 1 restores the last good text (no change of the rules); round 2 fixes it.
            try ending.write(to: file, atomically: true, encoding: .utf8)
            let cleared = await Self.until { told("no longer stands") == round }
            #expect(cleared != nil, "round \(round)")
            #expect(try await Self.until { try relayRejections().isEmpty } != nil)
            #expect(try Self.get(relay.port, "/metrics").contains(#"flags_rules_rejected{file="app.flags"} 0"#))
        }
        #expect(await Self.until([store], see: true, within: 30) != nil)
    }

    /// The origin is down for 20 s and its file is edited meanwhile: within 5 s of its
    /// return every store (of the relay, and of the origin itself) and the relay hold the
    /// edit. Meanwhile the relay says its upstream is unreachable (health, metrics, log).
    @Test(slowTests) func afterATwentySecondOutageEveryHopHoldsTheEditWithinFiveSeconds() async throws {
        let directory = try Self.rulesDirectory("flag f = false\n")
        defer { try? FileManager.default.removeItem(at: directory) }
        var origin = try ServeProcess([directory.path], port: StablePort.next())
        let port = origin.port
        let relay = try ServeProcess(["--source", "http://127.0.0.1:\(port)"])
        defer { _ = relay.stop() }
        let viaRelay = (0..<5).map { _ in
            FlagStore(source: .url(URL(string: "http://127.0.0.1:\(relay.port)/rules/app.flags")!), refresh: .seconds(120))
        }
        let direct = FlagStore(source: .url(URL(string: "http://127.0.0.1:\(port)/rules/app.flags")!), refresh: .seconds(120))
        let stores = viaRelay + [direct]
        for store in stores { store.start() }
        defer { for store in stores { store.stop() } }
        let loaded = await Self.until(stores, see: false, within: 60)
        #expect(loaded != nil, "\(stores.map { "\($0.status)" }) relay: \(relay.log)")
        #expect(await Self.subscribed(stores))
        #expect(try Self.get(relay.port, "/healthz").hasPrefix("ok\nupstream http://127.0.0.1:\(port)/rules/app.flags: connected"))

        let down = Date()
        #expect(origin.stop() == 0)
        let noticed = try await Self.until { try Self.get(relay.port, "/healthz").hasPrefix("degraded\n") }
        #expect(noticed != nil && noticed! < 5, "the relay said its upstream was down after \(noticed ?? -1) s")
        // For a monitor that reads status codes only: 503 while degraded; /healthz stays 200.
        let upstream = try TCPClient(port: relay.port)
        upstream.send("GET /healthz/upstream HTTP/1.1\r\n\r\n")
        #expect(try upstream.response().status == 503)
        #expect(try Self.get(relay.port, "/metrics").contains(#"flags_upstream_up{file="app.flags"} 0"#))
        #expect(try Self.get(relay.port, "/healthz").contains("last synced "))
        let syncedBefore = try Self.lastSync(relay.port)
        #expect(syncedBefore != nil && syncedBefore! <= Int(down.timeIntervalSince1970) + 1)
        try await Task.sleep(for: .seconds(10))
        try "flag f = true\n".write(to: directory.appendingPathComponent("app.flags"), atomically: true, encoding: .utf8)
        // A store started during the outage with rules of its own (bundled with an app):
        // its looks keep coming every few seconds while the origin cannot be reached.
        let bundled = FlagStore(
            source: .url(URL(string: "http://127.0.0.1:\(port)/rules/app.flags")!), refresh: .seconds(120),
            bundled: BundledRules(source: "flag f = false\n", publishedAt: Date(timeIntervalSince1970: 0)))
        bundled.start()
        defer { bundled.stop() }
        try await Task.sleep(for: .seconds(max(0, 20 - Date().timeIntervalSince(down))))
        #expect(await Self.until(stores + [bundled], see: true, within: 0.1) == nil)
        #expect(try Self.lastSync(relay.port) == syncedBefore)

        origin = try ServeProcess([directory.path], port: port)
        defer { _ = origin.stop() }
        let back = Date()
        let caughtUp = await Self.until(stores + [bundled], see: true, within: 30)
        #expect(caughtUp != nil && caughtUp! < 5, "every store held the edit \(caughtUp ?? -1) s after the origin's return")
        let relayed = try await Self.until(within: 5) { try Self.get(relay.port, "/rules/app.flags") == "flag f = true\n" }
        #expect(relayed != nil)
        print("outage of \(Int(back.timeIntervalSince(down))) s: every store held the edit \(caughtUp ?? -1) s after the origin's return")
        #expect(try await Self.until(within: 5) { try Self.get(relay.port, "/healthz").hasPrefix("ok\n") } != nil)
        #expect(try Self.get(relay.port, "/metrics").contains(#"flags_upstream_up{file="app.flags"} 1"#))
        // The outage is at most one failure, however many looks it took (as an emptied file
        // is on an origin): none when the relay, its stream lost, made no look meanwhile.
        let failures = try Self.get(relay.port, "/metrics").split(separator: "\n").first { $0.hasPrefix("flags_failed_reloads_total ") }
        #expect(["flags_failed_reloads_total 0", "flags_failed_reloads_total 1"].contains(failures), "\(relay.log)")
        #expect(try Self.lastSync(relay.port).map { $0 >= Int(back.timeIntervalSince1970) } == true)
        #expect(relay.log.contains("app.flags: event stream lost"))
        #expect(relay.log.contains("without it"), "\(relay.log)")
    }

    /// The relay's `flags_upstream_last_sync_timestamp_seconds` for app.flags.
    static func lastSync(_ port: Int) throws -> Int? {
        let prefix = #"flags_upstream_last_sync_timestamp_seconds{file="app.flags"} "#
        return try get(port, "/metrics").split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Int($0.dropFirst(prefix.count)) }
    }

    /// A relay restarted from its cache while its origin is down subscribes at once to the
    /// stream it cached, and takes the edit made meanwhile within seconds of the origin's
    /// return (not after its polling's back-off).
    @Test func aRelayStartedFromItsCacheWhileTheOriginIsDownCatchesUpOnItsReturn() async throws {
        let directory = try Self.rulesDirectory("flag f = false\n")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = directory.appendingPathComponent("relay-cache")
        var origin = try ServeProcess([directory.path], port: StablePort.next())
        let port = origin.port
        var relay = try ServeProcess(["--source", "http://127.0.0.1:\(port)", "--cache", cache.path])
        #expect(relay.stop() == 0)
        #expect(origin.stop() == 0)
        relay = try ServeProcess(["--source", "http://127.0.0.1:\(port)", "--cache", cache.path])
        defer { _ = relay.stop() }
        #expect(try Self.get(relay.port, "/rules/app.flags") == "flag f = false\n")
        #expect(try Self.get(relay.port, "/healthz").hasPrefix("degraded\n"))
        try "flag f = true\n".write(to: directory.appendingPathComponent("app.flags"), atomically: true, encoding: .utf8)
        origin = try ServeProcess([directory.path], port: port)
        defer { _ = origin.stop() }
        let caughtUp = try await Self.until(within: 30) { try Self.get(relay.port, "/rules/app.flags") == "flag f = true\n" }
        #expect(caughtUp != nil && caughtUp! < 5, "the relay held the edit \(caughtUp ?? -1) s after the origin's return")
    }
}
