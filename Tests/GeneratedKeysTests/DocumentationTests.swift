import Foundation
import Testing

let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The documentation's Swift compiles: every example of the README and the DocC catalogs
/// (but package manifests' fragments) appears, line for line, in `DocumentedExamples.swift`,
/// which is compiled with these tests, against the keys the build plugin generates from
/// app.flags here.
@Suite struct DocumentationTests {
    static func normalized(_ text: String) -> [String] {
        text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
            !$0.isEmpty && !$0.hasPrefix("import FlagRules")
        }
    }

    static var documents: [URL] {
        let catalogs = ["FlagRules", "FlagRulesTooling", "FlagRulesServer", "FlagRulesLanguageServer"].map {
            packageRoot.appendingPathComponent("Sources/\($0)/\($0).docc")
        }
        let articles = catalogs.flatMap { (try? FileManager.default.contentsOfDirectory(at: $0, includingPropertiesForKeys: nil)) ?? [] }
        return [packageRoot.appendingPathComponent("README.md")] + articles.filter { $0.pathExtension == "md" }.sorted { $0.path < $1.path }
    }

    static func swiftExamples(in text: String) -> [String] {
        var examples: [String] = []
        var rest = text[...]
        while let open = rest.range(of: "```swift\n"), let close = rest.range(of: "```", range: open.upperBound..<rest.endIndex) {
            examples.append(String(rest[open.upperBound..<close.lowerBound]))
            rest = rest[close.upperBound...]
        }
        // Package manifests' fragments are not library code.
        return examples.filter { example in !["dependencies:", ".target(", ".testTarget(", ".package("].contains { example.hasPrefix($0) } }
    }

    @Test func everySwiftExampleIsCompiled() throws {
        let compiled = Self.normalized(
            try String(
                contentsOf: packageRoot.appendingPathComponent("Tests/GeneratedKeysTests/DocumentedExamples.swift"),
                encoding: .utf8))
        var count = 0
        for document in Self.documents {
            for example in Self.swiftExamples(in: try String(contentsOf: document, encoding: .utf8)) {
                count += 1
                let lines = Self.normalized(example)
                let found = (0...max(0, compiled.count - lines.count)).contains { Array(compiled[$0..<($0 + lines.count)]) == lines }
                #expect(found, "an example of \(document.lastPathComponent) is not in DocumentedExamples.swift:\n\(example)")
            }
        }
        #expect(count >= 15)
    }

    @Test func anExampleThatDriftsIsFound() {
        let examples = Self.swiftExamples(in: "text\n```swift\nlet a = 1\n```\n```swift\ndependencies: []\n```\n")
        #expect(examples == ["let a = 1\n"])
        #expect(Self.normalized("  let a = 1 \n\nimport FlagRules\n") == ["let a = 1"])
    }
}
