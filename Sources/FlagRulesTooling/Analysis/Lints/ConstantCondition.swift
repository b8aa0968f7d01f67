import FlagRules

extension Lint {
    /// FR104: a condition (or a part of one) that is always false or always true whatever
    /// the context holds: `x in []`, `build in [every case]`, `build == debug and build ==
    /// release`, `age > 5 and age < 3`, `lower(x) == "Foo"`, `lower(x) ends with "Foo"`. The rule it stands in is dead,
    /// or the comparison says nothing.
    static let constantCondition = Lint(
        code: "FR104", name: "constant-condition", summary: "a condition that is always false or always true"
    ) { input in
        var out: [Diagnostic] = []
        func report(_ b: Bound, _ always: Bool, _ why: String, help: String? = nil) {
            out.append(
                .warning(
                    "FR104", "'\(input.text(b.range))' is always \(always ? "true" : "false") when known: \(why)", at: b.range,
                    help: help))
        }
        for condition in input.conditions {
            condition.forEach { b in
                switch b.kind {
                case .member(let x, let values, let negated):
                    // (Inside any(…) or all(…), the quantifier decides: all(x) in [] holds of
                    // an empty list.)
                    if case .element = x.kind { return }
                    if values.isEmpty {
                        report(b, negated, "the list is empty")
                    } else if case .enumeration(let cases) = x.type, Set(values.compactMap(\.stringValue)).isSuperset(of: cases) {
                        report(b, !negated, "the list holds every case of \(x.type)", help: negated ? nil : "test presence with has(…)")
                    }
                case .compare(.equal, let l, let r), .compare(.notEqual, let l, let r):
                    // `lower(x) == "Foo"`: a lowercased string never equals text with capitals.
                    guard case .lower = l.kind, case .constant(.string(let s)) = r.kind, ListOperations.lower(s) != s else { return }
                    if case .compare(let op, _, _) = b.kind {
                        report(
                            b, op == .notEqual, "lower(…) has no capitals", help: "write \(StringEscaping.quoted(ListOperations.lower(s)))")
                    }
                case .text(let op, let l, let r):
                    // `lower(x) ends with "@Example.com"`: a lowercased string holds no capitals.
                    guard case .lower = l.kind, case .constant(.string(let s)) = r.kind, ListOperations.lower(s) != s else { return }
                    report(
                        b, false, "lower(…) has no capitals, so it never \(op.rawValue) text that has some",
                        help: "write \(StringEscaping.quoted(ListOperations.lower(s)))")
                case .and(let operands):
                    if let why = Lint.contradiction(operands) { report(b, false, why) }
                default:
                    return
                }
            }
        }
        return out
    }

    /// Why the operands of an `and` cannot all hold, if they cannot: two different cases
    /// required of one enum attribute, or bounds on one number that leave no value.
    static func contradiction(_ operands: [Bound]) -> String? {
        var cases: [String: String] = [:]
        var lower: [String: (Double, Bool)] = [:]  // name → (bound, inclusive)
        var upper: [String: (Double, Bool)] = [:]
        for o in operands {
            guard case .compare(let op, let l, let r) = o.kind, case .attribute(let name, _, let type) = l.kind,
                case .constant(let v) = r.kind
            else { continue }
            if type.cases != nil, op == .equal, let c = v.stringValue {
                if let other = cases[name], other != c { return "\(name) cannot be both \(other) and \(c)" }
                cases[name] = c
            }
            guard type.isNumeric, let d = v.doubleValue else { continue }
            switch op {
            case .greater, .greaterEqual, .equal:
                let bound = (d, op != .greater)
                if let current = lower[name], current.0 > d || current.0 == d && !current.1 { break }
                lower[name] = bound
            default: break
            }
            switch op {
            case .less, .lessEqual, .equal:
                let bound = (d, op != .less)
                if let current = upper[name], current.0 < d || current.0 == d && !current.1 { break }
                upper[name] = bound
            default: break
            }
            if let lo = lower[name], let hi = upper[name], lo.0 > hi.0 || lo.0 == hi.0 && !(lo.1 && hi.1) {
                func shown(_ d: Double) -> String { d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : Value.format(d) }
                return "no value of \(name) is both \(lo.1 ? "≥" : ">") \(shown(lo.0)) and \(hi.1 ? "≤" : "<") \(shown(hi.0))"
            }
        }
        return nil
    }
}
