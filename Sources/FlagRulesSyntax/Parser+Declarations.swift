/// Declarations, attributes, bodies and rules.
extension Parser {
    static let declarationKeywords = ["context", "segment", "flag", "variant", "value", "test"]

    mutating func parseFile() -> FileSyntax {
        var declarations: [DeclarationSyntax] = []
        var progress = LoopProgress()
        while true {
            skipSeparators()
            if current.kind == .endOfFile || diagnostics.isFull { break }
            guard progress.advanced(index) else {
                advance()
                continue
            }
            do {
                declarations.append(try parseDeclaration())
            } catch {
                recoverToDeclaration()
            }
        }
        return FileSyntax(declarations: declarations, comments: comments)
    }

    /// Skips to the next line that starts a declaration, at brace depth 0; always consumes a token.
    mutating func recoverToDeclaration() {
        newlineSuppression = 0
        depth = 0
        var braces = 0
        var first = true
        while current.kind != .endOfFile {
            let t = tokens[index]
            if !first, braces <= 0, index > 0, tags[index - 1] == TokenTag.newline {
                if case .identifier(let name) = t.kind, Parser.declarationKeywords.contains(name) { return }
                if t.kind == .punctuation(.at) { return }
            }
            first = false
            switch t.kind {
            case .punctuation(.leftBrace): braces += 1
            case .punctuation(.rightBrace): braces -= 1
            default: break
            }
            index += 1
        }
    }

    func docComment(above line: Int) -> DocCommentSyntax? {
        var lines: [String] = []
        var l = line - 1
        var first: Comment?
        var last: Comment?
        while let c = docComments[l] {
            if last == nil { last = c }
            first = c
            // One leading space byte, even when a combining mark follows it (as a
            // `Character`, the two are one, and `hasPrefix(" ")` would not see it).
            let text = c.text.utf8.first == UInt8(ascii: " ") ? String(decoding: c.text.utf8.dropFirst(), as: UTF8.self) : c.text
            lines.insert(text, at: 0)
            l -= 1
        }
        guard let first, let last else { return nil }
        return DocCommentSyntax(lines: lines, range: SourceRange(start: first.range.start, end: last.range.end))
    }

