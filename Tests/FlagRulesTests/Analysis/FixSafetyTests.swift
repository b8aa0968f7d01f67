import Foundation
import Testing

@testable import FlagRules
@testable import FlagRulesLanguageServer
@testable import FlagRulesTooling

/// A fix keeps the file's meaning where its tests pin it and adds no warning; one that
/// would not is refused, with the reason.
@Suite struct FixSafetyTests {
    static let ramp = """
        context { userId: string }
        flag promo {
          enabled when rollout(userId) < ramp("2026-01-01", "2026-02-01", 5%, 100%)
        }

        """

    static let dayOne = """
        test "ramp is at 5% on day one" {
          given { userId: "u-0", now: "2026-01-01" }
          expect not promo
        }

        """

    static func fixes(_ text: String) throws -> [(Diagnostic, Diagnostic.FixIt, FixSafety.Refusal?)] {
        let rules = try RuleSet(source: SourceText(text, name: "f.flags"), today: Date())
        return (rules.warnings + rules.lint()).flatMap { d in d.fixIts.map { (d, $0, FixSafety.refusal(of: $0, for: d, in: rules)) } }
    }

    @Test func anEndedRampAtFullIsWrittenAsPresenceNotAConstantRollout() throws {
        let fixes = try Self.fixes(Self.ramp)
        #expect(fixes.map(\.0.code) == ["FR109"])
        let (_, fix, refusal) = try #require(fixes.first)
        #expect(refusal == nil)
        #expect(fix.edits.map(\.replacement) == ["has(userId)"])
        let fixed = try RuleSet(
            source: SourceText(bytes: FixApplier.apply([fix], to: SourceText(Self.ramp, name: "f.flags")).bytes, name: "f.flags"),
            today: Date())
        #expect(fixed.lint().isEmpty && fixed.warnings.isEmpty)
    }

    @Test func aFixThatWouldFailAPassingTestIsRefused() throws {
        let fixes = try Self.fixes(Self.ramp + Self.dayOne)
        #expect(fixes.map(\.0.code) == ["FR109"])
        #expect(fixes.first?.2?.reason == #"test "ramp is at 5% on day one" (line 5) would fail"#)
    }

    @Test func aFixThatWouldAddAWarningIsRefused() throws {
        // A ramp that ended at 100% compared the other way round keeps its plain fix, which
        // would make a constant rollout (FR101).
        let text = """
            context { userId: string }
            flag promo {
              enabled when ramp("2026-01-01", "2026-02-01", 5%, 100%) > rollout(userId)
            }

            """
        let fixes = try Self.fixes(text)
        #expect(fixes.first?.2?.reason.hasPrefix("it would warn FR101") == true, "\(fixes.map(\.2))")
    }

    /// The language server offers the refused fix disabled, with the reason, and the safe
    /// one as preferred.
    @Test func codeActionsSayWhyAFixIsRefused() throws {
        for (text, refused) in [(Self.ramp + Self.dayOne, true), (Self.ramp, false)] {
            let (server, _, _) = CompletionTests.open(text + "‸")
            let params: JSON = .object([
                ("textDocument", .object([("uri", .string("file:///t.flags"))])),
                (
                    "range",
                    .object([
                        ("start", .object([("line", .int(2)), ("character", .int(0))])),
                        ("end", .object([("line", .int(2)), ("character", .int(80))])),
                    ])
                ),
                ("context", .object([("diagnostics", .array([]))])),
            ])
            let response = server.handle(LanguageServerModelTests.message("textDocument/codeAction", params, id: 1))
            let action = try #require(response.first { $0["id"] == .int(1) }?["result"]?.elements?.first)
            if refused {
                #expect(action["disabled"]?["reason"] == .string(#"test "ramp is at 5% on day one" (line 5) would fail"#))
                #expect(action["isPreferred"] == .bool(false))
            } else {
                #expect(action["disabled"] == nil && action["isPreferred"] == .bool(true))
            }
        }
    }
}
