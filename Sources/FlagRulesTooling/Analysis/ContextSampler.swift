import FlagRules
import Foundation

/// Generates contexts for measuring what a rules change does (`flags diff`) when no real
/// contexts are given: every attribute the files declare or read takes values that land on
/// both sides of every test written against it.
///
/// - An enum or `bool` attribute takes each of its cases.
/// - A number takes every literal it is compared with, one below and one above (0.01 for
///   a `double`); a version every version literal and its neighbours (`2.3.0` → `2.2.0`,
///   `2.3.0`, `2.3.1`); a datetime every literal and a second either side.
/// - A string takes the literals it is compared with or listed against, a value that
///   starts or ends with each prefix or suffix, upper-case forms where it is read through
///   `lower(…)`, and one value no rule names.
/// - An address takes the first and last address of every listed block and the ones just
///   outside; a list a random subset of the elements its rules name.
/// - An attribute used as a `rollout(…)` or `split(…)` unit takes a fresh random id in
///   every context, so that rollouts and splits are sampled in proportion.
///
/// Each context picks every other attribute's value at random from its candidates, and
/// leaves it absent one time in twenty. The same files, count and seed give the same
/// contexts.
package struct ContextSampler: Sendable {
    /// What one attribute may hold.
    struct Candidates: Sendable {
        var values: [Value] = []
        /// For a list attribute: the elements a list is drawn from.
        var elements: [Value] = []
        var isList = false
        /// A rollout or split unit: a random id in every context.
        var isUnit = false
        /// Whether a unit's ids are integers.
        var unitIsInt = false
        /// Whether a schema declares the attribute (else its values are the literals alone).
        var isDeclared = false

        mutating func add(_ value: Value) {
            if !values.contains(value) { values.append(value) }
        }

        mutating func addElement(_ value: Value) {
            if !elements.contains(value) { elements.append(value) }
        }
    }

    /// The attributes in name order, with their candidates.
    let attributes: [(name: String, candidates: Candidates)]

    /// Candidates for every attribute that the rule sets declare or read.
    package init(_ ruleSets: [RuleSet]) {
        var table: [String: Candidates] = [:]
        for rules in ruleSets {
            let checked = rules.checked
            for a in checked.schema?.attributes ?? [] {
                ContextSampler.seed(&table[a.name, default: Candidates()], type: a.type)
            }
            for d in checked.declarations {
                var conditions: [Bound] = []
                if let c = d.condition { conditions.append(c) }
                for rule in d.rules {
                    if let c = rule.condition { conditions.append(c) }
                    if case .split(let s) = rule.outcome {
                        conditions.append(s.unit)
                        if let (name, type) = ContextSampler.attribute(s.unit) {
                            ContextSampler.markUnit(&table[name, default: Candidates()], type)
                        }
                    }
                }
                for c in conditions { c.forEach { ContextSampler.gather($0, into: &table) } }
            }
        }
        for (name, c) in table where !c.isDeclared && c.values.contains(where: { $0.stringValue != nil }) {
            table[name]?.add(.string("unnamed"))
        }
        attributes = table.sorted { $0.key < $1.key }.map { (name: $0.key, candidates: $0.value) }
    }

    /// `count` contexts drawn with `seed`.
    package func contexts(count: Int, seed: UInt64) -> [EvaluationContext] {
        var random = SeededGenerator(seed: seed)
        var out: [EvaluationContext] = []
        out.reserveCapacity(count)
        for _ in 0..<count {
            var values: [String: Value] = [:]
            for (name, c) in attributes {
                if c.isUnit {
                    values[name] =
                        c.unitIsInt
                        ? .int(Int.random(in: 0..<1_000_000_000, using: &random))
                        : .string("user-" + String(UInt32.random(in: 0...UInt32.max, using: &random), radix: 36))
                    continue
                }
                if Int.random(in: 0..<20, using: &random) == 0 { continue }
                if c.isList {
                    // A list a rule names whole (`tags == ["a", "b"]`), or some of the elements.
                    let whole = c.values.filter { if case .list = $0 { true } else { false } }
                    values[name] =
                        !whole.isEmpty && Bool.random(using: &random)
                        ? whole[Int.random(in: 0..<whole.count, using: &random)]
                        : .list(c.elements.filter { _ in Bool.random(using: &random) })
                } else if !c.values.isEmpty {
                    values[name] = c.values[Int.random(in: 0..<c.values.count, using: &random)]
                }
            }
            // A path's value goes into its objects (sorted: an object before its fields).
            var context = EvaluationContext()
            for (name, value) in values.sorted(by: { $0.key < $1.key }) { context.set(value, atPath: name) }
            out.append(context)
        }
        return out
    }

    /// The values every attribute of `type` can take before any literal is seen.
    static func seed(_ c: inout Candidates, type: FlagType) {
        c.isDeclared = true
        switch type {
        case .bool:
            c.add(.bool(true))
            c.add(.bool(false))
        case .enumeration(let cases), .variant(_, let cases):
            for name in cases { c.add(.string(name)) }
        case .int: c.add(.int(0))
        case .double: c.add(.double(0))
        case .string: c.add(.string("unnamed"))
        case .version: c.add(.string("1.0.0"))
        case .ip: c.add(.string("192.0.2.1"))
        case .list(let element):
            c.isList = true
            if let cases = element.cases { for name in cases { c.addElement(.string(name)) } }
        case .datetime, .object, .symbol, .dynamic: break
        }
    }

    /// The attribute an expression reads directly (or through `lower(…)`), with its type.
    static func attribute(_ b: Bound) -> (String, FlagType)? {
        switch b.kind {
        case .attribute(let name, _, let type): return (name, type)
        case .lower(let inner), .convert(let inner, _): return attribute(inner)
        default: return nil
        }
    }

    static func markUnit(_ c: inout Candidates, _ type: FlagType) {
        c.isUnit = true
        if type == .int { c.unitIsInt = true }
    }

    /// Adds the candidates one sub-expression suggests.
    static func gather(_ b: Bound, into table: inout [String: Candidates]) {
        switch b.kind {
        case .compare(_, let x, let y):
            for (side, other) in [(x, y), (y, x)] {
                guard case .constant(let literal) = other.kind else { continue }
                // A list literal (`tags == ["a", "b"]`): that list, and its elements.
                if case .list(let values) = literal, let (name, _) = attribute(side) {
                    table[name, default: Candidates()].isList = true
                    table[name, default: Candidates()].add(literal)
                    for v in values { table[name, default: Candidates()].addElement(v) }
                    continue
                }
                if let (name, _) = attribute(side) {
                    let lowered = { if case .lower = side.kind { return true } else { return false } }()
                    for v in around(literal, lowered: lowered) { table[name, default: Candidates()].add(v) }
                }
                if case .count(let list) = side.kind, let (name, _) = attribute(list) {
                    table[name, default: Candidates()].isList = true
                }
            }
        case .member(let x, let values, _):
            if let (name, _) = attribute(x) { for v in values { table[name, default: Candidates()].add(v) } }
        case .text(let op, let x, let y):
            guard let (name, type) = attribute(x), case .constant(.string(let s)) = y.kind else { break }
            if type.isList {
                table[name, default: Candidates()].isList = true
                table[name, default: Candidates()].addElement(.string(s))
                break
            }
            let forms: [String]
            switch op {
            case .startsWith: forms = [s, s + "-x"]
            case .endsWith: forms = [s, "x-" + s]
            default: forms = [s, "x-" + s + "-x"]
            }
            for f in forms { table[name, default: Candidates()].add(.string(f)) }
        case .containsSet(let x, let values, _):
            if let (name, _) = attribute(x) {
                table[name, default: Candidates()].isList = true
                for v in values { table[name, default: Candidates()].addElement(v) }
            }
        case .network(let x, let set, _):
            if let (name, _) = attribute(x) {
                for a in set.edgeAddresses { table[name, default: Candidates()].add(.string(a.text)) }
            }
        case .quantified(let list, let test, _):
            // `any(tags) starts with "qa-"`: elements on either side of the test's.
            guard let (name, _) = attribute(list) else { break }
            table[name, default: Candidates()].isList = true
            var elements: [Value] = []
            switch test.kind {
            case .compare(_, _, let y):
                if case .constant(let literal) = y.kind { elements = around(literal, lowered: false) }
            case .member(_, let values, _): elements = values
            case .text(let op, _, let y):
                if case .constant(.string(let s)) = y.kind {
                    elements = (op == .startsWith ? [s, s + "-x"] : op == .endsWith ? [s, "x-" + s] : [s, "x-" + s + "-x"]).map(
                        Value.string)
                }
            case .network(_, let set, _): elements = set.edgeAddresses.map { .string($0.text) }
            default: break
            }
            for e in elements { table[name, default: Candidates()].addElement(e) }
        case .rollout(let x, _):
            if let (name, type) = attribute(x) { markUnit(&table[name, default: Candidates()], type) }
        case .has(let name, _):
            _ = table[name, default: Candidates()]
        default:
            break
        }
    }

    /// A literal and the values just either side of it, as a context would hold them.
    static func around(_ literal: Value, lowered: Bool) -> [Value] {
        switch literal {
        case .int(let i):
            return [i == .min ? i : i - 1, i, i == .max ? i : i + 1].map(Value.int)
        case .double(let d):
            return [d - 0.01, d, d + 0.01].map(Value.double)
        case .string(let s):
            return lowered ? [.string(s), .string(s.uppercased()), .string(s.capitalized)] : [.string(s)]
        case .version(let v):
            let below =
                v.patch > 0
                ? "\(v.major).\(v.minor).\(v.patch - 1)"
                : v.minor > 0 ? "\(v.major).\(v.minor - 1).0" : v.major > 0 ? "\(v.major - 1).0.0" : "0.0.0-0"
            return [.string(below), .string(v.description), .string("\(v.major).\(v.minor).\(v.patch + 1)")]
        case .datetime(let d):
            return [d.addingTimeInterval(-1), d, d.addingTimeInterval(1)].map { .string(DateTime.format($0)) }
        case .bool: return [.bool(true), .bool(false)]
        case .list, .object: return []
        }
    }
}