    mutating func parseDeclaration() throws(Recovery) -> DeclarationSyntax {
        let start = current.range.start
        let doc = docComment(above: start.line)
        var attributes: [AttributeSyntax] = []
        var progress = LoopProgress()
        while isPunctuation(.at), progress.advanced(index) {
            attributes.append(try parseAttribute())
            skipNewlines()
        }
        let t = current
        guard case .identifier(let word) = t.kind, Parser.declarationKeywords.contains(word) else {
            var help: String? = nil
            if case .identifier(let word) = t.kind, let s = Suggestions.closest(to: word, in: Parser.declarationKeywords) {
                throw fail("expected a declaration, found '\(word)'; did you mean '\(s)'?")
            }
            if case .identifier = t.kind { help = "declarations start with flag, variant, value, segment, context or test" }
            if isPunctuation(.leftBrace) {
                help = "a body's '{' goes on its declaration's line: 'flag name {', not on a line of its own"
            }
            throw fail("expected a declaration (flag, variant, value, segment, context or test), found \(describe(t))", help: help)
        }
        let keyword = Identifier(name: word, range: t.range)
        advance()
        func header(_ name: Identifier) -> DeclarationHeader {
            DeclarationHeader(keyword: keyword, name: name, attributes: attributes, doc: doc, range: range(from: start))
        }
        switch word {
        case "test":
            guard case .string(let title, _) = current.kind else {
                throw fail(
                    "expected the test's name as a string, found \(describe(current))",
                    help: "write test \"what it checks\" { … }")
            }
            let titleToken = advance()
            let (givens, expectations) = try parseTestBody()
            return .test(
                TestSyntax(
                    header: header(Identifier(name: title, range: titleToken.range)), givens: givens,
                    expectations: expectations))
        case "context":
            let fields = try parseContextFields()
            return .context(ContextSyntax(header: header(keyword), fields: fields))
        case "segment":
            try refuseDot(in: current)
            let name = try expectIdentifier("a segment name")
            _ = try expect(.assign, "after the segment name", help: "a segment is written 'segment NAME = EXPR'")
            skipNewlines()
            let condition = try parseExpression()
            return .segment(SegmentSyntax(header: header(name), condition: condition))
        case "flag":
            try refuseDot(in: current)
            let name = try expectIdentifier("a flag name")
            var defaultValue: LiteralSyntax?
            if isPunctuation(.assign) {
                advance()
                let t = current
                guard t.kind == .keyword(.true) || t.kind == .keyword(.false) else {
                    throw fail(
                        "a flag's default must be 'true' or 'false', found \(describe(t))",
                        help: "for other types declare 'value NAME: TYPE = LITERAL'")
                }
                defaultValue = try parseLiteral("a default")
            }
            let body = try parseOptionalBody(.flag)
            return .flag(FlagSyntax(header: header(name), defaultValue: defaultValue, body: body))
        case "variant":
            try refuseDot(in: current)
            let name = try expectIdentifier("a variant name")
            let open = try expect(.leftBracket, "to list the variants", help: "write the variants as 'variant \(name.name) [a, b] { … }'")
            newlineSuppression += 1
            var variants: [Identifier] = []
            variants.reserveCapacity(4)
            var progress = LoopProgress()
            while !isPunctuation(.rightBracket), current.kind != .endOfFile, progress.advanced(index) {
                variants.append(try expectIdentifier("a variant name"))
                if !isPunctuation(.comma) { break }
                advance()
            }
            newlineSuppression -= 1
            guard isPunctuation(.rightBracket) else {
                throw fail("expected ']' to close the list of variants opened at \(open.range.start), found \(describe(current))")
            }
            advance()
            var defaultVariant: Identifier?
            if isPunctuation(.assign) {
                advance()
                defaultVariant = try expectIdentifier("the default variant")
            }
            let body = try parseOptionalBody(.variant)
            return .variant(VariantSyntax(header: header(name), variants: variants, defaultVariant: defaultVariant, body: body))
        default:  // value
            try refuseDot(in: current)
            let name = try expectIdentifier("a value name")
            _ = try expect(.colon, "after the value's name", help: "a value is written 'value \(name.name): TYPE = LITERAL'")
            let type = try parseType()
            guard isPunctuation(.assign) else {
                throw fail(
                    "expected '=' and a default value after the type, found \(describe(current))",
                    code: "missing-default", help: "every value needs a default, as in 'value \(name.name): \(Parser.typeText(type)) = …'")
            }
            advance()
            let defaultValue = try parseLiteral("a default value")
            let body = try parseOptionalBody(.value)
            return .value(ValueSyntax(header: header(name), type: type, defaultValue: defaultValue, body: body))
        }
    }

    /// Counts a nested list type toward the nesting limit.
    private mutating func enterType(_ range: SourceRange) throws(Recovery) {
        depth += 1
        if depth > Parser.maxNesting {
            throw fail("type is nested more than \(Parser.maxNesting) levels deep", at: range, code: "nesting-limit")
        }
    }

    package static func typeText(_ t: TypeSyntax) -> String {
        switch t.kind {
        case .named(let i): return i.name
        case .enumeration(let cases): return "enum(" + cases.map(\.written).joined(separator: ", ") + ")"
        case .list(let element): return "[" + typeText(element) + "]"
        case .object(let fields): return "{ " + fields.map { "\($0.name.written) : \(typeText($0.type))" }.joined(separator: ", ") + " }"
        }
    }

    mutating func parseAttribute() throws(Recovery) -> AttributeSyntax {
        let at = advance()
        let name = try expectIdentifier("an attribute name after '@'")
        var arguments: [LiteralSyntax] = []
        if isPunctuation(.leftParen) {
            advance()
            newlineSuppression += 1
            defer { newlineSuppression -= 1 }
            var progress = LoopProgress()
            while !isPunctuation(.rightParen), current.kind != .endOfFile, progress.advanced(index) {
                arguments.append(try parseLiteral("an attribute argument"))
                if !isPunctuation(.comma) { break }
                advance()
            }
            _ = try expect(.rightParen, "to close the attribute's arguments")
        }
        return AttributeSyntax(name: name, arguments: arguments, range: range(from: at.range.start))
    }

