import Foundation
import Testing

@testable import FlagRules
@testable import FlagRulesServer

/// OFREP clients send nested JSON (an OpenFeature `structure`): `flags serve` reads it as
/// objects, and a field of the wrong type is an `INVALID_CONTEXT` naming its path.
@Suite struct OFREPNestedContextTests {
    static let rules = """
        context {
          org : { id : string, plan : enum(free, team), billing : { country : string } }
        }
        flag teamInFrance { enabled when org.plan == team and org.billing.country == "FR" }
        flag orgRollout { enabled when rollout(org.id) < 50% }

        """

    static func service() throws -> OFREPService {
        let service = OFREPService()
        service.install([.init(name: "rules.flags", rules: try RuleSet(source: rules, name: "rules.flags"))])
        return service
    }

    static func evaluate(_ service: OFREPService, _ key: String, _ context: String) throws -> (Int, JSON) {
        let r = service.respond(
            HTTPRequest(
                method: "POST", path: "/ofrep/v1/evaluate/flags/\(key)", headers: [], body: Array(#"{"context": \#(context)}"#.utf8)))
        return (r.status, try JSON.parse(bytes: r.body))
    }

    @Test func aNestedContextIsReadByPath() throws {
        let service = try Self.service()
        let (status, json) = try Self.evaluate(
            service, "teamInFrance", #"{"targetingKey": "u-1", "org": {"id": "acme", "plan": "team", "billing": {"country": "FR"}}}"#)
        #expect(status == 200 && json["value"] == .bool(true) && json["reason"] == .string("TARGETING_MATCH"))
        let (_, partial) = try Self.evaluate(service, "teamInFrance", #"{"org": {"plan": "team"}}"#)
        #expect(partial["value"] == .bool(false) && partial["reason"] == .string("DEFAULT"))
        // An org-level rollout buckets by org.id as a flat attribute holding it would.
        for id in ["acme", "globex", "initech", "umbrella"] {
            let (_, rolled) = try Self.evaluate(service, "orgRollout", #"{"org": {"id": "\#(id)"}}"#)
            let direct = try RuleSet(source: Self.rules).evaluate("orgRollout", in: ["org": ["id": .string(id)] as [String: Value]])
            #expect(rolled["value"] == .bool(direct.value == .bool(true)))
        }
    }

    @Test func aMistypedFieldIsAnInvalidContextNamingItsPath() throws {
        let service = try Self.service()
        let (status, json) = try Self.evaluate(service, "teamInFrance", #"{"org": {"plan": "gold"}}"#)
        #expect(status == 400 && json["errorCode"] == .string("INVALID_CONTEXT"))
        #expect(json["errorDetails"] == .string("attribute 'org.plan' expects one of free, team"), "\(json)")
    }

    /// The page's form has a field for each of an object's fields, named by path, and the
    /// page's evaluation puts each into its object.
    @Test func thePageNamesFieldsByPath() throws {
        let service = try Self.service()
        let rules = try JSON.parse(bytes: service.respond(HTTPRequest(method: "GET", path: "/api/rules", headers: [], body: [])).body)
        let names: [String] = {
            guard case .object(let members)? = rules["schema"] else { return [] }
            return members.map(\.0)
        }()
        #expect(names == ["org.id", "org.plan", "org.billing.country", "now"])
        let body = #"{"context": {"org.plan": "team", "org.billing.country": "FR"}}"#
        let results = try JSON.parse(
            bytes: service.respond(HTTPRequest(method: "POST", path: "/api/evaluate", headers: [], body: Array(body.utf8))).body)
        #expect(results["teamInFrance"]?["resolution"]?["value"] == .bool(true), "\(results)")
    }
}
