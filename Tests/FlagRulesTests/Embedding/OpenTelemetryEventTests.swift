import Foundation
import Testing

@testable import FlagRules
@testable import FlagRulesServer

/// `FlagEvaluation.openTelemetryEvent` against the semantic conventions' table for
/// `feature_flag.evaluation`, for each kind of result.
@Suite struct OpenTelemetryEventTests {
    static let source = """
        flag on { enabled when userId == "u-1" }
        flag plain = false
        @disabled flag killed = true
        value limit: int = 3
        value ratio: double = 0.5 { 0.75 when userId == "u-1" }
        variant checkout [control, oneStep] = control { split(userId) { control: 50%, oneStep: 50% } }

        """

    static func events(_ body: (FlagStore) -> Void, rules: RuleSet? = nil) throws -> [(name: String, attributes: [String: Value])] {
        let rules = try rules ?? RuleSet(source: source, name: "app.flags")
        let store = FlagStore(rules)
        let seen = Locked<[FlagEvaluation]>([])
        store.onEvaluation = { e in seen.withLock { $0.append(e) } }
        body(store)
        return seen.withLock { $0 }.map(\.openTelemetryEvent)
    }

    @Test func eachKindOfResult() throws {
        let rules = try RuleSet(source: Self.source, name: "app.flags")
        let version = Value.string(rules.contentVersion)
        let events = try Self.events { store in
            _ = store.evaluate("on", in: ["userId": "u-1"])
            _ = store.evaluate("on", in: ["userId": "u-2"])
            _ = store.evaluate("plain", in: [:])
            _ = store.evaluate("killed", in: ["targetingKey": "t-9", "userId": "u-1"])
            _ = store.evaluate("limit", in: ["userId": 42])
            _ = store.evaluate("ratio", in: ["userId": "u-1"])
            _ = store.evaluate("checkout", in: ["userId": "u-1"])
            _ = store.evaluate("nope", in: ["userId": "u-1"])
            _ = store.value("limit", in: ["userId": "u-1"], default: "x")
        }
        let common: [String: Value] = [
            "feature_flag.provider.name": "FlagRules", "feature_flag.set.id": "app.flags", "feature_flag.version": version,
        ]
        func expected(_ extra: [String: Value]) -> [String: Value] { common.merging(extra) { _, new in new } }
        let split = try rules.evaluate("checkout", in: ["userId": "u-1"]).variant.map(Value.string).unwrap()
        #expect(events.allSatisfy { $0.name == "feature_flag.evaluation" })
        let table: [[String: Value]] = [
            expected([
                "feature_flag.key": "on", "feature_flag.result.value": true, "feature_flag.result.reason": "targeting_match",
                "feature_flag.context.id": "u-1",
            ]),
            expected([
                "feature_flag.key": "on", "feature_flag.result.value": false, "feature_flag.result.reason": "default",
                "feature_flag.context.id": "u-2",
            ]),
            expected(["feature_flag.key": "plain", "feature_flag.result.value": false, "feature_flag.result.reason": "static"]),
            expected([
                "feature_flag.key": "killed", "feature_flag.result.value": false, "feature_flag.result.reason": "disabled",
                "feature_flag.context.id": "t-9",
            ]),
            expected([
                "feature_flag.key": "limit", "feature_flag.result.value": 3, "feature_flag.result.reason": "static",
                "feature_flag.context.id": "42",
            ]),
            expected([
                "feature_flag.key": "ratio", "feature_flag.result.value": 0.75, "feature_flag.result.reason": "targeting_match",
                "feature_flag.context.id": "u-1",
            ]),
            expected([
                "feature_flag.key": "checkout", "feature_flag.result.variant": split, "feature_flag.result.reason": "split",
                "feature_flag.context.id": "u-1",
            ]),
            expected([
                "feature_flag.key": "nope", "feature_flag.result.value": false, "feature_flag.result.reason": "error",
                "feature_flag.context.id": "u-1", "error.type": "flag_not_found",
                "feature_flag.error.message": "no declaration named 'nope'",
            ]),
        ]
        #expect(events.count == 9)
        for (k, want) in table.enumerated() where k < events.count {
            #expect(events[k].attributes == want, "event \(k): \(events[k].attributes)")
        }
        let mismatch = try #require(events.last).attributes
        #expect(mismatch["error.type"] == "type_mismatch" && mismatch["feature_flag.result.reason"] == "error", "\(mismatch)")
        #expect(mismatch["feature_flag.result.value"] == "x")
    }

