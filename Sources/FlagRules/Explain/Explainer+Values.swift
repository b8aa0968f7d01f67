import Foundation

/// What the operands of a condition hold, each with its trace.
extension Explainer {
    // MARK: Values

    /// The value of an attribute or a path (`org.billing.country`), or why it is absent:
    /// `org is absent`, `org is "acme" (string), not an object`, `org has no field plan`.
    func read(_ name: String) -> (Value?, why: String) {
        let parts = Path.names(name)
        guard var current = values[parts[0]] else { return (nil, "\(parts[0]) is absent") }
        var path = parts[0]
        for field in parts.dropFirst() {
            guard case .object(let fields) = current else {
                return (nil, "\(path) is \(current) (\(current.typeName)), not an object")
            }
            guard let next = fields[field] else { return (nil, "\(path) has no field \(field)") }
            current = next
            path += "." + field
        }
        return (current, "")
    }

    package func value(_ b: Bound) -> (Value?, ExpressionTrace) {
        let t = text(b.range)
        switch b.kind {
        case .constant(let v):
            return (v, ExpressionTrace(text: t, result: t, note: nil, children: []))
        case .percent(let p):
            return (.double(Double(p) / 1000), ExpressionTrace(text: t, result: t, note: nil, children: []))
        case .attribute(let name, _, let type):
            let (found, why) = read(name)
            guard let raw = found else {
                return (nil, ExpressionTrace(text: t, result: "absent", note: why, children: []))
            }
            guard let v = Coercion(type).apply(raw) else {
                let expected = type.cases != nil ? "one of \(type.cases!.joined(separator: ", "))" : "\(type)"
                return (
                    nil,
                    ExpressionTrace(
                        text: t, result: "unknown", note: "\(name) is \(raw) (\(raw.typeName)), expected \(expected)", children: [])
                )
            }
            return (v, ExpressionTrace(text: t, result: Explainer.show(v), note: nil, children: []))
        case .declaration(let i):
            let d = checked.declarations[i]
            if d.kind == .segment {
                let (truth, trace) = self.truth(b)
                return (truth == .unknown ? nil : .bool(truth == .yes), trace)
            }
            let r = resolve(i)
            var details = [r.reason.rawValue]
            if let rule = r.rule { details.append("rule \(rule)") }
            if r.isFallback {
                // (The caller's default is not known to the rules that read it.)
                details.append("fallback: the caller's default, unknown here")
                return (
                    nil,
                    ExpressionTrace(text: t, result: "unknown", note: "\(d.kind.rawValue) " + details.joined(separator: ", "), children: [])
                )
            }
            if r.reason == .split, let slice = slice(of: i, r) { details.append(slice) }
            return (
                r.value,
                ExpressionTrace(
                    text: t, result: r.variant ?? Explainer.show(r.value),
                    note: "\(d.kind.rawValue) " + details.joined(separator: ", "), children: [])
            )
        case .now:
            if let v = values["now"] {
                let parsed: Value? = {
                    switch v {
                    case .datetime: return v
                    case .string(let s): return DateTime.parse(s).map { .datetime($0) }
                    default: return nil
                    }
                }()
                guard let parsed else {
                    return (nil, ExpressionTrace(text: t, result: "unknown", note: "now is \(v), not a datetime", children: []))
                }
                return (parsed, ExpressionTrace(text: t, result: parsed.description, note: "from the context", children: []))
            }
            let v = Value.datetime(Date())
            return (v, ExpressionTrace(text: t, result: v.description, note: "the clock", children: []))
        case .coalesce(let xs):
            var traces: [ExpressionTrace] = []
            for x in xs {
                let (v, trace) = value(x)
                traces.append(trace)
                if let v {
                    return (v, ExpressionTrace(text: t, result: Explainer.show(v), note: nil, children: traces.filter { !$0.isConstant }))
                }
            }
            return (nil, ExpressionTrace(text: t, result: "unknown", note: "no operand is known", children: traces))
        case .rollout(let unit, let salt):
            let (u, unitTrace) = value(unit)
            guard let u, let bucketUnit = BucketUnit(u) else {
                let note = u == nil ? (unitTrace.note ?? "the unit is unknown") : "\(u!) (\(u!.typeName)) cannot be a unit"
                return (nil, ExpressionTrace(text: t, result: "unknown", note: note, children: [unitTrace]))
            }
            let bucket = Bucketing.bucket(hash: BucketKeyPrefix(salt: salt).hash(bucketUnit, split: false))
            let v = Value.double(Double(bucket) / 1000)
            return (
                v,
                ExpressionTrace(
                    text: t, result: Explainer.percent(bucket),
                    note: "key \"\(salt):\(Explainer.unitText(bucketUnit))\"", children: unitTrace.isConstant ? [] : [unitTrace])
            )
        case .vendorRollout(let unit, let salt, let scheme):
            let (u, unitTrace) = value(unit)
            let rollout = VendorRollout(salt: salt, scheme: scheme)
            guard let u, let bucketUnit = BucketUnit(u) else {
                let note = u == nil ? (unitTrace.note ?? "the unit is unknown") : "\(u!) (\(u!.typeName)) cannot be a unit"
                return (nil, ExpressionTrace(text: t, result: "unknown", note: note, children: [unitTrace]))
            }
            guard let p = rollout.percent(bucketUnit) else {
                return (
                    nil,
                    ExpressionTrace(text: t, result: "unknown", note: "\(scheme.rawValue) leaves an empty unit out", children: [unitTrace])
                )
            }
            return (
                .double(p),
                ExpressionTrace(
                    text: t, result: Value.format(p) + "%", note: "\(scheme.rawValue): " + rollout.key(bucketUnit),
                    children: unitTrace.isConstant ? [] : [unitTrace])
            )
        case .count(let x):
            let (v, trace) = value(x)
            guard let v else { return (nil, ExpressionTrace(text: t, result: "unknown", note: trace.note, children: [trace])) }
            guard let elements = ListOperations.elements(v) else {
                return (nil, ExpressionTrace(text: t, result: "unknown", note: Explainer.notAList(v), children: [trace]))
            }
            return (.int(elements.count), ExpressionTrace(text: t, result: String(elements.count), note: nil, children: [trace]))
        case .lower(let x):
            let (v, trace) = value(x)
            guard let lowered = ListOperations.lower(v) else {
                let note = v == nil ? trace.note : "\(v!) (\(v!.typeName)) is not a string or a list of strings"
                return (nil, ExpressionTrace(text: t, result: "unknown", note: note, children: [trace]))
            }
            return (
                lowered, ExpressionTrace(text: t, result: Explainer.show(lowered), note: nil, children: trace.isConstant ? [] : [trace])
            )
        case .convert(let x, let conversion):
            let (v, trace) = value(x)
            guard let version = conversion == .version ? ListOperations.version(v) : ListOperations.datetime(v) else {
                let note = v == nil ? trace.note : "\(v!) (\(v!.typeName)) is not a \(conversion.rawValue)"
                return (nil, ExpressionTrace(text: t, result: "unknown", note: note, children: [trace]))
            }
            return (
                version, ExpressionTrace(text: t, result: Explainer.show(version), note: nil, children: trace.isConstant ? [] : [trace])
            )
        case .ramp(let from, let to, let start, let end):
            let given = values["now"]
            guard let now = ListOperations.now(given) else {
                return (nil, ExpressionTrace(text: t, result: "unknown", note: "now is \(given!), not a datetime", children: []))
            }
            let v = ListOperations.ramp(now: now, from: from, to: to, start: start, end: end)
            let when = "now \(DateTime.format(now))" + (given == nil ? " (the clock)" : "")
            let note: String
            if now <= from {
                note = "\(when): before the ramp starts"
            } else if now >= to {
                note = "\(when): the ramp has ended"
            } else {
                let share = now.timeIntervalSince(from) / to.timeIntervalSince(from) * 100
                note =
                    "\(when): \(Value.format((share * 10).rounded() / 10))% of the way from \(DateTime.format(from)) to \(DateTime.format(to))"
            }
            return (.double(v), ExpressionTrace(text: t, result: Value.format(v), note: note, children: []))
        case .element:
            return (element, ExpressionTrace(text: t, result: element.map(Explainer.show) ?? "absent", note: nil, children: []))
        case .not, .and, .or, .compare, .member, .text, .matches, .has, .containsSet, .network, .quantified:
            let (truth, trace) = self.truth(b)
            return (truth == .unknown ? nil : .bool(truth == .yes), trace)
        }
    }

    /// Why a value is not a list that list operations read.
    static func notAList(_ v: Value) -> String {
        if case .list = v { return "\(v) does not hold elements of one type (strings or ints)" }
        return "\(v) (\(v.typeName)) is not a list"
    }

    static func percent(_ thousandths: Int) -> String {
        let frac = String(thousandths % 1000)
        return "\(thousandths / 1000).\(String(repeating: "0", count: 3 - frac.count))\(frac)%"
    }
}
