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
    /// syntactic).
    package static func parse(_ source: SourceText) -> (FileSyntax, [Diagnostic]) {
        let lexer = Lexer(source)
        var parser = Parser(lexer: lexer)
        let file = parser.parseFile()
        return (file, lexer.diagnostics + parser.diagnostics.items)
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
        case .identifier(let name), .quotedIdentifier(let name):
            advance()
            return Identifier(name: name, range: t.range)
        case .keyword(let k):
            throw fail("'\(k.rawValue)' is a reserved word and cannot be used as \(what)")
        default:
            throw fail("expected \(what), found \(describe(t))")
        }
    }

    /// A quoted name read as an attribute or a path's field holds no dot: a dot separates
    /// a path's fields (a variant's case with a dot is compared as a string).
    @inline(__always)
    mutating func refuseDot(in t: Token) throws(Recovery) {
        guard case .quotedIdentifier(let name) = t.kind, name.utf8.contains(UInt8(ascii: ".")) else { return }
        throw fail(
            "a name in a rule holds no '.': '\(name)'", at: t.range, code: "invalid-name",
            help: "a dot separates a path's fields (org.plan); a variant's case with a dot is written as a string: v == \"\(name)\"")
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
        case .identifier, .quotedIdentifier: return identifier
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
