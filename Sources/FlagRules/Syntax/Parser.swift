/// A hand-written recursive-descent parser for `.flags` files.
///
/// It recovers after an error (skipping to the end of the rule or to the next
/// declaration) so that every syntax error in a file is reported. Every loop checks that
/// it consumed a token, and expressions nested deeper than `maxNesting` are an error
/// rather than a stack overflow.
package struct Parser {
    /// The deepest nesting of parentheses, lists, `not` and calls accepted in one expression.
    package static let maxNesting = 64

    /// Thrown inside the parser after a diagnostic was recorded, to unwind to a recovery point.
    struct Recovery: Error {}

    let tokens: [Token]
    /// Each token's kind in one byte, without its payload (`TokenTag`): the checks made
    /// at every token read these, not the tokens, so no token or string is copied.
    let tags: [UInt8]
    /// The source parsed, for a token's text.
    let source: SourceText
    var index = 0
    var diagnostics = DiagnosticBag()
    /// While > 0 (inside `(…)` or `[…]`), newlines are skipped.
    var newlineSuppression = 0
    var depth = 0
    let docComments: [Int: Comment]
    let comments: [Comment]

    /// Parses a whole file; returns the syntax tree and every diagnostic (lexical and
    /// syntactic). A large file is parsed in two halves at once (`parseInHalves(_:at:)`).
    package static func parse(_ source: SourceText, halving: Halving = .standard) -> (FileSyntax, [Diagnostic]) {
        if source.bytes.count >= halving.bytes, source.bytes.count <= Lexer.maxSourceSize,
            let line = splitLine(source), let halves = parseInHalves(source, at: line, halving: halving)
        {
            return halves
        }
        return parse(source, lines: 0..<source.lineCount)
    }

    /// Parses the given lines of a file (0-based line indices) as a file of their own.
    static func parse(_ source: SourceText, lines: Range<Int>) -> (FileSyntax, [Diagnostic]) {
        let lexer = Lexer(source, lines: lines)
        var parser = Parser(lexer: lexer)
        let file = parser.parseFile()
        return (file, lexer.diagnostics + parser.diagnostics.items)
    }

    /// The file parsed as its lines before `split` and its lines from `split`, at the same
    /// time; nil when either half has a diagnostic (the file is then parsed whole, for its
    /// diagnostics as they read in the whole file).
    ///
    /// Two halves without a diagnostic give the whole file's syntax. The first half
    /// ended after a whole declaration with its brackets closed, and no declaration goes
    /// on past the end of a line but after an operator, `=` or `when` (where the half's end
    /// was an error); the second half starts at a line's start, where no token begins
    /// before it, so its tokens are the whole file's. Doc comments are the one thing a
    /// half could lose: `splitLine` never puts a `///` on the line above the split.
    static func parseInHalves(_ source: SourceText, at split: Int, halving: Halving = .always) -> (FileSyntax, [Diagnostic])? {
        let (first, second) = halving.run(
            { parse(source, lines: 0..<split) }, { parse(source, lines: split..<source.lineCount) })
        guard first.1.isEmpty, second.1.isEmpty else { return nil }
        let file = FileSyntax(
            declarations: first.0.declarations + second.0.declarations, comments: first.0.comments + second.0.comments)
        return (file, [])
    }

    /// A line near the middle of `source` (0-based) to parse the file in halves at: one
    /// that starts with a declaration, an attribute or a doc comment at its first column,
    /// below a line with no `///` (whose doc comment would belong to the declaration
    /// below) and no attribute. Nil when no line from `start` (the middle line when nil)
    /// on is one.
    static func splitLine(_ source: SourceText, from start: Int? = nil) -> Int? {
        let b = source.bytes, starts = source.lineStarts
        func startsWith(_ word: StaticString, at offset: Int) -> Bool {
            word.withUTF8Buffer { w in
                offset + w.count <= b.count && (0..<w.count).allSatisfy { b[offset + $0] == w[$0] }
            }
        }
        func opensDeclaration(_ offset: Int) -> Bool {
            if startsWith("@", at: offset) || startsWith("///", at: offset) { return true }
            var end = offset
            while end < b.count, b[end] >= UInt8(ascii: "a"), b[end] <= UInt8(ascii: "z") { end += 1 }
            return end > offset && Parser.declarationKeywords.contains(String(decoding: b[offset..<end], as: UTF8.self))
        }
        func hasDocOrAttribute(line: Int) -> Bool {
            let from = starts[line], to = starts[line + 1]
            if startsWith("@", at: from) { return true }
            var k = from
            while k + 2 < to {
                if b[k] == UInt8(ascii: "/"), b[k + 1] == UInt8(ascii: "/"), b[k + 2] == UInt8(ascii: "/") { return true }
                k += 1
            }
            return false
        }
        var line = start ?? starts.count / 2
        while line < starts.count {
            if line > 0, opensDeclaration(starts[line]), !hasDocOrAttribute(line: line - 1) { return line }
            line += 1
        }
        return nil
    }

    /// Parses a source that holds one expression and nothing else (the REPL's input).
    package static func parseExpression(_ source: SourceText) -> (ExprSyntax?, [Diagnostic]) {
        let lexer = Lexer(source)
        var parser = Parser(lexer: lexer)
        parser.newlineSuppression = 1
        var expression: ExprSyntax?
        do {
            expression = try parser.parseExpression()
            if parser.current.kind != .endOfFile {
                throw parser.fail("unexpected \(parser.describe(parser.current)) after the expression")
            }
        } catch {
            expression = nil
        }
        return (expression, lexer.diagnostics + parser.diagnostics.items)
    }

    init(lexer: Lexer) {
        diagnostics = DiagnosticBag(errorsSoFar: lexer.stopped ? Diagnostic.errorLimit : lexer.diagnostics.count)
        tokens = lexer.tokens
        tags = lexer.tags
        source = lexer.source
        comments = lexer.comments
        var docs: [Int: Comment] = [:]
        for c in lexer.comments where c.isDoc { docs[c.range.start.line] = c }
        docComments = docs
    }

    // MARK: Token access

    /// The index of the current token (past newlines inside brackets).
    var currentIndex: Int {
        var k = index
        if newlineSuppression > 0 {
            while tags[k] == TokenTag.newline { k += 1 }
        }
        return k
    }

    var current: Token { tokens[currentIndex] }

    mutating func syncPastSuppressedNewlines() {
        if newlineSuppression > 0 {
            while tags[index] == TokenTag.newline { index += 1 }
        }
    }

    @discardableResult
    mutating func advance() -> Token {
        syncPastSuppressedNewlines()
        let t = tokens[index]
        if tags[index] != TokenTag.endOfFile { index += 1 }
        return t
    }

    /// The end of the previous non-newline token.
    var previousEnd: SourcePosition {
        var k = index - 1
        while k > 0, tags[k] == TokenTag.newline { k -= 1 }
        return k >= 0 ? tokens[k].range.end : tokens[0].range.start
    }

    func isPunctuation(_ p: Punctuation) -> Bool {
        tags[currentIndex] == TokenTag.punctuation(p)
    }

    func isKeyword(_ k: Keyword) -> Bool {
        tags[currentIndex] == TokenTag.keyword(k)
    }

    func isIdentifier(_ name: String) -> Bool {
        let k = currentIndex
        guard tags[k] == TokenTag.identifier, case .identifier(let n) = tokens[k].kind else { return false }
        return n == name
    }

    var currentIdentifier: String? {
        let k = currentIndex
        guard tags[k] == TokenTag.identifier, case .identifier(let name) = tokens[k].kind else { return nil }
        return name
    }

    mutating func skipNewlines() {
        while tags[index] == TokenTag.newline { index += 1 }
    }

    mutating func skipSeparators() {
        while tags[index] == TokenTag.newline || tags[index] == TokenTag.punctuation(.semicolon) { index += 1 }
    }

    /// A token's source text as written.
    func text(of t: Token) -> String { source.text(of: t.range) }

    /// How a token reads in a message: `'foo'`, `end of line`, `end of file`.
    func describe(_ t: Token) -> String {
        switch t.kind {
        case .newline: return "end of line"
        case .endOfFile: return "end of file"
        case .string: return "string \(text(of: t))"
        default: return "'\(text(of: t))'"
        }
    }

    mutating func fail(
        _ message: String, at range: SourceRange? = nil, code: String = "syntax",
        help: String? = nil
    ) -> Recovery {
        let r = range ?? current.range
        // Never report two errors at the same place: the second is a cascade.
        if !diagnostics.items.contains(where: { $0.range.start == r.start }) {
            diagnostics.error(code, message, at: r, help: help)
        }
        return Recovery()
    }

    /// The punctuation `p`, consumed; else an error naming `context`. The context and help
    /// are built only for the error (many name the declaration, and most calls succeed).
    mutating func expect(
        _ p: Punctuation, _ context: @autoclosure () -> String,
        help: @autoclosure () -> String? = nil
    ) throws(Recovery) -> Token {
        guard isPunctuation(p) else {
            throw fail("expected '\(p.rawValue)' \(context()), found \(describe(current))", help: help())
        }
        return advance()
    }

    mutating func expectIdentifier(_ what: String) throws(Recovery) -> Identifier {
        let t = current
        switch t.kind {
        case .identifier(let name):
            advance()
            return Identifier(name: name, range: t.range)
        case .keyword(let k):
            throw fail("'\(k.rawValue)' is a reserved word and cannot be used as \(what)")
        default:
            throw fail("expected \(what), found \(describe(t))")
        }
    }

    func range(from start: SourcePosition) -> SourceRange {
        SourceRange(start: start, end: max(previousEnd, start))
    }
}

