import Foundation
import Testing

@testable import FlagRules
@testable import FlagRulesTooling

/// Every input the formatter is pinned on: the examples, the golden inputs that parse, the
/// spec's example, and the grammar's code blocks.
func formatterInputs() throws -> [(String, String)] {
    var inputs: [(String, String)] = []
    for file in try exampleFiles() {
        inputs.append((file.lastPathComponent, try String(contentsOf: file, encoding: .utf8)))
    }
    let golden = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Diagnostics/Golden")
    for name in try FileManager.default.contentsOfDirectory(atPath: golden.path).sorted() where name.hasSuffix(".flags") {
        let bytes = try Data(contentsOf: golden.appendingPathComponent(name))
        let source = SourceText(bytes: Array(bytes), name: name)
        if !Parser.parse(source).1.contains(where: { $0.severity == .error }) {
            inputs.append((name, String(decoding: bytes, as: UTF8.self)))
        }
    }
    inputs.append(("spec", specExample))
    for (k, block) in try GrammarTests().codeBlocks.enumerated() { inputs.append(("grammar block \(k)", block)) }
    return inputs
}

@Suite struct FormatterTests {
    @Test func isIdempotentOnEveryInput() throws {
        let inputs = try formatterInputs()
        #expect(inputs.count > 40)
        for (name, text) in inputs {
            let once = try FlagsFormatter.format(text, name: name)
            let twice = try FlagsFormatter.format(once, name: name)
            #expect(once == twice, "not idempotent: \(name)")
        }
    }

