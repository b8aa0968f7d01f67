import Foundation
import Testing

@testable import FlagRules
@testable import FlagRulesServer

/// A context's key is an attribute's name, dots and all, on every path: by name, by handle
/// on a prepared context (prepared whole or key by key), `evaluateAll`, `explain`, a
/// store, a typed key, the context read back from its JSON (what `flags eval` and OFREP
/// read) and OFREP itself. Random contexts mix objects (partial, mistyped, not objects),
/// dotted keys that spell declared fields, mistyped and absent values; every path must give
/// the resolution `evaluate` by name gives, for every declaration, strict or not.
@Suite struct OneContextOneAnswerTests {
    static let source = """
        context {
          org    : { id : string, plan : enum(free, team), seats : int, billing : { country : string } }
          device : { id : string, os : enum(ios, web) }
          userId : string
        }
        flag t { enabled when org.plan == team }
        flag seats { enabled when org.seats > 3 and has(org.billing.country) }
        variant v [a, b, c] = a { split(org.id) { a: 1, b: 1, c: 1 } when device.os == ios; b when org.plan == free }
        value limit: int = 5 { 50 when org.billing.country == "FR"; 20 when (org.seats ?? 0) > 10; 9 when rollout(userId) < 50% }
        segment paying = org.plan == team
        flag viaSegment { enabled when paying and not has(device) }
        """

