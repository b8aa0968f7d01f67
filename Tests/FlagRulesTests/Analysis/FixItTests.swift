import Foundation
import Testing

@testable import FlagRules
@testable import FlagRulesTooling

/// Fix-its: the edits a diagnostic offers, checked by applying them.
@Suite struct FixItTests {
    static let today = DateTime.parse("2026-11-25")!

    /// Every diagnostic of `text` (errors, or warnings and lints).
    static func diagnostics(_ text: String) -> [Diagnostic] {
        let source = SourceText(text, name: "f.flags")
        do {
            let rules = try RuleSet(source: source, today: today)
            return rules.warnings + rules.lint(today: today)
        } catch {
            return error.diagnostics
        }
    }

    /// `text` with one fix-it applied.
    static func applying(_ fix: Diagnostic.FixIt, to text: String) -> String {
        let (bytes, applied) = FixApplier.apply([fix], to: SourceText(text, name: "f.flags"))
        #expect(applied == 1)
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func lintFixesRewriteTheSource() throws {
        let file = """
            context {
              userId : string
              age    : int
            }

            /// Grown-ups.
            segment adults = age >= 18

            flag f {
              enabled when age > 3
              enabled when age > 3 and rollout(userId) < 15%
              enabled when rollout(userId) < 15
            }
            flag g { enabled when rollout(userId) < ramp("2026-01-01", "2026-02-01", 5%, 50%) }

            test "t" {
              given { age: 4 }
              expect f
              expect f
            }

            """
        let found = Self.diagnostics(file)
        #expect(found.map(\.code).sorted() == ["FR102", "FR105", "FR106", "FR109", "FR113"])
        func fixed(_ code: String) throws -> String {
            let d = try #require(found.first { $0.code == code })
            return Self.applying(try #require(d.fixIts.first), to: file)
        }
        #expect(try fixed("FR106").contains("}\n\nflag f {"))
        #expect(try !fixed("FR106").contains("Grown-ups"))
        #expect(try fixed("FR105").contains("  enabled when age > 3\n  enabled when rollout(userId) < 15\n"))
        #expect(try fixed("FR102").contains("rollout(userId) < 15%\n}"))
        #expect(try fixed("FR109").contains("flag g { enabled when rollout(userId) < 50.0% }"))
        #expect(try fixed("FR113").contains("  expect f\n}"))
        // All at once: none overlaps, and the result has no warning left.
        let all = found.compactMap { $0.fixIts.count == 1 ? $0.fixIts[0] : nil }
        let (bytes, applied) = FixApplier.apply(all, to: SourceText(file, name: "f.flags"))
        #expect(applied == 5)
        #expect(Self.diagnostics(String(decoding: bytes, as: UTF8.self)).isEmpty)
    }

    @Test func aBareFractionOffersBothReadings() throws {
        let found = Self.diagnostics("context { userId: string }\nflag f { enabled when rollout(userId) < 0.5 }")
        let d = try #require(found.first { $0.code == "FR102" })
        #expect(d.fixIts.map(\.message) == ["write '0.5%'", "write '50.0%'"])
    }

    @Test func aRuleSharingItsLineIsNotDeleted() throws {
        let found = Self.diagnostics("context { age: int }\nflag f { enabled when age > 3; enabled when age > 3 }")
        let d = try #require(found.first { $0.code == "FR105" })
        #expect(d.fixIts.isEmpty)
    }

    @Test func didYouMeanReplacesTheWord() throws {
        let file = "context { country: string }\nflag f { enabled when countyr == \"US\" }\n"
        let d = try #require(Self.diagnostics(file).first)
        #expect(d.fixIts.map(\.message) == ["replace 'countyr' with 'country'"])
        #expect(Self.diagnostics(Self.applying(d.fixIts[0], to: file)).isEmpty)
        // Not inside a quoted string: the suggestion is the case, not the literal.
        let quoted = Self.diagnostics("context { build: enum(debug, alpha) }\nflag f { enabled when build == \"alpah\" }\n")
        #expect(quoted.first?.message.contains("did you mean") == true && quoted.first?.fixIts.isEmpty == true)
    }

    /// Over every golden mistake: each fix-it replaces exactly the diagnostic's range (or
    /// whole lines), and once applied, that diagnostic is gone.
    @Test func everyGoldenFixRemovesItsDiagnostic() throws {
        var checked = 0
        for name in DiagnosticGoldenTests.cases {
            let url = DiagnosticGoldenTests.directory.appendingPathComponent(name + ".flags")
            let text = try String(decoding: Data(contentsOf: url), as: UTF8.self)
            for d in Self.diagnostics(text) {
                for fix in d.fixIts {
                    checked += 1
                    let after = Self.diagnostics(Self.applying(fix, to: text))
                    let same = after.contains { $0.code == d.code && $0.message == d.message && $0.range.start == d.range.start }
                    #expect(!same, "\(name): \(fix.message) left \(d.message)")
                }
            }
        }
        #expect(checked >= 10, "only \(checked) fix-its in the golden files")
    }

    @Test func overlappingEditsAreSkipped() {
        let source = SourceText("abcdef", name: "x")
        func edit(_ from: Int, _ to: Int, _ text: String) -> Diagnostic.Edit {
            .init(
                SourceRange(start: .init(offset: from, line: 1, column: from + 1), end: .init(offset: to, line: 1, column: to + 1)),
                text)
        }
        let (bytes, applied) = FixApplier.apply(
            [.init("x", [edit(1, 3, "X")]), .init("y", [edit(2, 4, "Y")]), .init("z", [edit(5, 6, "Z")]), .init("w", [edit(4, 9, "W")])],
            to: source)
        #expect(String(decoding: bytes, as: UTF8.self) == "aXdeZ" && applied == 2)
    }
}
