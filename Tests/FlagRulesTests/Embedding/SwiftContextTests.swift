import Foundation
import Testing

@testable import FlagRules

/// Plain Swift values as contexts: `Encodable` structs, optionals, sets, build
/// configurations and dictionaries, without wrapping; and public values that print what
/// they hold.
@Suite struct SwiftContextTests {
    struct Billing: Encodable { let country: String }
    enum Plan: String, Encodable { case free, team, enterprise }
    struct Org: Encodable {
        let id: String
        let plan: Plan
        let seats: Int
        let tags: Set<String>
        let billing: Billing?
    }
    struct User: Encodable {
        let id: String
        let email: String?
        let signup: Date
        let org: Org
    }

    static let rules = try! RuleSet(
        source: """
            context {
              id : string
              email : string
              signup : datetime
              org : { id : string, plan : enum(free, team, enterprise), seats : int, tags : [string], billing : { country : string } }
            }
            flag teamInFrance { enabled when org.plan == team and org.billing.country == "FR" and org.tags contains "vip" }
            flag hasEmail { enabled when has(email) }
            flag earlyAdopter { enabled when signup < "2026-01-01T00:00:00Z" }
            flag orgRollout { enabled when rollout(org.id) < 50% }
            """)

    @Test func anEncodableStructIsAContext() throws {
        let user = User(
            id: "u-1", email: nil, signup: Date(timeIntervalSince1970: 1_700_000_000),
            org: Org(id: "acme", plan: .team, seats: 7, tags: ["vip", "beta"], billing: Billing(country: "FR")))
        let context = try EvaluationContext(encoding: user)
        #expect(context["email"] == nil)
        #expect(context["signup"] == .datetime(Date(timeIntervalSince1970: 1_700_000_000)))
        #expect(context["org"]?.value(at: ["billing", "country"]) == "FR")
        #expect(context["org"]?.value(at: ["tags"]) == ["beta", "vip"] || context["org"]?.value(at: ["tags"]) == ["vip", "beta"])
        #expect(Self.rules.isEnabled("teamInFrance", in: context))
        #expect(!Self.rules.isEnabled("hasEmail", in: context))
        #expect(Self.rules.isEnabled("earlyAdopter", in: context))
        #expect(
            Self.rules.isEnabled("orgRollout", in: context)
                == Self.rules.isEnabled("orgRollout", in: ["org": ["id": "acme"] as [String: String]]))
        let prepared = Self.rules.prepare(context)
        #expect(Self.rules.isEnabled(Self.rules.handle("teamInFrance"), in: prepared))
        // A nil nested struct is absent: the path through it is unknown.
        let withoutBilling = User(
            id: "u-2", email: "a@b.c", signup: Date(), org: Org(id: "x", plan: .team, seats: 1, tags: ["vip"], billing: nil))
        let other = try EvaluationContext(encoding: withoutBilling)
        #expect(other["org"]?.objectValue?["billing"] == nil)
        #expect(!Self.rules.isEnabled("teamInFrance", in: other))
        #expect(Self.rules.isEnabled("hasEmail", in: other))
    }

    struct Inner: Encodable {
        let tags: [String]
        let score: Double
        let seats: Int?
    }
    struct Item: Encodable {
        let name: String
        let count: Int
        let flags: [Bool]
        let inner: Inner?
    }
    struct Catalog: Encodable {
        let id: String
        let first: Item
        let second: Item?
        let tags: [String]
        let numbers: [Int]
    }

    /// A context encoded from Swift values is the one `JSONEncoder` then
    /// `EvaluationContext(json:)` make of them (the plain way, which the encoder is faster
    /// than), for the shapes a context holds: random nested structs, absent optionals, lists
    /// of strings, numbers and booleans, and a list of 20,000 tags, its order kept (a list
    /// grows in place: each element costs the same however many came before).
    @Test func encodingAgreesWithJSONEncoderThenJSON() throws {
        var random = SeededGenerator(seed: 59)
        func n(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }
        func word() -> String { String((0..<(1 + n(6))).map { _ in "abcdefgh\"\\é".randomElement(using: &random)! }) }
        func item() -> Item {
            Item(
                name: word(), count: n(1_000) - 500, flags: (0..<n(4)).map { _ in n(2) == 0 },
                inner: n(3) == 0
                    ? nil : Inner(tags: (0..<n(5)).map { _ in word() }, score: Double(n(100)) + 0.25, seats: n(2) == 0 ? nil : n(50)))
        }
        for round in 0..<200 {
            let catalog = Catalog(
                id: word(), first: item(), second: n(2) == 0 ? nil : item(),
                tags: (0..<(round == 0 ? 20_000 : n(30))).map { "t\($0)" }, numbers: (0..<n(10)).map { $0 * 3 })
            let encoded = try EvaluationContext(encoding: catalog)
            let json = String(decoding: try JSONEncoder().encode(catalog), as: UTF8.self)
            // (A whole double is written by JSONEncoder as an int: the scores are never whole.)
            let same = encoded == (try EvaluationContext(json: json))
            #expect(same, "round \(round): \(json.prefix(300))")
            if round == 0 { #expect(encoded["tags"]?.listValue?.count == 20_000 && encoded["tags"]?.listValue?.last == "t19999") }
        }
    }

    /// `BuildConfiguration` is `Codable` as its name: it sits in a context struct as the
    /// `build` attribute, and round-trips through JSON.
    @Test func aBuildConfigurationEncodesAsItsName() throws {
        struct Session: Codable { let build: BuildConfiguration; let userId: String }
        let session = Session(build: .beta, userId: "u-1")
        let context = try EvaluationContext(encoding: session)
        #expect(context == ["build": "beta", "userId": "u-1"])
        let rules = try RuleSet(source: "context { build: enum(debug, alpha, beta, release) }\nflag f { enabled when build == beta }")
        #expect(rules.isEnabled("f", in: context))
        let json = try JSONEncoder().encode(session)
        #expect(String(decoding: json, as: UTF8.self).contains(#""build":"beta""#))
        #expect(try JSONDecoder().decode(Session.self, from: json).build == .beta)
        #expect(try JSONDecoder().decode(BuildConfiguration.self, from: Data(#""nightly""#.utf8)) == BuildConfiguration("nightly"))
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(BuildConfiguration.self, from: Data("3".utf8)) }
    }

    @Test func aValueThatIsNotKeyedIsRefused() {
        #expect(throws: ContextError.self) { try EvaluationContext(encoding: "just a string") }
        #expect(throws: ContextError.self) { try EvaluationContext(encoding: [1, 2]) }
        #expect((try? EvaluationContext(encoding: ["plan": "team"])) == ["plan": "team"])
    }

    @Test func plainSwiftValuesGoIntoALiteral() throws {
        let email: String? = nil
        let country: String? = "FR"
        let groups: Set<String> = ["staff", "qa"]
        let context: EvaluationContext = [
            "email": email, "country": country, "groups": groups, "build": BuildConfiguration.current,
            "org": ["plan": "team", "billing": ["country": "FR"]] as [String: Value],
        ]
        #expect(context["email"] == nil && context.count == 4)
        #expect(context["country"] == "FR")
        #expect(context["groups"] == ["qa", "staff"])
        #expect(context["build"] == .string(BuildConfiguration.current.name))
        #expect(context["org"] == .object(["plan": "team", "billing": .object(["country": "FR"])]))
        let rules = try RuleSet(source: "flag f { enabled when groups contains \"qa\" and org.billing.country == \"FR\" }")
        #expect(rules.isEnabled("f", in: context))
        let headers: [String: String] = ["userId": "u-1", "country": "DE"]
        #expect(EvaluationContext(headers) == ["userId": "u-1", "country": "DE"])
        let optionals: [String: String?] = ["a": "x", "b": nil]
        #expect(EvaluationContext(optionals) == ["a": "x"])
    }

    @Test func publicValuesPrintWhatTheyHold() throws {
        let context: EvaluationContext = ["userId": "u-1", "org": ["plan": "team"] as [String: String]]
        #expect(context.description == #"["org": { plan: "team" }, "userId": "u-1"]"#)
        #expect("\(EvaluationContext())" == "[:]")
        let rules = try RuleSet(source: "flag darkMode { enabled when userId == \"u-1\" }\nvalue pageSize: int = 20\n")
        #expect(rules.description == "RuleSet(2 declarations: darkMode, pageSize)")
        #expect(rules.handle("darkMode").description == "DeclarationHandle(darkMode)")
        #expect(rules.handle("nope").description == "DeclarationHandle(nope, not in these rules)")
        let key = FlagKey<Bool>(flag: "darkMode")
        #expect(key.description == "flag darkMode = false")
        #expect(rules.evaluate(key, in: context).description == "true (TARGETING_MATCH, rule 1, line 1)")
        #expect(rules.prepare(context).description == #"PreparedContext(["org": { plan: "team" }, "userId": "u-1"])"#)
        #expect(rules.declarations.map(\.description) == ["flag darkMode = false", "value pageSize: int = 20"])
        #expect(FlagOverrides(["b": 2, "a": true]).description == #"["a": true, "b": 2]"#)
        let schema = try RuleSet(source: "context { org : { plan : enum(free, team) } }\nflag f { enabled when org.plan == team }\n").schema
        #expect(schema?.description == "context { org : { plan: enum(free, team) } }")
        #expect(schema?.attributes.map(\.description) == ["org : { plan: enum(free, team) }", "org.plan : enum(free, team)"])
    }

    /// `changes(of:)` with a typed key gives typed resolutions, now and at each change.
    @Test func changesOfATypedKey() async throws {
        let store = FlagStore(try RuleSet(source: "value pageSize: int = 20\n"))
        let key = FlagKey<Int>(value: "pageSize", default: 5)
        var changes = store.changes(of: key).makeAsyncIterator()
        #expect(await changes.next()?.value == 20)
        _ = try store.update(source: "value pageSize: int = 60\n")
        #expect(await changes.next()?.value == 60)
        _ = try store.update(source: "value pageSize: string = \"sixty\"\n")
        let mismatched = await changes.next()
        #expect(mismatched?.value == 5 && mismatched?.resolution.errorCode == .typeMismatch)
    }
}
