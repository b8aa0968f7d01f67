import Foundation

/// Expressions: name resolution, operand types, literal coercion.
extension Checker {
    /// Checks an expression used as a condition: it must be a bool.
    mutating func condition(_ e: ExprSyntax) -> Bound? {
        guard let b = expression(e) else { return nil }
        switch b.type {
        case .bool, .dynamic: return b
        default:
            diagnostics.error(
                "type-mismatch", "a condition must be a bool, found \(b.type)", at: e.range,
                help: b.type.isNumeric ? "compare it, as in '\(Checker.text(of: e)) > 0'" : nil)
            return nil
        }
    }

    static func text(of e: ExprSyntax) -> String {
        if case .name(let n) = e.kind { return n }
        return "…"
    }

    /// Where a bare name appears: what it may mean besides an attribute or declaration.
    enum NamePosition {
        /// An operand that reads a value.
        case value
        /// The right side of a comparison or a list element: a case of `cases` (an enum or
        /// variant on the other side) or, without a schema, a symbol.
        case operand(of: FlagType?)
    }

    mutating func resolveName(_ name: String, _ range: SourceRange, _ position: NamePosition) -> Bound? {
        if case .operand(let other?) = position, let cases = other.cases, cases.contains(name) {
            return Bound(kind: .constant(.string(name)), type: other, range: range)
        }
        let declared = names.index(of: name)
        if let i = declared {
            if i == current {
                diagnostics.error(
                    "cycle", "'\(name)' reads itself", at: range,
                    help: "a declaration cannot depend on its own value")
                return nil
            }
            if current >= 0 { edges[current].append((i, range)) }
            return Bound(kind: .declaration(i), type: types[i], range: range)
        }
        if name == "now" { return Bound(kind: .now, type: .datetime, range: range) }
        if let schema {
            if let a = schema[name] {
                return Bound(kind: .attribute(name, slot: a.slot, a.type), type: a.type, range: range)
            }
            if case .operand(let other?) = position, other.cases != nil {
                reportUnknownCase(name, of: other, at: range)
                return nil
            }
            let candidates = schema.attributes.map(\.name) + declarationNames + ["now"]
            diagnostics.error("unknown-name", "unknown name '\(name)'" + didYouMean(name, candidates), at: range)
            return nil
        }
        if case .operand = position {
            return Bound(kind: .constant(.string(name)), type: .symbol, range: range)
        }
        return Bound(kind: .attribute(name, slot: nil, .dynamic), type: .dynamic, range: range)
    }

    /// Checks any expression; nil when it has errors (already reported).
    mutating func expression(_ e: ExprSyntax, _ position: NamePosition = .value) -> Bound? {
        switch e.kind {
        case .literal(let literal):
            return Bound(kind: constant(literal), type: Checker.literalType(literal), range: e.range)
        case .name(let name):
            return resolveName(name, e.range, position)
        case .parenthesized(let inner):
            guard var b = expression(inner, position) else { return nil }
            b.range = e.range
            return b
        case .list:
            diagnostics.error("misplaced-list", "a list can only be the right side of 'in' or 'not in'", at: e.range)
            return nil
        case .not(let operand):
            guard let b = condition(operand) else { return nil }
            return Bound(kind: .not(b), type: .bool, range: e.range)
        case .and(let operands), .or(let operands):
            var bounds: [Bound] = []
            bounds.reserveCapacity(operands.count)
            var ok = true
            for o in operands {
                if let b = condition(o) { bounds.append(b) } else { ok = false }
            }
            guard ok else { return nil }
            if case .and = e.kind { return Bound(kind: .and(bounds), type: .bool, range: e.range) }
            return Bound(kind: .or(bounds), type: .bool, range: e.range)
        case .coalesce(let operands):
            var bounds: [Bound] = []
            bounds.reserveCapacity(operands.count)
            var ok = true
            for o in operands {
                if let b = expression(o) { bounds.append(b) } else { ok = false }
            }
            guard ok else { return nil }
            var type = FlagType.dynamic
            for b in bounds where !b.type.isDynamic {
                if type.isDynamic {
                    type = b.type == .symbol ? .string : b.type
                } else if type.cases != nil, case .constant(.string) = b.kind {
                    // A quoted case as a fallback: `build ?? "release"`.
                    guard quotedCase(b, of: type) != nil else { return nil }
                } else if !type.isComparable(with: b.type) {
                    diagnostics.error(
                        "type-mismatch", "both sides of '??' must have the same type, found \(type) and \(b.type)",
                        at: b.range)
                    return nil
                } else if type == .int, b.type == .double {
                    type = .double
                }
            }
            return Bound(kind: .coalesce(bounds), type: type, range: e.range)
        case .call(let name, let arguments):
            return call(name, arguments, e.range)
        case .comparison(let op, let l, let r):
            return comparison(op, l, r, e.range)
        }
    }

