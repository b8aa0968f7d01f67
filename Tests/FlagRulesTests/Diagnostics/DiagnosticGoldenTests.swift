import Foundation
import Testing

@testable import FlagRules

/// Each `Golden/NAME.flags` is loaded as of 2026-11-22 and its rendered diagnostics are
/// compared with `Golden/NAME.expected`. Re-record with `FLAGRULES_RECORD=1 swift test`.
@Suite struct DiagnosticGoldenTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")
    static let recording = ProcessInfo.processInfo.environment["FLAGRULES_RECORD"] == "1"

    static var cases: [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return files.filter { $0.hasSuffix(".flags") }.map { String($0.dropLast(6)) }.sorted()
    }

    static func render(_ name: String) throws -> String {
        let bytes = try Data(contentsOf: directory.appendingPathComponent(name + ".flags"))
        let source = SourceText(bytes: Array(bytes), name: name + ".flags")
        let today = try #require(DateTime.parse("2026-11-22"))
        do {
            let rules = try RuleSet(source: source, today: today)
            return DiagnosticRenderer().render(rules.warnings, in: source)
        } catch {
            return DiagnosticRenderer().render(error.diagnostics, in: source)
        }
    }

    @Test func thereAreAtLeast25DistinctMistakes() {
        #expect(Self.cases.count >= 25)
    }

    @Test(arguments: cases)
    func golden(_ name: String) throws {
        let actual = try Self.render(name)
        let expectedURL = Self.directory.appendingPathComponent(name + ".expected")
        if Self.recording {
            try actual.write(to: expectedURL, atomically: true, encoding: .utf8)
            return
        }
        let expected = try String(contentsOf: expectedURL, encoding: .utf8)
        #expect(actual == expected)
        #expect(!actual.isEmpty, "a golden case must produce a diagnostic")
    }

    @Test func coloursOnlyWhenAsked() throws {
        let source = SourceText("flag f { enabled when x < }", name: "c.flags")
        let diagnostics = Parser.parse(source).1
        let plain = DiagnosticRenderer().render(diagnostics, in: source)
        let colored = DiagnosticRenderer(colored: true).render(diagnostics, in: source)
        #expect(!plain.contains("\u{1B}["))
        #expect(colored.contains("\u{1B}[1;31merror\u{1B}[0m"))
    }

    @Test func longLinesAreCutAroundTheSpan() {
        let line = "flag f { enabled when " + String(repeating: "a == 1 or ", count: 100) + "b < }"
        let source = SourceText(line, name: "long.flags")
        let text = DiagnosticRenderer().render(Parser.parse(source).1, in: source)
        let lines = text.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines[1].count < 140)
        #expect(lines[1].hasPrefix("1 | …"))
        #expect(lines[2].hasSuffix("^"))
        // The caret sits under the '}' in the cut line.
        let caret = lines[2].count - 1
        #expect(Array(lines[1])[caret] == "}")
    }
}
