import FlagRules
import FlagRulesTooling
import Foundation

/// How a client counts characters in a line: LSP's default is UTF-16 code units; a client
/// may offer UTF-32 (Unicode scalars, as the checker's columns count) instead.
package enum PositionEncoding: String, Sendable {
    case utf16 = "utf-16"
    case utf32 = "utf-32"
}

/// Everything the language server knows about one open document, worked out once per
/// version: tokens, syntax, the checked program (even with errors, for names and types),
/// the diagnostics to publish, and what each name refers to.
package final class DocumentAnalysis: Sendable {
    package let source: SourceText
    let tokens: [Token]
    let comments: [Comment]
    let syntax: FileSyntax
    let program: CheckedProgram
    /// Syntax errors; else the checker's errors and warnings, and the lints when it loads.
    package let diagnostics: [Diagnostic]
    /// Whether the document loads without errors.
    let loads: Bool
    /// The rule set, when the document loads (tests, values, lints).
    let rules: RuleSet?

    package init(text: String, name: String, today: Date = Date()) {
        let source = SourceText(text, name: name)
        self.source = source
        let lexer = Lexer(source)
        tokens = lexer.tokens
        comments = lexer.comments
        let (syntax, syntaxDiagnostics) = Parser.parse(source)
        self.syntax = syntax
        let (program, checkDiagnostics) = Checker.checkForTools(syntax, source: source, today: today)
        self.program = program
        let hasSyntaxErrors = syntaxDiagnostics.contains { $0.severity == .error }
        var diagnostics = hasSyntaxErrors ? syntaxDiagnostics : syntaxDiagnostics + checkDiagnostics
        let loads = !diagnostics.contains { $0.severity == .error }
        self.loads = loads
        rules = loads ? RuleSet(checked: program, source: source, warnings: diagnostics) : nil
        if let rules { diagnostics += rules.lint(today: today) }
        self.diagnostics = diagnostics.map { $0.withSuggestedFix(in: source) }
    }

    // MARK: Positions

    /// The byte offset of an LSP position (clamped to the line and the document).
    func offset(line: Int, character: Int, encoding: PositionEncoding) -> Int {
        source.offset(line: line, character: character, encoding: encoding)
    }

    /// The LSP position of a source position.
    func position(_ p: SourcePosition, encoding: PositionEncoding) -> JSON {
        let line = max(p.line - 1, 0)
        guard encoding == .utf16 else { return .object([("line", .int(line)), ("character", .int(max(p.column - 1, 0)))]) }
        let lineBytes = source.lineBytes(p.line)
        let prefixEnd = min(max(p.offset, lineBytes.startIndex), lineBytes.endIndex)
        let prefix = String(decoding: source.bytes[lineBytes.startIndex..<prefixEnd], as: UTF8.self)
        return .object([("line", .int(line)), ("character", .int(prefix.utf16.count))])
    }

    /// The LSP range of a source range.
    func range(_ r: SourceRange, encoding: PositionEncoding) -> JSON {
        .object([("start", position(r.start, encoding: encoding)), ("end", position(r.end, encoding: encoding))])
    }

    /// The source position at a byte offset.
    func sourcePosition(at offset: Int) -> SourcePosition {
        let starts = source.lineStarts
        var lo = 0
        var hi = starts.count
        while lo + 1 < hi {
            let mid = (lo + hi) / 2
            if starts[mid] <= offset { lo = mid } else { hi = mid }
        }
        let prefix = String(decoding: source.bytes[starts[lo]..<max(starts[lo], min(offset, source.bytes.count))], as: UTF8.self)
        return SourcePosition(offset: offset, line: lo + 1, column: prefix.unicodeScalars.count + 1)
    }

    // MARK: Names

    /// A declaration's name, kind and where it is written.
    struct Symbol {
        let name: String
        let kind: DeclarationKind
        let nameRange: SourceRange
        let range: SourceRange
        let index: Int?
    }

    /// Every flag, variant, value and segment declared, in source order.
    var declarationSymbols: [Symbol] {
        syntax.declarations.compactMap { d -> Symbol? in
            let kind: DeclarationKind
            switch d {
            case .flag: kind = .flag
            case .variant: kind = .variant
            case .value: kind = .value
            case .segment: kind = .segment
            case .context, .test: return nil
            }
            let h = d.header
            return Symbol(
                name: h.name.name, kind: kind, nameRange: h.name.range, range: h.range,
                index: program.symbols.declarationNames.firstIndex(of: h.name.name))
        }
    }

    /// The schema's fields as written.
    var schemaFields: [ContextFieldSyntax] {
        for d in syntax.declarations { if case .context(let c) = d { return c.fields } }
        return []
    }

    /// What the name at `offset` is: a reference, or a declaration's or attribute's own name.
    func target(at offset: Int) -> (range: SourceRange, target: SymbolReference.Target)? {
        func contains(_ r: SourceRange) -> Bool { r.start.offset <= offset && offset <= r.end.offset }
        if let r = program.references.first(where: { contains($0.range) }) { return (r.range, r.target) }
        for s in declarationSymbols where contains(s.nameRange) {
            if let i = s.index { return (s.nameRange, .declaration(i)) }
        }
        func field(in fields: [ContextFieldSyntax], _ prefix: String) -> (SourceRange, SymbolReference.Target)? {
            for f in fields {
                let path = prefix + f.name.name
                if contains(f.name.range) { return (f.name.range, .attribute(path)) }
                if case .object(let inner) = f.type.kind, let found = field(in: inner, path + ".") { return found }
            }
            return nil
        }
        return field(in: schemaFields, "")
    }

    /// Where the schema declares the attribute or field a path names.
    func declaration(of path: String) -> ContextFieldSyntax? {
        var fields = schemaFields
        var found: ContextFieldSyntax?
        for part in path.split(separator: ".", omittingEmptySubsequences: false) {
            guard let f = fields.first(where: { $0.name.name == part }) else { return nil }
            found = f
            if case .object(let inner) = f.type.kind { fields = inner } else { fields = [] }
        }
        return found
    }

    /// Where a target is defined: a declaration's name, or the attribute's in the schema.
    func definition(of target: SymbolReference.Target) -> SourceRange? {
        switch target {
        case .declaration(let i):
            let name = program.symbols.declarationNames[i]
            return declarationSymbols.first { $0.name == name }?.nameRange
        case .attribute(let name):
            return declaration(of: name)?.name.range
        }
    }

    /// Every place a target is written: its definition (when asked) and each reference.
    func occurrences(of target: SymbolReference.Target, includingDefinition: Bool) -> [SourceRange] {
        var out = program.references.filter { $0.target == target }.map(\.range)
        if includingDefinition, let d = definition(of: target) { out.append(d) }
        return out.sorted { $0.start.offset < $1.start.offset }
    }

    /// The token at or just before `offset` (an identifier being typed ends there).
    func tokenIndex(at offset: Int) -> Int? {
        tokens.lastIndex {
            $0.range.start.offset <= offset && offset <= $0.range.end.offset && $0.kind != .newline && $0.kind != .endOfFile
        }
    }
}

extension SourceText {
    /// The byte offset of a 0-based line and a character counted in `encoding`'s units,
    /// clamped to the line and the text.
    func offset(line: Int, character: Int, encoding: PositionEncoding) -> Int {
        guard line >= 0 else { return 0 }
        guard line < lineStarts.count else { return bytes.count }
        let lineBytes = self.lineBytes(line + 1)
        var units = 0
        var offset = lineBytes.startIndex
        for scalar in String(decoding: lineBytes, as: UTF8.self).unicodeScalars {
            if units >= character { break }
            units += encoding == .utf16 ? scalar.utf16.count : 1
            offset += scalar.utf8.count
        }
        return min(offset, lineBytes.endIndex)
    }
}
