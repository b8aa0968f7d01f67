import FlagRules
import Foundation

extension FlagdImport {
    // MARK: Conditions

    /// An ordering with its sides swapped (`N < x` is `x > N`).
    static let flippedOrder = ["<": ">", "<=": ">=", ">": "<", ">=": "<="]

    /// `{"<": [{"var": "$flagd.timestamp"}, N]}` (either side): flagd's timestamp is the
    /// whole seconds since 1970, so `timestamp > N` holds from the second after N on: a test
    /// of `now` against that instant. Nil for another form.
    static func timestampTest(_ op: String, _ args: [JSON]) -> ImportedCondition? {
        func isTimestamp(_ j: JSON) -> Bool {
            guard case .object(let members) = j, members.count == 1, members[0].0 == "var" else { return false }
            return members[0].1.string == "$flagd.timestamp" || members[0].1.elements == [.string("$flagd.timestamp")]
        }
        let symbol: String
        let bound: Double
        if isTimestamp(args[0]), let n = GrowthBookImport.number(args[1]) {
            (symbol, bound) = (op, n)
        } else if isTimestamp(args[1]), let n = GrowthBookImport.number(args[0]) {
            (symbol, bound) = (Self.flippedOrder[op]!, n)
        } else {
            return nil
        }
        guard bound.isFinite, abs(bound) < 1e11 else { return nil }
        // floor(now) > N ⟺ now ≥ floor(N) + 1; ≥ N ⟺ now ≥ ceil(N); < N ⟺ now < ceil(N);
        // ≤ N ⟺ now < floor(N) + 1.
        let (instant, compare): (Double, String) =
            switch symbol {
            case ">": (bound.rounded(.down) + 1, ">=")
            case ">=": (bound.rounded(.up), ">=")
            case "<": (bound.rounded(.up), "<")
            default: (bound.rounded(.down) + 1, "<")
            }
        let text = DateTime.format(Date(timeIntervalSince1970: instant))
        return .atom("now \(compare) \(StringEscaping.quoted(text))")
    }