    @Test func errorsOfTheContextAndOfTheRules() throws {
        var strict = try RuleSet(source: "context { userId: string }\nflag on { enabled when userId == \"u-1\" }\n", name: "strict.flags")
        strict.checksContextsStrictly = true
        let events = try Self.events({ store in _ = store.evaluate("on", in: ["userId": 1]) }, rules: strict)
        #expect(events.first?.attributes["error.type"] == "invalid_context")
        #expect(events.first?.attributes["feature_flag.error.message"] == "attribute 'userId' expects a string")
        let rules = try RuleSet(source: Self.source, name: "app.flags")
        for (code, type) in [(Resolution.ErrorCode.parseError, "parse_error"), (.general, "general")] {
            let e = FlagEvaluation(
                name: "on", resolution: .error(code, "why", default: .bool(false)), input: .dictionary(["userId": "u-1"]), rules: rules)
            #expect(e.openTelemetryEvent.attributes["error.type"] == .string(type))
            #expect(e.openTelemetryEvent.attributes["feature_flag.error.message"] == "why")
        }
    }
}

/// Every reason FlagRules gives is one of the semantic conventions' values of
/// `feature_flag.result.reason`; an override is `static`, and says so in an attribute of
/// FlagRules' own.
@Suite struct OpenTelemetryReasonTests {
    /// The conventions' values of `feature_flag.result.reason`.
    static let conventionReasons: Set<String> = [
        "static", "default", "targeting_match", "split", "cached", "disabled", "unknown", "stale", "error",
    ]

    @Test(arguments: [
        Resolution.Reason.static, .targetingMatch, .split, .default, .disabled, .error, .override,
    ])
    func eachReasonIsOneOfTheConventions(_ reason: Resolution.Reason) {
        #expect(Self.conventionReasons.contains(FlagEvaluation.telemetryReason(reason)), "\(reason)")
    }

    @Test func anOverrideIsStaticAndSaysSo() throws {
        let rules = try RuleSet(source: "flag on = false\n", name: "app.flags")
        let overridden = try withFlagOverrides(["on": true]) { () throws -> [String: Value] in
            let r = rules.evaluate("on", in: [:])
            #expect(r.reason == .override)
            return FlagEvaluation(name: "on", resolution: r, input: .dictionary([:]), rules: rules).openTelemetryEvent.attributes
        }
        #expect(overridden["feature_flag.result.reason"] == "static" && overridden["flagrules.override"] == true, "\(overridden)")
        let plain = FlagEvaluation(name: "on", resolution: rules.evaluate("on", in: [:]), input: .dictionary([:]), rules: rules)
        #expect(plain.openTelemetryEvent.attributes["flagrules.override"] == nil)
    }

    /// A store with no rules in force (none loaded yet) names no file and no version in its
    /// events, by name and by handle: its answers come from no file.
    @Test func aStoreWithoutRulesNamesNoFile() throws {
        let events = Locked<[FlagEvaluation]>([])
        let store = FlagStore()
        store.onEvaluation = { event in events.withLock { $0.append(event) } }
        _ = store.isEnabled("on", in: ["userId": "u-1"])
        _ = store.isEnabled(store.handle("on"), in: store.prepare(["userId": "u-1"]))
        let attributes = events.withLock { $0 }.map(\.openTelemetryEvent.attributes)
        #expect(attributes.count == 2)
        for a in attributes {
            #expect(a["feature_flag.set.id"] == nil && a["feature_flag.version"] == nil, "\(a)")
            #expect(a["feature_flag.key"] == "on" && a["feature_flag.result.reason"] == "error")
        }
        // Once rules are in force, they are named.
        _ = try store.update(source: "flag on = true\n", name: "app.flags")
        _ = store.isEnabled("on", in: [:])
        #expect(events.withLock { $0 }.last?.openTelemetryEvent.attributes["feature_flag.set.id"] == "app.flags")
    }
}

/// `feature_flag.set.id` is the name the file is served under wherever the rules came from,
/// and `feature_flag.context.id` can be read from another attribute.
@Suite struct OpenTelemetryNamesTests {
    @Test(arguments: [
        ("/srv/flags/svc.flags", "svc.flags"), ("svc.flags", "svc.flags"), ("http://relay:8080/rules/svc.flags", "svc.flags"),
        ("https://cdn.example.com/rules/team/svc.flags?v=3", "team/svc.flags"), ("https://example.com/svc.flags", "svc.flags"),
        ("<input>", "<input>"),
    ])
    func theSetIsNamedAsItIsServed(_ source: String, _ name: String) throws {
        let rules = try RuleSet(source: "flag on = true\n", name: source)
        #expect(rules.servedName == name)
        let store = FlagStore(rules)
        let seen = Locked<FlagEvaluation?>(nil)
        store.onEvaluation = { e in seen.withLock { $0 = e } }
        _ = store.isEnabled("on", in: [:])
        #expect(seen.withLock { $0 }?.openTelemetryEvent.attributes["feature_flag.set.id"] == .string(name))
    }

    @Test func aFileReadFromDiskIsNamedAsFlagsServeNamesIt() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("otel-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("svc.flags")
        try "flag on = true\n".write(to: file, atomically: true, encoding: .utf8)
        #expect(try RuleSet(contentsOf: file).servedName == "svc.flags")
    }

