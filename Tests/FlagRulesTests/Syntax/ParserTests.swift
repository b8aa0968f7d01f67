import Testing

@testable import FlagRules
@testable import FlagRulesSyntax

func parse(_ text: String) -> (FileSyntax, [Diagnostic]) { Parser.parse(SourceText(text, name: "t")) }
func parseErrors(_ text: String) -> [String] { parse(text).1.map { "\($0.range.start) \($0.message)" } }

/// A compact rendering of an expression's tree, for assertions.
func shape(_ e: ExprSyntax) -> String {
    switch e.kind {
    case .literal(let l): return "\(l)"
    case .name(let n): return n
    case .list(let xs): return "[" + xs.map(shape).joined(separator: " ") + "]"
    case .not(let x): return "(not \(shape(x)))"
    case .and(let xs): return "(and " + xs.map(shape).joined(separator: " ") + ")"
    case .or(let xs): return "(or " + xs.map(shape).joined(separator: " ") + ")"
    case .comparison(let op, let l, let r): return "(\(op.rawValue) \(shape(l)) \(shape(r)))"
    case .coalesce(let xs): return "(?? " + xs.map(shape).joined(separator: " ") + ")"
    case .call(let n, let xs): return "\(n.name)(" + xs.map(shape).joined(separator: " ") + ")"
    case .parenthesized(let x): return shape(x)
    }
}

func condition(_ expression: String) -> String {
    let (file, diagnostics) = parse("segment s = \(expression)")
    guard diagnostics.isEmpty, case .segment(let s)? = file.declarations.first else {
        return "error: " + diagnostics.map(\.message).joined(separator: "; ")
    }
    return shape(s.condition)
}

