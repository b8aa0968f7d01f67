import Foundation
import Testing

@testable import FlagRules
@testable import FlagRulesLanguageServer
@testable import FlagRulesTooling

/// Names of any spelling in backticks: read where a name is, written back by `flags fmt`
/// (bare when plain), renamed and completed by the language server; the errors of a bad
/// one name its place and the fix.
@Suite struct QuotedNameTests {
    static let source = """
        context { userId: string; `app-version`: version; org: { `billing-country`: string } }
        variant checkout [control, `one-step`, `child.variant`, `when`] = control {
          `one-step` when `app-version` >= 2.0.0 and org.`billing-country` == "FR"
          split(userId) { control: 50%, `child.variant`: 50% } when has(`app-version`)
        }
        flag `dark-mode` { enabled when checkout == "child.variant" or checkout in [`one-step`] }
        test "quoted" {
          given { userId: "u1", `app-version`: "2.1.0", org.`billing-country`: "FR" }
          expect checkout == `one-step`
          expect `dark-mode`
        }

        """

    @Test func quotedNamesReadEvaluateAndTest() throws {
        let rules = try RuleSet(source: Self.source)
        let context: EvaluationContext = ["userId": "u1", "app-version": "2.1.0", "org": .object(["billing-country": "FR"])]
        #expect(rules.evaluate("checkout", in: context).variant == "one-step")
        #expect(rules.isEnabled("dark-mode", in: context))
        #expect(rules.declarations.first { $0.name == "checkout" }?.variants == ["control", "one-step", "child.variant", "when"])
        let results = rules.runTests()
        #expect(results.count == 1 && results.allSatisfy(\.passed), "\(results)")
    }

    /// `flags fmt` keeps quoted names quoted and writes plain ones bare; twice is once, and the
    /// meaning is the same.
    @Test func theFormatterWritesNamesBackAsTheyMustBe() throws {
        let formatted = try FlagsFormatter.format(Self.source.replacingOccurrences(of: "[control,", with: "[`control`,"))
        #expect(formatted.contains("variant checkout [control, `one-step`, `child.variant`, `when`] = control {"), "\(formatted)")
        #expect(formatted.contains("`one-step` when `app-version` >= 2.0.0 and org.`billing-country` == \"FR\""), "\(formatted)")
        #expect(formatted.contains("given { userId: \"u1\", `app-version`: \"2.1.0\", org.`billing-country`: \"FR\" }"), "\(formatted)")
        #expect(try FlagsFormatter.format(formatted) == formatted)
        #expect(try FlagsFormatter.format(formatted) == FlagsFormatter.format(Self.source))
    }

    /// Any text but a line break or a control character is a name: written, then read back
    /// as an attribute (or, with a dot, as a variant's case), it is the same text.
    @Test func anyNameSurvivesWritingAndReading() throws {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [String] = ["a", "Z", "_", "0", "-", " ", "`", "\\", "é", "😀", "/", "~", "and", "when", "split", "not", "#", "\""]
        for _ in 0..<500 {
            let name = (0..<Int.random(in: 1...6, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }.joined()
            let written = Identifier.written(name)
            let rules = try RuleSet(source: "variant v [zz0, \(written)] = zz0 { \(written) when x == 1 }")
            #expect(rules.declarations.first?.variants == ["zz0", name], "\(written)")
            #expect(rules.evaluate("v", in: ["x": 1]).variant == name)
            let attribute = try RuleSet(source: "flag f { enabled when \(written) == 1 }")
            #expect(attribute.isEnabled("f", in: [name: 1]), "\(written)")
        }
    }

    @Test(arguments: [
        ("flag f { enabled when `` == 1 }", "a quoted name is never empty"),
        ("flag f { enabled when `ab == 1 }", "unterminated quoted name"),
        ("flag f { enabled when `a\tb` == 1 }", "a quoted name holds no control character"),
        ("flag f { enabled when `a\\nb` == 1 }", "unknown escape in a quoted name"),
        ("flag f { enabled when `org.plan` == 1 }", "a name in a rule holds no '.': 'org.plan'"),
        ("flag `a.b`", "a name in a rule holds no '.': 'a.b'"),
    ])
    func badQuotedNamesAreErrors(_ source: String, _ message: String) {
        #expect {
            try RuleSet(source: source)
        } throws: { error in
            "\(error)".contains(message)
        }
    }

    /// The language server renames to a name of any spelling, writing it quoted, and
    /// completes a quoted attribute with its backticks.
    @Test func theLanguageServerRenamesAndCompletesQuotedNames() throws {
        let text = "context { userId: string; `app-version`: version }\nflag f { enabled when `app-version` >= 2.0.0 and has(userId) }\n"
        let (server, _, _) = CompletionTests.open(text + "‸")
        func rename(line: Int, character: Int, to name: String) -> JSON? {
            let params: JSON = .object([
                ("textDocument", .object([("uri", .string("file:///t.flags"))])),
                ("position", .object([("line", .int(line)), ("character", .int(character))])), ("newName", .string(name)),
            ])
            return server.handle(LanguageServerModelTests.message("textDocument/rename", params, id: 7)).first { $0["id"] == .int(7) }
        }
        // `userId` in `has(userId)` (line 1) renamed to `user-id`.
        let edits = rename(line: 1, character: 55, to: "user-id")?["result"]?["changes"]?["file:///t.flags"]?.elements ?? []
        #expect(edits.count == 2 && edits.allSatisfy { $0["newText"]?.string == "`user-id`" }, "\(edits)")
        // The quoted attribute renames from inside its backticks, to a plain name.
        let plain = rename(line: 1, character: 25, to: "appVersion")?["result"]?["changes"]?["file:///t.flags"]?.elements ?? []
        #expect(plain.count == 2 && plain.allSatisfy { $0["newText"]?.string == "appVersion" }, "\(plain)")
        #expect(rename(line: 1, character: 25, to: "a.b")?["error"] != nil, "a dotted name is refused")
        let completing = "context { `app-version`: version }\nflag f { enabled when ‸ }\n"
        let items = CompletionTests.request("textDocument/completion", completing)["items"]
        let item = items?.elements?.first { $0["label"]?.string == "app-version" }
        #expect(item?["insertText"]?.string == "`app-version`", "\(String(describing: items))")
    }
}
