import FlagRules
import FlagRulesTooling
import Foundation

/// Hover, definition, references, rename and the outline.
extension LanguageServer {
    func hover(_ document: Document, _ params: JSON) -> JSON {
        let analysis = document.analysis(today: today())
        let at = offset(params, in: analysis)
        if let (range, target) = analysis.target(at: at), let text = describe(target, analysis) {
            return .object([
                ("contents", .object([("kind", .string("markdown")), ("value", .string(text))])),
                ("range", analysis.range(range, encoding: encoding)),
            ])
        }
        if let i = analysis.tokenIndex(at: at), case .identifier(let word) = analysis.tokens[i].kind,  // (a keyword's help)
            let text = LanguageServer.keywordHelp[word]
        {
            return .object([
                ("contents", .object([("kind", .string("markdown")), ("value", .string(text))])),
                ("range", analysis.range(analysis.tokens[i].range, encoding: encoding)),
            ])
        }
        return .null
    }

    static let keywordHelp: [String: String] = [
        "rollout":
            "`rollout(unit[, \"salt\"])`: the unit's bucket, 0% to 100%: MurmurHash3 (x86, 32-bit, seed 0) of \"salt:unit\" "
            + "modulo 100,000, as Unleash computes it; the salt is the declaration's name unless given. Compare it with a "
            + "percentage: `rollout(userId) < 20%`. A third argument buckets as another system does: "
            + "`rollout(userId, \"seed\", growthbook)`, `growthbookV1`, `launchdarkly` (salt \"flagKey.salt\"), `flagd` (splits only, salt the flag key), "
            + "`flagdCat` (splits only, flagd's fractional over a cat: salt the text before the unit).",
        "split":
            "`split(unit[, \"salt\"]) { a: 50%, b: 50% }`: the unit's bucket (MurmurHash3 of \"salt:unit\", as Unleash's "
            + "variants) picks an entry by its weight; the same unit always gets the same entry.",
        "ramp":
            "`ramp(FROM, TO, START, END)`: a number that moves linearly from START at the instant FROM to END at the "
            + "instant TO, and stays at START before FROM and at END after TO: "
            + "`rollout(userId) < ramp(\"2026-12-01\", \"2026-12-15\", 5%, 50%)`.",
        "has": "`has(attribute)`: whether the context has the attribute (of any value).",
        "lower": "`lower(text)`: the text in lower case, or a list of texts each in lower case, for comparing without regard to case.",
        "datetime": "`datetime(x)`: a string read as an ISO 8601 datetime, a number as milliseconds since 1970.",
        "version": "`version(text)`: the text read as a version, a leading `v` allowed (`\"v2.3\"` is 2.3.0).",
        "count": "`count(list)`: how many elements a list attribute has.",
        "any":
            "`any(list) OP x`: the comparison tried on each element, true when one passes: `any(tags) starts with \"qa-\"`; "
            + "an element of another type is unknown there.",
        "all":
            "`all(list) OP x`: the comparison tried on each element, true when every one passes (an empty list too): "
            + "`all(scores) >= 50`.",
        "fallback":
            "`fallback`: a rule (or a split's entry) giving the caller's default (OpenFeature's default value), "
            + "with reason DEFAULT and no variant; the declaration's default where the caller gives none.",
        "now": "`now`: the evaluation's instant (a context's `now`, or the clock).",
    ]

    /// Markdown for a declaration or an attribute.
    func describe(_ target: SymbolReference.Target, _ analysis: DocumentAnalysis) -> String? {
        switch target {
        case .attribute(let name):
            if let a = analysis.program.schema?[name] {
                guard let parent = a.parent, let object = analysis.program.schema?.attributes[parent] else {
                    return "```flags\n\(name): \(a.type)\n```\ncontext attribute"
                }
                return "```flags\n\(name): \(a.type)\n```\nfield of '\(object.name)', read as \(name)"
            }
            return "```flags\n\(name)\n```\ncontext attribute (no schema: its type is the value's)"
        case .declaration(let i):
            guard i < analysis.program.declarations.count else {
                guard i < analysis.program.symbols.declarationNames.count else { return nil }
                return "```flags\n\(analysis.program.symbols.declarationNames[i])\n```"
            }
            let d = analysis.program.declarations[i]
            var head: String
            switch d.kind {
            case .flag: head = "flag \(d.name) = \(d.defaultValue)"
            case .variant: head = "variant \(d.name) [\(d.variants.joined(separator: ", "))] = \(d.defaultValue.stringValue ?? "")"
            case .value: head = "value \(d.name): \(d.type) = \(d.defaultValue)"
            case .segment:
                let condition = d.condition.map { " = " + analysis.source.text(of: $0.range) } ?? ""
                head = "segment \(d.name)\(condition)"
            }
            var lines = ["```flags\n\(head)\n```"]
            var facts: [String] = []
            if d.kind != .segment { facts.append("\(d.rules.count) rule\(d.rules.count == 1 ? "" : "s")") }
            if d.disabled { facts.append("**@disabled**") }
            if let owner = d.owner { facts.append("owner: \(owner)") }
            if let expires = d.expires { facts.append("expires: \(DateTime.format(expires).prefix(10))") }
            if !facts.isEmpty { lines.append(facts.joined(separator: " · ")) }
            if let doc = d.doc, !doc.isEmpty { lines.append(doc) }
            return lines.joined(separator: "\n\n")
        }
    }

