/// Comparisons: `==`, ordering, `in`, `contains`, `starts with`, `ends with`, `matches`.
extension Checker {

    mutating func comparison(_ op: ComparisonOperator, _ l: ExprSyntax, _ r: ExprSyntax, _ range: SourceRange) -> Bound? {
        if case .call(let name, let arguments) = l.kind, name.name == "any" || name.name == "all" {
            return quantified(all: name.name == "all", op, arguments, l.range, r, range)
        }
        return comparison(op, left: expression(l), r, range)
    }

    /// The comparison of `leftBound` (nil: the left side has errors) with `r`.
    mutating func comparison(_ op: ComparisonOperator, left leftBound: Bound?, _ r: ExprSyntax, _ range: SourceRange) -> Bound? {
        let leftType = leftBound?.type
        // When the left side has errors, a bare name on the right may be a case of a type we
        // could not learn: checking it would only report a cascade.
        if leftBound == nil, case .name = r.kind { return nil }
        switch op {
        case .in, .notIn:
            guard case .list(let elements) = r.kind else { return nil }
            if let leftBound, leftBound.type.isList {
                diagnostics.error(
                    "type-mismatch", "'\(op.rawValue)' tests one value against a list; the left side is \(leftBound.type)",
                    at: leftBound.range,
                    help: op == .in
                        ? "use 'contains any' to test whether some element is in the list, or 'contains all'"
                        : "use 'not (… contains any […])' to test that no element is in the list")
                return nil
            }
            // An address against blocks; without a schema, a list holding a block.
            if let leftBound,
                leftBound.type == .ip
                    || leftBound.type.isDynamic
                        && elements.contains(where: {
                            if case .literal(.string(let text, _)) = $0.kind { return IPBlock.hasBlockShape(text) }
                            return false
                        })
            {
                return network(leftBound, elements, negated: op == .notIn, range)
            }
            guard let values = literalList(elements, of: leftType, leftIsKnown: leftBound != nil), let leftBound else { return nil }
            return Bound(kind: .member(leftBound, values, negated: op == .notIn), type: .bool, range: range)
        case .containsAny, .containsAll:
            guard case .list(let elements) = r.kind, let leftBound else { return nil }
            guard leftBound.type.isList || leftBound.type.isDynamic else {
                diagnostics.error(
                    "type-mismatch", "'\(op.rawValue)' takes a list on the left, found \(leftBound.type)", at: leftBound.range,
                    help: leftBound.type == .string || leftBound.type.cases != nil
                        ? "to test one value against several, use 'in [...]'" : nil)
                return nil
            }
            guard let values = literalList(elements, of: leftBound.type.element, leftIsKnown: true) else { return nil }
            return Bound(kind: .containsSet(leftBound, values, all: op == .containsAll), type: .bool, range: range)
        case .equal, .notEqual:
            if case .list(let elements) = r.kind {
                // A list equal to a literal one: element by element, in order.
                guard let left = leftBound else { return nil }
                if case .element = left.kind {
                    diagnostics.error(
                        "type-mismatch", "'\(op.rawValue)' with a list literal compares a list; any(…) and all(…) give its elements",
                        at: range, help: "compare the list itself: 'tags == [...]'")
                    return nil
                }
                guard left.type.isList || left.type.isDynamic else {
                    diagnostics.error(
                        "type-mismatch", "'\(op.rawValue)' with a list literal compares a list, found \(left.type)", at: left.range,
                        help: "to test one value against several, use 'in [...]'")
                    return nil
                }
                guard let values = literalList(elements, of: left.type.element, leftIsKnown: true) else { return nil }
                let list = Bound(kind: .constant(.list(values)), type: left.type.isList ? left.type : .dynamic, range: r.range)
                return Bound(kind: .compare(op, left, list), type: .bool, range: range)
            }
            guard var right = expression(r, .operand(of: leftType)), var left = leftBound else { return nil }
            // A quoted case on either side of an enum or a variant.
            guard let rc = quotedCase(right, of: left.type), let lc = quotedCase(left, of: rc.type) else { return nil }
            right = rc
            left = lc
            guard let r2 = coerce(right, toward: left.type, schemaless: false) else { return nil }
            right = r2
            guard let l2 = coerce(left, toward: right.type, schemaless: false) else { return nil }
            left = l2
            if left.type.isList || right.type.isList {
                diagnostics.error(
                    "type-mismatch", "'\(op.rawValue)' compares a list only with a list literal", at: range,
                    help:
                        "test elements with 'contains', 'contains any [...]' or 'contains all [...]', the length with count(…), or the whole list with '== [...]'"
                )
                return nil
            }
            guard left.type.isComparable(with: right.type) else {
                mismatch(op, left, right, range)
                return nil
            }
            return Bound(kind: .compare(op, left, right), type: .bool, range: range)
        case .less, .lessEqual, .greater, .greaterEqual:
            if let leftBound, !leftBound.type.isOrdered {
                diagnostics.error(
                    "type-mismatch", "'\(op.rawValue)' cannot order \(leftBound.type) values", at: leftBound.range,
                    help: Checker.orderingHelp(leftBound))
                return nil
            }
            guard var right = expression(r, .operand(of: nil)), var left = leftBound else { return nil }
            if !right.type.isOrdered {
                diagnostics.error(
                    "type-mismatch", "'\(op.rawValue)' cannot order \(right.type) values", at: right.range,
                    help: Checker.orderingHelp(right))
                return nil
            }
            guard let r2 = coerce(right, toward: left.type, schemaless: schema == nil) else { return nil }
            right = r2
            guard let l2 = coerce(left, toward: right.type, schemaless: false) else { return nil }
            left = l2
            guard left.type.isComparable(with: right.type) else {
                mismatch(op, left, right, range)
                return nil
            }
            return Bound(kind: .compare(op, left, right), type: .bool, range: range)
        case .contains where leftType?.isList == true:
            guard let left = leftBound, let element = left.type.element, var right = expression(r, .operand(of: element)) else {
                return nil
            }
            guard let c = quotedCase(right, of: element) else { return nil }
            right = c
            if right.type.isList {
                diagnostics.error(
                    "type-mismatch", "the right side of 'contains' is one element, found \(right.type)", at: right.range,
                    help: "use 'contains any [...]' or 'contains all [...]' to test several elements")
                return nil
            }
            guard element.isComparable(with: right.type) else {
                diagnostics.error(
                    "type-mismatch", "\(left.type) holds \(element) elements, not \(right.type)", at: right.range,
                    help: element.cases != nil ? "an enum list holds its own cases (quoted or not)" : nil)
                return nil
            }
            return Bound(kind: .text(.contains, left, right), type: .bool, range: range)
        case .contains, .startsWith, .endsWith:
            guard let right = expression(r, .operand(of: nil)), let left = leftBound else { return nil }
            if right.type.isList {
                diagnostics.error(
                    "type-mismatch", "the right side of '\(op.rawValue)' cannot be a list, found \(right.type)", at: right.range,
                    help: op == .contains ? "put the list on the left: 'groups contains \"qa\"'" : nil)
                return nil
            }
            if left.type.isList {
                diagnostics.error(
                    "type-mismatch", "'\(op.rawValue)' works on strings, found \(left.type)", at: left.range,
                    help: "to test a list's elements, use 'contains', 'contains any [...]' or 'contains all [...]'")
                return nil
            }
            // Without a schema, `teams contains 7` tests a list's elements: the value decides
            // at evaluation (a string there with a number is unknown).
            if op == .contains, left.type.isDynamic {
                return Bound(kind: .text(op, left, right), type: .bool, range: range)
            }
            // The left side, then the right (not through an array literal: one allocation
            // per comparison).
            let nonString = !Self.isTextual(left.type) ? left : !Self.isTextual(right.type) ? right : nil
            if let b = nonString {
                diagnostics.error("type-mismatch", "'\(op.rawValue)' works on strings, found \(b.type)", at: b.range)
                return nil
            }
            return Bound(kind: .text(op, left, right), type: .bool, range: range)
        case .matches:
            guard case .literal(.string(let source, _)) = r.kind else {
                diagnostics.error(
                    "invalid-pattern", "the right side of 'matches' must be a string literal", at: r.range,
                    help: "patterns are compiled when the file loads; write one as #\"^[a-z]+$\"#")
                return nil
            }
            let pattern: Pattern
            do {
                pattern = try Pattern(source)
            } catch {
                diagnostics.error(
                    "invalid-pattern", "invalid pattern: \(error.message)", at: patternPlace(error.offset, in: r.range, pattern: source))
                return nil
            }
            guard let left = leftBound else { return nil }
            guard left.type == .string || left.type.isDynamic else {
                diagnostics.error(
                    "type-mismatch", "'matches' works on strings, found \(left.type)", at: left.range,
                    help: left.type.isList ? "to test a list's elements, use 'contains', 'contains any [...]' or 'contains all [...]'" : nil
                )
                return nil
            }
            return Bound(kind: .matches(left, pattern), type: .bool, range: range)
        }
    }
}

