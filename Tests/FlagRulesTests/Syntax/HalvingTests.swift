import Foundation
import Testing

@testable import FlagRules

/// A file of `count` declarations of every kind, with doc comments, attributes, comments,
/// tests and blank lines; `lists` adds long string lists (hashed sets) read through the
/// same attribute in both halves; `errorsAt` puts a type error in those declarations.
func halvingFile(_ count: Int, lists: Bool = false, errorsAt: Set<Int> = [], lineEnding: String = "\n") -> String {
    var lines = [
        "context {", "  build: enum(debug, alpha, beta, release)", "  userId: string", "  country: string", "  appVersion: version",
        "  email: string", "}", "",
    ]
    for i in 0..<count {
        let bad = errorsAt.contains(i) ? " and country > 3" : ""
        switch i % 6 {
        case 0:
            lines += [
                "/// Flag \(i).", "/// Its second line.", "@owner(\"team\(i % 7)\")",
                "flag f\(i) { enabled when build in [debug, alpha] and rollout(userId) < \(i % 100)%\(bad) }",
            ]
        case 1:
            lines += [
                "variant v\(i) [a, b, c] = a {", "  b when country == \"US\"\(bad)", "  split(userId) { a: 50%, b: 25%, c: 25% }", "}", "",
            ]
        case 2:
            lines += ["value n\(i): int = \(i) { \(i + 1) when appVersion >= \"2.3.0\" and email ends with \"@example.com\"\(bad) }"]
        case 3:
            let list = lists ? (0..<12).map { "\"c\(($0 + i) % 20)\"" }.joined(separator: ", ") : "\"US\", \"CA\""
            lines += ["# a segment", "segment s\(i) = country in [\(list)] or build == release\(bad)", ""]
        case 4:
            lines += ["flag g\(i) = true /// trailing doc", "@disabled", "flag d\(i)"]
        default:
            lines += [
                "test \"t\(i)\" {", "  given { build: debug, userId: \"u\(i)\", country: \"US\" }",
                "  expect v\(i - 4) == b", "}",
            ]
        }
    }
    return lines.joined(separator: lineEnding) + lineEnding
}

/// A dump of a syntax tree, for comparing two parses.
func dumped(_ file: FileSyntax) -> String {
    var out = ""
    dump(file, to: &out)
    return out
}

/// Every line `Parser.splitLine` offers in `source`, from the first on.
func splitLines(_ source: SourceText) -> [Int] {
    var lines: [Int] = []
    var next = 0
    while let line = Parser.splitLine(source, from: next) {
        lines.append(line)
        next = line + 1
    }
    return lines
}

/// Each declaration's resolution in each context, by name on a dictionary and by handle on
/// a prepared context (where a long list's bit in its slot's tag answers).
func resolutions(_ rules: RuleSet, _ contexts: [EvaluationContext]) -> [String] {
    var out: [String] = []
    for context in contexts {
        let prepared = rules.prepare(context)
        for d in rules.declarations {
            out.append("\(d.name) \(rules.evaluate(d.name, in: context)) \(rules.evaluate(rules.handle(d.name), in: prepared))")
        }
    }
    return out
}

/// Loads `text` whole and in halves: the same diagnostics, or the same resolutions in
/// `count` sampled contexts and the same lints (run in two groups at once, or in order).
func expectHalvesAgree(_ text: String, contexts count: Int = 40, sourceLocation: SourceLocation = #_sourceLocation) {
    let source = SourceText(text, name: "halves.flags")
    let today = Date(timeIntervalSince1970: 1_800_000_000)
    let whole = Result { () throws(RuleSetError) in try RuleSet(source: source, today: today, halving: .never) }
    let halves = Result { () throws(RuleSetError) in try RuleSet(source: source, today: today, halving: .always) }
    switch (whole, halves) {
    case (.success(let a), .success(let b)):
        #expect(a.warnings == b.warnings, sourceLocation: sourceLocation)
        let options = LintOptions(expiringWithinDays: 30, requiresOwners: true)
        let lints = a.lint(today: today, options, halving: .never)
        #expect(lints == b.lint(today: today, options, halving: .always), sourceLocation: sourceLocation)
        #expect(lints == a.lint(today: today, options, halving: .alwaysInOrder), sourceLocation: sourceLocation)
        let contexts = ContextSampler([a]).contexts(count: count, seed: 7)
        #expect(resolutions(a, contexts) == resolutions(b, contexts), sourceLocation: sourceLocation)
    case (.failure(let a), .failure(let b)):
        #expect(a.diagnostics == b.diagnostics, sourceLocation: sourceLocation)
        #expect(!a.errors.isEmpty, sourceLocation: sourceLocation)
    default:
        Issue.record("whole: \(whole), halves: \(halves)", sourceLocation: sourceLocation)
    }
}