    /// A JsonLogic test as a condition. `negated`: under an odd number of `!`, where a
    /// comparison with a missing attribute must read false, not unknown.
    mutating func condition(_ json: JSON, negated: Bool, at: String, depth: Int) throws(Untranslatable) -> ImportedCondition {
        func fail(_ why: String) -> Untranslatable {
            notes.append(ImportNote(.notImported, at: at, why + "; the flag is left out"))
            return Untranslatable()
        }
        budget -= 1
        guard depth < 32, budget > 0 else { throw fail("a condition nested over 32 levels, or too large") }
        if case .bool(let b) = json { return b ? .always : .never }
        guard case .object(let members) = json, members.count == 1 else { throw fail("a condition is one JsonLogic operation") }
        let (op, argument) = members[0]
        let args = argument.elements ?? [argument]
        func guarded(_ path: String, _ atom: ImportedCondition) -> ImportedCondition {
            negated ? .and([.atom("has(\(path))"), atom]) : atom
        }
        /// The attribute and the literal of a comparison, whichever side each is on.
        func operands() throws(Untranslatable) -> (path: String, literal: JSON, swapped: Bool) {
            guard args.count == 2 else { throw fail("'\(op)' compares two values here") }
            if let path = Self.variable(args[0]), ImportedSource.literal(args[1]) != nil { return (path, args[1], false) }
            if let path = Self.variable(args[1]), ImportedSource.literal(args[0]) != nil { return (path, args[0], true) }
            throw fail("'\(op)' between an attribute and a literal is what is imported")
        }
        switch op {
        case "and", "or":
            var parts: [ImportedCondition] = []
            for (i, part) in args.enumerated() {
                parts.append(try condition(part, negated: negated, at: "\(at).\(op)[\(i)]", depth: depth + 1))
            }
            return op == "and" ? .and(parts) : .or(parts)
        case "!":
            return .negated(try condition(args[0], negated: !negated, at: "\(at).!", depth: depth + 1))
        case "$ref":
            guard let name = argument.string, let shared = evaluators[name] else { throw fail("$ref names no evaluator of the file") }
            if let segment = segmentNames[name] { return .atom(segment) }
            guard !writing.contains(name) else { throw fail("evaluator '\(name)' refers to itself") }
            guard filled(name) else { throw fail(Self.unfilled(name, insideEvaluator)) }
            let outer = insideEvaluator
            insideEvaluator = name
            defer { insideEvaluator = outer }
            // A segment, written once, true or false as JsonLogic's test is (never unknown),
            // so that it reads the same under a negation.
            writing.insert(name)
            defer { writing.remove(name) }
            let inner = try condition(shared, negated: false, at: "$evaluators.\(name)", depth: depth + 1)
            let segment = names.name(for: "$evaluators." + name, base: name)
            segmentNames[name] = segment
            segments.append((segment, ["The shared evaluator '\(name)' of the flagd file."], inner.knownOrFalse))
            return .atom(segment)
        case "==", "===", "!=", "!==":
            let (path, literal, _) = try operands()
            // JsonLogic's loose == takes a missing value (null) as equal to 0 and false.
            if op == "==" || op == "!=", literal == .int(0) || literal == .double(0) || literal == .bool(false) {
                let equal = ImportedCondition.or([.not(.atom("has(\(path))")), .atom("\(path) == \(ImportedSource.literal(literal)!)")])
                return op == "==" ? equal : .negated(equal)
            }
            let equal = guarded(path, .atom("\(path) == \(ImportedSource.literal(literal)!)"))
            if op.hasPrefix("!") {
                // The inner comparison is under one more negation.
                return .negated(
                    negated
                        ? .atom("\(path) == \(ImportedSource.literal(literal)!)")
                        : .and([.atom("has(\(path))"), .atom("\(path) == \(ImportedSource.literal(literal)!)")]))
            }
            return equal
        case "<", "<=", ">", ">=":
            // A missing value compares as JsonLogic compares null: as 0 with a number, as
            // the text "null" with a string.
            func missingHolds(_ symbol: String, _ literal: JSON) -> Bool? {
                if let n = GrowthBookImport.number(literal) {
                    return ["<": 0 < n, "<=": 0 <= n, ">": 0 > n, ">=": 0 >= n][symbol]!
                }
                if let text = literal.string {
                    let order = Self.compareScalars("null", text)
                    return ["<": order < 0, "<=": order <= 0, ">": order > 0, ">=": order >= 0][symbol]!
                }
                return nil
            }
            func read(_ holds: Bool?, _ path: String, _ atom: ImportedCondition) -> ImportedCondition {
                guard let holds else { return guarded(path, atom) }
                return holds ? .or([.not(.atom("has(\(path))")), atom]) : .and([.atom("has(\(path))"), atom])
            }
            if args.count == 3, let path = Self.variable(args[1]), let low = ImportedSource.literal(args[0]),
                let high = ImportedSource.literal(args[2])
            {
                // A between: low < x < high.
                let lower = op == "<" ? ">" : ">="
                let both: Bool? = missingHolds(lower, args[0]).flatMap { a in missingHolds(op, args[2]).map { a && $0 } }
                return read(both, path, .and([.atom("\(path) \(lower) \(low)"), .atom("\(path) \(op) \(high)")]))
            }
            if args.count == 2, let test = Self.timestampTest(op, args) { return test }
            let (path, literal, swapped) = try operands()
            let symbol = swapped ? Self.flippedOrder[op]! : op
            return read(missingHolds(symbol, literal), path, .atom("\(path) \(symbol) \(ImportedSource.literal(literal)!)"))
        case "in":
            guard args.count == 2 else { throw fail("'in' takes two values") }
            if let path = Self.variable(args[0]), let list = args[1].elements {
                let strings = list.compactMap(\.string).map(StringEscaping.quoted)
                let numbers = list.compactMap { v -> String? in
                    switch v {
                    case .int, .double: ImportedSource.literal(v);
                    default: nil
                    }
                }
                var tests: [ImportedCondition] = []
                for group in [strings, numbers] where !group.isEmpty {
                    tests.append(guarded(path, .atom("\(path) in [\(group.joined(separator: ", "))]")))
                }
                for case .bool(let b) in list { tests.append(guarded(path, .atom("\(path) == \(b)"))) }
                // A missing value is null, which a list holding null holds.
                if list.contains(.null) { tests.append(.not(.atom("has(\(path))"))) }
                return .or(tests)
            }
            if let text = args[0].string, let path = Self.variable(args[1]) {
                return guarded(path, .atom("\(path) contains \(StringEscaping.quoted(text))"))
            }
            throw fail("'in' of an attribute in a list, or of a string in an attribute, is what is imported")
        case "starts_with", "ends_with", "sem_ver":
            // Where flagd's answer is null (an attribute missing or of another type, a text
            // that is no version, arguments of another form), a JsonLogic test reads false,
            // and its `!` true: the test is known or false, as at the top of a targeting.
            do {
                return try Self.readableTest(op, args).map(\.knownOrFalse) ?? .never
            } catch {
                throw fail("'\(op)' of an attribute and literals is what is imported")
            }
        default:
            throw fail("'\(op)' as a condition has no .flags form")
        }
    }
}