    func constant(_ literal: LiteralValue) -> Bound.Kind {
        switch literal {
        case .bool(let b): return .constant(.bool(b))
        case .int(let i): return .constant(.int(i))
        case .double(let d): return .constant(.double(d))
        case .percent(let t): return .percent(t)
        case .string(let s, _): return .constant(.string(s))
        case .version(let v): return .constant(SemanticVersion(v).map { .version($0) } ?? .string(v))
        }
    }

    static func literalType(_ literal: LiteralValue) -> FlagType {
        switch literal {
        case .bool: return .bool
        case .int: return .int
        case .double, .percent: return .double
        case .string: return .string
        case .version: return .version
        }
    }

    mutating func call(_ name: Identifier, _ arguments: [ExprSyntax], _ range: SourceRange) -> Bound? {
        switch name.name {
        case "has":
            guard arguments.count == 1, case .name(let attribute) = arguments[0].kind else {
                diagnostics.error("invalid-call", "has() takes one attribute name, as in has(email)", at: range)
                return nil
            }
            if let schema {
                guard let a = schema[attribute] else {
                    let suggestion = didYouMean(attribute, schema.attributes.map(\.name))
                    diagnostics.error("unknown-name", "unknown context attribute '\(attribute)'" + suggestion, at: arguments[0].range)
                    return nil
                }
                return Bound(kind: .has(attribute, slot: a.slot), type: .bool, range: range)
            }
            if names.index(of: attribute) != nil {
                diagnostics.error(
                    "invalid-call", "has() tests a context attribute; '\(attribute)' is a declaration", at: arguments[0].range)
                return nil
            }
            return Bound(kind: .has(attribute, slot: nil), type: .bool, range: range)
        case "rollout":
            guard arguments.count == 1 || arguments.count == 2 else {
                diagnostics.error(
                    "invalid-call", "rollout() takes a unit and an optional salt, as in rollout(userId) or rollout(userId, \"salt\")",
                    at: range)
                return nil
            }
            if current < 0, arguments.count == 1 {
                diagnostics.error(
                    "invalid-call", "rollout() outside a declaration needs a salt, as in rollout(userId, \"darkMode\")",
                    at: range)
                return nil
            }
            var salt = current >= 0 ? declarationNames[current] : ""
            if arguments.count == 2 {
                guard case .literal(.string(let s, _)) = arguments[1].kind else {
                    diagnostics.error("invalid-call", "rollout()'s salt must be a string literal", at: arguments[1].range)
                    return nil
                }
                salt = s
            }
            guard let unit = expression(arguments[0]) else { return nil }
            guard unit.type.isBucketable else {
                checkUnit(unit, "rollout")
                return nil
            }
            return Bound(kind: .rollout(unit, salt: salt), type: .double, range: range)
        case "split":
            diagnostics.error("invalid-call", "split(…) { … } is a rule of a variant or value, not an expression", at: range)
            return nil
        default:
            diagnostics.error(
                "unknown-function", "unknown function '\(name.name)'" + didYouMean(name.name, Checker.functions),
                at: name.range, help: "the functions are has(attribute) and rollout(unit[, salt])")
            return nil
        }
    }

    /// A string literal beside an enum or a variant (`build == "beta"`, an element of
    /// `build in ["beta"]`): checked as the bare case is, and then of the case's type; an
    /// unknown case is reported as for the bare name. Other bounds are returned as they are.
    mutating func quotedCase(_ b: Bound, of other: FlagType) -> Bound? {
        guard case .constant(.string(let name)) = b.kind, b.type == .string, let cases = other.cases else { return b }
        guard cases.contains(name) else {
            reportUnknownCase(name, of: other, at: b.range)
            return nil
        }
        return Bound(kind: .constant(.string(name)), type: other, range: b.range)
    }

    /// `'bta' is not a case of enum(…); did you mean 'beta'?` (or a variant of …).
    mutating func reportUnknownCase(_ name: String, of other: FlagType, at range: SourceRange) {
        let what: String
        if case .variant(let declaration, _) = other { what = "a variant of '\(declaration)'" } else { what = "a case of \(other)" }
        diagnostics.error("unknown-case", "'\(name)' is not \(what)" + didYouMean(name, other.cases ?? []), at: range)
    }

    /// Coerces a string constant compared with a version or datetime to one; reports an invalid one.
    mutating func coerce(_ b: Bound, toward other: FlagType, schemaless: Bool) -> Bound? {
        guard case .constant(.string(let s)) = b.kind, b.type == .string else { return b }
        switch other {
        case .version:
            guard let v = SemanticVersion(s) else {
                diagnostics.error(
                    "invalid-version", "\"\(s)\" is not a valid semantic version", at: b.range,
                    help: "versions are MAJOR.MINOR.PATCH with optional -PRERELEASE and +BUILD, as in \"2.3.0\"; a plain \"2.3\" is 2.3.0")
                return nil
            }
            return Bound(kind: .constant(.version(v)), type: .version, range: b.range)
        case .datetime:
            guard let d = DateTime.parse(s) else {
                diagnostics.error(
                    "invalid-datetime", "\"\(s)\" is not an ISO 8601 datetime", at: b.range,
                    help: "write \"2026-03-31\" or \"2026-03-31T09:00:00Z\" (offsets like +02:00 are honoured)")
                return nil
            }
            return Bound(kind: .constant(.datetime(d)), type: .datetime, range: b.range)
        case .dynamic where schemaless:
            if let v = SemanticVersion(s) { return Bound(kind: .constant(.version(v)), type: .version, range: b.range) }
            if let d = DateTime.parse(s) { return Bound(kind: .constant(.datetime(d)), type: .datetime, range: b.range) }
            return b
        default:
            return b
        }
    }