@Suite struct HalvingTests {
    /// Parsing in halves at any line `splitLine` offers gives the whole file's tree, or
    /// nil (a half has a diagnostic); for files without errors, it gives the tree.
    @Test(arguments: [false, true])
    func parsingInHalvesAtAnyOfferedLineGivesTheWholeTree(crlf: Bool) {
        let source = SourceText(halvingFile(36, lineEnding: crlf ? "\r\n" : "\n"), name: "t")
        let whole = Parser.parse(source, halving: .never)
        #expect(whole.1.isEmpty)
        let lines = splitLines(source)
        #expect(lines.count >= 30)
        for line in lines {
            guard let halves = Parser.parseInHalves(source, at: line) else {
                Issue.record("the halves at line \(line + 1) have a diagnostic")
                continue
            }
            #expect(dumped(halves.0) == dumped(whole.0), "split at line \(line + 1)")
        }
    }

    /// A line below one with a `///` is never offered: its half would lose the doc comment
    /// the whole file attaches to the declaration, with no diagnostic to tell.
    @Test func noSplitBelowADocComment() throws {
        let text = "flag a = true /// trails\nflag b = true\n/// Doc of c.\nflag c = true\n"
        let source = SourceText(text, name: "t")
        #expect(splitLines(source) == [2])
        let whole = Parser.parse(source, halving: .never).0
        let below = try #require(Parser.parseInHalves(source, at: 1))
        #expect(dumped(below.0) != dumped(whole))
        let offered = try #require(Parser.parseInHalves(source, at: 2))
        #expect(dumped(offered.0) == dumped(whole))
    }

    /// A split inside a declaration, or in a file with a syntax error, gives nil: the file
    /// is then parsed whole, and its diagnostics are the whole file's.
    @Test func halvesWithADiagnosticAreParsedWhole() {
        let inside = SourceText("variant v [a, b] = a {\nflag x\n}\n", name: "t")
        #expect(Parser.parseInHalves(inside, at: 1) == nil)
        let broken = SourceText("flag a { enabled when }\n" + halvingFile(12), name: "t")
        for line in splitLines(broken) { #expect(Parser.parseInHalves(broken, at: line) == nil) }
        let whole = Parser.parse(broken, halving: .never), halves = Parser.parse(broken, halving: .always)
        #expect(halves.1 == whole.1)
        #expect(!whole.1.isEmpty)
    }

    /// Loading in halves (parse, check and compile) and whole agree on the examples, on
    /// generated files with long lists read in both halves (the second half compiled
    /// again), and on files with errors in one half, in both, and past the error limit.
    @Test func loadingInHalvesAgreesWithLoadingWhole() throws {
        for name in ["app", "checkout", "experiments", "service", "targeting"] {
            expectHalvesAgree(try String(contentsOf: packageRoot.appendingPathComponent("examples/\(name).flags"), encoding: .utf8))
        }
        expectHalvesAgree(halvingFile(60))
        expectHalvesAgree(halvingFile(60, lists: true))
        expectHalvesAgree(halvingFile(60, errorsAt: [50]))
        expectHalvesAgree(halvingFile(60, errorsAt: [3, 50]))
        expectHalvesAgree(halvingFile(300, errorsAt: Set(0..<300)))
        expectHalvesAgree("")
        expectHalvesAgree("flag a = true\n")
    }

    /// An editor's check (every name's reference recorded) in halves records the same
    /// references and reports the same diagnostics as in order, with and without errors.
    @Test func referencesInHalvesAreTheWholeFilesReferences() throws {
        let texts = [
            halvingFile(60), halvingFile(60, lists: true), halvingFile(60, errorsAt: [40]),
            try String(contentsOf: packageRoot.appendingPathComponent("examples/app.flags"), encoding: .utf8),
        ]
        for text in texts {
            let source = SourceText(text, name: "t")
            let file = Parser.parse(source, halving: .never).0
            let today = Date(timeIntervalSince1970: 1_800_000_000)
            let whole = Checker.checkForTools(file, source: source, today: today, halving: .never)
            let halves = Checker.checkForTools(file, source: source, today: today, halving: .always)
            #expect(!whole.0.references.isEmpty)
            #expect(halves.0.references == whole.0.references)
            #expect(halves.1 == whole.1)
        }
    }

    /// Long lists read through one attribute in both halves: each half numbers its sets
    /// from 0 in the slot's tag, so the second half is compiled again after the first, and
    /// a prepared context then answers as the whole file's does.
    @Test func listsReadInBothHalvesKeepTheirBits() throws {
        let text = halvingFile(48, lists: true)
        let source = SourceText(text, name: "t")
        let today = Date(timeIntervalSince1970: 1_800_000_000)
        let halves = try RuleSet(source: source, today: today, halving: .always)
        let whole = try RuleSet(source: source, today: today, halving: .never)
        for country in (0..<20).map({ "c\($0)" }) + ["US", "nowhere"] {
            let context: EvaluationContext = ["country": .string(country), "build": "beta"]
            let (a, b) = (whole.prepare(context), halves.prepare(context))
            for d in whole.declarations where d.name.hasPrefix("s") {
                #expect(
                    whole.evaluate(whole.handle(d.name), in: a) == halves.evaluate(halves.handle(d.name), in: b), "\(d.name) \(country)")
                #expect(halves.evaluate(d.name, in: context) == halves.evaluate(halves.handle(d.name), in: b))
            }
        }
    }
}