    /// The issue's own example: one answer, the attribute `org.plan` is read by no rule.
    @Test func aDottedKeyIsANameOnEveryPath() throws {
        let rules = try RuleSet(
            source: """
                context { org : { plan : enum(free, team) } }
                flag t { enabled when org.plan == team }
                """)
        let dotted: EvaluationContext = ["org.plan": "team"]
        let byName = rules.evaluate("t", in: dotted)
        #expect(byName.value == false && byName.reason == .default)
        #expect(rules.evaluateAll(in: dotted)["t"] == byName)
        #expect(rules.evaluate(rules.handle("t"), in: rules.prepare(dotted)) == byName)
        #expect(rules.explain("t", in: dotted)?.resolution == byName)
        #expect(
            rules.problems(in: dotted).map(\.description) == [
                #"unknown attribute 'org.plan': a key is a name, not a path; give the field inside its object, as {"org": {"plan": …}}"#
            ])
        // An object and a dotted key: the object is the field; the dotted key nothing.
        let both: EvaluationContext = ["org": ["plan": "free"] as [String: Value], "org.plan": "team"]
        #expect(rules.evaluate(rules.handle("t"), in: rules.prepare(both)) == rules.evaluate("t", in: both))
        #expect(rules.evaluate("t", in: both).value == false)
        let nested: EvaluationContext = ["org": ["plan": "team"] as [String: Value]]
        #expect(rules.evaluate("t", in: nested).value == true && rules.problems(in: nested).isEmpty)
        // The way to set a field by path, on both kinds of context.
        var prepared = rules.makeContext()
        prepared.set("team", atPath: "org.plan")
        var plain = EvaluationContext()
        plain.set("team", atPath: "org.plan")
        #expect(rules.evaluate(rules.handle("t"), in: prepared) == rules.evaluate("t", in: plain))
        #expect(rules.evaluate("t", in: plain).value == true)
    }

    /// Without a schema a dotted key is a name too: untyped rules read `org.plan` as the
    /// field, never the key.
    @Test func withoutASchemaADottedKeyIsANameToo() throws {
        let rules = try RuleSet(source: "flag t { enabled when org.plan == \"team\" }")
        for context: EvaluationContext in [["org.plan": "team"], ["org": ["plan": "x"] as [String: Value], "org.plan": "team"]] {
            let byName = rules.evaluate("t", in: context)
            #expect(byName.value == false)
            #expect(rules.evaluate(rules.handle("t"), in: rules.prepare(context)) == byName)
            #expect(rules.explain("t", in: context)?.resolution == byName)
        }
    }

    @Test(arguments: [false, true])
    func everyPathGivesTheSameResolution(strict: Bool) async throws {
        try await offThePool(computing: true) {
            var rules = try RuleSet(source: Self.source, name: "one.flags")
            rules.checksContextsStrictly = strict
            var strictRules = rules
            strictRules.checksContextsStrictly = true
            let store = FlagStore(rules)
            let service = OFREPService(options: .init())
            service.install([.init(name: "one.flags", rules: rules)])
            let names = rules.declarations.filter { $0.kind != .segment }.map(\.name)
            var g = SeededGenerator(seed: strict ? 61 : 16)
            var compared = 0
            for _ in 0..<400 {
                let context = Self.randomContext(&g)
                let prepared = rules.prepare(context)
                var keyByKey = rules.makeContext()
                for (key, value) in context.entries { keyByKey[key] = value }
                let all = rules.evaluateAll(in: context)
                let fromJSON = try EvaluationContext(json: Self.json(context))
                for name in names {
                    let expected = rules.evaluate(name, in: context)
                    let paths: [(String, Resolution?)] = [
                        ("by handle, prepared", rules.evaluate(rules.handle(name), in: prepared)),
                        ("by name, prepared", rules.evaluate(name, in: prepared)),
                        ("by handle, prepared key by key", rules.evaluate(rules.handle(name), in: keyByKey)),
                        ("evaluateAll", all[name]),
                        ("explain", rules.explain(name, in: context)?.resolution),
                        ("a store", store.evaluate(name, in: context)),
                        ("read back from JSON", rules.evaluate(name, in: fromJSON)),
                    ]
                    for (path, r) in paths {
                        #expect(
                            r == expected, "\(path) on \(name) in \(context): \(r.map(String.init(describing:)) ?? "nil") vs \(expected)")
                    }
                    if rules.declaration(named: name)?.kind == .flag {
                        let typed = rules.evaluate(FlagKey<Bool>(flag: name), in: context)
                        #expect(typed.value == (expected.value.boolValue ?? false) && typed.resolution == expected, "typed key \(name)")
                    }
                    // OFREP: the library's value and reason. It refuses a mistyped value that
                    // the declaration reads (400, INVALID_CONTEXT) where a lenient library reads
                    // it as absent: only where a strict library refuses it too.
                    let body = #"{"context": \#(Self.json(context))}"#
                    let request = HTTPRequest(method: "POST", path: "/ofrep/v1/evaluate/flags/\(name)", headers: [], body: Array(body.utf8))
                    let answer = try JSON.parse(bytes: service.respond(request).body)
                    if answer["errorCode"] != nil {
                        #expect(answer["errorCode"] == .string("INVALID_CONTEXT"), "OFREP on \(name) in \(context): \(answer)")
                        #expect(
                            strictRules.evaluate(name, in: context).errorCode == .invalidContext,
                            "OFREP on \(name) in \(context): \(answer)")
                    } else {
                        // A unit it says is absent is absent, by its path.
                        if case .string(let units)? = answer["metadata"]?["absentUnits"] {
                            for unit in units.split(separator: ",") {
                                #expect(context.value(atPath: String(unit)) == nil, "OFREP says \(unit) is absent in \(context)")
                            }
                        }
                        #expect(
                            answer["value"] == expected.value.json && answer["reason"] == .string(expected.reason.rawValue),
                            "OFREP on \(name) in \(context): \(answer) vs \(expected)")
                    }
                    compared += 1
                }
            }
            #expect(compared == 400 * names.count)
        }
    }

    static func json(_ context: EvaluationContext) -> String {
        JSON.object(context.entries.map { ($0.name, $0.value.json) }).serialized()
    }

    /// A store's exposures and sticky assignments read a split's unit by its path on both
    /// kinds of context: the same unit, whichever way the context came.
    @Test func exposuresAndStickyAssignmentsReadTheUnitAlike() async throws {
        let rules = try RuleSet(source: Self.source)
        var g = SeededGenerator(seed: 7)
        for _ in 0..<40 {
            let context = Self.randomContext(&g)
            let stores = [FlagStore(rules), FlagStore(rules)]
            let logs = stores.map { $0.recordExposures(window: 100, buffer: 100) }
            let byName = stores[0].evaluate("v", in: context)
            let byHandle = stores[1].evaluate(rules.handle("v"), in: rules.prepare(context))
            #expect(byName == byHandle, "\(context)")
            guard byName.reason == .split else { continue }
            let exposures = [await Self.first(of: logs[0]), await Self.first(of: logs[1])]
            #expect(
                exposures[0].map(\.unit) == exposures[1].map(\.unit)
                    && exposures[0].map(\.unit) == [context.value(atPath: "org.id")?.unitText].compactMap { $0 }, "\(context)")
        }
    }

    /// The log's first exposure, waited for at most 10 s (so that a missing one fails the
    /// test rather than hangs it).
    static func first(of log: ExposureLog) async -> [Exposure] {
        await withTaskGroup(of: [Exposure].self) { group in
            group.addTask {
                for await e in log.exposures { return [e] }
                return []
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(10))
                return []
            }
            let first = await group.next() ?? []
            group.cancelAll()
            return first
        }
    }

    /// A random context: objects whole, partial, mistyped or not objects; dotted keys that
    /// spell declared fields, beside their objects or alone; mistyped and absent values.
    static func randomContext(_ g: inout SeededGenerator) -> EvaluationContext {
        func pick<T>(_ xs: [T]) -> T { xs[Int(g.next() % UInt64(xs.count))] }
        func chance(_ percent: UInt64) -> Bool { g.next() % 100 < percent }
        let plans: [Value] = ["free", "team", "enterprise", 3, true]
        let countries: [Value] = ["FR", "DE", 7]
        let ids: [Value] = ["acme", "globex", "initech", 42]
        var context = EvaluationContext()
        if chance(60) {
            var org: [String: Value] = [:]
            if chance(70) { org["plan"] = pick(plans) }
            if chance(60) { org["seats"] = pick([2, 4, 12, "many", 3.5] as [Value]) }
            if chance(60) { org["id"] = pick(ids) }
            if chance(50) { org["billing"] = chance(80) ? .object(chance(80) ? ["country": pick(countries)] : [:]) : "FR" }
            if chance(10) { org["extra"] = "x" }
            context["org"] = chance(90) ? .object(org) : pick(["acme", 5] as [Value])
        }
        if chance(50) {
            var device: [String: Value] = [:]
            if chance(70) { device["id"] = pick(ids) }
            if chance(70) { device["os"] = pick(["ios", "web", "android"] as [Value]) }
            context["device"] = .object(device)
        }
        let dotted: [(String, [Value])] = [
            ("org.plan", plans), ("org.seats", [12, 2]), ("org.id", ids), ("org.billing.country", countries),
            ("org.billing", [.object(["country": "FR"])]), ("device.os", ["ios"]), ("device.id", ids), ("org.", ["team"]),
        ]
        for (key, values) in dotted where chance(25) { context[key] = pick(values) }
        if chance(50) { context["userId"] = pick(["u-1", "u-2", "u-3", 7] as [Value]) }
        if chance(10) { context["userid"] = "u-1" }
        return context
    }
}
