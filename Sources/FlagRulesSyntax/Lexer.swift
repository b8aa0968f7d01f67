/// Turns the bytes of a `.flags` file into tokens, keeping comments aside.
///
/// Works over UTF-8 bytes. A byte-order mark at the start is skipped; LF, CRLF and a lone
/// CR each end a line. Invalid UTF-8, NUL bytes and characters outside the language are
/// reported as diagnostics and skipped, so lexing always reaches the end of the input.
package struct Lexer {
    /// The largest source the lexer accepts (16 MiB); larger input is one error.
    package static let maxSourceSize = 16 << 20

    /// The tokens, ending with `.endOfFile`.
    package private(set) var tokens: [Token] = []
    /// Each token's kind in one byte (`TokenTag`), beside `tokens`: what the parser tests.
    private(set) var tags: [UInt8] = []
    /// Every comment and doc comment, in order.
    package private(set) var comments: [Comment] = []
    /// Lexical errors.
    package private(set) var diagnostics: [Diagnostic] = []
    /// Whether lexing stopped at `Diagnostic.errorLimit` errors (the tokens then end there).
    package private(set) var stopped = false

    /// The source lexed.
    let source: SourceText
    private let b: [UInt8]
    private var i: Int
    /// Where lexing stops: the end of the bytes.
    private let end: Int
    /// Open brackets, at most `maxBracketDepth`.
    private var bracketDepth = 0
    /// The deepest bracket nesting lexed: the parser's limit on expressions, and a body's
    /// and a list's brackets around it.
    static let maxBracketDepth = Parser.maxNesting + 8
    private var line: Int
    private var column = 1

    /// Lexes a whole source file.
    package init(_ source: SourceText) {
        self.source = source
        b = source.bytes
        i = 0
        end = b.count
        line = 1
        if b.count > Lexer.maxSourceSize {
            let here = location
            diagnostics.append(
                .error(
                    "source-too-large", "file is \(b.count) bytes; the limit is \(Lexer.maxSourceSize)",
                    at: SourceRange(start: here, end: here)))
            tokens.append(Token(kind: .endOfFile, range: SourceRange(start: here, end: here)))
            tags.append(TokenTag.endOfFile)
            return
        }
        if i == 0, end >= 3, b[0] == 0xEF, b[1] == 0xBB, b[2] == 0xBF { i = 3 }
        // Rules average about three bytes a token (names, punctuation, newlines): room for
        // one every two bytes, so that the array is not grown and copied while lexing; past
        // a million tokens (64 MB) it grows as it needs to.
        let capacity = min((end - i) / 2, 1 << 20) + 16
        tokens.reserveCapacity(capacity)
        tags.reserveCapacity(capacity)
        run()
    }

    private var location: SourcePosition { SourcePosition(offset: i, line: line, column: column) }

    private func peek(_ k: Int = 0) -> UInt8 { i + k < end ? b[i + k] : 0 }
    private var atEnd: Bool { i >= end }

    /// Moves one byte forward; a column is counted at each scalar's first byte.
    private mutating func bump() {
        i += 1
        if i >= end || b[i] & 0xC0 != 0x80 { column += 1 }
    }

    private mutating func newlineBump() {
        if b[i] == 0x0D, peek(1) == 0x0A { i += 1 }
        i += 1
        line += 1
        column = 1
    }

    private mutating func error(_ code: String, _ message: String, from start: SourcePosition, help: String? = nil) {
        report(.error(code, message, at: SourceRange(start: start, end: location), help: help))
    }

    /// Records an error; at `Diagnostic.errorLimit` of them, says so and stops lexing.
    private mutating func report(_ d: Diagnostic) {
        guard !stopped else { return }
        diagnostics.append(d)
        if diagnostics.count >= Diagnostic.errorLimit {
            diagnostics.append(.tooManyErrors(at: d.range))
            stopped = true
        }
    }

    /// An error whose caret stands on the `width` bytes at `start` (an unterminated
    /// string's opening quote).
    private mutating func error(_ code: String, _ message: String, at start: SourcePosition, width: Int, help: String? = nil) {
        let caretEnd = SourcePosition(offset: start.offset + width, line: start.line, column: start.column + width)
        report(.error(code, message, at: SourceRange(start: start, end: caretEnd), help: help))
    }

    private mutating func add(_ kind: TokenKind, from start: SourcePosition) {
        tokens.append(Token(kind: kind, range: SourceRange(start: start, end: location)))
        tags.append(TokenTag.of(kind))
    }

    /// The source text of a token as written (empty for a newline and the end of the file).
    package func text(of token: Token) -> String { source.text(of: token.range) }

    /// Decodes the scalar at `i`: the scalar and its byte length, or nil and 1 for invalid UTF-8.
    private func decodeScalar() -> (Unicode.Scalar?, Int) {
        let lead = b[i]
        if lead < 0x80 { return (Unicode.Scalar(lead), 1) }
        let length: Int
        var value: UInt32
        switch lead {
        case 0xC2...0xDF: length = 2; value = UInt32(lead & 0x1F)
        case 0xE0...0xEF: length = 3; value = UInt32(lead & 0x0F)
        case 0xF0...0xF4: length = 4; value = UInt32(lead & 0x07)
        default: return (nil, invalidLength())
        }
        guard i + length <= end else { return (nil, invalidLength()) }
        for k in 1..<length {
            let c = b[i + k]
            guard c & 0xC0 == 0x80 else { return (nil, invalidLength()) }
            value = value << 6 | UInt32(c & 0x3F)
        }
        // Reject overlong forms and surrogates.
        let minimum: UInt32 = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000
        guard value >= minimum, let scalar = Unicode.Scalar(value) else { return (nil, invalidLength()) }
        return (scalar, length)
    }

    /// An invalid sequence: its first byte and the continuation bytes after it (at most 3).
    private func invalidLength() -> Int {
        var n = 1
        while n < 4, i + n < end, b[i + n] & 0xC0 == 0x80 { n += 1 }
        return n
    }

    /// The reserved word spelled by `bytes` (true false and or not in when), found by
    /// length and first byte rather than a string switch: most identifiers are not one.
    @inline(__always)
    private static func keyword(_ bytes: ArraySlice<UInt8>) -> Keyword? {
        guard let first = bytes.first else { return nil }
        func spelled(_ word: StaticString) -> Bool {
            word.utf8CodeUnitCount == bytes.count && word.withUTF8Buffer { $0.elementsEqual(bytes) }
        }
        switch (first, bytes.count) {
        case (UInt8(ascii: "t"), 4): return spelled("true") ? .true : nil
        case (UInt8(ascii: "f"), 5): return spelled("false") ? .false : nil
        case (UInt8(ascii: "a"), 3): return spelled("and") ? .and : nil
        case (UInt8(ascii: "o"), 2): return spelled("or") ? .or : nil
        case (UInt8(ascii: "n"), 3): return spelled("not") ? .not : nil
        case (UInt8(ascii: "i"), 2): return spelled("in") ? .in : nil
        case (UInt8(ascii: "w"), 4): return spelled("when") ? .when : nil
        default: return nil
        }
    }

    private static func isIdentStart(_ c: UInt8) -> Bool {
        (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x5F
    }

    private static func isIdentContinue(_ c: UInt8) -> Bool {
        isIdentStart(c) || isDigit(c)
    }

    private static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }

    private mutating func run() {
        while !atEnd, !stopped {
            let c = b[i]
            let start = location
            switch c {
            case 0x20, 0x09, 0x0B, 0x0C:
                // A run of blanks at once: ASCII, one column a byte.
                var j = i + 1
                while j < end, b[j] == 0x20 || b[j] == 0x09 { j += 1 }
                column += j - i
                i = j
            case 0x0A, 0x0D:
                newlineBump()
                tokens.append(Token(kind: .newline, range: SourceRange(start: start, end: start)))
                tags.append(TokenTag.newline)
            case UInt8(ascii: "#"):
                if peek(1) == UInt8(ascii: "\"") { lexRawString() } else { lexComment(skip: 1, isDoc: false) }
            case UInt8(ascii: "/"):
                if peek(1) == UInt8(ascii: "/"), peek(2) == UInt8(ascii: "/") {
                    lexComment(skip: 3, isDoc: true)
                } else {
                    bump()
                    error(
                        "unexpected-character", "unexpected character '/'", from: start,
                        help: "comments start with '#', doc comments with '///'")
                }
            case UInt8(ascii: "\""):
                lexString()
            case _ where Lexer.isIdentStart(c):
                var j = i + 1
                while j < end, Lexer.isIdentContinue(b[j]) { j += 1 }
                column += j - i  // ASCII: one column a byte
                i = j
                if let k = Lexer.keyword(b[start.offset..<i]) {
                    add(.keyword(k), from: start)
                } else {
                    add(.identifier(String(decoding: b[start.offset..<i], as: UTF8.self)), from: start)
                }
            case _ where Lexer.isDigit(c):
                lexNumber()
            case UInt8(ascii: "`"):
                lexQuotedName()
            case UInt8(ascii: "-") where Lexer.isDigit(peek(1)):
                lexNumber()
            case 0x00:
                bump()
                error("nul-byte", "NUL byte in source", from: start, help: "remove it; .flags files are UTF-8 text")
            default:
                lexPunctuation(start)
            }
        }
        let end = location
        tokens.append(Token(kind: .endOfFile, range: SourceRange(start: end, end: end)))
        tags.append(TokenTag.endOfFile)
    }

    private mutating func lexPunctuation(_ start: SourcePosition) {
        let c = b[i], n = peek(1)
        // Brackets past any depth the parser accepts end lexing: a file of nothing but
        // '(' is one error, not millions of tokens.
        func open(_ p: Punctuation) {
            bracketDepth += 1
            if bracketDepth > Lexer.maxBracketDepth {
                report(
                    .error(
                        "nesting", "brackets nest more than \(Parser.maxNesting) levels deep",
                        at: SourceRange(start: start, end: start), help: "split the expression with segments"))
                stopped = true
                return
            }
            one(p)
        }
        func close(_ p: Punctuation) {
            bracketDepth = max(0, bracketDepth - 1)
            one(p)
        }
        func two(_ p: Punctuation) { bump(); bump(); add(.punctuation(p), from: start) }
        func one(_ p: Punctuation) { bump(); add(.punctuation(p), from: start) }
        switch c {
        case UInt8(ascii: "{"): open(.leftBrace)
        case UInt8(ascii: "}"): close(.rightBrace)
        case UInt8(ascii: "("): open(.leftParen)
        case UInt8(ascii: ")"): close(.rightParen)
        case UInt8(ascii: "["): open(.leftBracket)
        case UInt8(ascii: "]"): close(.rightBracket)
        case UInt8(ascii: ","): one(.comma)
        case UInt8(ascii: ":"): one(.colon)
        case UInt8(ascii: ";"): one(.semicolon)
        case UInt8(ascii: "@"): one(.at)
        case UInt8(ascii: "."): one(.dot)
        case UInt8(ascii: "="): n == UInt8(ascii: "=") ? two(.equal) : one(.assign)
        case UInt8(ascii: "!"): n == UInt8(ascii: "=") ? two(.notEqual) : one(.bang)
        case UInt8(ascii: "<"): n == UInt8(ascii: "=") ? two(.lessEqual) : one(.less)
        case UInt8(ascii: ">"): n == UInt8(ascii: "=") ? two(.greaterEqual) : one(.greater)
        case UInt8(ascii: "?") where n == UInt8(ascii: "?"): two(.coalesce)
        case UInt8(ascii: "&") where n == UInt8(ascii: "&"): two(.ampersands)
        case UInt8(ascii: "|") where n == UInt8(ascii: "|"): two(.bars)
        case UInt8(ascii: "&"):
            bump()
            error("unexpected-character", "unexpected character '&'", from: start, help: "write 'and' or '&&'")
        case UInt8(ascii: "|"):
            bump()
            error("unexpected-character", "unexpected character '|'", from: start, help: "write 'or' or '||'")
        case UInt8(ascii: "?"):
            bump()
            error("unexpected-character", "unexpected character '?'", from: start, help: "the fallback operator is '??'")
        case UInt8(ascii: "'"):
            // A single-quoted string: read it as a string so that one mistake is one error.
            bump()
            var value = String.UnicodeScalarView()
            while !atEnd, b[i] != UInt8(ascii: "'"), b[i] != 0x0A, b[i] != 0x0D { appendScalar(to: &value) }
            if !atEnd, b[i] == UInt8(ascii: "'") {
                bump()
                error(
                    "single-quoted-string", "strings use double quotes", from: start,
                    help: "write \(StringEscaping.quoted(String(value)))")
                add(.string(String(value), raw: false), from: start)
            } else {
                error("unexpected-character", "unexpected character '''", from: start, help: "strings use double quotes: \"...\"")
            }
        default:
            let (scalar, length) = decodeScalar()
            for _ in 0..<length { bump() }
            if let scalar {
                let shown =
                    scalar.value < 0x20 || scalar.value == 0x7F
                    ? "U+" + String(scalar.value, radix: 16, uppercase: true) : String(scalar)
                error(
                    "unexpected-character", "unexpected character '\(shown)'", from: start,
                    help: scalar.isASCII ? nil : "names are ASCII letters, digits and '_'; other text belongs in a string")
            } else {
                error(
                    "invalid-utf8", "invalid UTF-8 byte 0x" + String(c, radix: 16, uppercase: true), from: start,
                    help: ".flags files must be UTF-8")
            }
        }
    }

    private mutating func lexComment(skip: Int, isDoc: Bool) {
        let start = location
        for _ in 0..<skip { bump() }
        let textStart = i
        while !atEnd, b[i] != 0x0A, b[i] != 0x0D {
            if b[i] == 0 {
                let here = location
                bump()
                error("nul-byte", "NUL byte in source", from: here, help: "remove it; .flags files are UTF-8 text")
                continue
            }
            if b[i] >= 0x80 {
                let here = location
                let (scalar, length) = decodeScalar()
                for _ in 0..<length { bump() }
                if scalar == nil { error("invalid-utf8", "invalid UTF-8 in a comment", from: here, help: ".flags files must be UTF-8") }
                continue
            }
            bump()
        }
        let text = String(decoding: b[textStart..<i], as: UTF8.self)
        comments.append(Comment(text: text, range: SourceRange(start: start, end: location), isDoc: isDoc))
    }

    private mutating func lexString() {
        let start = location
        bump()  // opening quote
        // Most strings are printable ASCII without escapes: taken whole from the bytes.
        var j = i
        while j < end, b[j] >= 0x20, b[j] < 0x80, b[j] != UInt8(ascii: "\""), b[j] != UInt8(ascii: "\\") { j += 1 }
        if j < end, b[j] == UInt8(ascii: "\"") {
            let value = String(decoding: b[i..<j], as: UTF8.self)
            column += j - i  // one column a byte: all ASCII
            i = j
            bump()  // closing quote
            add(.string(value, raw: false), from: start)
            return
        }
        var value = String.UnicodeScalarView()
        while true {
            if atEnd || b[i] == 0x0A || b[i] == 0x0D {
                error("unterminated-string", "unterminated string", at: start, width: 1, help: "close it with '\"' on the same line")
                add(.string(String(value), raw: false), from: start)
                return
            }
            let c = b[i]
            if c == UInt8(ascii: "\"") {
                bump()
                add(.string(String(value), raw: false), from: start)
                return
            }
            if c == UInt8(ascii: "\\") {
                let escapeStart = location
                bump()
                guard !atEnd else { continue }
                let e = b[i]
                switch e {
                case UInt8(ascii: "\""): value.append("\""); bump()
                case UInt8(ascii: "\\"): value.append("\\"); bump()
                case UInt8(ascii: "n"): value.append("\n"); bump()
                case UInt8(ascii: "t"): value.append("\t"); bump()
                case UInt8(ascii: "u") where peek(1) == UInt8(ascii: "{"):
                    bump(); bump()
                    var code: UInt32 = 0
                    var digits = 0
                    while !atEnd, let d = ASCII.hexValue(b[i]) {
                        code = digits < 8 ? code << 4 | UInt32(d) : code
                        digits += 1
                        bump()
                    }
                    let closed = !atEnd && b[i] == UInt8(ascii: "}")
                    if closed { bump() }
                    if closed, (1...8).contains(digits), let scalar = Unicode.Scalar(code) {
                        value.append(scalar)
                    } else {
                        error(
                            "invalid-escape", "invalid Unicode escape", from: escapeStart,
                            help: "write 1 to 8 hex digits of a Unicode scalar, as in \\u{1F600}")
                    }
                default:
                    if e == 0x0A || e == 0x0D { continue }
                    let (scalar, length) = decodeScalar()
                    for _ in 0..<length { bump() }
                    error(
                        "invalid-escape", "unknown escape '\\\(scalar.map { String($0) } ?? "?")'", from: escapeStart,
                        help: "the escapes are \\\" \\\\ \\n \\t \\u{…}; for patterns, a raw string #\"…\"# needs none")
                }
                continue
            }
            appendScalar(to: &value)
        }
    }

    /// A quoted name, `` `variant-a` ``: any text but a line break or a control character,
    /// with `` \` `` and `\\` for a backtick and a backslash.
    private mutating func lexQuotedName() {
        let start = location
        bump()  // opening backtick
        var value = String.UnicodeScalarView()
        while true {
            if atEnd || b[i] == 0x0A || b[i] == 0x0D {
                error("unterminated-name", "unterminated quoted name", at: start, width: 1, help: "close it with '`' on the same line")
                break
            }
            let c = b[i]
            if c == UInt8(ascii: "`") {
                bump()
                break
            }
            if c == UInt8(ascii: "\\") {
                let escapeStart = location
                bump()
                if !atEnd, b[i] == UInt8(ascii: "`") || b[i] == UInt8(ascii: "\\") {
                    value.append(Unicode.Scalar(b[i]))
                    bump()
                } else {
                    error(
                        "invalid-escape", "unknown escape in a quoted name", from: escapeStart,
                        help: "a quoted name takes \\` for a backtick and \\\\ for a backslash")
                }
                continue
            }
            if c < 0x20 || c == 0x7F {
                let here = location
                bump()
                error("invalid-name", "a quoted name holds no control character", from: here, help: "remove it")
                continue
            }
            appendScalar(to: &value)
        }
        if value.isEmpty {
            report(.error("invalid-name", "a quoted name is never empty", at: SourceRange(start: start, end: location), help: nil))
        }
        add(.quotedIdentifier(String(value)), from: start)
    }

    /// Appends the scalar at `i` (reporting NUL and invalid UTF-8) and moves past it.
    private mutating func appendScalar(to value: inout String.UnicodeScalarView) {
        let here = location
        if b[i] == 0 {
            bump()
            error("nul-byte", "NUL byte in source", from: here, help: "write \\u{0} for a NUL character")
            return
        }
        let (scalar, length) = decodeScalar()
        for _ in 0..<length { bump() }
        if let scalar {
            value.append(scalar)
        } else {
            value.append("\u{FFFD}")
            error(
                "invalid-utf8", "invalid UTF-8 byte 0x" + String(b[here.offset], radix: 16, uppercase: true) + " in a string",
                from: here, help: ".flags files must be UTF-8")
        }
    }

    private mutating func lexRawString() {
        let start = location
        bump(); bump()  // #"
        var value = String.UnicodeScalarView()
        while true {
            if atEnd || b[i] == 0x0A || b[i] == 0x0D {
                error("unterminated-string", "unterminated raw string", at: start, width: 2, help: "close it with '\"#' on the same line")
                add(.string(String(value), raw: true), from: start)
                return
            }
            if b[i] == UInt8(ascii: "\""), peek(1) == UInt8(ascii: "#") {
                bump(); bump()
                add(.string(String(value), raw: true), from: start)
                return
            }
            appendScalar(to: &value)
        }
    }

    private mutating func digits() -> Int {
        let s = i
        while !atEnd, Lexer.isDigit(b[i]) { bump() }
        return i - s
    }

    private mutating func lexNumber() {
        let start = location
        let negative = b[i] == UInt8(ascii: "-")
        if negative { bump() }
        let intStart = i
        _ = digits()
        let integer = intStart..<i
        var fraction: Range<Int>?
        if peek() == UInt8(ascii: "."), Lexer.isDigit(peek(1)) {
            bump()
            let s = i
            _ = digits()
            fraction = s..<i
            if peek() == UInt8(ascii: "."), Lexer.isDigit(peek(1)) {
                bump()
                _ = digits()
                lexVersionTail(start: start, negative: negative)
                return
            }
        }
        if peek() == UInt8(ascii: "%") {
            bump()
            let decimals = fraction ?? i..<i
            guard decimals.count <= 3 else {
                error("invalid-number", "a percentage has at most 3 decimals", from: start)
                add(.percent(0), from: start)
                return
            }
            var scale = 1
            for _ in decimals.count..<3 { scale *= 10 }
            if let whole = decimalValue(integer, negative: false), let thousandths = decimalValue(decimals, negative: false) {
                let (m, o1) = whole.multipliedReportingOverflow(by: 1000)
                let (v, o2) = m.addingReportingOverflow(thousandths * scale)
                if !o1 && !o2 {
                    add(.percent(negative ? -v : v), from: start)
                    return
                }
            }
            error("number-overflow", "percentage '\(String(decoding: b[start.offset..<i], as: UTF8.self))' is out of range", from: start)
            add(.percent(0), from: start)
            return
        }
        if fraction != nil {
            let text = String(decoding: b[start.offset..<i], as: UTF8.self)
            if let d = Double(text), d.isFinite {
                add(.double(d), from: start)
            } else {
                error("number-overflow", "number '\(text)' is out of range for a double", from: start)
                add(.double(0), from: start)
            }
            return
        }
        if let v = decimalValue(integer, negative: negative) {
            add(.int(v), from: start)
        } else {
            error(
                "number-overflow", "integer literal '\(String(decoding: b[start.offset..<i], as: UTF8.self))' does not fit in 64 bits",
                from: start, help: "integers range from \(Int.min) to \(Int.max)")
            add(.int(0), from: start)
        }
    }

    /// The value of the decimal digits at `digits` (negated when `negative`, so that
    /// `Int.min` fits), read from the bytes; nil when it does not fit in 64 bits.
    private func decimalValue(_ digits: Range<Int>, negative: Bool) -> Int? {
        var value = 0
        for k in digits {
            let digit = Int(b[k] &- UInt8(ascii: "0"))
            let (shifted, o1) = value.multipliedReportingOverflow(by: 10)
            let (next, o2) = negative ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
            if o1 || o2 { return nil }
            value = next
        }
        return value
    }

    private mutating func lexVersionTail(start: SourcePosition, negative: Bool) {
        func isIdentifierByte(_ c: UInt8) -> Bool { Lexer.isIdentContinue(c) || c == UInt8(ascii: "-") || c == UInt8(ascii: ".") }
        if peek() == UInt8(ascii: "-"), isIdentifierByte(peek(1)) {
            bump()
            while !atEnd, isIdentifierByte(b[i]) {
                if b[i] == UInt8(ascii: "."), !Lexer.isIdentContinue(peek(1)) && peek(1) != UInt8(ascii: "-") { break }
                bump()
            }
        }
        if peek() == UInt8(ascii: "+"), isIdentifierByte(peek(1)) {
            bump()
            while !atEnd, isIdentifierByte(b[i]) {
                if b[i] == UInt8(ascii: "."), !Lexer.isIdentContinue(peek(1)) && peek(1) != UInt8(ascii: "-") { break }
                bump()
            }
        }
        let text = String(decoding: b[start.offset..<i], as: UTF8.self)
        if negative {
            error("invalid-version", "a version cannot be negative", from: start)
        } else if SemanticVersion(text) == nil {
            error(
                "invalid-version", "'\(text)' is not a valid semantic version", from: start,
                help: "versions are MAJOR.MINOR.PATCH with optional -PRERELEASE and +BUILD, without leading zeros")
        }
        add(.version(text), from: start)
    }
}