/// A token's kind in one byte, without its payload: what the parser tests at every token.
enum TokenTag {
    static let newline: UInt8 = 0, endOfFile: UInt8 = 1, identifier: UInt8 = 2, literal: UInt8 = 3

    /// 16 + the keyword's position among `Keyword`'s cases.
    @inline(__always)
    static func keyword(_ k: Keyword) -> UInt8 { 16 &+ unsafeBitCast(k, to: UInt8.self) }

    /// 64 + the mark's position among `Punctuation`'s cases.
    @inline(__always)
    static func punctuation(_ p: Punctuation) -> UInt8 { 64 &+ unsafeBitCast(p, to: UInt8.self) }

    static func of(_ kind: TokenKind) -> UInt8 {
        switch kind {
        case .newline: return newline
        case .endOfFile: return endOfFile
        case .identifier: return identifier
        case .keyword(let k): return keyword(k)
        case .punctuation(let p): return punctuation(p)
        case .int, .double, .percent, .version, .string: return literal
        }
    }
}

/// Guards a parser loop: each iteration must consume at least one token.
struct LoopProgress {
    private var last = -1

    /// True when the parser moved since the previous call; false means the loop must stop.
    mutating func advanced(_ index: Int) -> Bool {
        defer { last = index }
        return index > last
    }
}