    mutating func parseType() throws(Recovery) -> TypeSyntax {
        if isPunctuation(.leftBrace) {
            let open = current
            try enterType(open.range)
            defer { depth -= 1 }
            let fields = try parseFields(of: "the object type opened at \(open.range.start)")
            return TypeSyntax(kind: .object(fields), range: range(from: open.range.start))
        }
        if isPunctuation(.leftBracket) {
            let open = advance()
            newlineSuppression += 1
            defer { newlineSuppression -= 1 }
            try enterType(open.range)
            defer { depth -= 1 }
            let element = try parseType()
            _ = try expect(.rightBracket, "to close the list type", help: "a list type is written [string], [int] or [enum(a, b)]")
            return TypeSyntax(kind: .list(element), range: range(from: open.range.start))
        }
        let name = try expectIdentifier("a type (string, int, double, bool, version, datetime, ip, enum(…), [string] or { field : type })")
        if name.name != "enum", isPunctuation(.leftParen) {
            let help =
                ["list", "array", "set", "List", "Array", "Set"].contains(name.name)
                ? "a list type is written in brackets: [string], [int] or [enum(a, b)]" : nil
            throw fail(
                "expected a new line after the attribute, found '('", code: "syntax",
                help: help ?? "only enum(…) takes cases in parentheses")
        }
        guard name.name == "enum", isPunctuation(.leftParen) else {
            return TypeSyntax(kind: .named(name), range: name.range)
        }
        advance()
        newlineSuppression += 1
        defer { newlineSuppression -= 1 }
        var cases: [Identifier] = []
        var progress = LoopProgress()
        while !isPunctuation(.rightParen), current.kind != .endOfFile, progress.advanced(index) {
            cases.append(try expectIdentifier("an enum case"))
            if !isPunctuation(.comma) { break }
            advance()
        }
        _ = try expect(.rightParen, "to close the enum's cases")
        return TypeSyntax(kind: .enumeration(cases), range: range(from: name.range.start))
    }

    mutating func parseContextFields() throws(Recovery) -> [ContextFieldSyntax] {
        try parseFields(of: "the context block")
    }

    /// `{ name : type … }`, fields separated by new lines, commas or semicolons: the
    /// context block's, or an object type's.
    mutating func parseFields(of what: String) throws(Recovery) -> [ContextFieldSyntax] {
        _ = try expect(.leftBrace, what == "the context block" ? "after 'context'" : "to open \(what)")
        var fields: [ContextFieldSyntax] = []
        var progress = LoopProgress()
        while true {
            while tags[index] == TokenTag.newline || isPunctuation(.semicolon) || isPunctuation(.comma) { advance() }
            if isPunctuation(.rightBrace) { advance(); break }
            if current.kind == .endOfFile { throw fail("expected '}' to close \(what)") }
            guard progress.advanced(index) else { advance(); continue }
            do {
                try refuseDot(in: current)
                let name = try expectIdentifier("an attribute name")
                _ = try expect(.colon, "after the attribute's name", help: "write 'name : type'")
                let type = try parseType()
                fields.append(ContextFieldSyntax(name: name, type: type, range: range(from: name.range.start)))
                if !(current.kind == .newline || isPunctuation(.semicolon) || isPunctuation(.comma) || isPunctuation(.rightBrace)) {
                    // `string[]` and `list<string>` are other languages' list types.
                    let listHelp: String? =
                        isPunctuation(.leftBracket) || isPunctuation(.less)
                        ? "a list type is written [string] (or [int], [enum(a, b)])" : nil
                    throw fail("expected a new line after the attribute, found \(describe(current))", help: listHelp)
                }
            } catch {
                recoverToRuleEnd()
            }
        }
        return fields
    }

