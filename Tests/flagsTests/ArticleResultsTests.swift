import FlagRules
import Foundation
import Testing

/// The results the articles show come from their own text: the rules a page writes are
/// loaded, its commands run, and each result it prints is what they give.
@Suite struct ArticleResultsTests {
    static func article(_ name: String) throws -> String {
        try String(
            contentsOf: packageRoot.appendingPathComponent("Sources/FlagRules/FlagRules.docc/\(name).md"), encoding: .utf8)
    }

    /// The first fenced block after `heading` with the given opening fence.
    static func block(_ text: String, after heading: String, fence: String) throws -> String {
        let start = try #require(text.range(of: heading))
        let open = try #require(text.range(of: fence + "\n", range: start.upperBound..<text.endIndex))
        let close = try #require(text.range(of: "\n```", range: open.upperBound..<text.endIndex))
        return String(text[open.upperBound..<close.lowerBound]) + "\n"
    }

    @Test func gettingStartedShowsWhatItsRulesGive() throws {
        let page = try Self.article("GettingStarted")
        let rulesText = try Self.block(page, after: "## Write rules", fence: "```")
        let rules = try RuleSet(source: rulesText, name: "app.flags")
        // The Swift block's context, line for line, and the result its comment shows.
        let swift = try Self.block(page, after: "## Read it from Swift", fence: "```swift")
        let contextLine = #"let context: EvaluationContext = ["build": "beta", "userId": "user-5", "appVersion": "3.2"]"#
        #expect(swift.contains(contextLine))
        let context: EvaluationContext = ["build": "beta", "userId": "user-5", "appVersion": "3.2"]
        let printed = try #require(swift.split(separator: "\n").first { $0.contains("print(rules.evaluate(\"darkMode\"") })
        let shown = try #require(printed.components(separatedBy: "// ").last)
        #expect("\(rules.evaluate("darkMode", in: context))" == shown)
        #expect(rules.isEnabled("darkMode", in: context))
        // The terminal commands run on the same file, and `eval` agrees.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gs-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("app.flags")
        try rulesText.write(to: file, atomically: true, encoding: .utf8)
        let commands = try Self.block(page, after: "## Try it from the terminal", fence: "```sh").split(separator: "\n")
        for command in commands {
            let words = command.split(separator: " ").map(String.init)
            #expect(Array(words.prefix(3)) == ["swift", "run", "flags"])
            let arguments = words.dropFirst(3).map { $0 == "app.flags" ? file.path : $0 }
            let run = try flags(Array(arguments))
            #expect(run.status == 0, "\(command): \(run)")
            if arguments.first == "eval", !arguments.contains("--explain") {
                // The command line sets the reason two spaces off; the description, one.
                #expect(run.stdout.replacingOccurrences(of: "  (", with: " (").contains("darkMode = \(shown)\n"), "\(run)")
            }
        }
    }
}
