import Foundation
import Testing

@testable import FlagRules
@testable import FlagRulesLanguageServer

/// The language server and paths: fields complete after `org.`, each name of a path hovers,
/// goes to its declaration and renames on its own.
@Suite struct PathCompletionTests {
    static let schema = """
        context {
          org : {
            id      : string
            plan    : enum(free, team)
            billing : { country : string, vat : bool }
          }
          userId : string
        }

        """

    @Test func fieldsCompleteAfterTheDot() {
        #expect(CompletionTests.labels(Self.schema + "flag f {\n  enabled when org.‸\n}\n") == ["id", "plan", "billing"])
        #expect(CompletionTests.labels(Self.schema + "flag f {\n  enabled when org.billing.‸\n}\n") == ["country", "vat"])
        #expect(CompletionTests.labels(Self.schema + "flag f {\n  enabled when org.billing.co‸\n}\n") == ["country", "vat"])
        #expect(CompletionTests.labels(Self.schema + "flag f {\n  enabled when org.plan == ‸\n}\n") == ["free", "team"])
        #expect(CompletionTests.labels(Self.schema + "test \"t\" {\n  given { org.‸ }\n}\n") == ["id", "plan", "billing"])
        // Types complete inside an object type too.
        #expect(CompletionTests.labels("context {\n  org : { id : ‸ }\n}\n").contains("string"))
        // Without a schema: the fields other paths read.
        #expect(
            CompletionTests.labels(
                "flag a { enabled when device.os == \"ios\" and device.id == \"x\" }\nflag f { enabled when device.‸ }\n") == ["id", "os"])
    }

    @Test func eachNameOfAPathHovers() {
        let field = CompletionTests.request(
            "textDocument/hover", Self.schema + "flag f {\n  enabled when org.billing.cou‸ntry == \"FR\"\n}\n")
        #expect(
            field["contents"]?["value"]?.string
                == "```flags\norg.billing.country: string\n```\nfield of 'org.billing', read as org.billing.country")
        let object = CompletionTests.request("textDocument/hover", Self.schema + "flag f {\n  enabled when o‸rg.plan == team\n}\n")
        #expect(object["contents"]?["value"]?.string?.hasPrefix("```flags\norg: { id: string") == true, "\(object)")
    }

    @Test func aFieldRenamesOnItsOwn() throws {
        let text =
            Self.schema
            + "flag f {\n  enabled when org.plan == team and has(org.plan)\n}\ntest \"t\" {\n  given { org.plan: team }\n  expect f\n}\n"
        let (server, _, _) = CompletionTests.open(text + "‸")
        func rename(line: Int, character: Int, to name: String) -> [JSON] {
            let params: JSON = .object([
                ("textDocument", .object([("uri", .string("file:///t.flags"))])),
                ("position", .object([("line", .int(line)), ("character", .int(character))])), ("newName", .string(name)),
            ])
            let response = server.handle(LanguageServerModelTests.message("textDocument/rename", params, id: 7))
            return response.first { $0["id"] == .int(7) }?["result"]?["changes"]?["file:///t.flags"]?.elements ?? []
        }
        // `plan` in `enabled when org.plan`: line 9, character 19.
        let edits = rename(line: 9, character: 19, to: "tier")
        var renamed = Array(text.utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { Array($0.utf8) }
        var offsets: [(Int, Int)] = []
        for edit in edits {
            let start = edit["range"]?["start"], end = edit["range"]?["end"]
            let line = start?["line"]?.integer ?? 0
            let base = lines[..<line].reduce(0) { $0 + $1.count + 1 }
            offsets.append((base + (start?["character"]?.integer ?? 0), base + (end?["character"]?.integer ?? 0)))
        }
        for (from, to) in offsets.sorted(by: { $0.0 > $1.0 }) { renamed.replaceSubrange(from..<to, with: Array("tier".utf8)) }
        let result = String(decoding: renamed, as: UTF8.self)
        #expect(edits.count == 4, "\(edits)")
        #expect(
            result.contains("tier    : enum(free, team)") && result.contains("org.tier == team and has(org.tier)")
                && result.contains("given { org.tier: team }"), "\(result)")
        #expect(throws: Never.self) { try RuleSet(source: result) }
    }
}