    func definition(_ document: Document, _ params: JSON) -> JSON {
        let analysis = document.analysis(today: today())
        guard let (_, target) = analysis.target(at: offset(params, in: analysis)), let r = analysis.definition(of: target) else {
            return .null
        }
        return location(document.uri, r, analysis)
    }

    func references(_ document: Document, _ params: JSON) -> JSON {
        let analysis = document.analysis(today: today())
        guard let (_, target) = analysis.target(at: offset(params, in: analysis)) else { return .array([]) }
        let include = params["context"]?["includeDeclaration"] == .bool(true)
        return .array(analysis.occurrences(of: target, includingDefinition: include).map { location(document.uri, $0, analysis) })
    }

    func prepareRename(_ document: Document, _ params: JSON) -> JSON {
        let analysis = document.analysis(today: today())
        guard let (range, target) = analysis.target(at: offset(params, in: analysis)), analysis.definition(of: target) != nil else {
            return .null
        }
        return analysis.range(range, encoding: encoding)
    }

    func rename(_ document: Document, _ params: JSON) -> Result<JSON, RequestError> {
        let analysis = document.analysis(today: today())
        guard let new = params["newName"]?.string else {
            return .failure(RequestError(code: -32602, message: "rename needs a newName"))
        }
        guard let (_, target) = analysis.target(at: offset(params, in: analysis)), analysis.definition(of: target) != nil else {
            return .failure(RequestError(code: -32803, message: "there is no declaration or attribute here to rename"))
        }
        // Any text is a name (written in backticks when it is no plain name), but one read
        // as an attribute or a declaration holds no dot, and none holds a control character.
        guard !new.isEmpty, !new.contains("."), !new.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            return .failure(
                RequestError(code: -32602, message: "'\(new)' is not a name: some text without a dot, a line break or a control character"))
        }
        let taken = Set(analysis.program.symbols.declarationNames + analysis.schemaFields.map(\.name.name))
        if taken.contains(new) {
            return .failure(RequestError(code: -32602, message: "'\(new)' is already declared in this file"))
        }
        let edits: [JSON] = analysis.occurrences(of: target, includingDefinition: true).map {
            .object([("range", analysis.range($0, encoding: encoding)), ("newText", .string(Identifier.written(new)))])
        }
        return .success(.object([("changes", .object([(document.uri, .array(edits))]))]))
    }

    /// The outline: the schema with its attributes, each declaration (a variant with its
    /// variants), and the tests.
    func documentSymbols(_ document: Document) -> JSON {
        let analysis = document.analysis(today: today())
        func symbol(_ name: String, _ detail: String?, _ kind: Int, _ range: SourceRange, _ selection: SourceRange, _ children: [JSON] = [])
            -> JSON
        {
            var m: [(String, JSON)] = [("name", .string(name.isEmpty ? "?" : name))]
            if let detail { m.append(("detail", .string(detail))) }
            m += [
                ("kind", .int(kind)), ("range", analysis.range(range, encoding: encoding)),
                ("selectionRange", analysis.range(selection, encoding: encoding)),
            ]
            if !children.isEmpty { m.append(("children", .array(children))) }
            return .object(m)
        }
        var out: [JSON] = []
        for d in analysis.syntax.declarations {
            let h = d.header
            switch d {
            case .context(let c):
                let fields = c.fields.map { f in
                    symbol(f.name.name, analysis.source.text(of: f.type.range), 8, f.range, f.name.range)
                }
                out.append(symbol("context", nil, 23, h.range, h.keyword.range, fields))
            case .flag: out.append(symbol(h.name.name, "flag", 17, h.range, h.name.range))
            case .segment: out.append(symbol(h.name.name, "segment", 12, h.range, h.name.range))
            case .value(let v): out.append(symbol(h.name.name, analysis.source.text(of: v.type.range), 14, h.range, h.name.range))
            case .variant(let v):
                let members = v.variants.map { symbol($0.name, nil, 22, $0.range, $0.range) }
                out.append(symbol(h.name.name, "variant", 10, h.range, h.name.range, members))
            case .test: out.append(symbol(h.name.name, "test", 6, h.range, h.name.range))
            }
        }
        return .array(out)
    }
}
