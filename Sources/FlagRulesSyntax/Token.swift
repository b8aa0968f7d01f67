/// The reserved words: never names.
package enum Keyword: String, Sendable, CaseIterable {
    case `true`, `false`, and, or, not, `in`, when
}

/// Operators and punctuation.
package enum Punctuation: String, Sendable, CaseIterable {
    case leftBrace = "{", rightBrace = "}", leftParen = "(", rightParen = ")"
    case leftBracket = "[", rightBracket = "]", comma = ",", colon = ":", semicolon = ";"
    case assign = "=", at = "@", coalesce = "??", equal = "==", notEqual = "!="
    case less = "<", lessEqual = "<=", greater = ">", greaterEqual = ">="
    case bang = "!", ampersands = "&&", bars = "||", dot = "."
}

/// What a token is, with its decoded value.
package enum TokenKind: Sendable, Equatable {
    /// `[A-Za-z_][A-Za-z0-9_]*` that is not reserved.
    case identifier(String)
    /// A name in backticks, `` `variant-a` ``, decoded: a name of any spelling, never a
    /// keyword.
    case quotedIdentifier(String)
    /// A reserved word.
    case keyword(Keyword)
    /// A 64-bit integer literal (overflow is diagnosed and yields 0).
    case int(Int)
    /// A double literal such as `2.5`.
    case double(Double)
    /// A percentage, in thousandths of a percent (`20%` → 20000, `0.125%` → 125).
    case percent(Int)
    /// A version literal such as `2.3.0` or `1.0.0-beta.2+build.5`.
    case version(String)
    /// A string literal, decoded; `raw` for `#"…"#`.
    case string(String, raw: Bool)
    /// An operator or punctuation mark.
    case punctuation(Punctuation)
    /// The end of a line (LF, CRLF or a lone CR).
    case newline
    /// The end of the file.
    case endOfFile
}

extension TokenKind {
    /// The name an identifier or a quoted name gives; nil for any other token.
    package var name: String? {
        switch self {
        case .identifier(let name), .quotedIdentifier(let name): name
        default: nil
        }
    }
}

/// A token with its source range. Its spelling is read from the source when it is wanted
/// (`Lexer.text(of:)`, `Parser.text(of:)`): most tokens are never shown.
package struct Token: Sendable {
    /// What the token is.
    package var kind: TokenKind
    /// Where it is.
    package var range: SourceRange
}

/// A comment kept for the formatter: `# …` or a `/// …` doc comment.
package struct Comment: Sendable, Hashable {
    /// The text after `#` or `///`, including leading spaces.
    package var text: String
    /// Where it is.
    package var range: SourceRange
    /// True for `///` doc comments.
    package var isDoc: Bool
}
