import Foundation
import Testing

@testable import FlagRules
@testable import FlagRulesServer

/// `flags serve`'s endpoints, request by request, without sockets.
@Suite struct OFREPServiceTests {
    static let rules = """
        context {
          build  : enum(debug, beta, release)
          userId : string
          age    : int
        }
        @owner("ios")
        flag darkMode { enabled when build == beta }
        flag rolled { enabled when rollout(userId) < 50% }
        variant banner [none, small] = none { small when age >= 18 }
        value limit: double = 2.5 { 10.0 when build == debug }
        segment adults = age >= 18

        """

    static func service(_ options: OFREPService.Options = .init()) throws -> OFREPService {
        let service = OFREPService(options: options)
        service.install([.init(name: "rules.flags", rules: try RuleSet(source: rules, name: "rules.flags"))])
        return service
    }

    static func post(_ path: String, _ body: String, headers: [(String, String)] = []) -> HTTPRequest {
        HTTPRequest(method: "POST", path: path, headers: headers, body: Array(body.utf8))
    }

    static func json(_ response: HTTPResponse) throws -> JSON {
        try JSON.parse(bytes: response.body)
    }

    @Test func oneFlagAnswersInOFREPsShape() throws {
        let service = try Self.service()
        let r = service.respond(Self.post("/ofrep/v1/evaluate/flags/darkMode", #"{"context": {"targetingKey": "u-1", "build": "beta"}}"#))
        #expect(r.status == 200 && r.header("Content-Type") == "application/json")
        #expect(
            try Self.json(r)
                == .object([
                    ("key", .string("darkMode")), ("value", .bool(true)), ("reason", .string("TARGETING_MATCH")),
                    ("variant", .string("rule1")),
                    ("metadata", .object([("kind", .string("flag")), ("rule", .int(1)), ("line", .int(7)), ("owner", .string("ios"))])),
                ]))
        let variant = try Self.json(service.respond(Self.post("/ofrep/v1/evaluate/flags/banner", #"{"context": {"age": 30}}"#)))
        #expect(variant["variant"] == .string("small") && variant["value"] == .string("small"))
        let value = try Self.json(service.respond(Self.post("/ofrep/v1/evaluate/flags/limit", #"{"context": {}}"#)))
        #expect(value["value"] == .double(2.5) && value["variant"] == .string("default") && value["reason"] == .string("DEFAULT"))
        // The targeting key fills the unit attribute.
        let rolled = try Self.json(
            service.respond(Self.post("/ofrep/v1/evaluate/flags/rolled", #"{"context": {"targetingKey": "user-3"}}"#)))
        let direct = try RuleSet(source: Self.rules).evaluate("rolled", in: ["userId": "user-3"])
        #expect(rolled["value"] == .bool(direct.value == .bool(true)) && rolled["reason"] == .string(direct.reason.rawValue))
    }

    /// The variant an answer writes as bytes is the JSON of ``OFREPService/variant(_:)``:
    /// a variant's name, `ruleN`, or the reason in lower case.
    @Test func variantsAreWrittenAsTheirNames() {
        let resolutions: [Resolution] =
            [
                Resolution(value: .string("b"), variant: "b", reason: .split, rule: 2),
                Resolution(value: .string("é\"x"), variant: "é\"x", reason: .default),
                Resolution(value: .bool(true), reason: .targetingMatch, rule: 12),
            ]
            + [Resolution.Reason.static, .default, .disabled, .error, .override, .targetingMatch, .split].map {
                Resolution(value: .bool(false), reason: $0)
            }
        for r in resolutions {
            var written: [UInt8] = []
            OFREPService.writeVariant(r, to: &written)
            var expected: [UInt8] = []
            JSON.writeString(OFREPService.variant(r), to: &expected)
            #expect(written == expected, "\(r)")
        }
    }

    @Test func failuresNameTheProblem() throws {
        let service = try Self.service()
        let cases: [(String, String, Int, JSON)] = [
            (
                "nope", #"{"context": {}}"#, 404,
                .object([
                    ("key", .string("nope")), ("errorCode", .string("FLAG_NOT_FOUND")),
                    ("errorDetails", .string("no flag, variant or value is named 'nope'")),
                ])
            ),
            (
                "darkMode", #"{"context": "#, 400,
                .object([
                    ("key", .string("darkMode")), ("errorCode", .string("PARSE_ERROR")),
                    ("errorDetails", .string("the body is not JSON: unexpected end of input at byte 12")),
                ])
            ),
            (
                "banner", #"{"context": {"age": "old"}}"#, 400,
                .object([
                    ("key", .string("banner")), ("errorCode", .string("INVALID_CONTEXT")),
                    ("errorDetails", .string("attribute 'age' expects an int")),
                ])
            ),
            (
                "darkMod", #"{"context": {}}"#, 404,
                .object([
                    ("key", .string("darkMod")), ("errorCode", .string("FLAG_NOT_FOUND")),
                    ("errorDetails", .string("no flag, variant or value is named 'darkMod'; did you mean 'darkMode'?")),
                ])
            ),
            (
                "darkMode", #"{"context": [1]}"#, 400,
                .object([
                    ("key", .string("darkMode")), ("errorCode", .string("INVALID_CONTEXT")),
                    ("errorDetails", .string("'context' is an array, not an object")),
                ])
            ),
        ]
        for (key, body, status, expected) in cases {
            let r = service.respond(Self.post("/ofrep/v1/evaluate/flags/\(key)", body))
            #expect(r.status == status, "\(key) \(body)")
            #expect(try Self.json(r) == expected)
        }
        // A mistyped attribute that the flag does not read is no failure of its own.
        #expect(service.respond(Self.post("/ofrep/v1/evaluate/flags/darkMode", #"{"context": {"age": "old"}}"#)).status == 200)
        #expect(service.respond(HTTPRequest(method: "GET", path: "/ofrep/v1/evaluate/flags/darkMode")).status == 405)
        #expect(service.respond(HTTPRequest(method: "GET", path: "/nowhere")).status == 404)
    }

    @Test func bulkEvaluationHasAnETagAndAnswers304() throws {
        let service = try Self.service()
        let body = #"{"context": {"targetingKey": "u-1", "build": "debug", "age": 20}}"#
        let r = service.respond(Self.post("/ofrep/v1/evaluate/flags", body))
        #expect(r.status == 200)
        let json = try Self.json(r)
        #expect(json["flags"]?.elements?.compactMap { $0["key"]?.string } == ["darkMode", "rolled", "banner", "limit"])
        #expect(json["flags"]?.elements?[3]["value"] == .double(10))
        #expect(json["eventStreams"]?.elements?.first?["endpoint"]?["requestUri"] == .string("/ofrep/v1/events"))
        let etag = try #require(r.header("ETag"))
        let again = service.respond(Self.post("/ofrep/v1/evaluate/flags", body, headers: [("If-None-Match", etag)]))
        #expect(again.status == 304 && again.body.isEmpty && again.header("ETag") == etag)
        #expect(!again.serialized(keepAlive: true).contains(UInt8(ascii: "{")))
        // Another context, or other rules: another ETag.
        let other = service.respond(
            Self.post("/ofrep/v1/evaluate/flags", #"{"context": {"build": "beta"}}"#, headers: [("If-None-Match", etag)]))
        #expect(other.status == 200 && other.header("ETag") != etag)
        let version = service.version
        service.install([.init(name: "rules.flags", rules: try RuleSet(source: Self.rules + "flag extra = true\n"))])
        #expect(service.version != version)
        let changed = service.respond(Self.post("/ofrep/v1/evaluate/flags", body, headers: [("If-None-Match", etag)]))
        #expect(changed.status == 200 && changed.header("ETag") != etag)
        #expect(String(service.served.waitForChange(from: Int(version)!, notices: 0, timeout: 0.01).generation) == service.version)
        // A weakened ETag (a compressing proxy's) matches, and so does the same context in
        // another key order, or `*`.
        let now = service.respond(Self.post("/ofrep/v1/evaluate/flags", body))
        let tag = try #require(now.header("ETag"))
        #expect(service.respond(Self.post("/ofrep/v1/evaluate/flags", body, headers: [("If-None-Match", "W/" + tag)])).status == 304)
        let reordered = #"{"context": {"age": 20, "build": "debug", "targetingKey": "u-1"}}"#
        let again2 = service.respond(Self.post("/ofrep/v1/evaluate/flags", reordered, headers: [("If-None-Match", #""x", "# + tag)]))
        #expect(again2.status == 304 && again2.header("ETag") == tag)
        #expect(service.respond(Self.post("/ofrep/v1/evaluate/flags", body, headers: [("If-None-Match", "*")])).status == 304)
        #expect(service.respond(Self.post("/ofrep/v1/evaluate/flags", body, headers: [("If-None-Match", "W/\"other\"")])).status == 200)
        // A body that is not a context fails as a whole.
        let bad = service.respond(Self.post("/ofrep/v1/evaluate/flags", "[]"))
        let badJSON = try Self.json(bad)
        #expect(bad.status == 400 && badJSON["errorCode"] == .string("PARSE_ERROR"))
    }

    @Test func keysAreCheckedAndClientsLimited() throws {
        let service = try Self.service(.init(apiKeys: ["k1", "k2"], rateLimit: 3))
        let path = "/ofrep/v1/evaluate/flags/darkMode"
        let none = service.respond(Self.post(path, "{}"))
        #expect(none.status == 401 && none.body.isEmpty)
        #expect(service.respond(Self.post(path, "{}", headers: [("Authorization", "Bearer nope")])).status == 403)
        #expect(service.respond(Self.post(path, "{}", headers: [("Authorization", "Bearer k1")]), peer: "a").status == 200)
        #expect(service.respond(Self.post(path, "{}", headers: [("X-API-Key", "k2")]), peer: "a").status == 200)
        #expect(service.respond(Self.post(path, "{}", headers: [("X-API-Key", "k2")]), peer: "a").status == 200)
        let limited = service.respond(Self.post(path, "{}", headers: [("X-API-Key", "k2")]), peer: "a")
        #expect(limited.status == 429 && limited.header("Retry-After") == "1")
        #expect(service.respond(Self.post(path, "{}", headers: [("X-API-Key", "k2")]), peer: "b").status == 200)
        // The page and health need no key; the metrics do.
        #expect(service.respond(HTTPRequest(method: "GET", path: "/")).status == 200)
        #expect(service.respond(HTTPRequest(method: "GET", path: "/healthz")).status == 200)
        #expect(service.respond(HTTPRequest(method: "GET", path: "/metrics")).status == 401)
    }

    @Test func metricsCountEvaluationsReloadsAndLatency() throws {
        let service = try Self.service()
        _ = service.respond(Self.post("/ofrep/v1/evaluate/flags/darkMode", #"{"context": {"build": "beta"}}"#))
        _ = service.respond(Self.post("/ofrep/v1/evaluate/flags/darkMode", #"{"context": {}}"#))
        service.metrics.reload(.rejected)
        let text = String(decoding: service.respond(HTTPRequest(method: "GET", path: "/metrics")).body, as: UTF8.self)
        for line in [
            #"flags_evaluations_total{flag="darkMode",reason="DEFAULT"} 1"#,
            #"flags_evaluations_total{flag="darkMode",reason="TARGETING_MATCH"} 1"#, "flags_rejected_reloads_total 1",
            #"flags_http_requests_total{status="200"} 2"#, #"flags_http_request_duration_seconds_bucket{le="+Inf"} 2"#,
            "flags_http_request_duration_seconds_count 2",
        ] {
            #expect(text.contains(line + "\n"), "\(line)\n\(text)")
        }
    }

    @Test func thePagesAPIGivesTheSchemaAndEvalsResolutions() throws {
        let service = try Self.service()
        let rules = try Self.json(service.respond(HTTPRequest(method: "GET", path: "/api/rules")))
        #expect(rules["declarations"]?.elements?.compactMap { $0["name"]?.string } == ["darkMode", "rolled", "banner", "limit"])
        #expect(rules["schema"]?["build"]?["cases"] == .array([.string("debug"), .string("beta"), .string("release")]))
        let results = try Self.json(service.respond(Self.post("/api/evaluate", #"{"context": {"build": "debug", "age": 20}}"#)))
        let direct = try RuleSet(source: Self.rules)
        let context: EvaluationContext = ["build": "debug", "age": 20]
        for name in ["darkMode", "banner", "limit"] {
            #expect(results[name]?["resolution"] == direct.evaluate(name, in: context).json)
            #expect(results[name]?["explanation"]?.string == direct.explain(name, in: context)?.text)
        }
        let page = String(decoding: service.respond(HTTPRequest(method: "GET", path: "/")).body, as: UTF8.self)
        // Nothing is fetched from elsewhere (the one address is SVG's namespace, a name).
        let addresses = page.replacingOccurrences(of: "http://www.w3.org/2000/svg", with: "")
        #expect(page.hasPrefix("<!doctype html>") && !addresses.contains("http://") && !addresses.contains("https://"))
    }

    @Test func thePagesAPIGivesEachDeclarationsStateAndTheRejectedUpdates() throws {
        let text = """
            context { userId: string, country: string }
            /// Shipped long ago.
            @owner("web") @expires("2020-01-31")
            flag old { enabled when rollout(userId) < 100% }
            @disabled
            flag killed = true
            variant layout [a, b, c] = a {
              split(userId) { a: 50%, b: 25%, c: 25% } when country == "US"
              split(userId) { b: 1, c: 3 }
            }
            flag growing { enabled when rollout(userId) < ramp("2027-06-01", "2027-06-15T12:00:00Z", 5%, 50%) }

            """
        let service = OFREPService()
        service.install([.init(name: "state.flags", rules: try RuleSet(source: text, name: "state.flags"))])
        let rules = try Self.json(service.respond(HTTPRequest(method: "GET", path: "/api/rules")))
        let declarations = Dictionary(
            uniqueKeysWithValues: (rules["declarations"]?.elements ?? []).compactMap { d in d["name"]?.string.map { ($0, d) } })
        let old = try #require(declarations["old"])
        #expect(old["owner"]?.string == "web" && old["expires"]?.string == "2020-01-31")
        #expect(old["rollouts"] == .array([.object([("rule", .int(1)), ("percent", .double(100))])]))
        #expect(old["stale"]?.elements?.compactMap { $0["code"]?.string } == ["expired", "rollout-complete"])
        #expect(old["source"]?.string == "@owner(\"web\") @expires(\"2020-01-31\")\nflag old { enabled when rollout(userId) < 100% }")
        #expect(declarations["killed"]?["disabled"] == .bool(true))
        #expect(declarations["killed"]?["stale"]?.elements?.compactMap { $0["code"]?.string } == ["disabled"])
        let splits = try #require(declarations["layout"]?["splits"]?.elements)
        #expect(splits.map { $0["rule"] } == [.int(1), .int(2)])
        #expect(splits[0]["shares"]?.elements?.compactMap { $0["percent"]?.integer } == [50, 25, 25])
        #expect(splits[1]["shares"]?.elements?.compactMap { $0["outcome"]?.string } == ["b", "c"])
        #expect(splits[1]["shares"]?.elements?.compactMap { $0["percent"]?.integer } == [25, 75])
        #expect(declarations["layout"]?["stale"] == .array([]))
        #expect(declarations["layout"]?["source"]?.string?.hasSuffix("split(userId) { b: 1, c: 3 }\n}") == true)
        let ramp = try #require(declarations["growing"]?["ramps"]?.elements?.first)
        #expect(ramp["from"]?.string == "2027-06-01T00:00:00Z" && ramp["to"]?.string == "2027-06-15T12:00:00Z")
        #expect(ramp["start"]?.integer == 5 && ramp["end"]?.integer == 50 && ramp["rule"] == .int(1))
        #expect(rules["rejected"] == .array([]))

        // A rejected update stands until a good one of the same file.
        service.reject(file: "state.flags", message: "state.flags:3:1: expected a declaration")
        service.reject(file: "other.flags", message: "other.flags:1:1: no")
        let rejected = try Self.json(service.respond(HTTPRequest(method: "GET", path: "/api/rules")))["rejected"]?.elements ?? []
        #expect(rejected.compactMap { $0["file"]?.string } == ["state.flags", "other.flags"])
        #expect(rejected.first?["message"]?.string == "state.flags:3:1: expected a declaration")
        service.accepted(file: "state.flags")
        // Cleared with a notice of its own (the stream tells of it); clearing again is nothing.
        #expect(service.served.standing.rejections.map(\.file) == ["other.flags"] && service.served.standing.notices == 3)
        service.accepted(file: "state.flags")
        #expect(service.served.standing.notices == 3)
    }

    @Test func requestsAreParsedWithinTheirLimits() throws {
        var parser = HTTPRequestParser()
        parser.append(Array("POST /a?x=1&y=%20z HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n{}GET /b HTTP/1.1\r\n\r\n".utf8))
        let first = try #require(try parser.next())
        #expect(first.method == "POST" && first.path == "/a" && first.body == Array("{}".utf8) && first.keepsAlive)
        #expect(first.query.map { "\($0.0)=\($0.1)" } == ["x=1", "y= z"])
        let second = try #require(try parser.next())
        #expect(second.method == "GET" && second.path == "/b" && second.body.isEmpty)
        #expect(try parser.next() == nil)
        func failure(_ text: String) -> Int? {
            var p = HTTPRequestParser()
            p.append(Array(text.utf8))
            do {
                _ = try p.next()
                return nil
            } catch {
                return error.status
            }
        }
        #expect(failure("GET / HTTP/1.1\r\nContent-Length: 2000000\r\n\r\n") == 413)
        #expect(failure("GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n") == 501)
        // Framing a proxy could read another way is refused (RFC 9112 §6.1, §6.3): the
        // connection then closes, so no body is read as a second request.
        #expect(failure("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\nContent-Length: 5\r\n\r\n") == 400)
        #expect(failure("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n") == 400)
        #expect(failure("POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n") == 400)
        #expect(failure("POST / HTTP/1.1\r\nTransfer-Encoding: identity\r\n\r\n") == 400)
        #expect(failure("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n") == 400)
        #expect(failure("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n") == 400)
        #expect(failure("POST / HTTP/1.1\r\nExpect: something\r\nContent-Length: 2\r\n\r\n{}") == 417)
        #expect(failure("POST / HTTP/1.1\r\nExpect: something\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n") == 417)
        // A bare LF is refused as it arrives, before any blank line (not left for the 408).
        #expect(failure("GET / HTTP/1.1\nHost: h\n") == 400)
        #expect(failure("GET / HTTP/1.1\r\nHost: h\n\n") == 400)
        #expect(failure("\nGET / HTTP/1.1\r\n") == 400)
        #expect(failure("GET / HTTP/1.1\r\nHost: a\rb") == 400)
        #expect(failure("GET / HTTP/1.1\r\nHost: a\r") == nil)
        #expect(failure("GET / HTTP/1.1\r\nHost: h\r\n") == nil)
        #expect(failure("GET / HTTP/2\r\n\r\n") == 505)
        #expect(failure("get / HTTP/1.1\r\n\r\n") == 400)
        #expect(failure("GET / HTTP/1.1\r\nBad Header\r\n\r\n") == 400)
        #expect(failure("GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n") == 400)
        // Content-Length is digits only; a bare CR or LF inside a line is refused (RFC 9112 §2.2
        // and §6.3: either could smuggle a second request past a proxy).
        #expect(failure("GET / HTTP/1.1\r\nContent-Length: +2\r\n\r\n{}") == 400)
        #expect(failure("GET / HTTP/1.1\r\nContent-Length: 2 2\r\n\r\n{}") == 400)
        #expect(failure("GET / HTTP/1.1\r\nX-A: b\nContent-Length: 2\r\n\r\n{}") == 400)
        #expect(failure("GET / HTTP/1.1\r\nX-A: b\rc\r\n\r\n") == 400)
        #expect(failure("GET  / HTTP/1.1\r\n\r\n") == 400)
        #expect(failure("GET * HTTP/1.1\r\n\r\n") == nil)
        #expect(failure("GET *x HTTP/1.1\r\n\r\n") == 400)
        let trimmed = try #require(
            try {
                var p = HTTPRequestParser()
                p.append(Array("GET / HTTP/1.0\r\nX-A: \t b c \t\r\nx-empty:\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n".utf8))
                return try p.next()
            }())
        #expect(trimmed.header("x-a") == "b c" && trimmed.header("X-Empty") == "" && trimmed.isHTTP10 && !trimmed.keepsAlive)
        #expect(failure("GET / HTTP/1.1\r\n" + String(repeating: "X-A: b\r\n", count: 3_000)) == 431)
        #expect(failure("GET / HTTP/1.1\r\n" + String(repeating: "X-A: b\r\n", count: 101) + "\r\n") == 431)
        // A request that has not all arrived waits for more.
        #expect(failure("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n{}") == nil)
    }

    /// The evaluation log's sink runs on a thread of its own: while it is stuck (a full
    /// pipe), evaluations are answered, lines past the queue's bound are dropped and counted,
    /// and once it takes lines again it is first told how many were dropped.
    @Test func aStuckEvaluationLogCostsLinesNotAnswers() async throws {
        let gate = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)
        let (lines, line) = AsyncStream.makeStream(of: String.self)
        let service = try Self.service(
            .init(evaluationLog: { text in
                if !text.contains("dropped") {
                    entered.signal()
                    gate.wait()
                }
                line.yield(text)
            }))
        let request = Self.post("/ofrep/v1/evaluate/flags/darkMode", #"{"context": {"build": "beta"}}"#)
        // The sink takes the first line and is stuck with it (waited for, off the pool)…
        #expect(service.respond(request).status == 200)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                entered.wait()
                done.resume()
            }
        }
        // …so the queue fills and the rest are dropped, each counted.
        let count = 1 + LineLog.maxLines + 50
        for _ in 1..<count { #expect(service.respond(request).status == 200) }
        let dropped = service.evaluationLines?.dropped ?? 0
        #expect(dropped == 50, "\(dropped)")
        let metrics = String(decoding: service.respond(HTTPRequest(method: "GET", path: "/metrics")).body, as: UTF8.self)
        #expect(metrics.contains("flags_evaluation_log_dropped_total \(dropped)\n"))
        for _ in 0..<count { gate.signal() }
        var notice: String?
        var taken = 0
        for await text in lines {
            if text.contains("flags.evaluation_log.dropped") { notice = text } else { taken += 1 }
            if taken + dropped == count { break }
        }
        #expect(notice?.contains(#""count": \#(dropped)"#) == true, "\(notice ?? "no notice")")
    }

    /// A request read from a small buffer shares it: its header fields stay what they were
    /// when more bytes arrive and the parser lets the read ones go (its own copy is made
    /// then), and a large buffer is not shared.
    @Test func aRequestKeepsItsHeadWhenTheParserReadsOn() throws {
        var parser = HTTPRequestParser()
        parser.append(Array("GET /ofrep/v1/events HTTP/1.1\r\nAccept: text/event-stream\r\nX-Tag: one\r\n\r\nGET /b".utf8))
        let held = try #require(try parser.next())
        // The parser lets the first request's bytes go and reads another over them.
        parser.append(Array(" HTTP/1.1\r\nX-Tag: two\r\n\r\n".utf8))
        let next = try #require(try parser.next())
        parser.append(Array("GET /c HTTP/1.1\r\nX-Tag: three\r\n\r\n".utf8))
        #expect(try parser.next()?.header("x-tag") == "three")
        #expect(held.header("X-Tag") == "one" && held.header("accept") == "text/event-stream")
        #expect(held.headers.map(\.0) == ["Accept", "X-Tag"])
        #expect(next.path == "/b" && next.header("x-tag") == "two")
        // Past the shared size (a large body read before), the head is copied: the same fields.
        var large = HTTPRequestParser()
        let body = String(repeating: "x", count: 2 * HTTPRequestParser.sharedBufferBytes)
        large.append(
            Array("POST /a HTTP/1.1\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)GET /d HTTP/1.1\r\nX-Tag: four\r\n\r\n".utf8))
        #expect(try large.next()?.body.count == body.utf8.count)
        let copied = try #require(try large.next())
        #expect(copied.path == "/d" && copied.header("X-Tag") == "four" && copied.headers.count == 1)
    }

    /// A path names one resource, read from its bytes; whether it needs a key follows.
    @Test func pathsNameTheirResources() {
        let table: [(String, OFREPService.Resource)] = [
            ("/healthz", .health), ("/healthz/upstream", .upstreamHealth), ("/", .page), ("/index.html", .page),
            ("/ofrep/v1/evaluate/flags", .bulk), ("/ofrep/v1/evaluate/flags/", .protectedNothing),
            ("/ofrep/v1/evaluate/flags/dark-mode", .single("dark-mode")), ("/ofrep/v1/evaluate/flags/a/b", .single("a/b")),
            ("/ofrep/v1/events", .events), ("/ofrep/v1/eventsx", .protectedNothing), ("/ofrep/", .protectedNothing),
            ("/rules", .list), ("/rules/", .rulesFile("")), ("/rules/app.flags", .rulesFile("app.flags")), ("/rulesx", .nothing),
            ("/metrics", .metrics), ("/api/rules", .pageRules), ("/api/evaluate", .pageEvaluation), ("/api/x", .protectedNothing),
            ("/healthzz", .nothing), ("", .nothing), ("/ofrep/v1/evaluate/flags/é", .single("é")),
        ]
        for (path, resource) in table {
            #expect(OFREPService.Resource(path: path) == resource, "\(path)")
            let open: Set<String> = ["/healthz", "/healthz/upstream", "/", "/index.html", "/rulesx", "/healthzz", ""]
            #expect(resource.isProtected == !open.contains(path), "\(path)")
        }
    }

    /// `Expect: 100-continue` asks for one `100 Continue`, once the head has come and the
    /// body has not; none when the body came with the head, or for HTTP/1.0.
    @Test func aHundredContinueIsAskedForOnceARequest() throws {
        var parser = HTTPRequestParser()
        parser.append(Array("POST /a HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n".utf8))
        #expect(try parser.next() == nil)
        #expect(parser.takeContinue() && !parser.takeContinue())
        #expect(try parser.next() == nil && !parser.takeContinue())
        parser.append(Array("{}POST /b HTTP/1.1\r\nExpect: 100-Continue\r\nContent-Length: 1\r\n\r\n".utf8))
        #expect(try parser.next()?.path == "/a")
        #expect(try parser.next() == nil && parser.takeContinue())
        parser.append(Array("xPOST /c HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\ny".utf8))
        #expect(try parser.next()?.body == Array("x".utf8))
        #expect(try parser.next()?.path == "/c" && !parser.takeContinue())
        var old = HTTPRequestParser()
        old.append(Array("POST /a HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n".utf8))
        #expect(try old.next() == nil && !old.takeContinue())
    }

    /// Past the clients it tracks, the rate limit forgets those whose bucket is full, then
    /// the fullest: a client it holds back stays held back (it once forgot every client).
    @Test func aClientHeldBackStaysHeldBackPastTheClientsTracked() {
        let service = OFREPService(options: .init(rateLimit: 5))
        // One instant for every request: a bucket refills with time, which a slow run of
        // the loop below would let pass.
        let now = Date().timeIntervalSinceReferenceDate
        for _ in 0..<5 { #expect(service.throttle("hog", limit: 5, at: now) == nil) }
        #expect(service.throttle("hog", limit: 5, at: now) != nil)
        for k in 0...OFREPService.trackedClients { _ = service.throttle("client-\(k)", limit: 5, at: now) }
        #expect(service.throttle("hog", limit: 5, at: now) != nil)
        // A second later the hog's bucket is full again.
        #expect(service.throttle("hog", limit: 5, at: now + 1) == nil)
    }

    /// Bytes in any chunks give the requests (or the failure) they give whole; requests
    /// read are let go as more arrive, so pipelined requests do not pile up.
    @Test(arguments: 0..<20) func chunksGiveWhatTheWholeGives(seed: Int) throws {
        var random = SeededGenerator(seed: UInt64(seed) &+ 77)
        let pieces = [
            "POST /ofrep/v1/evaluate/flags/a HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}", "GET /b?x=1 HTTP/1.1\r\nX-A: b\r\n\r\n",
            "\r\nGET /c HTTP/1.1\r\n\r\n", "GET /d HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc",
        ]
        let text =
            (0..<200).map { _ in pieces[Int(random.next() % UInt64(pieces.count))] }.joined()
            + (seed % 2 == 0 ? "" : "GET / HTTP/1.1\r\nbad header\r\n\r\n")
        func read(_ chunks: [[UInt8]]) -> (requests: [String], failure: Int?, held: Int) {
            var parser = HTTPRequestParser()
            var requests: [String] = []
            var held = 0
            for chunk in chunks {
                parser.append(chunk)
                held = max(held, parser.heldBytes)
                do {
                    while let r = try parser.next() { requests.append("\(r.method) \(r.path) \(r.body.count)") }
                } catch {
                    return (requests, error.status, held)
                }
            }
            return (requests, nil, held)
        }
        let bytes = Array(text.utf8)
        let whole = read([bytes])
        var chunks: [[UInt8]] = []
        var i = 0
        while i < bytes.count {
            let n = 1 + Int(random.next() % 40)
            chunks.append(Array(bytes[i..<min(bytes.count, i + n)]))
            i += n
        }
        let chunked = read(chunks)
        #expect(chunked.requests == whole.requests && chunked.failure == whole.failure)
        #expect(whole.requests.count == 200 && whole.failure == (seed % 2 == 0 ? nil : 400))
        // Held: about one request and a chunk, not all 200 read before.
        #expect(chunked.held < 400, "\(chunked.held) bytes held")
    }

    /// 10,000 random requests, from random bytes and from mutated real ones: every one is a
    /// request, a wait for more, or a failure status; the service answers every request.
    @Test func randomRequestsNeverCrash() async throws {
        try await offThePool(computing: true) {
            let service = try Self.service(.init(apiKeys: ["k"]))
            var random = SeededGenerator(seed: 31)
            let real = Array(
                "POST /ofrep/v1/evaluate/flags/darkMode HTTP/1.1\r\nX-API-Key: k\r\nContent-Length: 30\r\n\r\n{\"context\": {\"build\": \"beta\"}}"
                    .utf8)
            let alphabet = Array("GETPOST /?&=:\r\n{}[]\",0123456789abcdefContent-Length".utf8)
            var answered = 0
            for _ in 0..<10_000 {
                var bytes = real
                for _ in 0..<Int.random(in: 1...6, using: &random) {
                    let i = Int.random(in: 0..<bytes.count, using: &random)
                    switch Int.random(in: 0..<3, using: &random) {
                    case 0: bytes[i] = alphabet[Int.random(in: 0..<alphabet.count, using: &random)]
                    case 1: bytes.remove(at: i)
                    default: bytes.insert(UInt8.random(in: 0...255, using: &random), at: i)
                    }
                }
                var parser = HTTPRequestParser()
                parser.append(bytes)
                do throws(HTTPRequestParser.Failure) {
                    if let request = try parser.next() {
                        let response = service.respond(request, peer: "p")
                        #expect((200...599).contains(response.status))
                        answered += 1
                    }
                } catch {
                    #expect([400, 413, 431, 501, 505].contains(error.status))
                }
            }
            #expect(answered > 1_000, "\(answered)")
        }
    }

    /// One rule for a missing unit, in OFREP as in Swift: a rollout or split without its
    /// unit does not match, evaluation goes on, and the answer says which unit was absent.
    @Test func aMissingTargetingKeyAnswersAsTheLibraryDoes() throws {
        let text =
            Self.rules + """
                variant exp [control, treatment] = control { split(userId) { control: 50%, treatment: 50% } }
                variant fallback [a, b] = a {
                  split(userId) { a: 50%, b: 50% }
                  b when age >= 18
                }

                """
        let service = OFREPService()
        let rules = try RuleSet(source: text, name: "rules.flags")
        service.install([.init(name: "rules.flags", rules: rules)])
        for (key, context, absent) in [
            ("rolled", #"{}"#, "userId"), ("exp", #"{}"#, "userId"), ("fallback", #"{"age": 30}"#, nil),
            ("exp", #"{"targetingKey": "u-1"}"#, nil),
        ] {
            let r = service.respond(Self.post("/ofrep/v1/evaluate/flags/\(key)", #"{"context": "# + context + "}"))
            let json = try Self.json(r)
            let direct = rules.evaluate(
                key, in: try EvaluationContext(json: context.replacingOccurrences(of: "targetingKey", with: "userId")))
            #expect(r.status == 200, "\(key) \(context)")
            #expect(json["value"] == direct.value.json && json["reason"] == .string(direct.reason.rawValue), "\(key) \(context)")
            #expect(json["metadata"]?["absentUnits"] == absent.map(JSON.string), "\(key) \(context)")
        }
    }
}