    mutating func mismatch(_ op: ComparisonOperator, _ l: Bound, _ r: Bound, _ range: SourceRange) {
        var help: String?
        if l.type == .version || r.type == .version { help = "write versions as \"2.3.0\"" }
        if l.type == .datetime || r.type == .datetime { help = "write datetimes as \"2026-03-31T09:00:00Z\"" }
        if l.type.cases != nil || r.type.cases != nil {
            help = "an enum or a variant compares only with its own cases (quoted or not) and with values of the same type"
        }
        diagnostics.error("type-mismatch", "cannot compare \(l.type) with \(r.type) using '\(op.rawValue)'", at: range, help: help)
    }

    /// Whether `contains`, `starts with` and `ends with` accept a side of type `t`.
    private static func isTextual(_ t: FlagType) -> Bool { t == .string || t == .symbol || t.isDynamic }

    mutating func comparison(_ op: ComparisonOperator, _ l: ExprSyntax, _ r: ExprSyntax, _ range: SourceRange) -> Bound? {
        let leftBound = expression(l)
        let leftType = leftBound?.type
        // When the left side has errors, a bare name on the right may be a case of a type we
        // could not learn: checking it would only report a cascade.
        if leftBound == nil, case .name = r.kind { return nil }
        switch op {
        case .in, .notIn:
            guard case .list(let elements) = r.kind else { return nil }
            var values: [Value] = []
            values.reserveCapacity(elements.count)
            var ok = leftBound != nil
            for element in elements {
                guard var b = expression(element, .operand(of: leftType)) else { ok = false; continue }
                if let leftType {
                    guard let c = quotedCase(b, of: leftType) else { ok = false; continue }
                    b = coerce(c, toward: leftType, schemaless: false) ?? c
                }
                guard case .constant(let v) = b.kind else {
                    if case .percent(let t) = b.kind {
                        values.append(.double(Double(t) / 1000))
                        continue
                    }
                    diagnostics.error("invalid-list", "list elements must be literals or case names", at: element.range)
                    ok = false
                    continue
                }
                if let leftType, !leftType.isComparable(with: b.type) {
                    let shown = b.type == .string ? StringEscaping.quoted(v.stringValue ?? "") : "\(v)"
                    diagnostics.error(
                        "type-mismatch", "list element \(shown) is \(b.type), but the left side is \(leftType)", at: element.range)
                    ok = false
                    continue
                }
                values.append(v)
            }
            guard ok, let leftBound else { return nil }
            return Bound(kind: .member(leftBound, values, negated: op == .notIn), type: .bool, range: range)
        case .equal, .notEqual:
            guard var right = expression(r, .operand(of: leftType)), var left = leftBound else { return nil }
            // A quoted case on either side of an enum or a variant.
            guard let rc = quotedCase(right, of: left.type), let lc = quotedCase(left, of: rc.type) else { return nil }
            right = rc
            left = lc
            guard let r2 = coerce(right, toward: left.type, schemaless: false) else { return nil }
            right = r2
            guard let l2 = coerce(left, toward: right.type, schemaless: false) else { return nil }
            left = l2
            guard left.type.isComparable(with: right.type) else {
                mismatch(op, left, right, range)
                return nil
            }
            return Bound(kind: .compare(op, left, right), type: .bool, range: range)
        case .less, .lessEqual, .greater, .greaterEqual:
            if let leftBound, !leftBound.type.isOrdered {
                diagnostics.error(
                    "type-mismatch", "'\(op.rawValue)' cannot order \(leftBound.type) values", at: leftBound.range,
                    help: leftBound.type.cases != nil ? "compare cases with '==' or 'in'" : nil)
                return nil
            }
            guard var right = expression(r, .operand(of: nil)), var left = leftBound else { return nil }
            if !right.type.isOrdered {
                diagnostics.error(
                    "type-mismatch", "'\(op.rawValue)' cannot order \(right.type) values", at: right.range,
                    help: right.type.cases != nil ? "compare cases with '==' or 'in'" : nil)
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
        case .contains, .startsWith, .endsWith:
            guard let right = expression(r, .operand(of: nil)), let left = leftBound else { return nil }
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
                diagnostics.error("invalid-pattern", "invalid pattern: \(error.message)", at: r.range)
                return nil
            }
            guard let left = leftBound else { return nil }
            guard left.type == .string || left.type.isDynamic else {
                diagnostics.error("type-mismatch", "'matches' works on strings, found \(left.type)", at: left.range)
                return nil
            }
            return Bound(kind: .matches(left, pattern), type: .bool, range: range)
        }
    }
}
