import Foundation

/// Folding constant sub-expressions, and the closures that read values.
extension Compiler {
    // MARK: Folding

    /// Whether the expression reads nothing from the context or other declarations.
    func isPure(_ b: Bound) -> Bool {
        switch b.kind {
        case .constant, .percent: return true
        case .attribute, .declaration, .now, .has: return false
        case .ramp, .element: return false
        case .quantified(let x, let test, _): return isPure(x) && isPure(test)
        case .not(let x), .matches(let x, _), .member(let x, _, _), .rollout(let x, _), .vendorRollout(let x, _, _),
            .containsSet(let x, _, _), .count(let x),
            .lower(let x), .convert(let x, _), .network(let x, _, _):
            return isPure(x)
        case .and(let xs), .or(let xs), .coalesce(let xs): return xs.allSatisfy(isPure)
        case .compare(_, let x, let y), .text(_, let x, let y): return isPure(x) && isPure(y)
        }
    }

    /// Replaces constant sub-expressions by their values and simplifies `and`/`or`.
    func fold(_ b: Bound) -> Bound { folded(b) ?? b }

    /// The value of a `true` or `false` constant; nil for anything else.
    private static func boolConstant(_ b: Bound) -> Bool? {
        if case .constant(.bool(let v)) = b.kind { return v }
        return nil
    }

    /// `fold(b)`, or nil when nothing in `b` folds (most conditions: nothing is copied or
    /// rebuilt for them).
    func folded(_ b: Bound) -> Bound? {
        switch b.kind {
        case .constant, .percent, .attribute, .declaration, .now, .has:
            return nil
        case .and(let xs), .or(let xs):
            let isAnd: Bool
            if case .and = b.kind { isAnd = true } else { isAnd = false }
            var kept: [Bound]?  // made at the first operand that folds
            for (k, x) in xs.enumerated() {
                let f = folded(x)
                if let v = Compiler.boolConstant(f ?? x) {
                    if v != isAnd { return Bound(kind: .constant(.bool(v)), type: .bool, range: b.range) }
                    // `true and x` → x; `false or x` → x
                    if kept == nil { kept = Array(xs[..<k]) }
                    continue
                }
                if let f {
                    if kept == nil { kept = Array(xs[..<k]) }
                    kept?.append(f)
                } else {
                    kept?.append(x)
                }
            }
            guard let kept else { return nil }
            if kept.isEmpty { return Bound(kind: .constant(.bool(isAnd)), type: .bool, range: b.range) }
            if kept.count == 1 { return kept[0] }
            return Bound(kind: isAnd ? .and(kept) : .or(kept), type: .bool, range: b.range)
        default:
            guard isPure(b) else { return nil }
            let frame = Frame.empty
            if b.type == .bool {
                switch condition(b)(frame) {
                case .yes: return Bound(kind: .constant(.bool(true)), type: .bool, range: b.range)
                case .no: return Bound(kind: .constant(.bool(false)), type: .bool, range: b.range)
                case .unknown: return nil
                }
            }
            if let v = value(b)(frame) {
                return Bound(kind: .constant(v), type: b.type, range: b.range)
            }
            return nil
        }
    }

    // MARK: Values

    /// An operand of an address test: an `ip` attribute read as it was given (parsing it
    /// there is its check: its coercion would parse it once more), else `value(b)`.
    func addressValue(_ b: Bound) -> ValueFunction {
        guard case .attribute(let attribute, let slot, .ip) = b.kind else { return value(b) }
        if let path = PathRead(attribute) { return read(path, slot, .any) }
        return read(NamedRead(attribute), slot, .any)
    }

    /// An attribute's value: from its slot, or read from the dictionary and checked by
    /// `coercion`.
    private func read<R: DictionaryRead>(_ read: R, _ slot: Int?, _ coercion: Coercion) -> ValueFunction {
        guard let slot else {
            if case .any = coercion { return { f in read.value(in: f) } }
            return { f in read.value(in: f).flatMap(coercion.apply) }
        }
        return { f in f.attribute(read, slot: slot, coercion) }
    }

    func value(_ b: Bound) -> ValueFunction {
        switch b.kind {
        case .constant(let v):
            return { _ in v }
        case .percent(let t):
            let v = Value.double(Double(t) / 1000)
            return { _ in v }
        case .attribute(let attribute, let slot, let type):
            let coercion = coercion(type, slot: slot)
            if let path = PathRead(attribute) { return read(path, slot, coercion) }
            return read(NamedRead(attribute), slot, coercion)
        case .declaration(let i):
            return { f in f.withDeclaration(i) { $0.value(f) } }
        case .now:
            return { f in
                guard let v = f.value(named: Frame.now) else { return .datetime(Date()) }
                switch v {
                case .datetime: return v
                case .string(let s): return DateTime.parse(s).map { .datetime($0) }
                default: return nil
                }
            }
        case .coalesce(let xs):
            let fs = xs.map(value)
            return { f in
                for g in fs { if let v = g(f) { return v } }
                return nil
            }
        case .rollout(let unit, let salt):
            let u = bucketUnit(unit)
            let prefix = BucketKeyPrefix(salt: salt)
            return { f in
                guard let bucketUnit = u(f) else { return nil }
                return .double(Double(Bucketing.bucket(hash: prefix.hash(bucketUnit, split: false))) / 1000)
            }
        case .vendorRollout(let unit, let salt, let scheme):
            let u = bucketUnit(unit)
            let rollout = VendorRollout(salt: salt, scheme: scheme)
            return { f in
                guard let bucketUnit = u(f), let p = rollout.percent(bucketUnit) else { return nil }
                return .double(p)
            }
        case .count(let x):
            let xf = value(x)
            return { f in
                guard let v = xf(f), let elements = ListOperations.elements(v) else { return nil }
                return .int(elements.count)
            }
        case .lower(let x):
            let xf = value(x)
            return { f in ListOperations.lower(xf(f)) }
        case .convert(let x, .version):
            let xf = value(x)
            return { f in ListOperations.version(xf(f)) }
        case .convert(let x, .datetime):
            let xf = value(x)
            return { f in ListOperations.datetime(xf(f)) }
        case .ramp(let from, let to, let start, let end):
            return { f in
                guard let now = ListOperations.now(f.value(named: Frame.now)) else { return nil }
                return .double(ListOperations.ramp(now: now, from: from, to: to, start: start, end: end))
            }
        case .element:
            // (Read by `elementTest` alone, which the element is given to.)
            return { _ in nil }
        case .not, .and, .or, .compare, .member, .text, .matches, .has, .containsSet, .network, .quantified:
            let c = condition(b)
            return { f in
                switch c(f) {
                case .yes: return .bool(true)
                case .no: return .bool(false)
                case .unknown: return nil
                }
            }
        }
    }
}
