import FlagRulesTooling
import Foundation
import Testing

@testable import FlagRules

/// Context attributes that hold objects, read by path (`org.plan`, `org.billing.country`):
/// the language article's *Objects and paths*, sentence by sentence, with and without a
/// schema, through a dictionary context and a prepared one (`truth` compares them).
@Suite struct NestedContextTests {
    static let schema =
        "org : { id : string, plan : enum(free, team, enterprise), seats : int, tags : [string], billing : { country : string } }"

    static let team: EvaluationContext = [
        "org": ["id": "acme", "plan": "team", "seats": 7, "tags": ["vip"], "billing": ["country": "FR"]] as [String: Value]
    ]

    static func json(_ text: String) -> EvaluationContext { try! EvaluationContext(json: text) }

    /// (sentence, expression, context, expected truth), each tried with the schema and without.
    static let sentences: [(String, String, EvaluationContext, Truth)] = [
        ("a path reads an object's field", "org.plan == \"team\"", team, .yes),
        ("…at any depth", "org.billing.country == \"FR\"", team, .yes),
        ("…and a list field", "org.tags contains \"vip\"", team, .yes),
        ("an absent object makes the read absent", "org.plan == \"team\"", [:], .unknown),
        ("…a null object", "org.plan == \"team\"", json(#"{"org": null}"#), .unknown),
        ("…a value that is not an object", "org.plan == \"team\"", ["org": "acme"], .unknown),
        ("…an absent field", "org.plan == \"team\"", ["org": ["id": "acme"] as [String: String]], .unknown),
        ("…a null field", "org.plan == \"team\"", json(#"{"org": {"plan": null}}"#), .unknown),
        ("…an absent object on the way", "org.billing.country == \"FR\"", json(#"{"org": {"id": "acme"}}"#), .unknown),
        ("…a value on the way that is not an object", "org.billing.country == \"FR\"", json(#"{"org": {"billing": "FR"}}"#), .unknown),
        ("not unknown is unknown", "not (org.plan == \"team\")", [:], .unknown),
        ("unknown or true is true", "org.plan == \"team\" or 1 == 1", [:], .yes),
        ("a mistyped field is unknown", "org.seats >= 5", json(#"{"org": {"seats": "7"}}"#), .unknown),
        ("has(path) tests the field", "has(org.plan)", team, .yes),
        ("…absent when the object lacks it", "has(org.plan)", json(#"{"org": {"id": "x"}}"#), .no),
        ("…absent when the object is not one", "has(org.plan)", ["org": "acme"], .no),
        ("…present when mistyped", "has(org.seats)", json(#"{"org": {"seats": "7"}}"#), .yes),
        ("has(object) tests the object", "has(org)", json(#"{"org": {}}"#), .yes),
        ("…true for any present value", "has(org)", ["org": "acme"], .yes),
        ("…false when absent", "has(org)", json(#"{"org": null}"#), .no),
        ("?? gives the field when known", "(org.seats ?? 0) >= 5", team, .yes),
        ("?? gives the other side when absent", "(org.seats ?? 0) == 0", json(#"{"org": {}}"#), .yes),
    ]

    @Test(arguments: 0..<sentences.count)
    func sentenceHoldsWithASchema(_ i: Int) throws {
        let (sentence, expression, context, expected) = Self.sentences[i]
        #expect(
            try truth(of: expression.replacingOccurrences(of: "\"team\"", with: "team"), in: context, schema: Self.schema) == expected,
            "\(sentence)")
    }

    @Test(arguments: 0..<sentences.count)
    func sentenceHoldsWithoutASchema(_ i: Int) throws {
        let (sentence, expression, context, expected) = Self.sentences[i]
        #expect(try truth(of: expression, in: context) == expected, "\(sentence)")
    }

    /// A path is a unit like an attribute: `rollout(org.id)` and `split(device.id)` bucket
    /// by the leaf's value exactly as a flat attribute holding it would, string or int.
    @Test func aPathBucketsAsAnAttributeHoldingItsValue() throws {
        let byPath = try RuleSet(
            source: """
                flag f { enabled when rollout(org.id) < 37% }
                variant v [a, b, c] = a { split(device.id) { a: 20%, b: 30%, c: 50% } }
                """)
        let flat = try RuleSet(
            source: """
                flag f { enabled when rollout(userId) < 37% }
                variant v [a, b, c] = a { split(userId) { a: 20%, b: 30%, c: 50% } }
                """)
        var on = 0
        for k in 0..<600 {
            let unit: any ContextValueConvertible = k % 2 == 0 ? "unit-\(k)" : k
            let nested: EvaluationContext = [
                "org": ["id": unit.contextValue] as [String: Value], "device": ["id": unit.contextValue] as [String: Value],
            ]
            let plain: EvaluationContext = ["userId": unit]
            #expect(byPath.isEnabled("f", in: nested) == flat.isEnabled("f", in: plain))
            #expect(byPath.evaluate("v", in: nested).variant == flat.evaluate("v", in: plain).variant)
            #expect(byPath.evaluate("v", in: nested).reason == .split)
            if byPath.isEnabled("f", in: nested) { on += 1 }
        }
        #expect(on > 150 && on < 300)
        // An absent unit goes on to the next rule, as for a flat attribute.
        #expect(byPath.evaluate("v", in: ["device": "phone"]).reason == .default)
    }

    /// Every path is checked against the schema, with the place and the fix.
    @Test(arguments: [
        ("org.plann == team", "'org' has no field 'plann'; did you mean 'plan'?"),
        ("org.billing.contry == \"FR\"", "'org.billing' has no field 'contry'; did you mean 'country'?"),
        ("orgg.plan == team", "unknown context attribute 'orgg'; did you mean 'org'?"),
        ("userId.name == \"x\"", "'userId' is string, not an object: it has no field 'name'"),
        ("org.plan.name == \"x\"", "'org.plan' is enum(free, team, enterprise), not an object: it has no field 'name'"),
        ("other.plan == \"x\"", "'other' is a declaration, which has no fields: 'other.plan' reads nothing"),
        ("now.day == 1", "'now' is the evaluation time, which has no fields: 'now.day' reads nothing"),
        ("org == \"acme\"", "cannot compare"),
        ("org.billing == \"FR\"", "cannot compare"),
        ("rollout(org) < 5%", "rollout"),
        ("has(org.plann)", "'org' has no field 'plann'; did you mean 'plan'?"),
        ("org.seats == \"7\"", "int"),
    ])
    func pathsAreCheckedAgainstTheSchema(_ expression: String, _ message: String) {
        let source = "context { \(Self.schema), userId : string }\nflag other = true\nflag f { enabled when \(expression) }\n"
        do {
            _ = try RuleSet(source: source)
            Issue.record("'\(expression)' loaded")
        } catch {
            let messages = error.errors.map(\.message)
            #expect(messages.contains { $0.contains(message) }, "\(messages)")
            #expect(error.errors.first?.range.start.line == 3)
        }
    }

    /// Without a schema a path is read dynamically, but a declaration still has no fields.
    @Test func withoutASchemaADeclarationStillHasNoFields() {
        #expect(throws: RuleSetError.self) { try RuleSet(source: "flag other = true\nflag f { enabled when other.x == 1 }\n") }
        #expect(throws: Never.self) { try RuleSet(source: "flag f { enabled when org.x.y.z == 1 }\n") }
    }

    /// Object types in the schema: fields separated by commas or new lines, objects in
    /// objects; an empty object, a field declared twice and a list of objects are errors.
    @Test(arguments: [
        ("org : {}", "an object type needs at least one field"),
        ("org : { a : string, a : int }", "field 'a' is declared twice"),
        ("orgs : [{ a : string }]", "is not a type"),
        ("org : { a : strin }", "did you mean 'string'?"),
    ])
    func objectTypesAreChecked(_ schema: String, _ message: String) {
        do {
            _ = try RuleSet(source: "context { \(schema) }\nflag f = true\n")
            Issue.record("'\(schema)' loaded")
        } catch {
            #expect(error.errors.map(\.message).contains { $0.contains(message) }, "\(error.errors.map(\.message))")
        }
    }

    @Test func fieldsAreSeparatedByCommasOrNewLines() throws {
        let rules = try RuleSet(
            source: """
                context {
                  org : {
                    plan : enum(free, team)
                    billing : { country : string, vat : bool }
                  }
                }
                flag f { enabled when org.plan == team and org.billing.vat }
                """)
        #expect(rules.schema?.attributes.map(\.name) == ["org", "org.plan", "org.billing", "org.billing.country", "org.billing.vat"])
        #expect(rules.schema?["org.billing.vat"]?.parent == rules.schema?["org.billing"]?.slot)
        #expect(rules.isEnabled("f", in: ["org": ["plan": "team", "billing": ["vat": true]] as [String: Value]]))
    }

    /// A path written with a space or without a field is a syntax error naming the fix.
    @Test func aPathIsWrittenWithoutSpaces() {
        for source in ["flag f { enabled when org. plan == 1 }", "flag f { enabled when org.1 == 1 }", "flag f { enabled when org. == 1 }"]
        {
            do {
                _ = try RuleSet(source: source)
                Issue.record("'\(source)' loaded")
            } catch {
                #expect(
                    error.errors.first?.message.hasPrefix("expected a field name right after 'org.'") == true,
                    "\(error.errors.map(\.message))")
            }
        }
    }

    /// A prepared context lays an object's declared fields out in their own slots, and a
    /// path set on it with `set(_:atPath:)` goes into its object; a key is a name, so
    /// `context["org.plan"]` is an attribute of that name, which the schema lacks.
    @Test func aPreparedContextReadsAndSetsPaths() throws {
        let rules = try RuleSet(
            source: "context { \(Self.schema) }\nflag f { enabled when org.billing.country == \"FR\" and org.plan == team }\n")
        var context = rules.makeContext()
        context.set("team", atPath: "org.plan")
        #expect(context["org"] == .object(["plan": "team"]))
        #expect(context.value(atPath: "org.plan") == "team")
        #expect(!rules.isEnabled(rules.handle("f"), in: context))
        context.set("FR", atPath: "org.billing.country")
        #expect(rules.isEnabled(rules.handle("f"), in: context))
        #expect(context.value(atPath: "org.billing.country") == "FR")
        #expect(context["org.billing.country"] == nil)
        context["org.plan"] = "free"  // an undeclared attribute: dropped
        #expect(rules.isEnabled(rules.handle("f"), in: context) && context["org.plan"] == nil)
        context["org"] = "acme"
        #expect(!rules.isEnabled(rules.handle("f"), in: context))
        #expect(context.value(atPath: "org.plan") == nil)
        #expect(context.dictionary == ["org": "acme"])
    }

    /// Tests next to the rules give fields by path.
    @Test func testsGiveFieldsByPath() throws {
        let rules = try RuleSet(
            source: """
                context { \(Self.schema) }
                flag f { enabled when org.plan == team and org.billing.country == "FR" }
                test "a French team" {
                  given { org.plan: team, org.billing.country: "FR" }
                  expect f
                }
                """)
        let allPassed = rules.runTests().allSatisfy(\.passed)
        #expect(allPassed)
        for (given, message) in [
            ("org.plann: team", "'org' declares no field 'plann'; did you mean 'plan'?"),
            ("org.plan: team, org.plan: free", "'org.plan' is given twice"),
            ("org.seats: \"7\"", "attribute 'org.seats' expects an int"),
        ] {
            let source = "context { \(Self.schema) }\nflag f = true\ntest \"t\" {\n  given { \(given) }\n  expect f\n}\n"
            do {
                _ = try RuleSet(source: source)
                Issue.record("'\(given)' loaded")
            } catch {
                #expect(error.errors.map(\.message).contains { $0.contains(message) }, "\(error.errors.map(\.message))")
            }
        }
    }

    /// An exposure and a sticky assignment of a split by a path name the path and the
    /// field's value, by name on a dictionary context and by handle on a prepared one.
    @Test func exposuresOfASplitByAPathNameThePath() async throws {
        let rules = try RuleSet(
            source: """
                context { device : { id : string, os : enum(ios, web) } }
                variant assistant [off, on] = off { split(device.id) { off: 50%, on: 50% } }
                """)
        let store = FlagStore(rules)
        let log = store.recordExposures(window: 100, buffer: 100)
        let context: EvaluationContext = ["device": ["id": "d-1", "os": "ios"]]
        let r = store.evaluate("assistant", in: context)
        #expect(r.reason == .split)
        _ = store.evaluate(rules.handle("assistant"), in: rules.prepare(["device": ["id": "d-2", "os": "ios"]]))
        let exposures = await ExposureTests.drain(log, expecting: 2)
        #expect(exposures.map(\.unitAttribute) == ["device.id", "device.id"])
        #expect(exposures.map(\.unit) == ["d-1", "d-2"])
        #expect(exposures.first?.variant == r.variant)
    }

    /// Depth is bounded everywhere a path or an object comes in: a path of more than 64
    /// names sets nothing from Swift and is an error in a test; an encoded value nesting
    /// deeper than that is refused; JSON stops at 64 levels.
    @Test func depthIsBounded() throws {
        final class Link: Encodable {
            let next: Link?
            init(_ next: Link?) { self.next = next }
        }
        var chain: Link? = nil
        for _ in 0..<100 { chain = Link(chain) }
        #expect(throws: ContextError.self) { try EvaluationContext(encoding: chain!) }
        var context = EvaluationContext()
        context.set(1, atPath: Array(repeating: "a", count: 65).joined(separator: "."))
        #expect(context.count == 0)
        context.set(1, atPath: Array(repeating: "a", count: 64).joined(separator: "."))
        #expect(context.value(atPath: Array(repeating: "a", count: 64).joined(separator: ".")) == 1)
        let deep = Array(repeating: "a", count: 65).joined(separator: ".")
        do {
            _ = try RuleSet(source: "flag f = true\ntest \"t\" {\n  given { \(deep): 1 }\n  expect f\n}\n")
            Issue.record("a 65-name path loaded")
        } catch {
            #expect(error.errors.map(\.message) == ["a path has at most 64 names"])
        }
        #expect(throws: ContextError.self) {
            try EvaluationContext(json: String(repeating: #"{"a": "#, count: 70) + "1" + String(repeating: "}", count: 70))
        }
    }
}