    /// A comment after a first rule written on the `{` line stays on that rule's line.
    @Test func trailingCommentsStayOnTheirLine() throws {
        let text = """
            context { country: string }
            value n: int = 3 { 5 when country == "US"  # why US
              6 when country == "FR" # and FR
            }

            """
        #expect(
            try FlagsFormatter.format(text) == """
                context {
                  country : string
                }
                value n: int = 3 {
                  5 when country == "US"  # why US
                  6 when country == "FR"  # and FR
                }

                """)
    }

    /// A comment after a second declaration on one line stays that declaration's (found by
    /// the pipeline fuzz target: it moved to the first and, as a `///` comment, became the
    /// second's doc comment when formatted again).
    @Test func aCommentAfterTheSecondDeclarationOfALineStaysWithIt() throws {
        let text = "flag a { enabled when b };flag c ///x { y\n"
        let once = try FlagsFormatter.format(text)
        #expect(once == "flag a { enabled when b }\nflag c  ///x { y\n")
        #expect(try FlagsFormatter.format(once) == once)
        #expect(try RuleSet(source: once).declarations.map(\.doc) == [nil, nil])
    }

    /// `given` lines wrap at the width as rules do: into several blocks, as many entries to
    /// a line as fit, meaning the same context.
    @Test func longGivenLinesWrap() throws {
        let long = "someone.with.a.rather.long.name@example.com"
        let text = """
            context { country: string; userId: string; email: string; age: int }
            flag f { enabled when age > 3 }
            test "t" {
              given { country: "US", userId: "user-000000000000001", email: "\(long)", age: 4 }
              expect f
            }

            """
        let formatted = try FlagsFormatter.format(text)
        #expect(
            formatted.contains(
                """
                  given { country: "US", userId: "user-000000000000001" }
                  given { email: "\(long)", age: 4 }
                """))
        let widths = formatted.split(separator: "\n").map(\.count)
        #expect(widths.allSatisfy { $0 <= FlagsFormatter.lineWidth })
        #expect(try FlagsFormatter.format(formatted) == formatted)
        let rules = try RuleSet(source: formatted)
        #expect(rules.tests.first?.context == ["country": "US", "userId": "user-000000000000001", "email": .string(long), "age": 4])
        let results = rules.runTests()
        #expect(results.count == 1 && results[0].passed)
    }

    @Test func examplesAreFormatted() throws {
        for file in try exampleFiles() {
            let text = try String(contentsOf: file, encoding: .utf8)
            #expect(try FlagsFormatter.format(text) == text, "\(file.lastPathComponent) is not formatted")
        }
    }

    /// Splits, lists and schemas written one entry a line keep their lines and each
    /// comment stays on the line it was written on.
    @Test func keepsCommentedMultiLineSplitsListsAndSchemas() throws {
        let formatted = """
            context {
              userId  : string  # ids
              country : string
              groups  : [string]  # from the directory
            }

            variant checkout [control, oneStep, twoStep] = control {
              split(userId) {
                control: 50%,  # the old page
                oneStep: 25%,  # one step
                # the newest
                twoStep: 25%  # two steps
              }
            }

            flag five {
              enabled when country == "A"
              disabled when country == "B"  # five
            }

            flag listy {
              enabled when country in [
                "US",  # home
                "CA"
              ] and groups contains any [
                "qa",
                "staff"
              ]
            }

            """
        #expect(try FlagsFormatter.format(formatted) == formatted)
        // Written loosely, the same file comes out as above.
        let loose = """
            context { userId: string  # ids
              country: string
              groups: [string]   # from the directory
            }

            variant checkout [control, oneStep, twoStep] = control {
              split(userId) {
                control: 50%,  # the old page
                oneStep: 25%,  # one step
                # the newest
                twoStep: 25%   # two steps
              }
            }

            flag five { enabled when country == "A"; disabled when country == "B"  # five
            }

            flag listy {
              enabled when country in [
                "US",  # home
                "CA",
              ] and groups contains any ["qa",
                "staff"]
            }
            """
        #expect(try FlagsFormatter.format(loose) == formatted)
        // A split or list written on one line stays on one.
        let flat = "variant v [a, b] { split(u) { a: 50%, b: 50% } when x in [1, 2] }\n"
        #expect(try FlagsFormatter.format(flat) == flat)
    }

    /// A doc comment whose text starts with a combining mark keeps one space after `///`.
    @Test func docCommentsStartingWithACombiningMarkAreStable() throws {
        let text = "///\u{06EB} text\nflag f\n"
        let once = try FlagsFormatter.format(text)
        #expect(once == "/// \u{06EB} text\nflag f\n")
        #expect(try FlagsFormatter.format(once) == once)
        #expect(try RuleSet(source: once).declarations[0].doc == "\u{06EB} text")
    }

    @Test func keepsEveryComment() throws {
        for (name, text) in try formatterInputs() {
            let before = Lexer(SourceText(text, name: name)).comments.map { $0.text.trimmingCharacters(in: .whitespaces) }
            let after = Lexer(SourceText(try FlagsFormatter.format(text), name: name)).comments.map {
                $0.text.trimmingCharacters(in: .whitespaces)
            }
            #expect(before == after, "comments changed in \(name)")
        }
    }

    /// The formatted file loads to the same declarations, tests and resolutions, over the
    /// tests' contexts and 200 random contexts built from the file's own names and literals.
    @Test func neverChangesMeaning() async throws {
        try await offThePool(computing: true) {
            for (name, text) in try formatterInputs() {
                guard let original = try? RuleSet(source: text, name: name) else { continue }
                let formatted = try RuleSet(source: try FlagsFormatter.format(text), name: name)
                #expect(formatted.declarations.map(\.name) == original.declarations.map(\.name))
                #expect(formatted.declarations.map(\.defaultValue) == original.declarations.map(\.defaultValue))
                #expect(formatted.declarations.map(\.doc) == original.declarations.map(\.doc))
                #expect(formatted.declarations.map(\.owner) == original.declarations.map(\.owner))
                #expect(formatted.tests.map(\.name) == original.tests.map(\.name))
                #expect(formatted.runTests().map(\.passed) == original.runTests().map(\.passed))
                var contexts = original.tests.map(\.context)
                contexts += randomContexts(for: text, count: 200)
                for context in contexts {
                    // Meaning is value, variant, reason and rule; lines move when a file is formatted.
                    #expect(
                        formatted.evaluateAll(in: context).mapValues(\.withoutLine)
                            == original.evaluateAll(in: context).mapValues(\.withoutLine),
                        "\(name) in \(context)")
                }
            }
        }
    }

    func randomContexts(for text: String, count: Int) -> [EvaluationContext] {
        let tokens = Lexer(SourceText(text, name: "x")).tokens
        var names = Set<String>()
        var values: [Value] = [.bool(true), .bool(false), "user-1", "user-3", 42, "2026-12-01T10:00:00Z"]
        for t in tokens {
            switch t.kind {
            case .identifier(let n): names.insert(n); values.append(.string(n))
            case .string(let s, _): values.append(.string(s))
            case .int(let i): values.append(.int(i)); values.append(.int(i + 1))
            case .double(let d): values.append(.double(d))
            case .version(let v): values.append(.string(v))
            default: break
            }
        }
        var generator = SeededGenerator(seed: UInt64(text.utf8.count))
        let nameList = names.sorted()
        return (0..<count).map { _ in
            var c = EvaluationContext()
            for n in nameList where Bool.random(using: &generator) {
                c[n] = values.randomElement(using: &generator)
            }
            return c
        }
    }

    @Test func normalises() throws {
        #expect(try FlagsFormatter.format("flag  a=true{enabled when x&&!y||z}") == "flag a = true { enabled when x and not y or z }\n")
        #expect(
            try FlagsFormatter.format("value v: double = 2.50 { 0.000010 when p >= 007.0 }")
                == "value v: double = 2.5 { 0.00001 when p >= 7.0 }\n")
        #expect(try FlagsFormatter.format("flag f { enabled when rollout(u) < 20.500% }") == "flag f { enabled when rollout(u) < 20.5% }\n")
        #expect(try FlagsFormatter.format("flag f {}") == "flag f\n")
        #expect(try FlagsFormatter.format(#"value s: string = "a\u{41}\t" "#) == "value s: string = \"aA\\t\"\n")
        #expect(Printer.decimal(1e-7) == "0.0000001")
        #expect(Printer.decimal(1.5e20) == "150000000000000000000.0")
        #expect(Printer.decimal(-0.25) == "-0.25")
    }

    @Test func refusesFilesThatDoNotParse() {
        #expect(throws: RuleSetError.self) { try FlagsFormatter.format("flag {") }
    }
}

extension Resolution {
    var withoutLine: Resolution {
        var copy = self
        copy.line = nil
        return copy
    }
}
