import FlagRules
import FlagRulesTooling

/// Completion that knows where it is, from the tokens before the cursor.
extension LanguageServer {
    /// Where the cursor is, as far as completion cares.
    enum CompletionPlace: Equatable {
        static func == (a: CompletionPlace, b: CompletionPlace) -> Bool {
            switch (a, b) {
            case (.topLevel, .topLevel), (.givenKey, .givenKey), (.testLine, .testLine), (.expectSubject, .expectSubject),
                (.type, .type), (.none, .none):
                return true
            case (.expression(let x), .expression(let y)): return x == y
            case (.cases(let x), .cases(let y)): return x == y
            case (.ruleStart(let k, let v), .ruleStart(let l, let w)): return k == l && v == w
            case (.fields(let x), .fields(let y)): return x.map(\.name) == y.map(\.name) && x.map(\.type) == y.map(\.type)
            default: return false
            }
        }

        /// Between declarations: the declaration keywords.
        case topLevel
        /// An expression: attributes, declarations, functions; not the declaration it is
        /// written in (which cannot read itself).
        case expression(in: String?)
        /// The right side of `==`, `!=` or an `in [` list whose left side has these cases.
        case cases([String])
        /// The start of a rule in a body: its outcomes.
        case ruleStart(DeclarationKind, variants: [String])
        /// A key inside `given { … }`.
        case givenKey
        /// Inside a test, at the start of a line.
        case testLine
        /// After `expect`.
        case expectSubject
        /// A type in the schema.
        case type
        /// After `org.` (a path's dot): the fields of the object it names, with their types.
        case fields([(name: String, type: String)])
        /// Nowhere to complete.
        case none
    }

    func completion(_ document: Document, _ params: JSON) -> JSON {
        let analysis = document.analysis(today: today())
        let place = completionPlace(analysis, at: offset(params, in: analysis))
        var items: [(String, Int, String?)] = []
        let program = analysis.program
        let attributes: [(String, String)] =
            program.schema?.topLevel.map { ($0.name, $0.type.description) }
            ?? Array(
                Set(
                    program.references.compactMap {
                        if case .attribute(let n) = $0.target, !n.contains(".") { return n } else { return nil }
                    })
            )
            .sorted().map { ($0, "attribute") }
        let declarations = analysis.declarationSymbols
        switch place {
        case .topLevel:
            items = ["flag", "variant", "value", "segment", "context", "test"].map { ($0, 14, nil) }
        case .expression(let owner):
            items =
                attributes.map { ($0.0, 5, $0.1) }
                + declarations.filter { $0.name != owner }.map { ($0.name, $0.kind == .segment ? 12 : 21, $0.kind.rawValue) }
            items += Checker.functions.map { ($0, 3, "function") } + [("now", 21, "datetime"), ("not", 14, nil)]
        case .cases(let cases):
            items = cases.map { ($0, 20, nil) }
        case .ruleStart(let kind, let variants):
            switch kind {
            case .flag: items = [("enabled", 14, nil), ("disabled", 14, nil), ("fallback", 14, "the caller's default")]
            case .variant:
                items =
                    variants.map { ($0 == "fallback" ? "`fallback`" : $0, 20, "variant") } + [
                        ("split", 3, nil), ("fallback", 14, "the caller's default"),
                    ]
            default: items = [("split", 3, nil), ("fallback", 14, "the caller's default")]
            }
        case .givenKey:
            items = attributes.map { ($0.0, 5, $0.1) } + [("now", 21, "datetime")]
        case .testLine:
            items = [("given", 14, nil), ("expect", 14, nil)]
        case .expectSubject:
            items = declarations.filter { $0.kind != .segment }.map { ($0.name, 21, $0.kind.rawValue) } + [("not", 14, nil)]
        case .type:
            items = Checker.typeNames.map { ($0, 7, nil) }
        case .fields(let fields):
            items = fields.map { ($0.name, 5, $0.type) }
        case .none:
            items = []
        }
        var seen = Set<String>()
        let list: [JSON] = items.filter { seen.insert($0.0).inserted }.map { label, kind, detail in
            var m: [(String, JSON)] = [("label", .string(label)), ("kind", .int(kind))]
            if let detail { m.append(("detail", .string(detail))) }
            // A name of another spelling is inserted in backticks (a dotted case as a string).
            if kind != 14, !Identifier.isPlain(label), !label.isEmpty {
                m.append(("insertText", .string(label.contains(".") ? StringEscaping.quoted(label) : Identifier.written(label))))
            }
            return .object(m)
        }
        return .object([("isIncomplete", .bool(false)), ("items", .array(list))])
    }

