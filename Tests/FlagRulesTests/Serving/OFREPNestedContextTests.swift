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
}