    mutating func parseTestBody() throws(Recovery) -> ([GivenSyntax], [ExpectationSyntax]) {
        let open = try expect(.leftBrace, "to open the test", help: "write test \"name\" { given { … } expect … }")
        var givens: [GivenSyntax] = []
        var expectations: [ExpectationSyntax] = []
        var progress = LoopProgress()
        while true {
            skipSeparators()
            if isPunctuation(.rightBrace) { advance(); break }
            if current.kind == .endOfFile || startsDeclaration {
                diagnostics.error(
                    "syntax", "expected '}' to close the test opened at line \(open.range.start.line)",
                    at: current.range, notes: [.init("the test opens here", at: open.range)])
                break
            }
            guard progress.advanced(index) else { advance(); continue }
            do {
                let what: String
                if isIdentifier("given") {
                    givens += try parseGiven()
                    what = "'given { … }'"
                } else if isIdentifier("expect") {
                    expectations.append(try parseExpectation())
                    what = "the expectation"
                } else {
                    let found = currentIdentifier.flatMap { Suggestions.closest(to: $0, in: ["given", "expect"]) }
                    throw fail(
                        "expected 'given' or 'expect' in a test, found \(describe(current))"
                            + (found.map { "; did you mean '\($0)'?" } ?? ""))
                }
                if !(current.kind == .newline || isPunctuation(.semicolon) || isPunctuation(.rightBrace) || current.kind == .endOfFile) {
                    throw fail("expected a new line or ';' after \(what), found \(describe(current))")
                }
            } catch {
                recoverToRuleEnd()
            }
        }
        return (givens, expectations)
    }

    mutating func parseGiven() throws(Recovery) -> [GivenSyntax] {
        advance()  // given
        _ = try expect(.leftBrace, "after 'given'", help: "write given { build: alpha, userId: \"u-1\" }")
        newlineSuppression += 1
        defer { newlineSuppression -= 1 }
        var entries: [GivenSyntax] = []
        var progress = LoopProgress()
        while !isPunctuation(.rightBrace), current.kind != .endOfFile, progress.advanced(index) {
            try refuseDot(in: current)
            var key = try expectIdentifier("a context attribute")
            // A path (`org.plan: team`) gives a field of an object attribute.
            while isPunctuation(.dot), current.range.start == key.range.end {
                let dot = advance()
                guard let field = current.kind.name, current.range.start == dot.range.end else {
                    throw fail(
                        "expected a field name right after '\(key.name).', found \(describe(current))",
                        help: "a path gives an object attribute's field, as in org.plan: team")
                }
                try refuseDot(in: current)
                key = Identifier(name: key.name + "." + field, range: key.range.union(advance().range))
            }
            _ = try expect(.colon, "after '\(key.name)'", help: "write key: value")
            let value = try parseGivenValue(allowList: true)
            entries.append(GivenSyntax(key: key, value: value, range: range(from: key.range.start)))
            if !isPunctuation(.comma) { break }
            advance()
        }
        _ = try expect(.rightBrace, "to close 'given'")
        return entries
    }

    /// A given value: a literal, a bare name, or (at the top) a list of those.
    mutating func parseGivenValue(allowList: Bool) throws(Recovery) -> GivenSyntax.Value {
        if let name = current.kind.name {
            return .name(Identifier(name: name, range: advance().range))
        }
        guard allowList, isPunctuation(.leftBracket) else { return .literal(try parseLiteral("a value")) }
        let open = advance()
        var elements: [GivenSyntax.Value] = []
        var progress = LoopProgress()
        while !isPunctuation(.rightBracket), current.kind != .endOfFile, progress.advanced(index) {
            elements.append(try parseGivenValue(allowList: false))
            if !isPunctuation(.comma) { break }
            advance()
        }
        _ = try expect(.rightBracket, "to close the list opened at \(open.range.start)")
        return .list(elements, range(from: open.range.start))
    }

    mutating func parseExpectation() throws(Recovery) -> ExpectationSyntax {
        let start = advance().range.start  // expect
        var bare = true
        if isKeyword(.not) || isPunctuation(.bang) {
            advance()
            bare = false
        }
        let subject = try expectIdentifier("the name of a declaration")
        var property: Identifier?
        if isPunctuation(.dot) {
            advance()
            property = try expectIdentifier("'reason', 'rule' or 'variant'")
        }
        guard bare, isPunctuation(.equal) || isPunctuation(.notEqual) else {
            if property != nil || !bare && (isPunctuation(.equal) || isPunctuation(.notEqual)) {
                throw fail(
                    "expected '==' after '\(subject.name)\(property.map { "." + $0.name } ?? "")', found \(describe(current))")
            }
            return ExpectationSyntax(subject: subject, property: nil, negated: false, expected: .bare(bare), range: range(from: start))
        }
        let negated = isPunctuation(.notEqual)
        advance()
        let expected: ExpectationSyntax.Expected
        if let name = current.kind.name {
            expected = .name(Identifier(name: name, range: advance().range))
        } else {
            expected = .literal(try parseLiteral("an expected value"))
        }
        return ExpectationSyntax(subject: subject, property: property, negated: negated, expected: expected, range: range(from: start))
    }

