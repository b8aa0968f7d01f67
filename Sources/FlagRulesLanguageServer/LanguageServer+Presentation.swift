import FlagRules
import FlagRulesTooling
import Foundation

/// Formatting, quick fixes, semantic tokens, code lenses, inlay hints and running tests.
extension LanguageServer {
    /// The semantic token types, by index (the legend sent at initialization).
    static let tokenTypes = ["keyword", "variable", "property", "function", "enumMember", "string", "number", "comment", "type"]

    /// The name of the sidecar file whose context the declaration lenses evaluate.
    package static let contextFileName = ".flags-context.json"

    func formatting(_ document: Document) -> JSON {
        let analysis = document.analysis(today: today())
        guard let formatted = try? FlagsFormatter.format(analysis.source), formatted != document.text else { return .array([]) }
        let end = analysis.sourcePosition(at: analysis.source.bytes.count)
        let whole = SourceRange(start: SourcePosition(offset: 0, line: 1, column: 1), end: end)
        return .array([.object([("range", analysis.range(whole, encoding: encoding)), ("newText", .string(formatted))])])
    }

    func codeActions(_ document: Document, _ params: JSON) -> JSON {
        let analysis = document.analysis(today: today())
        let from = analysis.offset(
            line: params["range"]?["start"]?["line"]?.integer ?? 0, character: params["range"]?["start"]?["character"]?.integer ?? 0,
            encoding: encoding)
        let to = analysis.offset(
            line: params["range"]?["end"]?["line"]?.integer ?? 0, character: params["range"]?["end"]?["character"]?.integer ?? 0,
            encoding: encoding)
        var actions: [JSON] = []
        for d in analysis.diagnostics where d.range.start.offset <= to && from <= d.range.end.offset {
            for fix in d.fixIts {
                let edits: [JSON] = fix.edits.map {
                    .object([("range", analysis.range($0.range, encoding: encoding)), ("newText", .string($0.replacement))])
                }
                // A fix that would add a warning or fail a passing test is offered disabled, with why.
                let refusal = analysis.rules.flatMap { FixSafety.refusal(of: fix, for: d, in: $0, today: today()) }
                var action: [(String, JSON)] = [
                    ("title", .string(fix.message)), ("kind", .string("quickfix")),
                    ("diagnostics", .array([lspDiagnostic(d, analysis, uri: document.uri)])),
                    ("isPreferred", .bool(d.fixIts.count == 1 && refusal == nil)),
                    ("edit", .object([("changes", .object([(document.uri, .array(edits))]))])),
                ]
                if let refusal { action.append(("disabled", .object([("reason", .string(refusal.reason))]))) }
                actions.append(.object(action))
            }
        }
        return .array(actions)
    }

    func semanticTokens(_ document: Document) -> JSON {
        let analysis = document.analysis(today: today())
        var byOffset: [Int: SymbolReference.Target] = [:]
        for r in analysis.program.references { byOffset[r.range.start.offset] = r.target }
        var definitions = Set<Int>()
        for s in analysis.declarationSymbols { definitions.insert(s.nameRange.start.offset) }
        var fields = Set<Int>()
        var types = Set<Int>()
        for f in analysis.schemaFields {
            fields.insert(f.name.range.start.offset)
            for t in analysis.tokens
            where t.range.start.offset >= f.type.range.start.offset && t.range.end.offset <= f.type.range.end.offset {
                if case .identifier(let w) = t.kind, Checker.typeNames.contains(w) { types.insert(t.range.start.offset) }
            }
        }
        let keywords: Set<String> = [
            "flag", "variant", "value", "segment", "context", "test", "enabled", "disabled", "split", "fallback", "given", "expect",
        ]
        var found: [(range: SourceRange, type: Int, modifiers: Int)] = []
        for t in analysis.tokens {
            let type: Int?
            var modifiers = 0
            switch t.kind {
            case .identifier(let word):
                let at = t.range.start.offset
                if let target = byOffset[at] {
                    if case .attribute = target { type = 2 } else { type = 1 }
                } else if definitions.contains(at) {
                    type = 1
                    modifiers = 1
                } else if fields.contains(at) {
                    type = 2
                    modifiers = 1
                } else if types.contains(at) {
                    type = 8
                } else if keywords.contains(word) {
                    type = 0
                } else if Checker.functions.contains(word) || word == "now" {
                    type = 3
                } else {
                    type = 4
                }
            case .keyword: type = 0
            case .string, .version: type = 5
            case .int, .double, .percent: type = 6
            default: type = nil
            }
            if let type, t.range.start.line == t.range.end.line { found.append((t.range, type, modifiers)) }
        }
        for c in analysis.comments where c.range.start.line == c.range.end.line { found.append((c.range, 7, 0)) }
        found.sort { $0.range.start.offset < $1.range.start.offset }
        var data: [JSON] = []
        var lastLine = 0
        var lastCharacter = 0
        for f in found {
            guard let start = analysis.position(f.range.start, encoding: encoding)["character"]?.integer,
                let end = analysis.position(f.range.end, encoding: encoding)["character"]?.integer
            else { continue }
            let line = f.range.start.line - 1
            let deltaCharacter = line == lastLine ? start - lastCharacter : start
            data += [.int(line - lastLine), .int(deltaCharacter), .int(end - start), .int(f.type), .int(f.modifiers)]
            lastLine = line
            lastCharacter = start
        }
        return .object([("data", .array(data))])
    }