    /// Works out the place from the tokens that end before the cursor (a name being typed
    /// at the cursor is the prefix, not context).
    func completionPlace(_ analysis: DocumentAnalysis, at offset: Int) -> CompletionPlace {
        let tokens = analysis.tokens
        // The first token not wholly before the cursor: one that ends past it, or an empty
        // one (a newline, the end of the file) at or after it, so that a line's own newline
        // is after a cursor at the line's end.
        var end =
            tokens.firstIndex {
                $0.range.end.offset > offset || ($0.range.start.offset >= offset && $0.range.start.offset == $0.range.end.offset)
                    || $0.kind == .endOfFile
            } ?? tokens.count
        if end > 0, tokens[end - 1].range.end.offset == offset, tokens[end - 1].kind.name != nil { end -= 1 }
        if end < tokens.count, tokens[end].range.start.offset < offset {
            // Inside a token (a string, a comment is not a token): nothing to complete.
            if case .string = tokens[end].kind { return .none }
        }
        // The blocks open at the cursor, each with what opened it.
        enum Block { case context, given, test, body(DeclarationKind, String), split, other }
        var blocks: [Block] = []
        var declarationKeyword: String?
        var declarationName: String?
        var atLineStart = true
        for i in 0..<end {
            let t = tokens[i]
            switch t.kind {
            case .newline:
                atLineStart = true
                continue
            case .identifier(let word) where blocks.isEmpty && atLineStart:
                if ["flag", "variant", "value", "segment", "context", "test"].contains(word) {
                    declarationKeyword = word
                    declarationName = nil
                } else if declarationKeyword != nil, declarationName == nil {
                    declarationName = word
                }
            case .identifier(let word) where blocks.isEmpty && declarationKeyword != nil && declarationName == nil:
                declarationName = word
            case .punctuation(.leftBrace):
                let before = i > 0 ? tokens[i - 1] : nil
                if case .identifier("given")? = before?.kind {
                    blocks.append(.given)
                } else if case .context? = blocks.last {
                    blocks.append(.context)  // an object type's fields
                } else if blocks.isEmpty {
                    switch declarationKeyword {
                    case "context": blocks.append(.context)
                    case "test": blocks.append(.test)
                    case "flag": blocks.append(.body(.flag, declarationName ?? ""))
                    case "variant": blocks.append(.body(.variant, declarationName ?? ""))
                    case "value": blocks.append(.body(.value, declarationName ?? ""))
                    default: blocks.append(.other)
                    }
                } else if case .body = blocks.last {
                    blocks.append(.split)
                } else {
                    blocks.append(.other)
                }
            case .punctuation(.rightBrace):
                if !blocks.isEmpty { blocks.removeLast() }
                if blocks.isEmpty { declarationKeyword = nil }
            default: break
            }
            atLineStart = false
        }
        let previous = end > 0 ? tokens[end - 1] : nil
        let lineStart: Bool = {
            guard let previous else { return true }
            switch previous.kind {
            case .newline, .punctuation(.leftBrace), .punctuation(.semicolon): return true
            default: return false
            }
        }()
        let program = analysis.program
        /// The cases of what the name before token `i` (an operator) reads.
        func casesLeft(of i: Int) -> [String]? {
            var j = i - 1
            while j >= 0, case .newline = tokens[j].kind { j -= 1 }
            guard j >= 0, case .identifier(var name) = tokens[j].kind else { return nil }
            // A path (`org.plan`): its names joined, the dots written with no space.
            while j >= 2, tokens[j - 1].kind == .punctuation(.dot), tokens[j - 1].range.end == tokens[j].range.start,
                case .identifier(let before) = tokens[j - 2].kind, tokens[j - 2].range.end == tokens[j - 1].range.start
            {
                name = before + "." + name
                j -= 2
            }
            if let k = program.symbols.declarationNames.firstIndex(of: name), k < program.symbols.types.count {
                return program.symbols.types[k].cases
            }
            return program.schema?[name]?.type.cases ?? program.schema?[name]?.type.element?.cases
        }
        // `org.` or `org.billing.`: the fields of the object the path before the dot names.
        if case .punctuation(.dot)? = previous?.kind, end >= 2, case .identifier = tokens[end - 2].kind,
            tokens[end - 2].range.end == tokens[end - 1].range.start
        {
            var parts: [String] = []
            var j = end - 2
            while j >= 0, case .identifier(let name) = tokens[j].kind {
                parts.insert(name, at: 0)
                guard j >= 2, tokens[j - 1].kind == .punctuation(.dot), tokens[j - 1].range.end == tokens[j].range.start,
                    tokens[j - 2].range.end == tokens[j - 1].range.start
                else { break }
                j -= 2
            }
            let path = parts.joined(separator: ".")
            if let schema = program.schema {
                return .fields(schema[path]?.type.fields?.map { ($0.name, $0.type.description) } ?? [])
            }
            // Without a schema: the fields other paths in the file read.
            var seen: [String] = []
            for case .attribute(let read) in program.references.map(\.target) where read.hasPrefix(path + ".") {
                let field = String(read.dropFirst(path.count + 1).prefix { $0 != "." })
                if !seen.contains(field) { seen.append(field) }
            }
            return .fields(seen.sorted().map { ($0, "field") })
        }
        switch blocks.last {
        case nil:
            if lineStart || declarationKeyword == nil { return .topLevel }
            if declarationKeyword == "segment", declarationName != nil { break }
            return .none
        case .context?:
            if case .punctuation(.colon)? = previous?.kind { return .type }
            return .none
        case .given?:
            if lineStart || previous?.kind == .punctuation(.comma) { return .givenKey }
            if case .punctuation(.colon)? = previous?.kind, let cases = casesLeft(of: end - 1) { return .cases(cases) }
            return .none
        case .test?:
            if lineStart { return .testLine }
            if case .identifier("expect")? = previous?.kind { return .expectSubject }
            if let p = previous?.kind, p == .punctuation(.equal) || p == .punctuation(.notEqual) {
                var j = end - 2
                while j >= 0, case .identifier = tokens[j].kind {
                    if case .identifier(let name) = tokens[j].kind, let k = program.symbols.declarationNames.firstIndex(of: name),
                        k < program.symbols.types.count
                    {
                        return .cases(program.symbols.types[k].cases ?? (program.symbols.types[k] == .bool ? ["true", "false"] : []))
                    }
                    j -= 1
                }
            }
            return .none
        case .body(let kind, let name)?:
            if lineStart {
                let variants = program.declarations.first { $0.name == name }?.variants ?? []
                return .ruleStart(kind, variants: variants)
            }
        case .split?:
            let owner = blocks.reversed().compactMap { if case .body(_, let n) = $0 { return n } else { return nil } }.first
            if lineStart || previous?.kind == .punctuation(.comma) {
                return .cases(program.declarations.first { $0.name == owner }?.variants ?? [])
            }
            return .none
        case .other?:
            break
        }
        // An expression: after a comparison or inside `in [ … ]`, the left side's cases.
        if let p = previous?.kind {
            if p == .punctuation(.equal) || p == .punctuation(.notEqual), let cases = casesLeft(of: end - 1) { return .cases(cases) }
            if p == .punctuation(.leftBracket) || p == .punctuation(.comma) {
                var j = end - 1
                var depth = 0
                while j >= 0 {
                    if tokens[j].kind == .punctuation(.rightBracket) { depth += 1 }
                    if tokens[j].kind == .punctuation(.leftBracket) {
                        if depth == 0 { break }
                        depth -= 1
                    }
                    j -= 1
                }
                if j > 0 {
                    var k = j - 1
                    while k >= 0, case .newline = tokens[k].kind { k -= 1 }
                    let isMembership: Bool = {
                        guard k >= 0 else { return false }
                        if case .keyword(.in) = tokens[k].kind { return true }
                        if case .identifier(let w) = tokens[k].kind, w == "any" || w == "all" { return true }
                        return false
                    }()
                    if isMembership {
                        var m = k
                        if case .keyword(.in) = tokens[k].kind, k > 0, case .keyword(.not) = tokens[k - 1].kind { m = k - 1 }
                        if case .identifier = tokens[k].kind { m = k - 1 }  // contains any / all
                        if let cases = casesLeft(of: m) { return .cases(cases) }
                    }
                }
            }
        }
        return .expression(in: declarationName)
    }
}
