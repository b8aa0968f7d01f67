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

    @Test func gettingStartedShowsWhatItsRulesGive() async throws {
        try await offThePool {
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

    /// Every block of the README and the catalog that shows a `flags` command (`$ swift run
    /// flags …`) and what it prints: the command, run on the repository's files, prints
    /// exactly that. Commands that run on (`serve`, `repl`) or on files the page makes up
    /// (`diff old.flags new.flags`) are shown, not run.
    @Test func everyShownCommandPrintsWhatItsPageShows() async throws {
        try await offThePool {
            let catalog = packageRoot.appendingPathComponent("Sources/FlagRules/FlagRules.docc")
            let pages =
                try FileManager.default.contentsOfDirectory(atPath: catalog.path).filter { $0.hasSuffix(".md") }.sorted()
                .map { catalog.appendingPathComponent($0) } + [packageRoot.appendingPathComponent("README.md")]
            var checked = 0
            for page in pages {
                let text = try String(contentsOf: page, encoding: .utf8)
                var rest = text[...]
                while let open = rest.range(of: "```\n$ swift run flags "),
                    let close = rest.range(of: "\n```", range: open.upperBound..<rest.endIndex)
                {
                    let block = rest[open.upperBound..<close.lowerBound]
                    rest = rest[close.upperBound...]
                    let lines = block.split(separator: "\n", omittingEmptySubsequences: false)
                    let arguments = lines[0].split(separator: " ").map(String.init)
                    guard let command = arguments.first, ["eval", "test", "check", "list", "fmt", "refs", "stale"].contains(command),
                        arguments.allSatisfy({ !$0.contains("old.flags") })
                    else { continue }
                    let run = try flags(arguments)
                    let shown = lines.dropFirst().joined(separator: "\n") + "\n"
                    #expect(run.stdout == shown, "\(page.lastPathComponent): flags \(lines[0])\n\(run)")
                    checked += 1
                }
            }
            #expect(checked >= 2)
        }
    }

    /// The results the README's and the embedding article's Swift examples print.
    @Test func printedResultsAreWhatTheLibraryGives() throws {
        let rules = try RuleSet(contentsOf: packageRoot.appendingPathComponent("examples/app.flags"))
        let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let context: EvaluationContext = ["build": "beta", "userId": "42", "appVersion": "2.4"]
        #expect(readme.contains(#"let context: EvaluationContext = ["build": "beta", "userId": "42", "appVersion": "2.4"]"#))
        #expect(readme.contains("print(rules.evaluate(\"darkMode\", in: context))  // \(rules.evaluate("darkMode", in: context))\n"))
        #expect(readme.contains("print(rules.problems(in: [\"userid\": \"42\"]))  // \(rules.problems(in: ["userid": "42"]))\n"))
        let article = try Self.article("EmbeddingInAppsAndServices")
        var strict = rules
        strict.checksContextsStrictly = true
        #expect(
            article.contains(
                "print(strict.evaluate(\"darkMode\", in: [\"build\": \"beta\", \"userId\": 42]))\n// \(strict.evaluate("darkMode", in: ["build": "beta", "userId": 42]))\n"
            ))
        let accounts = try RuleSet(contentsOf: packageRoot.appendingPathComponent("examples/accounts.flags"))
        #expect(
            article.contains(
                "print(rules.problems(in: [\"org.plan\": \"team\"]))\n// \(accounts.problems(in: ["org.plan": "team"]))\n"))
    }

    /// The start line the OFREP article shows for `flags serve examples/` counts what the
    /// server counts (its time and port differ from run to run).
    @Test func theServeArticlesStartLineCountsWhatServeCounts() async throws {
        try await offThePool {
            let page = try Self.article("ServingOverOFREP")
            let shown = try #require(page.split(separator: "\n").first { $0.contains("flags serve: listening on") })
            let counts = try #require(shown.range(of: " (")).upperBound
            let server = try ServeProcess(["examples/"])
            defer { _ = server.stop() }
            let line = try #require(server.startup.split(separator: "\n").first { $0.contains("listening on") })
            let actual = try #require(line.range(of: " (")).upperBound
            // The counts are the same; the capacity is the machine's (its descriptor limit).
            let capacity = #/\); up to (\d+) connections at once \(descriptor limit (\d+)\)$/#
            let (lineCounts, shownCounts) = (line[actual...].split(separator: ")").first, shown[counts...].split(separator: ")").first)
            #expect(lineCounts == shownCounts, "\(line) against \(shown)")
            #expect(line.contains(capacity) && shown.contains(capacity), "\(line) against \(shown)")
            #expect(shown.hasSuffix("flags serve: listening on http://127.0.0.1:8016 " + "(" + shown[counts...]))
        }
    }
}

/// The embedding article's *Objects*: its Swift block, run here line for line, prints what
/// its comments show.
@Suite struct EncodedContextArticleTests {
    struct Billing: Encodable { let country: String }
    struct Org: Encodable { let id: String; let plan: String; let seats: Int; let billing: Billing? }
    struct Account: Encodable { let userId: String; let email: String?; let org: Org }

    @Test func theObjectsBlockPrintsWhatItShows() throws {
        let page = try ArticleResultsTests.article("EmbeddingInAppsAndServices")
        let block = try ArticleResultsTests.block(page, after: "**Objects.**", fence: "```swift")
        for line in [
            "struct Billing: Encodable { let country: String }",
            "struct Org: Encodable { let id: String; let plan: String; let seats: Int; let billing: Billing? }",
            "struct Account: Encodable { let userId: String; let email: String?; let org: Org }",
            #"let rules = try RuleSet(contentsOf: URL(fileURLWithPath: "examples/accounts.flags"))"#,
            #"    userId: "u-42", email: nil,"#,
            #"    org: Org(id: "acme", plan: "team", seats: 12, billing: Billing(country: "FR")))"#,
            "let context = try EvaluationContext(encoding: account)",
        ] {
            #expect(block.contains(line), "\(line)")
        }
        let rules = try RuleSet(contentsOf: packageRoot.appendingPathComponent("examples/accounts.flags"))
        let account = Account(
            userId: "u-42", email: nil,
            org: Org(id: "acme", plan: "team", seats: 12, billing: Billing(country: "FR")))
        let context = try EvaluationContext(encoding: account)
        let shown = block.split(separator: "\n").filter { $0.hasPrefix("// ") }.map { String($0.dropFirst(3)) }
        #expect(shown == ["\(context)", "\(rules.evaluate("teamFeatures", in: context))"])
    }
}
