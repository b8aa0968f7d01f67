/// Expressions, loosest first: `or` · `and` · `not` · comparisons · `??` · primary.
extension Parser {
    /// Parses one expression. Newlines are skipped inside brackets and after a binary operator.
    mutating func parseExpression() throws(Recovery) -> ExprSyntax {
        try parseOr()
    }

    /// The operands of a binary operator, starting with `first`: room for two at once (an
    /// operator was seen, so there are two), not room for one and then a copy. No more: the
    /// rule set keeps its syntax tree, and room not used would be held with it.
    static func operandList(_ first: ExprSyntax) -> [ExprSyntax] {
        var nodes: [ExprSyntax] = []
        nodes.reserveCapacity(2)
        nodes.append(first)
        return nodes
    }

    private mutating func enter(_ range: SourceRange) throws(Recovery) {
        depth += 1
        if depth > Parser.maxNesting {
            throw fail(
                "expression is nested more than \(Parser.maxNesting) levels deep", at: range, code: "nesting-limit",
                help: "split it into segments")
        }
    }

    private mutating func parseOr() throws(Recovery) -> ExprSyntax {
        let first = try parseAnd()
        // Most operands stand alone: the list is made only when an operator follows.
        guard isKeyword(.or) || isPunctuation(.bars) else { return first }
        var operands = Parser.operandList(first)
        var progress = LoopProgress()
        while isKeyword(.or) || isPunctuation(.bars), progress.advanced(index) {
            advance()
            skipNewlines()
            operands.append(try parseAnd())
        }
        return ExprSyntax(kind: .or(operands), range: first.range.union(operands[operands.count - 1].range))
    }

    private mutating func parseAnd() throws(Recovery) -> ExprSyntax {
        let first = try parseNot()
        // Most operands stand alone: the list is made only when an operator follows.
        guard isKeyword(.and) || isPunctuation(.ampersands) else { return first }
        var operands = Parser.operandList(first)
        var progress = LoopProgress()
        while isKeyword(.and) || isPunctuation(.ampersands), progress.advanced(index) {
            advance()
            skipNewlines()
            operands.append(try parseNot())
        }
        return ExprSyntax(kind: .and(operands), range: first.range.union(operands[operands.count - 1].range))
    }

    private mutating func parseNot() throws(Recovery) -> ExprSyntax {
        guard isKeyword(.not) || isPunctuation(.bang) else { return try parseComparison() }
        let op = advance()
        try enter(op.range)
        defer { depth -= 1 }
        let operand = try parseNot()
        return ExprSyntax(kind: .not(operand), range: op.range.union(operand.range))
    }

    /// The comparison operator at the current token, and how many tokens it spans.
    private var comparisonOperator: (ComparisonOperator, Int)? {
        let t = current
        switch t.kind {
        case .punctuation(.equal): return (.equal, 1)
        case .punctuation(.notEqual): return (.notEqual, 1)
        case .punctuation(.less): return (.less, 1)
        case .punctuation(.lessEqual): return (.lessEqual, 1)
        case .punctuation(.greater): return (.greater, 1)
        case .punctuation(.greaterEqual): return (.greaterEqual, 1)
        case .keyword(.in): return (.in, 1)
        case .keyword(.not):
            return tokenAfterCurrent.kind == .keyword(.in) ? (.notIn, 2) : nil
        case .identifier("contains"):
            // `any` and `all` are keywords only right after `contains` and before `[`.
            let next = tokenAfterCurrent
            if next.kind == .identifier("any") || next.kind == .identifier("all"), tokenAfter(2).kind == .punctuation(.leftBracket) {
                return (next.kind == .identifier("any") ? .containsAny : .containsAll, 2)
            }
            return (.contains, 1)
        case .identifier("matches"): return (.matches, 1)
        case .identifier("starts"): return tokenAfterCurrent.kind == .identifier("with") ? (.startsWith, 2) : nil
        case .identifier("ends"): return tokenAfterCurrent.kind == .identifier("with") ? (.endsWith, 2) : nil
        default: return nil
        }
    }

    /// The token after `current` (skipping newlines inside brackets).
    private var tokenAfterCurrent: Token { tokenAfter(1) }

    /// The token `n` tokens after `current` (skipping newlines inside brackets).
    private func tokenAfter(_ n: Int) -> Token {
        var k = index
        if newlineSuppression > 0 { while tags[k] == TokenTag.newline { k += 1 } }
        for _ in 0..<n {
            if tags[k] != TokenTag.endOfFile { k += 1 }
            if newlineSuppression > 0 { while tags[k] == TokenTag.newline { k += 1 } }
        }
        return tokens[k]
    }