@Suite struct ParserTests {
    @Test(arguments: [
        ("a or b and c", "(or a (and b c))"),
        ("a and b or c", "(or (and a b) c)"),
        ("a || b && !c", "(or a (and b (not c)))"),
        ("!a == b", "(not (== a b))"),
        ("not a in [x, y]", "(not (in a [x y]))"),
        ("a not in []", "(not in a [])"),
        ("a ?? b == c", "(== (?? a b) c)"),
        ("a ?? b ?? c", "(?? a b c)"),
        (#"email ends with "@x""#, #"(ends with email string("@x", raw: false))"#),
        (#"email starts with "a""#, #"(starts with email string("a", raw: false))"#),
        (#"email contains "a""#, #"(contains email string("a", raw: false))"#),
        (##"email matches #"^a"#"##, #"(matches email string("^a", raw: true))"#),
        ("rollout(userId ?? sessionId, \"s\") < 0.5%", #"(< rollout((?? userId sessionId) string("s", raw: false)) percent(500))"#),
        ("has(email)", "has(email)"),
        ("(a or b) and c", "(and (or a b) c)"),
        ("a and\n b", "(and a b)"),
        ("a ==\n b", "(== a b)"),
        ("a in [\n x,\n y,\n]", "(in a [x y])"),
        ("(a\n or b)", "(or a b)"),
        ("v >= 2.3.0", #"(>= v version("2.3.0"))"#),
        ("-3 < x", "(< int(-3) x)"),
    ])
    func precedenceAndContinuation(_ expression: String, _ expected: String) {
        #expect(condition(expression) == expected)
    }

    @Test func parsesEveryDeclarationForm() throws {
        let (file, diagnostics) = parse(
            """
            context { a: int, b: enum(x, y); c: version }
            segment s = a > 1
            /// Doc line one.
            /// Doc line two.
            @owner("me") @expires("2030-01-01")
            @disabled
            flag f = true { enabled when s; disabled when a < 0
              enabled }
            variant v [x, y, z] = y {
              x when s
              split(a, "salt") { x: 50%, y: 25.5%, z: 24.5% } when s
            }
            value n: double = 1.5 { split(a) { 1.0: 1, 2.5: 3 } }
            value m: int = 3
            """)
        #expect(diagnostics.isEmpty)
        #expect(file.declarations.count == 6)
        guard case .context(let c) = file.declarations[0], case .flag(let f) = file.declarations[2],
            case .variant(let v) = file.declarations[3], case .value(let n) = file.declarations[4],
            case .value(let m) = file.declarations[5]
        else {
            Issue.record("wrong declaration kinds")
            return
        }
        #expect(c.fields.map(\.name.name) == ["a", "b", "c"])
        #expect(f.header.doc?.lines == ["Doc line one.", "Doc line two."])
        #expect(f.header.attributes.map(\.name.name) == ["owner", "expires", "disabled"])
        #expect(f.body?.rules.count == 3)
        #expect(f.header.range.start.line == 5)
        #expect(v.variants.map(\.name) == ["x", "y", "z"])
        #expect(v.defaultVariant?.name == "y")
        if case .split(let split)? = v.body?.rules.last?.outcome {
            #expect(split.entries.count == 3)
            #expect(split.salt?.text == "\"salt\"")
        } else {
            Issue.record("expected a split")
        }
        #expect(n.body?.rules.count == 1)
        #expect(m.body == nil)
        #expect(file.comments.filter(\.isDoc).count == 2)
    }

    @Test func reportsEveryErrorAndRecovers() {
        #expect(
            parseErrors(
                """
                flag a { enabled when }
                flag b { enabled when x == }
                flg c
                flag d { enabld when x }
                flag e { enabled when (x }
                flag f { enabled when x < y < z }
                variant g [a b]
                value h: int
                flag i { enabled when x in y }
                flag j = maybe
                flag k { enabled when x; disabled when y enabled }
                """) == [
                    "1:23 expected an expression, found '}'",
                    "2:28 expected an expression, found '}'",
                    "3:1 expected a declaration, found 'flg'; did you mean 'flag'?",
                    "4:10 expected 'enabled' or 'disabled', found 'enabld'; did you mean 'enabled'?",
                    "5:26 expected ')' to close the '(' at 5:23, found '}'",
                    "6:29 comparisons do not chain: '<' cannot follow '<'",
                    "7:14 expected ']' to close the list of variants opened at 7:11, found 'b'",
                    "8:13 expected '=' and a default value after the type, found end of line",
                    "9:28 the right side of 'in' must be a list literal like [a, b], found 'y'",
                    "10:10 a flag's default must be 'true' or 'false', found 'maybe'",
                    "11:42 expected a new line or ';' after the rule, found 'enabled'",
                ])
    }

    @Test func anUnclosedBodyStopsAtTheNextDeclaration() {
        let (file, diagnostics) = parse("flag a {\n  enabled when x\nflag b { enabled when y }\n")
        #expect(diagnostics.map(\.message) == ["expected '}' to close the body opened at line 1"])
        #expect(file.declarations.count == 2)
    }

    @Test func reservedWordsAreNotNames() {
        #expect(parseErrors("flag when { enabled }") == ["1:6 'when' is a reserved word and cannot be used as a flag name"])
        // Contextual keywords are names outside their positions.
        #expect(parse("context { enabled: bool; split: int; now2: int }\nflag value { enabled when enabled }").1.isEmpty)
    }

    @Test func deepNestingIsAnErrorNotAStackOverflow() {
        for depth in [64, 65, 100_000] {
            let text = "segment s = " + String(repeating: "(", count: depth) + "a" + String(repeating: ")", count: depth)
            let errors = parse(text).1.map(\.message)
            if depth <= Parser.maxNesting {
                #expect(errors.isEmpty)
            } else if depth <= Lexer.maxBracketDepth {
                #expect(errors == ["expression is nested more than 64 levels deep"])
            } else {
                // Past any depth the parser takes, lexing stops: one error, few tokens.
                #expect(errors == ["brackets nest more than 64 levels deep"])
            }
        }
        let nots = "segment s = " + String(repeating: "not ", count: 50_000) + "a"
        #expect(parse(nots).1.map(\.message) == ["expression is nested more than 64 levels deep"])
        let lists = "segment s = a in " + String(repeating: "[", count: 50_000)
        #expect(!parse(lists).1.isEmpty)
    }

    @Test func longFlatChainsDoNotNest() async throws {
        try await offThePool(computing: true) {
            let chain = (0..<20_000).map { "a\($0) == 1" }.joined(separator: " or ")
            let (_, diagnostics) = parse("segment s = " + chain)
            #expect(diagnostics.isEmpty)
            let rules = try RuleSet(source: "flag f { enabled when " + chain + " }")
            #expect(rules.isEnabled("f", in: ["a19999": 1]))
        }
    }

    @Test func garbageNeverHangsOrCrashes() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array(
            "flag variant value segment context { } ( ) [ ] , : ; = @ ?? == != < > ! && || when and or not in split rollout has \"x\" #\"y\"# 1 2.5 3% 1.2.3 \n /// # \u{0} é"
        )
        for _ in 0..<300 {
            let length = Int.random(in: 0..<200, using: &generator)
            let text = String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
            _ = try? RuleSet(source: text)
        }
    }

    /// The parser's one-byte token kinds: a keyword's or mark's is its case's position
    /// (read from the enum's representation), so every case has its own, apart from the
    /// kinds without payload.
    @Test func tokenTagsAreDistinct() {
        #expect(Keyword.allCases.map(TokenTag.keyword) == Keyword.allCases.indices.map { UInt8(16 + $0) })
        #expect(Punctuation.allCases.map(TokenTag.punctuation) == Punctuation.allCases.indices.map { UInt8(64 + $0) })
        let kinds: [TokenKind] =
            [.newline, .endOfFile, .identifier("a"), .int(1)]
            + Keyword.allCases.map { .keyword($0) } + Punctuation.allCases.map { .punctuation($0) }
        #expect(Set(kinds.map(TokenTag.of)).count == kinds.count)
    }
}
