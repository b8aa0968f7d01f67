import Foundation
import Testing

@testable import FlagRules
@testable import FlagRulesTooling

/// The code scanner behind `flags refs` and `flags stale`: each form of read on its own, and
/// generated Swift and Python trees whose every read is known, found exactly.
@Suite struct CodeReferencesTests {
    static func found(_ text: String, file: String = "a.swift", names: Set<String> = ["darkMode", "checkout"]) -> [String] {
        CodeScanner.scan(text, file: file, names: names).map {
            "\($0.line):\($0.column) \($0.name) \($0.kind.rawValue)\($0.isFlagRead ? " read" : "")"
        }
    }

    @Test func eachFormOfReadInSwift() {
        #expect(Self.found(#"if store.isEnabled("darkMode") {}"#) == ["1:20 darkMode string read"])
        #expect(Self.found("let v = store[ShopFlags.checkout, in: [:]]") == ["1:25 checkout generated key"])
        #expect(Self.found("@Flag(.darkMode) var dark") == ["1:8 darkMode generated key"])
        #expect(Self.found(#"print("size: \(store[Keys.checkout, in: [:]])")"#) == ["1:27 checkout generated key"])
        #expect(Self.found(#"print("a \("darkMode") b")"#) == ["1:12 darkMode string"])
        // A name that is not a read: a comment, a multi-line literal, an escaped literal,
        // an identifier without a dot.
        #expect(Self.found("// isEnabled(\"darkMode\")\n/* \"checkout\" */") == [])
        #expect(Self.found("let rules = \"\"\"\nflag darkMode { }\n\"\"\"") == [])
        #expect(Self.found(#"let s = "dark\u{4D}ode""#) == [])
        #expect(Self.found("let darkMode = true") == [])
        // An undeclared name read as a flag is reported (for "did you mean"); a literal
        // elsewhere is not.
        #expect(Self.found(#"store.isEnabled("darkMod"); print("hello")"#) == ["1:17 darkMod string read"])
    }

    @Test func otherLanguages() {
        let python =
            "# client.get_boolean_value(\"darkMode\")\nif client.get_boolean_value(\"darkMode\", False):\n    x = 'checkout' // 2\n"
        #expect(Self.found(python, file: "app.py") == ["2:29 darkMode string read", "3:9 checkout string"])
        let js = "const on = await client.getBooleanValue(`darkMode`, false); // \"checkout\"\n"
        #expect(Self.found(js, file: "app.js") == ["1:41 darkMode string read"])
        let go = "on, _ := client.BooleanValue(ctx, \"darkMode\", false, ctx2) // 'checkout'\n"
        #expect(Self.found(go, file: "main.go") == ["1:35 darkMode string"])
    }

    /// Generated trees: Swift and Python files whose reads are placed at random among
    /// decoys (comments, multi-line literals, undeclared names, other strings); the scanner
    /// finds exactly the reads placed, at their lines.
    @Test(arguments: 0..<20) func generatedTreesAreFoundExactly(seed: Int) {
        var g = SeededGenerator(seed: UInt64(seed) &+ 77)
        let names = (0..<12).map { "flag\($0)Name" }
        let declared = Set(names.prefix(8))
        for language in ["swift", "py"] {
            var lines: [String] = []
            var expected: [String] = []
            for _ in 0..<60 {
                let name = names[Int(g.next() % UInt64(names.count))]
                let line = lines.count + 1
                switch (g.next() % 7, language) {
                case (0, "swift"):
                    lines.append("    if store.isEnabled(\"\(name)\", in: context) { go() }")
                    expected.append("\(line) \(name) string\(declared.contains(name) ? "" : " read")")
                case (1, "swift") where declared.contains(name):
                    lines.append("    let v = store[AppFlags.\(name), in: context]")
                    expected.append("\(line) \(name) generated key")
                case (2, "swift") where declared.contains(name):
                    lines.append("    print(\"value: \\(store[.\(name), in: [:]])\")")
                    expected.append("\(line) \(name) generated key")
                case (0, "py"):
                    lines.append("value = client.get_string_value(\"\(name)\", \"x\", ctx)")
                    expected.append("\(line) \(name) string\(declared.contains(name) ? "" : " read")")
                case (1, "py") where declared.contains(name):
                    lines.append("names = ['\(name)', 'other']")
                    expected.append("\(line) \(name) string")
                case (3, _):
                    lines.append(language == "swift" ? "    // isEnabled(\"\(name)\")" : "# get_boolean_value(\"\(name)\")")
                case (4, _):
                    let quote = language == "swift" ? "\"\"\"" : "'''"
                    lines += ["let text = \(quote)", "flag \(name) { }", "\(quote)"]
                case (5, _):
                    lines.append(language == "swift" ? "    log(\"seen \(name)s\")" : "log('seen %s' % x)")
                default:
                    lines.append(language == "swift" ? "    let \(name)Count = 1" : "count = 1")
                }
            }
            let found = CodeScanner.scan(lines.joined(separator: "\n"), file: "gen.\(language)", names: declared)
                .map { "\($0.line) \($0.name) \($0.kind.rawValue)\($0.isFlagRead && !declared.contains($0.name) ? " read" : "")" }
            #expect(found == expected, "\(language), seed \(seed)")
        }
    }

    /// Found by the code fuzz target: a quote left open on one line (its newline was taken
    /// with it, and the lines after were counted one short).
    @Test func anUnclosedTripleQuoteEndsTheScan() {
        let text = "# c\nif clie1', False):\n    x = \"\0\05\"\"a\"\"\"\n"
        for file in ["a.py", "a.swift", "a.js"] {
            // The literal "a" is on line 3: an unclosed quote on line 2 ends with its line.
            #expect(CodeScanner.scan(text, file: file, names: ["a"]).map(\.line) == [3], "\(file)")
        }
        #expect(CodeScanner.scan("x = '''", file: "a.py", names: ["a"]).isEmpty)
        #expect(CodeScanner.scan("\"", file: "a.swift", names: ["a"]).isEmpty)
    }

    @Test func filesSkipHiddenAndBuildDirectories() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("refs-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        for path in [
            "Sources/App/a.swift", "Sources/App/b.py", "Sources/App/notes.txt", ".build/x.swift", "web/node_modules/m.js", "web/c.ts",
        ] {
            let url = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data().write(to: url)
        }
        let files = CodeScanner.files(under: [root.path]).map { String($0.dropFirst(root.path.count + 1)) }
        #expect(files == ["Sources/App/a.swift", "Sources/App/b.py", "web/c.ts"])
    }
}