    @Test func theContextIDComesFromTheAttributeNamed() throws {
        let store = FlagStore(try RuleSet(source: "flag on = true\n", name: "app.flags"))
        let seen = Locked<FlagEvaluation?>(nil)
        store.onEvaluation = { e in seen.withLock { $0 = e } }
        _ = store.isEnabled("on", in: ["user": ["id": "u-7"], "userId": "u-1"])
        let event = try #require(seen.withLock { $0 })
        #expect(event.openTelemetryEvent.attributes["feature_flag.context.id"] == "u-1")
        #expect(event.openTelemetryEvent(contextID: "user.id").attributes["feature_flag.context.id"] == "u-7")
        #expect(event.openTelemetryEvent(contextID: "account").attributes["feature_flag.context.id"] == nil)
    }
}

/// `flags serve --log-evaluations`: each OFREP evaluation as a JSON line holding the same
/// event, its context id the targeting key's attribute.
@Suite struct ServeEvaluationLogTests {
    @Test func eachEvaluationIsALine() async throws {
        let (stream, line) = AsyncStream.makeStream(of: String.self)
        let service = OFREPService(options: .init(evaluationLog: { line.yield($0) }))
        let rules = try RuleSet(source: OpenTelemetryEventTests.source, name: "app.flags")
        service.install([.init(name: "app.flags", rules: rules)])
        for (key, context) in [("on", #"{"targetingKey": "u-1"}"#), ("checkout", #"{"targetingKey": "u-1"}"#), ("limit", "{}")] {
            let body = Array(#"{"context": \#(context)}"#.utf8)
            _ = service.respond(HTTPRequest(method: "POST", path: "/ofrep/v1/evaluate/flags/\(key)", headers: [], body: body))
        }
        // The lines come on the log's own thread, in order.
        var logged: [JSON] = []
        for await text in stream {
            logged.append(try JSON.parse(text))
            if logged.count == 3 { break }
        }
        #expect(logged.count == 3)
        #expect(logged.allSatisfy { $0["name"] == .string("feature_flag.evaluation") && $0["time"]?.string != nil })
        let first = try #require(logged.first?["attributes"])
        #expect(first["feature_flag.key"] == .string("on") && first["feature_flag.result.value"] == .bool(true))
        #expect(first["feature_flag.result.reason"] == .string("targeting_match") && first["feature_flag.context.id"] == .string("u-1"))
        #expect(first["feature_flag.set.id"] == .string("app.flags") && first["feature_flag.version"] == .string(rules.contentVersion))
        #expect(
            logged[1]["attributes"]?["feature_flag.result.variant"]
                == rules.evaluate("checkout", in: ["userId": "u-1"]).variant.map(JSON.string))
        #expect(
            logged[2]["attributes"]?["feature_flag.result.value"] == .int(3) && logged[2]["attributes"]?["feature_flag.context.id"] == nil)
    }

    /// An OFREP evaluation that fails is a line too, with reason `error` and the error's
    /// type: a body that is not JSON, a context of the wrong shape, a mistyped attribute, a
    /// flag that does not exist, and the bulk request's failures (which name no flag): six
    /// requests, six lines.
    @Test func anEvaluationThatFailsIsALineToo() async throws {
        let (stream, line) = AsyncStream.makeStream(of: String.self)
        let service = OFREPService(options: .init(evaluationLog: { line.yield($0) }))
        let rules = try RuleSet(
            source: "context { plan : enum(free, team) }\nflag on { enabled when plan == team }\n", name: "app.flags")
        service.install([.init(name: "app.flags", rules: rules)])
        let requests: [(String, String, String, String?)] = [
            ("on", "not json", "parse_error", "on"), ("on", #"{"context": 3}"#, "invalid_context", "on"),
            ("on", #"{"context": {"plan": 7}}"#, "invalid_context", "on"), ("nope", #"{"context": {}}"#, "flag_not_found", "nope"),
            ("", "[", "parse_error", nil), ("", #"{"context": []}"#, "invalid_context", nil),
        ]
        for (key, body, _, _) in requests {
            let path = key.isEmpty ? "/ofrep/v1/evaluate/flags" : "/ofrep/v1/evaluate/flags/\(key)"
            let answer = service.respond(HTTPRequest(method: "POST", path: path, headers: [], body: Array(body.utf8)))
            #expect(answer.status == 400 || answer.status == 404, "\(path) \(body)")
        }
        var logged: [JSON] = []
        for await text in stream {
            logged.append(try JSON.parse(text))
            if logged.count == requests.count { break }
        }
        for (k, (_, body, type, key)) in requests.enumerated() {
            let attributes = logged[k]["attributes"]
            #expect(attributes?["feature_flag.result.reason"] == .string("error"), "\(body)")
            #expect(attributes?["error.type"] == .string(type), "\(body)")
            #expect(attributes?["feature_flag.key"] == key.map(JSON.string), "\(body)")
            #expect(attributes?["feature_flag.error.message"]?.string?.isEmpty == false, "\(body)")
        }
    }
}

extension Optional {
    fileprivate func unwrap() throws -> Wrapped {
        guard let self else { throw CancellationError() }
        return self
    }
}
