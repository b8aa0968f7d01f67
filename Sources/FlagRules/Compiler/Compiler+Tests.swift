import Foundation

/// The tests of a list's elements, rollouts, enums and literal sets.
extension Compiler {
    /// The test of `any(…)` or `all(…)` on one element: the comparison the checker built with
    /// `element` bare on its left, the element given (what the general paths compute from
    /// a left value, which `QuantifierTests` holds the explanation to).
    func elementTest(_ test: Bound) -> @Sendable (Frame, Value) -> Truth {
        switch test.kind {
        case .compare(let op, _, let r):
            let rf = value(r)
            let addresses = r.type == .ip
            return { f, e in
                guard let b = rf(f) else { return .unknown }
                if op == .equal || op == .notEqual {
                    guard let eq = addresses ? Comparison.addressEqual(e, b) : Comparison.equal(e, b) else { return .unknown }
                    return Truth(eq != (op == .notEqual))
                }
                guard let o = Comparison.order(e, b) else { return .unknown }
                return Truth.comparison(op, order: o)
            }
        case .text(let op, _, let r):
            let rf = value(r)
            return { f, e in
                guard let c = rf(f) else { return .unknown }
                if op == .contains { return Comparison.contains(e, c) }
                guard case .string(let a) = e, case .string(let p) = c else { return .unknown }
                return Truth(op == .startsWith ? Comparison.hasPrefix(a, p) : Comparison.hasSuffix(a, p))
            }
        case .matches(_, let pattern):
            return { _, e in
                guard case .string(let s) = e else { return .unknown }
                return Truth(pattern.matches(s))
            }
        case .member(_, let values, let negated):
            let test = MemberTest(values)
            return { _, e in
                guard let found = test.contains(e) else { return .unknown }
                return Truth(found != negated)
            }
        case .network(_, let set, let negated):
            return { _, e in
                guard let address = IPAddress(e) else { return .unknown }
                return Truth(set.contains(address) != negated)
            }
        default:
            // (The checker builds no other test.)
            return { _, _ in .unknown }
        }
    }

    func vendorRolloutCompare(_ op: ComparisonOperator, _ unit: Bound, _ rollout: VendorRollout, _ t: Int) -> ConditionFunction {
        let u = bucketUnit(unit)
        return { f in
            guard let bucketUnit = u(f) else { return .unknown }
            return rollout.holds(bucketUnit, op, threshold: t)
        }
    }

    func rolloutCompare(_ op: ComparisonOperator, _ unit: Bound, _ salt: String, _ t: Int) -> ConditionFunction {
        let prefix = BucketKeyPrefix(salt: salt)
        if op == .less, case .attribute(let attribute, let slot?, let type) = unit.kind {
            // The common `rollout(attribute) < N%`, reading the slot in place.
            let coercion = coercion(type, slot: slot)
            if let path = PathRead(attribute) { return rolloutBelow(path, slot, coercion, prefix, t) }
            return rolloutBelow(NamedRead(attribute), slot, coercion, prefix, t)
        }
        let u = bucketUnit(unit)
        if op == .less {
            return { f in
                guard let bucketUnit = u(f) else { return .unknown }
                return Truth(Bucketing.bucket(hash: prefix.hash(bucketUnit, split: false)) < t)
            }
        }
        return { f in
            guard let bucketUnit = u(f) else { return .unknown }
            let bucket = Bucketing.bucket(hash: prefix.hash(bucketUnit, split: false))
            return Truth(Bucketing.rolloutHolds(op, bucket: bucket, threshold: t))
        }
    }

    /// `rollout(attribute) < N%`, the attribute read in place.
    private func rolloutBelow<R: DictionaryRead>(_ read: R, _ slot: Int, _ coercion: Coercion, _ prefix: BucketKeyPrefix, _ t: Int)
        -> ConditionFunction
    {
        { f in
            switch f.attribute(read, slot: slot, coercion) {
            case .string(let s)?: return Truth(Bucketing.bucket(hash: prefix.hash(string: s)) < t)
            case .int(let i)?: return Truth(Bucketing.bucket(hash: prefix.hash(.int(i), split: false)) < t)
            default: return .unknown
            }
        }
    }

    /// `enumAttribute in [cases]` (or `== case`) as a mask test on the case ordinal: from a
    /// prepared context's ordinals, or by looking the dictionary's string up among the cases.
    func enumTest(_ x: Bound, _ selected: [String], negated: Bool) -> ConditionFunction? {
        guard case .attribute(let attribute, let slot?, .enumeration(let cases)) = x.kind else { return nil }
        let table: EnumTable
        if case .enumeration(let shared) = coercion(.enumeration(cases), slot: slot) { table = shared } else { table = EnumTable(cases) }
        var mask = [Bool](repeating: false, count: cases.count)
        for s in selected {
            guard let o = table.ordinal(of: s) else { return nil }
            mask[o] = true
        }
        let selectedMask = ContiguousArray(mask)
        if let path = PathRead(attribute) { return enumTest(path, slot, table, selectedMask, negated) }
        return enumTest(NamedRead(attribute), slot, table, selectedMask, negated)
    }

    private func enumTest<R: DictionaryRead>(
        _ read: R, _ slot: Int, _ table: EnumTable, _ selectedMask: ContiguousArray<Bool>, _ negated: Bool
    ) -> ConditionFunction {
        { f in
            let o: Int
            if let slots = f.slots {
                o = Int(slots[slot].ordinal)
                if o < 0 { return .unknown }
            } else {
                guard case .string(let s)? = read.value(in: f), let found = table.ordinal(of: s) else { return .unknown }
                o = found
            }
            return Truth(selectedMask[o] != negated)
        }
    }

    func member(_ x: Bound, _ values: [Value], _ negated: Bool) -> ConditionFunction {
        var strings: [String] = []
        strings.reserveCapacity(values.count)
        for v in values { if let s = v.stringValue { strings.append(s) } }
        if strings.count == values.count, !values.isEmpty, let test = enumTest(x, strings, negated: negated) {
            return test
        }
        if strings.count == values.count, !values.isEmpty, case .attribute(let attribute, let slot?, let type) = x.kind,
            case .string = coercion(type, slot: slot)
        {
            return stringAttributeTest(attribute, slot: slot, LiteralSet(strings), negated: negated)
        }
        let xf = value(x)
        let test = MemberTest(values)
        return { f in
            guard let v = xf(f), let found = test.contains(v) else { return .unknown }
            return Truth(found != negated)
        }
    }

    /// `stringAttribute in [strings]`: the attribute's string looked up where it is (the
    /// dictionary's entry, or a prepared context's slot), without the general path's value
    /// closure and test of the value's type.
    func stringAttributeTest(_ attribute: String, slot: Int, _ set: LiteralSet, negated: Bool) -> ConditionFunction {
        if let path = PathRead(attribute) { return stringAttributeTest(path, slot: slot, set, negated: negated) }
        return stringAttributeTest(NamedRead(attribute), slot: slot, set, negated: negated)
    }

    private func stringAttributeTest<R: DictionaryRead>(_ read: R, slot: Int, _ set: LiteralSet, negated: Bool) -> ConditionFunction {
        { f in
            guard let slots = f.slots else {
                guard case .string(let s)? = read.value(in: f) else { return .unknown }
                return Truth(set.contains(s) != negated)
            }
            guard case .string(let s)? = slots[slot].typed else { return .unknown }
            return Truth(set.contains(s) != negated)
        }
    }
}
