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

    /// A path (`org.billing.country`): its field's slot and type with a schema (each step
    /// checked, an unknown field with "did you mean" among that object's fields), or a
    /// dynamic read without one. Nil after an error (reported).
    mutating func resolvePath(_ path: String, _ range: SourceRange) -> (slot: Int?, type: FlagType)? {
        let parts = Path.names(path)
        let root = parts[0]
        var rootEnd = range.start
        rootEnd.offset += root.utf8.count
        rootEnd.column += root.unicodeScalars.count
        let rootRange = SourceRange(start: range.start, end: rootEnd)
        if declarationIndex[root] != nil || root == "now" {
            let what = root == "now" ? "'now' is the evaluation time" : "'\(root)' is a declaration"
            diagnostics.error(
                "invalid-path", "\(what), which has no fields: '\(path)' reads nothing", at: range,
                help: "a path reads a field of an object attribute of the context, as in org.plan")
            return nil
        }
        guard let schema else {
            referPath(path, range)
            return (nil, .dynamic)
        }
        guard var current = schema[root], current.parent == nil else {
            let suggestion = didYouMean(root, schema.topLevel.map(\.name))
            diagnostics.error("unknown-name", "unknown context attribute '\(root)'" + suggestion, at: rootRange)
            return nil
        }
        for field in parts.dropFirst() {
            guard let fields = current.type.fields else {
                diagnostics.error(
                    "invalid-path", "'\(current.name)' is \(current.type), not an object: it has no field '\(field)'", at: range,
                    help: "only an attribute declared as an object, as in org : { plan : string }, has fields")
                return nil
            }
            guard let next = schema[current.name + "." + field] else {
                let names = fields.map { $0.name }
                diagnostics.error(
                    "unknown-name", "'\(current.name)' has no field '\(field)'" + didYouMean(field, names), at: range,
                    help: "the fields of \(current.name) are " + names.joined(separator: ", "))
                return nil
            }
            current = next
        }
        referPath(path, range)
        return (current.slot, current.type)
    }

    mutating func resolveName(_ name: String, _ range: SourceRange, _ position: NamePosition) -> Bound? {
        if Path.isPath(name) {
            guard let (slot, type) = resolvePath(name, range) else { return nil }
            return Bound(kind: .attribute(name, slot: slot, type), type: type, range: range)
        }
        if case .operand(let other?) = position, let cases = other.cases, cases.contains(name) {
            return Bound(kind: .constant(.string(name)), type: other, range: range)
        }
        let declared = declarationIndex[name]
        if let i = declared {
            if i == current {
                diagnostics.error(
                    "cycle", "'\(name)' reads itself", at: range,
                    help: "a declaration cannot depend on its own value")
                return nil
            }
            if current >= 0 { edges[current].append((i, range)) }
            refer(range, to: .declaration(i))
            return Bound(kind: .declaration(i), type: types[i], range: range)
        }
        if name == "now" { return Bound(kind: .now, type: .datetime, range: range) }
        if let schema {
            if let a = schema[name] {
                refer(range, to: .attribute(name))
                return Bound(kind: .attribute(name, slot: a.slot, a.type), type: a.type, range: range)
            }
            if case .operand(let other?) = position, other.cases != nil {
                reportUnknownCase(name, of: other, at: range)
                return nil
            }
            let candidates = schema.attributes.map(\.name) + declarationNames + ["now"]
            let suggestion = didYouMean(name, candidates)
            // Compared with a string attribute, a bare word is most likely a string without its quotes.
            var help: String? = nil
            if suggestion.isEmpty, case .operand(let other?) = position, other == .string {
                help = "a string is quoted: \"\(name)\""
            }
            diagnostics.error("unknown-name", "unknown name '\(name)'" + suggestion, at: range, help: help)
            return nil
        }
        if case .operand = position {
            return Bound(kind: .constant(.string(name)), type: .symbol, range: range)
        }
        refer(range, to: .attribute(name))
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
            diagnostics.error(
                "misplaced-list",
                "a list literal can only be the right side of 'in', 'not in', 'contains any', 'contains all', '==' or '!='",
                at: e.range)
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

    /// A bucketing scheme written as the last argument of `rollout` or `split`
    /// (`growthbook`), with "did you mean" among the schemes.
    mutating func bucketScheme(_ e: ExprSyntax) -> BucketScheme? {
        guard case .name(let name) = e.kind, let scheme = BucketScheme(rawValue: name) else {
            let written = if case .name(let name) = e.kind { "'\(name)'" } else { "this" }
            let suggestion = if case .name(let name) = e.kind { didYouMean(name, BucketScheme.names) } else { "" }
            diagnostics.error(
                "invalid-call", "\(written) is not a bucketing scheme" + suggestion, at: e.range,
                help: "the schemes are " + BucketScheme.names.joined(separator: ", ") + " (unleash, the default, is FlagRules' own)")
            return nil
        }
        return scheme
    }

    mutating func call(_ name: Identifier, _ arguments: [ExprSyntax], _ range: SourceRange) -> Bound? {
        switch name.name {
        case "has":
            guard arguments.count == 1, case .name(let attribute) = arguments[0].kind else {
                diagnostics.error("invalid-call", "has() takes one attribute name, as in has(email)", at: range)
                return nil
            }
            if Path.isPath(attribute) {
                guard let (slot, _) = resolvePath(attribute, arguments[0].range) else { return nil }
                return Bound(kind: .has(attribute, slot: slot), type: .bool, range: range)
            }
            if let schema {
                guard let a = schema[attribute] else {
                    let suggestion = didYouMean(attribute, schema.attributes.map(\.name))
                    diagnostics.error("unknown-name", "unknown context attribute '\(attribute)'" + suggestion, at: arguments[0].range)
                    return nil
                }
                refer(arguments[0].range, to: .attribute(attribute))
                return Bound(kind: .has(attribute, slot: a.slot), type: .bool, range: range)
            }
            if declarationIndex[attribute] != nil {
                diagnostics.error(
                    "invalid-call", "has() tests a context attribute; '\(attribute)' is a declaration", at: arguments[0].range)
                return nil
            }
            refer(arguments[0].range, to: .attribute(attribute))
            return Bound(kind: .has(attribute, slot: nil), type: .bool, range: range)
        case "rollout":
            guard (1...3).contains(arguments.count) else {
                diagnostics.error(
                    "invalid-call",
                    "rollout() takes a unit, an optional salt and an optional bucketing scheme, as in rollout(userId), rollout(userId, \"salt\") or rollout(userId, \"seed\", growthbook)",
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
            if arguments.count >= 2 {
                guard case .literal(.string(let s, _)) = arguments[1].kind else {
                    diagnostics.error("invalid-call", "rollout()'s salt must be a string literal", at: arguments[1].range)
                    return nil
                }
                salt = s
            }
            var scheme = BucketScheme.unleash
            if arguments.count == 3 {
                guard let given = bucketScheme(arguments[2]) else { return nil }
                scheme = given
            }
            guard let unit = expression(arguments[0]) else { return nil }
            guard unit.type.isBucketable else {
                checkUnit(unit, "rollout")
                return nil
            }
            if scheme == .flagd || scheme == .flagdCat {
                diagnostics.error(
                    "invalid-call", "flagd buckets with fractional only: write split(unit, \"flagKey\", \(scheme.rawValue)) { … }",
                    at: arguments[2].range)
                return nil
            }
            if scheme == .unleash { return Bound(kind: .rollout(unit, salt: salt), type: .double, range: range) }
            return Bound(kind: .vendorRollout(unit, salt: salt, scheme), type: .double, range: range)
        case "count":
            guard arguments.count == 1 else {
                diagnostics.error("invalid-call", "count() takes one list, as in count(groups)", at: range)
                return nil
            }
            guard let list = expression(arguments[0]) else { return nil }
            guard list.type.isList || list.type.isDynamic else {
                diagnostics.error(
                    "type-mismatch", "count() takes a list, found \(list.type)", at: list.range,
                    help: list.type == .string ? "count() counts a list's elements, not a string's characters" : nil)
                return nil
            }
            return Bound(kind: .count(list), type: .int, range: range)
        case "lower":
            guard arguments.count == 1 else {
                diagnostics.error("invalid-call", "lower() takes one string or list of strings, as in lower(email)", at: range)
                return nil
            }
            guard let text = expression(arguments[0]) else { return nil }
            // A string, or a list of strings lowered element by element; without a schema,
            // whichever the value is.
            let type: FlagType
            switch text.type {
            case .string, .symbol: type = .string
            case .list(.string): type = .list(.string)
            case .dynamic: type = .dynamic
            default:
                diagnostics.error(
                    "type-mismatch", "lower() takes a string or a list of strings, found \(text.type)", at: text.range,
                    help: text.type.cases != nil || text.type.element?.cases != nil
                        ? "an enum's cases are compared as written; lower() is for strings" : nil)
                return nil
            }
            return Bound(kind: .lower(text), type: type, range: range)
        case "version":
            return conversion(.version, arguments, range, example: "version(appVersion)")
        case "datetime":
            return conversion(.datetime, arguments, range, example: "datetime(signup)")
        case "ramp":
            return ramp(arguments, range)
        case "split":
            diagnostics.error("invalid-call", "split(…) { … } is a rule of a variant or value, not an expression", at: range)
            return nil
        case "any", "all":
            diagnostics.error(
                "invalid-call", "\(name.name)(list) stands on the left of a comparison, as in \(name.name)(tags) starts with \"qa\"",
                at: range, help: "it tests the comparison on each element of the list")
            return nil
        default:
            diagnostics.error(
                "unknown-function", "unknown function '\(name.name)'" + didYouMean(name.name, Checker.functions),
                at: name.range,
                help: "the functions are has(attribute), rollout(unit[, salt]), count(list), lower(text), version(string),"
                    + " datetime(string), ramp(from, to, start, end), and any(list) and all(list) before a comparison")
            return nil
        }
    }

    /// `ramp(FROM, TO, START, END)`: two datetime literals, FROM before TO, and two numbers.
    mutating func ramp(_ arguments: [ExprSyntax], _ range: SourceRange) -> Bound? {
        let usage = "ramp(\"2026-12-01\", \"2026-12-15\", 5%, 50%)"
        guard arguments.count == 4 else {
            diagnostics.error(
                "invalid-call", "ramp() takes a start and an end instant and the values there, as in \(usage)", at: range)
            return nil
        }
        var instants: [Date] = []
        for a in arguments[0..<2] {
            guard case .literal(.string(let text, _)) = a.kind else {
                diagnostics.error(
                    "invalid-call", "ramp()'s instants must be datetime literals, as in \(usage)", at: a.range)
                return nil
            }
            guard let d = DateTime.parse(text) else {
                diagnostics.error(
                    "invalid-datetime", "\"\(text)\" is not an ISO 8601 datetime", at: a.range,
                    help: "write \"2026-03-31\" or \"2026-03-31T09:00:00Z\" (offsets like +02:00 are honoured)")
                return nil
            }
            instants.append(d)
        }
        var numbers: [Double] = []
        for a in arguments[2..<4] {
            switch a.kind {
            case .literal(.int(let i)): numbers.append(Double(i))
            case .literal(.double(let d)): numbers.append(d)
            case .literal(.percent(let t)): numbers.append(Double(t) / 1000)
            default:
                diagnostics.error(
                    "invalid-call", "ramp()'s values must be number literals (such as 5% or 0.25), as in \(usage)", at: a.range)
                return nil
            }
        }
        guard instants[0] < instants[1] else {
            diagnostics.error(
                "invalid-call",
                instants[0] == instants[1]
                    ? "ramp()'s start and end are the same instant" : "ramp()'s start instant is after its end",
                at: arguments[0].range.union(arguments[1].range),
                help: "write the earlier instant first; to step at one instant, compare 'now' with it")
            return nil
        }
        return Bound(kind: .ramp(from: instants[0], to: instants[1], start: numbers[0], end: numbers[1]), type: .double, range: range)
    }

    /// `address in [blocks]`: every element a string literal naming an address or a block.
    mutating func network(_ left: Bound, _ elements: [ExprSyntax], negated: Bool, _ range: SourceRange) -> Bound? {
        var blocks: [IPBlock] = []
        var ok = true
        for element in elements {
            guard case .literal(.string(let text, _)) = element.kind else {
                diagnostics.error(
                    "invalid-list", "a network list holds addresses and blocks as strings, as in \"10.0.0.0/8\"",
                    at: element.range)
                ok = false
                continue
            }
            switch IPBlock.parse(text) {
            case .success(let block): blocks.append(block)
            case .failure(let problem):
                ok = false
                let message: String
                var help: String?
                switch problem {
                case .notABlock:
                    message = "\"\(text)\" is not an IP address or block"
                    help =
                        "write an address (10.1.2.3, 2001:db8::1) or a block (10.0.0.0/8, 2001:db8::/32), without leading zeros or a zone"
                case .netmask:
                    message = "\"\(text)\" gives a netmask; a block takes a prefix length"
                    help = "write 10.0.0.0/8 for 10.0.0.0/255.0.0.0"
                case .prefixTooLong(let p):
                    message = "the prefix /\(p) of \"\(text)\" is too long"
                    help = "an IPv4 prefix is at most /32, an IPv6 prefix at most /128"
                case .hostBits(let meant):
                    message = "\"\(text)\" has bits set past its prefix; did you mean \"\(meant)\"?"
                }
                diagnostics.error("invalid-address", message, at: element.range, help: help)
            }
        }
        guard ok else { return nil }
        return Bound(kind: .network(left, NetworkSet(blocks), negated: negated), type: .bool, range: range)
    }

    /// The literals of a list on the right of `in` or `contains any/all`, each checked
    /// against `elementType` (cases checked with "did you mean"); nil after an error.
    mutating func literalList(_ elements: [ExprSyntax], of elementType: FlagType?, leftIsKnown: Bool) -> [Value]? {
        var values: [Value] = []
        values.reserveCapacity(elements.count)
        var ok = leftIsKnown
        for element in elements {
            guard var b = expression(element, .operand(of: elementType)) else { ok = false; continue }
            if let elementType {
                guard let c = quotedCase(b, of: elementType) else { ok = false; continue }
                b = coerce(c, toward: elementType, schemaless: false) ?? c
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
            if let elementType, !elementType.isComparable(with: b.type) {
                let shown = b.type == .string ? StringEscaping.quoted(v.stringValue ?? "") : "\(v)"
                diagnostics.error(
                    "type-mismatch", "list element \(shown) is \(b.type), but the left side is \(elementType)", at: element.range)
                ok = false
                continue
            }
            values.append(v)
        }
        return ok ? values : nil
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
                    help: "versions are MAJOR.MINOR.PATCH with optional -PRERELEASE and +BUILD, as in \"2.3.0\";"
                        + " minor and patch may be left out (\"2.3\" is 2.3.0)")
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
        case .ip:
            guard let address = IPAddress(s) else {
                diagnostics.error(
                    "invalid-address", "\"\(s)\" is not an IP address", at: b.range,
                    help: IPBlock.hasBlockShape(s)
                        ? "'==' compares one address; to test a block, write 'in [\"\(s)\"]'"
                        : "write an address plainly, as 10.1.2.3 or 2001:db8::1 (no leading zeros, no zone)")
                return nil
            }
            return Bound(kind: .constant(.string(address.text)), type: .ip, range: b.range)
        case .dynamic where schemaless:
            if let v = SemanticVersion(s) { return Bound(kind: .constant(.version(v)), type: .version, range: b.range) }
            if let d = DateTime.parse(s) { return Bound(kind: .constant(.datetime(d)), type: .datetime, range: b.range) }
            return b
        default:
            return b
        }
    }

    /// The help line of an ordering of a type that has no order.
    static func orderingHelp(_ b: Bound) -> String? {
        if b.type.cases != nil { return "compare cases with '==' or 'in'" }
        if b.type.isList { return "count(…) gives the number of elements, which orders" }
        if b.type == .ip { return "test a range of addresses with a block: 'in [\"10.0.0.0/8\"]'" }
        return nil
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
    static func isTextual(_ t: FlagType) -> Bool { t == .string || t == .symbol || t.isDynamic }
}

extension Checker {
    /// `version(x)` or `datetime(x)`: one string or number (or a value of the type itself),
    /// read as a version or a datetime.
    mutating func conversion(_ kind: Conversion, _ arguments: [ExprSyntax], _ range: SourceRange, example: String) -> Bound? {
        let name = kind.rawValue
        guard arguments.count == 1 else {
            diagnostics.error("invalid-call", "\(name)() takes one string or number, as in \(example)", at: range)
            return nil
        }
        guard let text = expression(arguments[0]) else { return nil }
        let type: FlagType = kind == .version ? .version : .datetime
        guard [.string, type, .int, .double].contains(text.type) || text.type.isDynamic else {
            diagnostics.error("type-mismatch", "\(name)() takes a string or a number, found \(text.type)", at: text.range)
            return nil
        }
        return Bound(kind: .convert(text, kind), type: type, range: range)
    }
}