extension Checker {
    /// `any(list) OP x` or `all(list) OP x`: the comparison checked with each element of the
    /// list on its left.
    mutating func quantified(
        all: Bool, _ op: ComparisonOperator, _ arguments: [ExprSyntax], _ callRange: SourceRange, _ r: ExprSyntax,
        _ range: SourceRange
    ) -> Bound? {
        let word = all ? "all" : "any"
        guard arguments.count == 1 else {
            diagnostics.error("invalid-call", "\(word)() takes one list, as in \(word)(tags)", at: callRange)
            return nil
        }
        guard let list = expression(arguments[0]) else { return nil }
        guard list.type.isList || list.type.isDynamic else {
            diagnostics.error(
                "type-mismatch", "\(word)() takes a list, found \(list.type)", at: list.range,
                help: "compare the value itself, without \(word)(…)")
            return nil
        }
        if op == .containsAny || op == .containsAll {
            diagnostics.error(
                "type-mismatch", "'\(op.rawValue)' takes a list on the left; \(word)(…) gives its elements", at: range,
                help: "write 'tags contains any [...]' for a shared element, or '\(word)(tags) in [...]'")
            return nil
        }
        let element = Bound(kind: .element, type: list.type.element ?? .dynamic, range: arguments[0].range)
        guard let test = comparison(op, left: element, r, range) else { return nil }
        return Bound(kind: .quantified(list, test: test, all: all), type: .bool, range: range)
    }

    /// The place in the source of the pattern's scalar `offset`, when the literal spells the
    /// pattern as it is (no escapes: a raw string, or one without backslashes); the whole
    /// literal otherwise.
    func patternPlace(_ offset: Int, in literal: SourceRange, pattern: String) -> SourceRange {
        guard literal.start.line == literal.end.line, let text = sourceText?.text(of: literal) else { return literal }
        let hashes = text.prefix { $0 == "#" }.count
        let open = hashes + 1
        guard text.count >= open * 2, String(text.dropFirst(open).dropLast(open)) == pattern else { return literal }
        let scalars = Array(pattern.unicodeScalars)
        let at = min(max(offset, 0), scalars.count)
        let bytes = String(String.UnicodeScalarView(scalars[..<at])).utf8.count
        let width = at < scalars.count ? String(scalars[at]).utf8.count : 0
        let start = SourcePosition(
            offset: literal.start.offset + open + bytes, line: literal.start.line, column: literal.start.column + open + at)
        let end = SourcePosition(offset: start.offset + width, line: start.line, column: start.column + (width > 0 ? 1 : 0))
        return SourceRange(start: start, end: end)
    }
}
