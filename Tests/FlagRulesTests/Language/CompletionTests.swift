import Foundation
import Testing

@testable import FlagRules
@testable import FlagRulesLanguageServer

/// Completion and hover where people type: each place at the end of a line (where the
/// cursor is while typing) and mid-line, in a body, a `given`, a test and the schema.
@Suite struct CompletionTests {
    static let schema = """
        context {
          tier   : enum(free, pro, premium)
          userId : string
          groups : [enum(qa, staff)]
          email  : string
        }
        segment staff = email ends with "@example.com"
        flag other = true

        """

    /// A server holding `text` (with `‸` at the cursor, removed), and the cursor's line and
    /// character.
    static func open(_ text: String) -> (LanguageServer, Int, Int) {
        let server = LanguageServer(today: { DateTime.parse("2026-11-25")! })
        _ = server.handle(LanguageServerModelTests.message("initialize", .object([("capabilities", .object([]))]), id: 0))
        let marker = text.range(of: "‸")!
        let before = text[..<marker.lowerBound]
        let line = before.filter { $0 == "\n" }.count
        let character = before.split(separator: "\n", omittingEmptySubsequences: false).last!.utf16.count
        let clean = text.replacingOccurrences(of: "‸", with: "")
        _ = server.handle(
            LanguageServerModelTests.message(
                "textDocument/didOpen",
                .object([("textDocument", .object([("uri", .string("file:///t.flags")), ("version", .int(1)), ("text", .string(clean))]))]))
        )
        return (server, line, character)
    }

    static func request(_ method: String, _ text: String) -> JSON {
        let (server, line, character) = open(text)
        let params: JSON = .object([
            ("textDocument", .object([("uri", .string("file:///t.flags"))])),
            ("position", .object([("line", .int(line)), ("character", .int(character))])),
        ])
        let response = server.handle(LanguageServerModelTests.message(method, params, id: 1))
        return response.first { $0["id"] == .int(1) }?["result"] ?? .null
    }

    static func labels(_ text: String) -> [String] {
        request("textDocument/completion", text)["items"]?.elements?.compactMap { $0["label"]?.string } ?? []
    }

    static let expression = [
        "tier", "userId", "groups", "email", "staff", "other", "has", "rollout", "count", "lower", "version", "datetime", "ramp", "any",
        "all", "now",
        "not",
    ]
    static let tiers = ["free", "pro", "premium"]
    static let types = ["string", "int", "double", "bool", "version", "datetime", "ip", "enum"]

    /// (lines with the cursor, what comes after the cursor mid-line, the labels offered).
    static let matrix: [(String, String, [String])] = [
        ("flag f {\n  enabled when ‸", " tier == pro\n}\n", expression),
        ("flag f {\n  enabled when tier == ‸", " and has(email)\n}\n", tiers),
        ("flag f {\n  enabled when tier in [‸", "]\n}\n", tiers),
        ("flag f {\n  enabled when tier in [free, ‸", "]\n}\n", tiers),
        ("flag f {\n  enabled when staff and ‸", " has(email)\n}\n", expression),
        ("flag f {\n  enabled when rollout(‸", ") < 5%\n}\n", expression),
        ("flag f {\n  enabled when groups contains any [‸", "]\n}\n", ["qa", "staff"]),
        ("variant v [a, b] = a {\n  ‸", " when staff\n}\n", ["a", "b", "split", "fallback"]),
        ("flag f {\n  ‸", " when staff\n}\n", ["enabled", "disabled", "fallback"]),
        ("test \"t\" {\n  expect ‸", " other\n}\n", ["other", "not"]),
        ("test \"t\" {\n  ‸", "\n}\n", ["given", "expect"]),
        ("test \"t\" {\n  given { tier: ‸", " }\n}\n", tiers),
        ("test \"t\" {\n  given { tier: pro, ‸", " }\n}\n", ["tier", "userId", "groups", "email", "now"]),
        ("test \"t\" {\n  given {\n    ‸", "\n  }\n}\n", ["tier", "userId", "groups", "email", "now"]),
        ("segment s = ‸", " has(email)\n", expression),
    ]

    @Test(arguments: 0..<matrix.count)
    func completionAtTheEndOfALineAndMidLine(_ i: Int) {
        let (lines, rest, expected) = Self.matrix[i]
        #expect(Self.labels(Self.schema + lines + "\n}\n") == expected, "at the end of a line: \(lines)")
        #expect(Self.labels(Self.schema + lines + rest) == expected, "mid-line: \(lines)‸\(rest)")
        #expect(Self.labels(Self.schema + lines) == expected, "at the end of the file: \(lines)")
    }

    @Test func schemaTypesAreOffered() {
        #expect(Self.labels("context {\n  plan : ‸\n}\n") == Self.types)
        #expect(Self.labels("context {\n  plan : ‸") == Self.types)
        #expect(Self.labels("context { plan : ‸ }\n") == Self.types)
    }

    @Test func aDeclarationIsNotOfferedInItsOwnCondition() {
        let labels = Self.labels(Self.schema + "flag darkMode {\n  enabled when ‸\n}\n")
        #expect(!labels.contains("darkMode") && labels.contains("other"))
        #expect(!Self.labels(Self.schema + "segment mine = ‸\n").contains("mine"))
    }

    @Test func hoverReadsRampAndSegmentsRight() {
        let ramp = Self.request(
            "textDocument/hover",
            Self.schema + "flag f {\n  enabled when rollout(userId) < ra‸mp(\"2026-12-01\", \"2026-12-15\", 5%, 50%)\n}\n")
        let text = ramp["contents"]?["value"]?.string ?? ""
        #expect(text.contains("from START at the instant FROM to END at the instant TO"), "\(text)")
        let segment = Self.request("textDocument/hover", Self.schema + "flag f {\n  enabled when sta‸ff\n}\n")
        #expect(segment["contents"]?["value"]?.string?.contains(#"segment staff = email ends with "@example.com""#) == true)
    }
}
