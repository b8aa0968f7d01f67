import Foundation

/// The operations on lists, `lower` and `ramp`, shared by the compiled rules and the
/// explainer so that the two cannot disagree.
package enum ListOperations {
    /// A list's elements when it is a list of scalars (strings, numbers, bools, of one type
    /// or several: each operation compares element by element, and an element of another
    /// type than what it is compared with is unknown there); nil for anything else (not a
    /// list, a nested list or object, or a `null` element, read as an empty list): unknown.
    @inline(__always)
    static func elements(_ v: Value) -> [Value]? {
        guard case .list(let elements) = v else { return nil }
        for e in elements {
            switch e {
            case .string, .int, .double, .bool: continue
            default: return nil
            }
        }
        return elements
    }

    /// `list contains x`: whether an element equals `x`; nil when none does and an element
    /// does not compare with `x` (an element of another type could be it).
    static func contains(_ elements: [Value], _ x: Value) -> Bool? {
        var unknown = false
        for e in elements {
            guard let eq = Comparison.equal(e, x) else {
                unknown = true
                continue
            }
            if eq { return true }
        }
        return unknown ? nil : false
    }

    /// `list contains any [set]` (`all` false) or `contains all [set]` (`all` true): nil
    /// when the answer is not found and an element of the list is of a type the literal
    /// list cannot hold (it could have been one of them).
    static func containsSet(_ elements: [Value], _ set: LiteralIndex, all: Bool) -> Bool? {
        if all {
            let needed = set.count
            if needed == 0 { return true }
            var unknown = false
            if needed <= 64 {
                var seen: UInt64 = 0
                for e in elements {
                    guard let found = set.index(of: e) else {
                        unknown = true
                        continue
                    }
                    if let i = found { seen |= 1 << UInt64(i) }
                }
                return seen.nonzeroBitCount == needed ? true : unknown ? nil : false
            }
            var seen = [Bool](repeating: false, count: needed)
            var count = 0
            for e in elements {
                guard let found = set.index(of: e) else {
                    unknown = true
                    continue
                }
                if let i = found, !seen[i] {
                    seen[i] = true
                    count += 1
                }
            }
            return count == needed ? true : unknown ? nil : false
        }
        var unknown = false
        for e in elements {
            switch set.index(of: e) {
            case .some(.some): return true
            case .some(.none): continue
            case .none: unknown = true
            }
        }
        return unknown ? nil : false
    }

    /// `version(s)`: a version as itself; a string as a quoted version, after one leading
    /// `v` or `V` (`"v2.3"` is 2.3.0), and a number as its decimal text (`1.2` is 1.2.0), as
    /// GrowthBook and flagd read versions; nil for anything else.
    package static func version(_ value: Value?) -> Value? {
        let text: String
        switch value {
        case .version?: return value
        case .string(let s)?: text = s.first == "v" || s.first == "V" ? String(s.dropFirst()) : s
        case .int(let i)?: text = String(i)
        case .double(let d)?: text = String(d)
        default: return nil
        }
        return SemanticVersion(text).map { .version($0) }
    }

    /// `datetime(x)`: a datetime as itself; a string as an ISO 8601 datetime (a time
    /// without an offset is UTC); a number as milliseconds since 1970 (JavaScript's and
    /// LaunchDarkly's); nil for anything else.
    package static func datetime(_ value: Value?) -> Value? {
        switch value {
        case .datetime?: return value
        case .string(let s)?: return DateTime.parse(s).map { .datetime($0) }
        case .int(let ms)?: return .datetime(Date(timeIntervalSince1970: Double(ms) / 1000))
        case .double(let ms)?: return .datetime(Date(timeIntervalSince1970: ms / 1000))
        default: return nil
        }
    }

    /// `lower(x)`: a string lowercased, or a list of scalars with each string element
    /// lowercased (the others kept); nil (unknown) for anything else.
    package static func lower(_ v: Value?) -> Value? {
        switch v {
        case .string(let s)?: return .string(lower(s))
        case .list(let elements)?:
            var lowered: [Value] = []
            lowered.reserveCapacity(elements.count)
            // (Its strings lowered, its other scalars kept; a nested element makes it no list.)
            for element in elements {
                switch element {
                case .string(let s): lowered.append(.string(lower(s)))
                case .int, .double, .bool: lowered.append(element)
                default: return nil
                }
            }
            return .list(lowered)
        default: return nil
        }
    }

    /// `lower(s)`: the Unicode lowercase mapping of each scalar, as `String.lowercased()`
    /// gives it (ASCII without a table).
    package static func lower(_ s: String) -> String {
        var ascii = true
        var upper = false
        for b in s.utf8 {
            if b >= 0x80 { ascii = false; break }
            if b >= 0x41 && b <= 0x5A { upper = true }
        }
        if ascii {
            guard upper else { return s }
            return String(decoding: s.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 32 : $0 }, as: UTF8.self)
        }
        var out = String.UnicodeScalarView()
        for scalar in s.unicodeScalars {
            out.append(contentsOf: scalar.properties.lowercaseMapping.unicodeScalars)
        }
        return String(out)
    }

    /// `ramp(from, to, start, end)` at `now`: `start` until `from`, `end` from `to` on, and
    /// linear between.
    package static func ramp(now: Date, from: Date, to: Date, start: Double, end: Double) -> Double {
        if now <= from { return start }
        if now >= to { return end }
        let f = now.timeIntervalSince(from) / to.timeIntervalSince(from)
        return start + (end - start) * f
    }

    /// The evaluation time: the context's `now` (a datetime, or a string that parses as
    /// one), else the clock; nil when `now` is given but is not a datetime.
    static func now(_ given: Value?) -> Date? {
        guard let given else { return Date() }
        switch given {
        case .datetime(let d): return d
        case .string(let s): return DateTime.parse(s)
        default: return nil
        }
    }
}

/// The literals of a `contains any` / `contains all` list, each with its position among
/// the distinct literals: a string table when every literal is a string, else a
/// dictionary of keys normalised across int and double.
struct LiteralIndex: Sendable {
    private enum Storage: Sendable {
        case strings(LiteralSet)
        case keys([MemberKey: Int], families: Set<Int>)
    }
    private let storage: Storage
    /// The number of distinct literals.
    let count: Int

    init(_ values: [Value]) {
        var distinct: [Value] = []
        var seen = Set<MemberKey>()
        for v in values where seen.insert(MemberKey(v)).inserted { distinct.append(v) }
        count = distinct.count
        let strings = distinct.compactMap(\.stringValue)
        if strings.count == distinct.count {
            storage = .strings(LiteralSet(strings))
        } else {
            var keys: [MemberKey: Int] = [:]
            for (i, v) in distinct.enumerated() { keys[MemberKey(v)] = i }
            storage = .keys(keys, families: Set(keys.keys.map(\.family)))
        }
    }

    /// The position of `v` among the literals: `.some(nil)` when it is not one of them, nil
    /// when it is of a type the literals cannot hold.
    @inline(__always)
    func index(of v: Value) -> Int?? {
        switch storage {
        case .strings(let table):
            guard case .string(let s) = v else { return count == 0 ? .some(nil) : nil }
            return .some(table.index(of: s))
        case .keys(let keys, let families):
            let key = MemberKey(v)
            guard families.contains(key.family) else { return nil }
            return .some(keys[key])
        }
    }
}