    enum BodyKind { case flag, variant, value }

    mutating func parseOptionalBody(_ kind: BodyKind) throws(Recovery) -> BodySyntax? {
        guard isPunctuation(.leftBrace) else {
            if current.kind == .newline || current.kind == .endOfFile || isPunctuation(.semicolon) { return nil }
            throw fail("expected '{' or the end of the line, found \(describe(current))")
        }
        let open = advance()
        var rules: [RuleSyntax] = []
        rules.reserveCapacity(2)
        var progress = LoopProgress()
        while true {
            skipSeparators()
            if isPunctuation(.rightBrace) { advance(); break }
            if current.kind == .endOfFile || startsDeclaration {
                diagnostics.error(
                    "syntax", "expected '}' to close the body opened at line \(open.range.start.line)",
                    at: current.range, notes: [.init("the body opens here", at: open.range)])
                break
            }
            guard progress.advanced(index) else { advance(); continue }
            do {
                rules.append(try parseRule(kind))
                if !(current.kind == .newline || isPunctuation(.semicolon) || isPunctuation(.rightBrace) || current.kind == .endOfFile) {
                    // `if`, `where`, `unless` from other languages read as 'when'.
                    if case .identifier(let word) = current.kind, ["if", "where", "iff", "whenever"].contains(word) {
                        throw fail("expected a new line or ';' after the rule, found '\(word)'; did you mean 'when'?")
                    }
                    if case .identifier(let word) = current.kind, word != "when",
                        let s = Suggestions.closest(to: word, in: ["and", "or"])
                    {
                        throw fail("expected a new line or ';' after the rule, found '\(word)'; did you mean '\(s)'?")
                    }
                    throw fail(
                        "expected a new line or ';' after the rule, found \(describe(current))",
                        help: isIdentifier("when") ? nil : "put each rule on its own line or separate rules with ';'")
                }
            } catch {
                recoverToRuleEnd()
            }
        }
        return BodySyntax(rules: rules, range: range(from: open.range.start))
    }

    /// True at `flag NAME`, `variant NAME`, … or `@` at the start of a line: a declaration.
    var startsDeclaration: Bool {
        guard index > 0, tags[index - 1] == TokenTag.newline else { return false }
        if isPunctuation(.at) { return true }
        guard let word = currentIdentifier, Parser.declarationKeywords.contains(word) else { return false }
        if tags[index + 1] == TokenTag.identifier { return true }
        return word == "context" && tags[index + 1] == TokenTag.punctuation(.leftBrace)
    }

    /// Skips to the end of the current rule: a newline or ';' outside brackets, or a '}'
    /// (not consumed) that closes the body.
    mutating func recoverToRuleEnd() {
        newlineSuppression = 0
        depth = 0
        var nesting = 0
        while true {
            let t = tokens[index]
            switch t.kind {
            case .endOfFile: return
            case .newline, .punctuation(.semicolon):
                if nesting <= 0 { return }
            case .punctuation(.leftParen), .punctuation(.leftBracket), .punctuation(.leftBrace): nesting += 1
            case .punctuation(.rightParen), .punctuation(.rightBracket): nesting -= 1
            case .punctuation(.rightBrace):
                if nesting <= 0 { return }
                nesting -= 1
            default: break
            }
            index += 1
        }
    }

