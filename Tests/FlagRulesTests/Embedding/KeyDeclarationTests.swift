import FlagRulesKeys
import Foundation
import Testing

@testable import FlagRules
@testable import FlagRulesTooling

/// The build plugin reads a file's keys from its syntax alone; `flags generate swift` from the
/// checked rules. The two must agree on every file that checks, and the syntax reader must
/// refuse, at its line, what would leave a key without a type or a default.
@Suite struct KeyDeclarationTests {
    @Test func theExamplesReadAlikeFromSyntaxAndFromTheCheckedRules() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        var files = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("examples").path)
            .filter { $0.hasSuffix(".flags") }.map { root.appendingPathComponent("examples/" + $0) }
        files.append(root.appendingPathComponent("Tests/GeneratedKeysTests/keys.flags"))
        #expect(files.count > 5)
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            let rules = try RuleSet(source: text)
            #expect(try KeyDeclaration.read(SourceText(text, name: file.path)) == keys(rules), "\(file.lastPathComponent)")
        }
    }

    /// Random files of flags, variants and values with every kind of default, name and doc
    /// comment, among segments, contexts and tests.
    @Test(arguments: 0..<4) func randomFilesReadAlikeFromSyntaxAndFromTheCheckedRules(seed: UInt64) throws {
        var g = SeededGenerator(seed: seed)
        for _ in 0..<100 {
            let text = KeyDeclarationTests.randomFile(&g)
            let rules = try RuleSet(source: text)
            let read = try KeyDeclaration.read(SourceText(text, name: "r.flags"))
            #expect(read == keys(rules), "\(text)")
            let generator = SwiftKeyGenerator(namespace: "R")
            #expect(
                (try? generator.generate(read, fileName: "r.flags")) == (try? generator.generate(keys(rules), fileName: "r.flags")))
        }
    }

    @Test(arguments: [
        ("flag a = \n", "k.flags:1:10: error: a flag's default must be 'true' or 'false', found end of line"),
        ("value v: [int] = 1\n", "k.flags:1:10: error: a value's type is int, double, string or bool"),
        ("value v: version = 1\n", "k.flags:1:10: error: a value's type is int, double, string or bool"),
        ("value v: int = \"a\"\n", "k.flags:1:16: error: expected a default of type int, found \"a\""),
        ("value v: int = 1.5\n", "k.flags:1:16: error: expected a default of type int, found 1.5"),
        ("variant v [a, b] = c\n", "k.flags:1:20: error: 'c' is no variant of 'v'"),
        ("variant v [] \n", "k.flags:1:9: error: variant 'v' lists no variants"),
    ])
    func whatLeavesAKeyWithoutATypeOrDefaultIsRefusedAtItsLine(_ source: String, _ first: String) {
        let error = #expect(throws: KeyDeclaration.ReadError.self) { try KeyDeclaration.read(SourceText(source, name: "k.flags")) }
        #expect(error?.description.split(separator: "\n").first.map(String.init)?.hasPrefix(first) == true, "\(error?.description ?? "")")
    }

    @Test func everyProblemOfAFileIsSaid() {
        let error = #expect(throws: KeyDeclaration.ReadError.self) {
            try KeyDeclaration.read(SourceText("variant v [a] = b\nflag ok\nvalue w: [int] = 1\n", name: "k.flags"))
        }
        #expect(error?.description.split(separator: "\n").count == 2)
    }

    /// A file of 1–8 declarations with keys, among a segment, a context or a test.
    static func randomFile(_ g: inout SeededGenerator) -> String {
        var text = ""
        var used: Set<String> = []
        func name(_ g: inout SeededGenerator) -> String {
            while true {
                let base = ["alpha", "beta", "checkout", "dark-mode", "new.ui", "self", "Type", "x2"].randomElement(using: &g)!
                let candidate = base + String(Int.random(in: 0..<1000, using: &g))
                if used.insert(SwiftKeyGenerator.swiftName(candidate)).inserted
                    && used.insert(SwiftKeyGenerator.typeName(candidate)).inserted
                {
                    return candidate
                }
            }
        }
        func written(_ name: String) -> String { Identifier.isPlain(name) ? name : "`" + name + "`" }
        for _ in 0..<Int.random(in: 1...8, using: &g) {
            if Bool.random(using: &g) {
                text += "/// A \"doc\" with \\ and `code`\n///\n/// line " + String(Int.random(in: 0..<9, using: &g)) + "\n"
            }
            switch Int.random(in: 0..<6, using: &g) {
            case 0, 1:
                if Int.random(in: 0..<4, using: &g) == 0 { text += "@disabled\n" }
                let declared = name(&g).replacingOccurrences(of: ".", with: "_")
                text += "flag \(written(declared))" + ["", " = true", " = false"].randomElement(using: &g)! + "\n"
            case 2:
                let declared = name(&g).replacingOccurrences(of: ".", with: "_")
                var cases: [String] = []
                for c in ["control", "treatment", "variant-a", "b.two", "three"] where Bool.random(using: &g) { cases.append(c) }
                if cases.isEmpty { cases = ["on"] }
                text += "variant \(written(declared)) [\(cases.map(written).joined(separator: ", "))]"
                if Bool.random(using: &g) { text += " = " + written(cases.randomElement(using: &g)!) }
                text += "\n"
            case 3:
                let declared = name(&g).replacingOccurrences(of: ".", with: "_")
                let (type, literal) = [
                    ("int", "-42"), ("int", "7"), ("double", "3"), ("double", "0.125"), ("double", "-2.5"),
                    ("string", "\"tab\\tquote\\\" \\u{1F600}\""), ("string", "#\"raw \\n\"#"), ("bool", "true"),
                ].randomElement(using: &g)!
                text += "value \(written(declared)): \(type) = \(literal)\n"
            case 4 where !text.contains("context {"):
                text += "context {\n  userId: string\n}\n"
            default:
                text += "segment \(written(name(&g).replacingOccurrences(of: ".", with: "_"))) = true\n"
            }
        }
        return text
    }
}