    /// Above each test, "run"; above each flag, variant and value, its resolution for the
    /// context in `.flags-context.json` beside the file, when there is one.
    func codeLenses(_ document: Document) -> JSON {
        let analysis = document.analysis(today: today())
        var lenses: [JSON] = []
        func lens(_ line: SourceRange, _ title: String, _ command: String, _ arguments: [JSON]) -> JSON {
            var c: [(String, JSON)] = [("title", .string(title)), ("command", .string(command))]
            if !arguments.isEmpty { c.append(("arguments", .array(arguments))) }
            return .object([("range", analysis.range(line, encoding: encoding)), ("command", .object(c))])
        }
        let context = sidecarContext(document.uri)
        for d in analysis.syntax.declarations {
            let h = d.header
            let at = SourceRange(start: h.keyword.range.start, end: h.keyword.range.start)
            switch d {
            case .test:
                let failed = document.testFailures[h.name.name].map { !$0.isEmpty }
                let title = failed == nil ? "▶ run test" : failed == true ? "✗ failed: run again" : "✓ passed: run again"
                lenses.append(lens(at, title, "flags.runTest", [.string(document.uri), .string(h.name.name)]))
            case .flag, .variant, .value:
                guard let rules = analysis.rules, let context else { continue }
                let r = rules.evaluate(h.name.name, in: context)
                lenses.append(lens(at, "= \(r.summary(name: h.name.name).dropFirst(h.name.name.count + 3))", "", []))
            case .context, .segment: continue
            }
        }
        return .array(lenses)
    }

    /// The context in `.flags-context.json` in the document's directory, if it reads.
    func sidecarContext(_ uri: String) -> EvaluationContext? {
        guard let path = Document.path(of: uri) else { return nil }
        let file = URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent(LanguageServer.contextFileName)
        guard let handle = FileHandle(forReadingAtPath: file.path) else { return nil }
        defer { try? handle.close() }
        let data = handle.readData(ofLength: EvaluationContext.maxJSONBytes + 1)
        guard data.count <= EvaluationContext.maxJSONBytes else { return nil }
        return try? EvaluationContext(json: String(decoding: data, as: UTF8.self))
    }

    /// After each `ramp(…)`, its value now.
    func inlayHints(_ document: Document) -> JSON {
        let analysis = document.analysis(today: today())
        let now = today()
        var hints: [JSON] = []
        var conditions: [Bound] = []
        for d in analysis.program.declarations {
            if let c = d.condition { conditions.append(c) }
            for rule in d.rules { if let c = rule.condition { conditions.append(c) } }
        }
        for c in conditions {
            c.forEach { b in
                guard case .ramp(let from, let to, let start, let end) = b.kind else { return }
                let value = ListOperations.ramp(now: now, from: from, to: to, start: start, end: end)
                hints.append(
                    .object([
                        ("position", analysis.position(b.range.end, encoding: encoding)),
                        ("label", .string(" = \(Value.format((value * 1000).rounded() / 1000))% now")), ("paddingLeft", .bool(true)),
                    ]))
            }
        }
        return .array(hints)
    }

    /// `flags.runTest [uri, title]`: runs one test; a failure becomes a diagnostic on each
    /// expectation that did not hold (published at the next flush), and the result is
    /// `{ "passed": bool, "failures": [ { "line", "expectation", "actual" } ] }`.
    func executeCommand(_ document: Document, _ params: JSON) -> Result<JSON, RequestError> {
        guard params["command"]?.string == "flags.runTest", let args = params["arguments"]?.elements, args.count == 2,
            let title = args[1].string
        else {
            return .failure(RequestError(code: -32602, message: "flags.runTest takes [uri, test title]"))
        }
        let analysis = document.analysis(today: today())
        guard let rules = analysis.rules else {
            return .failure(RequestError(code: -32603, message: "the document has errors: fix them to run its tests"))
        }
        guard let result = rules.runTests().first(where: { $0.test.name == title }) else {
            return .failure(RequestError(code: -32602, message: "no test \"\(title)\" in the document"))
        }
        var diagnostics: [JSON] = []
        var failures: [JSON] = []
        for f in result.failures {
            let e = f.expectation
            let actual = f.actual.summary(name: e.subject)
            diagnostics.append(
                .object([
                    ("range", analysis.range(e.range, encoding: encoding)), ("severity", .int(1)), ("code", .string("test-failed")),
                    ("source", .string("flags")), ("message", .string("test \"\(title)\" failed: \(e.text)\nactual: \(actual)")),
                ]))
            failures.append(.object([("line", .int(e.line)), ("expectation", .string(e.text)), ("actual", .string(actual))]))
        }
        document.testFailures[title] = diagnostics
        markDirtyForTests(document.uri)
        return .success(.object([("passed", .bool(result.passed)), ("failures", .array(failures))]))
    }
}