    mutating func parseRule(_ kind: BodyKind) throws(Recovery) -> RuleSyntax {
        let start = current.range.start
        var outcome: RuleSyntax.Outcome
        let t = current
        if kind != .flag, t.kind == .identifier("split"), tags[index + 1] == TokenTag.punctuation(.leftParen) {
            outcome = .split(try parseSplit(kind))
        } else if t.kind == .identifier("fallback") {
            // (A variant named `fallback` is written in backticks in a rule.)
            advance()
            outcome = .fallback(t.range)
        } else {
            switch kind {
            case .flag:
                guard case .identifier(let word) = t.kind, word == "enabled" || word == "disabled" else {
                    if case .identifier(let word) = t.kind, let s = Suggestions.closest(to: word, in: ["enabled", "disabled"]) {
                        throw fail("expected 'enabled' or 'disabled', found '\(word)'; did you mean '\(s)'?")
                    }
                    throw fail(
                        "expected 'enabled' or 'disabled', found \(describe(t))",
                        help: "a flag's rules read 'enabled when CONDITION' or 'disabled when CONDITION'")
                }
                advance()
                outcome = word == "enabled" ? .enabled(t.range) : .disabled(t.range)
            case .variant:
                outcome = .variant(try expectIdentifier("a variant name or 'split(…)'"))
            case .value:
                outcome = .literal(try parseLiteral("a value or 'split(…)'"))
            }
        }
        var condition: ExprSyntax?
        if isKeyword(.when) {
            advance()
            skipNewlines()
            condition = try parseExpression()
        }
        return RuleSyntax(outcome: outcome, condition: condition, range: range(from: start))
    }

    mutating func parseSplit(_ kind: BodyKind) throws(Recovery) -> SplitSyntax {
        let start = advance().range.start  // split
        _ = advance()  // (
        newlineSuppression += 1
        let unit = try parseExpression()
        var salt: LiteralSyntax?
        if isPunctuation(.comma) {
            advance()
            guard case .string = current.kind else {
                throw fail("expected a salt string as the second argument of split, found \(describe(current))")
            }
            salt = try parseLiteral("a salt")
        }
        var scheme: ExprSyntax?
        if salt != nil, isPunctuation(.comma) {
            advance()
            scheme = try parseExpression()
        }
        _ = try expect(.rightParen, "to close split's arguments")
        newlineSuppression -= 1
        _ = try expect(.leftBrace, "to open the split's weights", help: "write split(unit) { a: 50%, b: 50% }")
        newlineSuppression += 1
        defer { newlineSuppression -= 1 }
        var entries: [SplitEntrySyntax] = []
        entries.reserveCapacity(4)
        var progress = LoopProgress()
        while !isPunctuation(.rightBrace), current.kind != .endOfFile, progress.advanced(index) {
            let entryStart = current.range.start
            let key: SplitEntrySyntax.Key
            if current.kind == .identifier("fallback") {
                // (A variant named `fallback` is written in backticks.)
                key = .fallback(advance().range)
            } else if kind == .variant {
                key = .name(try expectIdentifier("a variant name"))
            } else {
                key = .literal(try parseLiteral("a value"))
            }
            _ = try expect(.colon, "between the entry and its weight", help: "write 'entry: weight', as in 'control: 50%'")
            let weight = try parseLiteral("a weight")
            switch weight.value {
            case .int, .percent: break
            default:
                throw fail("a weight is a whole number or a percentage, found \(weight.text)", at: weight.range, code: "invalid-weight")
            }
            entries.append(SplitEntrySyntax(key: key, weight: weight, range: range(from: entryStart)))
            if !isPunctuation(.comma) { break }
            advance()
        }
        _ = try expect(.rightBrace, "to close the split's weights")
        return SplitSyntax(unit: unit, salt: salt, scheme: scheme, entries: entries, range: range(from: start))
    }

    mutating func parseLiteral(_ what: String) throws(Recovery) -> LiteralSyntax {
        let t = current
        let value: LiteralValue
        switch t.kind {
        case .int(let v): value = .int(v)
        case .double(let v): value = .double(v)
        case .percent(let v): value = .percent(v)
        case .string(let s, let raw): value = .string(s, raw: raw)
        case .version(let v): value = .version(v)
        case .keyword(.true): value = .bool(true)
        case .keyword(.false): value = .bool(false)
        case .identifier(let name):
            throw fail("expected \(what), found the name '\(name)'", help: "string values are written in quotes: \"\(name)\"")
        default:
            throw fail("expected \(what), found \(describe(t))")
        }
        advance()
        return LiteralSyntax(value: value, range: t.range, text: text(of: t))
    }
}