    private mutating func parseComparison() throws(Recovery) -> ExprSyntax {
        let left = try parseCoalesce()
        guard let (op, width) = comparisonOperator else {
            if case .identifier(let word) = current.kind, word != "when",
                let s = Suggestions.closest(to: word, in: ["contains", "matches", "starts", "ends", "and", "or"])
            {
                throw fail("expected an operator, found '\(word)'; did you mean '\(s)'?")
            }
            // Operators from other languages: `=`, `=>`, `=<`, `<>`.
            if current.kind == .punctuation(.assign) {
                let next = tokenAfterCurrent
                let adjacent = next.range.start.offset == current.range.end.offset
                if adjacent, next.kind == .punctuation(.greater) {
                    throw fail("expected an operator, found '=>'; did you mean '>='?", at: current.range.union(next.range))
                }
                if adjacent, next.kind == .punctuation(.less) {
                    throw fail("expected an operator, found '=<'; did you mean '<='?", at: current.range.union(next.range))
                }
                throw fail("expected an operator, found '='; did you mean '=='?")
            }

            if current.kind == .identifier("starts") || current.kind == .identifier("ends") {
                throw fail("expected 'with' after '\(text(of: current))'")
            }
            return left
        }
        if op == .less, tokenAfterCurrent.kind == .punctuation(.greater),
            tokenAfterCurrent.range.start.offset == current.range.end.offset
        {
            throw fail("expected an operator, found '<>'; did you mean '!='?", at: current.range.union(tokenAfterCurrent.range))
        }
        let opStart = current.range.start
        for _ in 0..<width { advance() }
        let opRange = range(from: opStart)
        skipNewlines()
        let right: ExprSyntax
        if op == .in || op == .notIn || op == .containsAny || op == .containsAll {
            guard isPunctuation(.leftBracket) else {
                throw fail(
                    "the right side of '\(op.rawValue)' must be a list literal like [a, b], found \(describe(current))",
                    code: "expected-list")
            }
            right = try parsePrimary()
        } else {
            right = try parseCoalesce()
        }
        if let (next, _) = comparisonOperator {
            throw fail(
                "comparisons do not chain: '\(next.rawValue)' cannot follow '\(op.rawValue)'", code: "chained-comparison",
                help: "combine two comparisons with 'and', as in 'a < b and b < c'")
        }
        _ = opRange
        return ExprSyntax(kind: .comparison(op, left, right), range: left.range.union(right.range))
    }

    private mutating func parseCoalesce() throws(Recovery) -> ExprSyntax {
        let first = try parsePrimary()
        // Most operands stand alone: the list is made only when an operator follows.
        guard isPunctuation(.coalesce) else { return first }
        var operands = Parser.operandList(first)
        var progress = LoopProgress()
        while isPunctuation(.coalesce), progress.advanced(index) {
            advance()
            skipNewlines()
            operands.append(try parsePrimary())
        }
        return ExprSyntax(kind: .coalesce(operands), range: first.range.union(operands[operands.count - 1].range))
    }

    /// `org.billing.country`: a name followed, with no space between, by `.field`s.
    private mutating func parsePath(_ first: String, _ start: SourceRange) throws(Recovery) -> ExprSyntax {
        var path = first
        var end = start
        var progress = LoopProgress()
        while isPunctuation(.dot), current.range.start == end.end, progress.advanced(index) {
            let dot = advance()
            let t = current
            guard let field = t.kind.name, t.range.start == dot.range.end else {
                throw fail(
                    "expected a field name right after '\(path).', found \(describe(t))",
                    help: "a path reads an object attribute's field, as in org.plan, with no space around the dot")
            }
            try refuseDot(in: t)
            end = advance().range
            path += "." + field
        }
        return ExprSyntax(kind: .name(path), range: start.union(end))
    }

    private mutating func parsePrimary() throws(Recovery) -> ExprSyntax {
        let t = current
        switch t.kind {
        case .int, .double, .percent, .string, .version, .keyword(.true), .keyword(.false):
            let literal = try parseLiteral("an expression")
            return ExprSyntax(kind: .literal(literal.value), range: literal.range)
        case .identifier(let name), .quotedIdentifier(let name):
            try refuseDot(in: t)
            advance()
            if isPunctuation(.dot), current.range.start == t.range.end { return try parsePath(name, t.range) }
            // (A quoted name is never a call.)
            guard isPunctuation(.leftParen), case .identifier = t.kind else {
                return ExprSyntax(kind: .name(name), range: t.range)
            }
            try enter(t.range)
            defer { depth -= 1 }
            advance()
            newlineSuppression += 1
            var arguments: [ExprSyntax] = []
            var progress = LoopProgress()
            while !isPunctuation(.rightParen), current.kind != .endOfFile, progress.advanced(index) {
                arguments.append(try parseExpression())
                if !isPunctuation(.comma) { break }
                advance()
            }
            _ = try expect(.rightParen, "to close the arguments of '\(name)'")
            newlineSuppression -= 1
            return ExprSyntax(kind: .call(Identifier(name: name, range: t.range), arguments), range: range(from: t.range.start))
        case .punctuation(.leftParen):
            try enter(t.range)
            defer { depth -= 1 }
            advance()
            newlineSuppression += 1
            let inner = try parseExpression()
            guard isPunctuation(.rightParen) else {
                throw fail("expected ')' to close the '(' at \(t.range.start), found \(describe(current))")
            }
            advance()
            newlineSuppression -= 1
            return ExprSyntax(kind: .parenthesized(inner), range: range(from: t.range.start))
        case .punctuation(.leftBracket):
            try enter(t.range)
            defer { depth -= 1 }
            advance()
            newlineSuppression += 1
            // Room for a short list at once (the tree is dropped after checking).
            var elements: [ExprSyntax] = []
            elements.reserveCapacity(4)
            var progress = LoopProgress()
            while !isPunctuation(.rightBracket), current.kind != .endOfFile, progress.advanced(index) {
                elements.append(try parsePrimary())
                if !isPunctuation(.comma) { break }
                advance()
            }
            guard isPunctuation(.rightBracket) else {
                throw fail("expected ',' or ']' in the list opened at \(t.range.start), found \(describe(current))")
            }
            advance()
            newlineSuppression -= 1
            return ExprSyntax(kind: .list(elements), range: range(from: t.range.start))
        case .keyword(let k):
            throw fail("expected an expression, found the reserved word '\(k.rawValue)'")
        case .newline, .endOfFile:
            throw fail("expected an expression, found \(describe(t))", code: "missing-expression")
        default:
            throw fail("expected an expression, found \(describe(t))")
        }
    }
}
