import Testing

@testable import FlagRules

func lex(_ text: String) -> Lexer { Lexer(SourceText(text, name: "t")) }
func lex(bytes: [UInt8]) -> Lexer { Lexer(SourceText(bytes: bytes, name: "t")) }

@Suite struct LexerTests {
    @Test func tokensCarryExactLinesAndColumns() {
        let l = lex("flag a {\n\tenabled when é == \"x\"\n}")
        let shown = l.tokens.map { "\($0.range.start.line):\($0.range.start.column)-\($0.range.end.column) \($0.kind)" }
        #expect(
            shown == [
                "1:1-5 identifier(\"flag\")",
                "1:6-7 identifier(\"a\")",
                "1:8-9 punctuation(FlagRulesSyntax.Punctuation.leftBrace)",
                "1:9-9 newline",
                "2:2-9 identifier(\"enabled\")",  // a tab counts 1
                "2:10-14 keyword(FlagRulesSyntax.Keyword.when)",
                "2:17-19 punctuation(FlagRulesSyntax.Punctuation.equal)",  // 'é' counted as one column
                "2:20-23 string(\"x\", raw: false)",
                "2:23-23 newline",
                "3:1-2 punctuation(FlagRulesSyntax.Punctuation.rightBrace)",
                "3:2-2 endOfFile",
            ])
        #expect(l.diagnostics.map(\.message) == ["unexpected character 'é'"])
    }

    @Test func literals() {
        let kinds = lex(##"42 -7 2.5 -0.5 20% 0.125% 2.3.0 1.0.0-beta.2+build.5 "a\"\\\n\t\u{1F600}" #"^\d+$"# true false"##).tokens.map(
            \.kind)
        #expect(
            kinds == [
                .int(42), .int(-7), .double(2.5), .double(-0.5), .percent(20_000), .percent(125),
                .version("2.3.0"), .version("1.0.0-beta.2+build.5"), .string("a\"\\\n\t😀", raw: false),
                .string(#"^\d+$"#, raw: true), .keyword(.true), .keyword(.false), .endOfFile,
            ])
    }

    @Test func commentsAndDocCommentsAreKept() {
        let l = lex("# plain\n/// doc one\n///doc two\nflag a # trailing\n")
        #expect(l.comments.map(\.text) == [" plain", " doc one", "doc two", " trailing"])
        #expect(l.comments.map(\.isDoc) == [false, true, true, false])
        #expect(l.comments[3].range.start.column == 8)
    }

    @Test func lineEndings() {
        for text in ["a\nb", "a\r\nb", "a\rb"] {
            let t = lex(text).tokens
            #expect(t.map(\.kind) == [.identifier("a"), .newline, .identifier("b"), .endOfFile])
            #expect(t[2].range.start.line == 2 && t[2].range.start.column == 1)
        }
    }

    @Test func byteOrderMarkIsSkipped() {
        let l = lex(bytes: [0xEF, 0xBB, 0xBF] + Array("flag".utf8))
        #expect(l.tokens.first?.kind == .identifier("flag"))
        #expect(l.tokens.first?.range.start.column == 1)
        #expect(l.diagnostics.isEmpty)
    }

    @Test func invalidUTF8IsReportedWhereItIs() {
        let l = lex(
            bytes: Array("flag a\n  ".utf8) + [0xFF, 0x20] + Array("\"x".utf8) + [0xC3] + Array("\" # ".utf8) + [0xED, 0xA0, 0x80])
        #expect(
            l.diagnostics.map { "\($0.range.start) \($0.message)" } == [
                "2:3 invalid UTF-8 byte 0xFF",
                "2:7 invalid UTF-8 byte 0xC3 in a string",
                "2:12 invalid UTF-8 in a comment",
            ])
    }

    @Test func nulBytesAreErrors() {
        let l = lex(bytes: Array("a".utf8) + [0] + Array(" \"b".utf8) + [0] + Array("\"".utf8))
        #expect(l.diagnostics.map(\.message) == ["NUL byte in source", "NUL byte in source"])
        #expect(l.tokens.map(\.kind) == [.identifier("a"), .string("b", raw: false), .endOfFile])
    }

    @Test func numbersBeyond64BitsAreErrors() {
        let l = lex(
            "99999999999999999999 -9223372036854775809 9223372036854775807 1\(String(repeating: "0", count: 400)).5 99999999999999999999%")
        #expect(
            l.diagnostics.map(\.message) == [
                "integer literal '99999999999999999999' does not fit in 64 bits",
                "integer literal '-9223372036854775809' does not fit in 64 bits",
                "number '1\(String(repeating: "0", count: 400)).5' is out of range for a double",
                "percentage '99999999999999999999%' is out of range",
            ])
        #expect(l.tokens[2].kind == .int(Int.max))
    }

    /// Numbers read from their bytes and strings taken whole (printable ASCII, no escapes)
    /// give what the general paths give, with the same columns after them.
    @Test func numberAndStringEdges() {
        let l = lex("-9223372036854775808 -5% 007% 0.5% 1.05% \"tab\there\" \"plain text, 20 bytes\" x")
        #expect(
            l.tokens.map(\.kind) == [
                .int(Int.min), .percent(-5_000), .percent(7_000), .percent(500), .percent(1_050),
                .string("tab\there", raw: false), .string("plain text, 20 bytes", raw: false), .identifier("x"), .endOfFile,
            ])
        #expect(l.diagnostics.isEmpty)
        #expect(l.text(of: l.tokens[6]) == "\"plain text, 20 bytes\"")
        #expect(l.tokens[6].range.start.column == 53 && l.tokens[6].range.end.column == 75)
        #expect(l.tokens[7].range.start.column == 76)
    }

    @Test func badLiterals() {
        #expect(lex("0.1234%").diagnostics.map(\.message) == ["a percentage has at most 3 decimals"])
        #expect(lex("01.2.3").diagnostics.map(\.message) == ["'01.2.3' is not a valid semantic version"])
        #expect(lex(#""abc"#).diagnostics.map(\.message) == ["unterminated string"])
        #expect(lex("\"a\nb\"").diagnostics.map(\.message) == ["unterminated string", "unterminated string"])
        #expect(lex(#"#"abc"#).diagnostics.map(\.message) == ["unterminated raw string"])
        #expect(lex(#""\q""#).diagnostics.map(\.message) == [#"unknown escape '\q'"#])
        #expect(lex(#""\u{110000}""#).diagnostics.map(\.message) == ["invalid Unicode escape"])
        #expect(lex(#""\u{}""#).diagnostics.map(\.message) == ["invalid Unicode escape"])
        #expect(
            lex("a & b | c ? d 'e'").diagnostics.map(\.help) == [
                "write 'and' or '&&'", "write 'or' or '||'", "the fallback operator is '??'", #"write "e""#,
            ])
    }

    @Test func veryLongLinesLexInLinearTime() async {
        await offThePool(computing: true) {
            let long = "flag a { enabled when x == \"" + String(repeating: "é", count: 200_000) + "\" }"
            let l = lex(long)
            #expect(l.diagnostics.isEmpty)
            #expect(l.tokens.last?.range.start.column == 200_032)
        }
    }

    @Test func oversizedSourceIsOneError() {
        let l = lex(bytes: [UInt8](repeating: 0x20, count: Lexer.maxSourceSize + 1))
        #expect(l.diagnostics.map(\.code) == ["source-too-large"])
        #expect(l.tokens.count == 1)
    }
}
