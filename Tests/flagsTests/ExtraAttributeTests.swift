import FlagRules
import FlagRulesServer
import Foundation
import Testing

/// An attribute the schema does not declare (a service's struct has more fields than its
/// rules read) is answered alike by the three surfaces: the library, strict or not,
/// `flags eval --contexts` and `flags serve`'s OFREP evaluation read it as nothing, and
/// none of them fails for it.
@Suite struct ExtraAttributeTests {
    static let source = """
        context {
          userId: string
          plan: enum(free, team)
        }

        flag teamOnly {
          enabled when plan == team
        }

        """

    @Test func theThreeSurfacesAnswerAContextWithAnExtraAttributeAlike() async throws {
        try await offThePool {
            let json = #"{"userId": "u-1", "plan": "team", "name": "Ada", "createdAt": "2020-01-01"}"#
            let rules = try RuleSet(source: Self.source, name: "extra.flags")
            let context = try EvaluationContext(json: json)
            var strict = rules
            strict.checksContextsStrictly = true
            let lenient = rules.evaluate("teamOnly", in: context)
            let checked = strict.evaluate("teamOnly", in: context)
            #expect(lenient.value == true && lenient.reason == .targetingMatch)
            #expect(checked.value == lenient.value && checked.reason == lenient.reason && checked.errorCode == nil)

            let file = FileManager.default.temporaryDirectory.appendingPathComponent("extra-\(UUID()).flags")
            try Self.source.write(to: file, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: file) }
            let run = try flags(["eval", file.path, "teamOnly", "--contexts", "-", "--json"], stdin: json + "\n")
            #expect(run.status == 0, "\(run.stderr)")
            let line = try JSON.parse(run.stdout.split(separator: "\n").first.map(String.init) ?? "")
            #expect(line["teamOnly"]?["value"] == .bool(true) && line["teamOnly"]?["reason"] == .string("TARGETING_MATCH"), "\(run.stdout)")
            // Said, not refused: a warning names the attribute no rule reads.
            #expect(run.stderr.contains("unknown attribute 'name'"), "\(run.stderr)")

            let service = OFREPService()
            service.install([.init(name: "extra.flags", rules: rules)])
            let answer = service.respond(
                HTTPRequest(method: "POST", path: "/ofrep/v1/evaluate/flags/teamOnly", body: Array(#"{"context": \#(json)}"#.utf8)))
            #expect(answer.status == 200)
            let body = try JSON.parse(bytes: answer.body)
            #expect(
                body["value"] == .bool(true) && body["reason"] == .string("TARGETING_MATCH"),
                "\(String(decoding: answer.body, as: UTF8.self))")
        }
    }
}
