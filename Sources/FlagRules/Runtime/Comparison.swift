import Foundation

/// How values compare at evaluation: numbers across int and double, strings by Unicode
/// scalar values (byte-wise UTF-8, no normalisation), strings against versions and
/// datetimes by parsing them. Values of unrelated types compare as unknown (nil).
package enum Comparison {
    /// `a == b`, or nil when the types do not compare.
    package static func equal(_ a: Value, _ b: Value) -> Bool? {
        switch (a, b) {
        case (.string(let x), .string(let y)): return bytesEqual(x, y)
        case (.int(let x), .int(let y)): return x == y
        case (.bool(let x), .bool(let y)): return x == y
        case (.list(let x), .list(let y)): return listsEqual(x, y)
        default: return order(a, b).map { $0 == 0 }
        }
    }

    /// Two lists of scalars equal element by element, in order: false when the lengths or a
    /// pair differ, nil when no pair differs and a pair does not compare (or a list holds a
    /// nested element).
    static func listsEqual(_ x: [Value], _ y: [Value]) -> Bool? {
        guard ListOperations.elements(.list(x)) != nil, ListOperations.elements(.list(y)) != nil else { return nil }
        guard x.count == y.count else { return false }
        var unknown = false
        for (a, b) in zip(x, y) {
            switch equal(a, b) {
            case false?: return false
            case nil: unknown = true
            case true?: continue
            }
        }
        return unknown ? nil : true
    }

    /// -1, 0 or 1, or nil when the values have no common order.
    static func order(_ a: Value, _ b: Value) -> Int? {
        switch (a, b) {
        case (.int(let x), .int(let y)): return x < y ? -1 : x == y ? 0 : 1
        case (.int(let x), .double(let y)): return compareNumbers(x, y)
        case (.double(let x), .int(let y)): return compareNumbers(y, x).map { -$0 }
        case (.double(let x), .double(let y)):
            guard !x.isNaN, !y.isNaN else { return nil }
            return x < y ? -1 : x == y ? 0 : 1
        case (.string(let x), .string(let y)): return compareBytes(x, y)
        case (.version(let x), .version(let y)): return x < y ? -1 : x == y ? 0 : 1
        case (.string(let x), .version(let y)): return SemanticVersion(x).map { $0 < y ? -1 : $0 == y ? 0 : 1 }
        case (.version(let x), .string(let y)): return SemanticVersion(y).map { x < $0 ? -1 : x == $0 ? 0 : 1 }
        case (.datetime(let x), .datetime(let y)): return x < y ? -1 : x == y ? 0 : 1
        case (.string(let x), .datetime(let y)): return DateTime.parse(x).map { $0 < y ? -1 : $0 == y ? 0 : 1 }
        case (.datetime(let x), .string(let y)): return DateTime.parse(y).map { x < $0 ? -1 : x == $0 ? 0 : 1 }
        default: return nil
        }
    }

    /// `a contains c`: a substring test on a string, an element test on a list; unknown
    /// for other values, a mistyped list, or an element that does not compare.
    @inline(__always)
    static func contains(_ a: Value, _ c: Value) -> Truth {
        switch (a, c) {
        case (.string(let x), .string(let y)): return Truth(contains(x, y))
        case (.list, _):
            guard let elements = ListOperations.elements(a), let found = ListOperations.contains(elements, c) else { return .unknown }
            return Truth(found)
        default: return .unknown
        }
    }

    /// Whether two addresses are the same (`::1` is `0:0:0:0:0:0:0:1`, a mapped address is
    /// its IPv4 address); nil when either is not an address.
    static func addressEqual(_ a: Value, _ b: Value) -> Bool? {
        guard let x = IPAddress(a), let y = IPAddress(b) else { return nil }
        return x == y
    }

    /// Exact comparison of an int with a double (no rounding of large ints).
    static func compareNumbers(_ x: Int, _ y: Double) -> Int? {
        if y.isNaN { return nil }
        if y >= 9_223_372_036_854_775_808.0 { return -1 }
        if y < -9_223_372_036_854_775_808.0 { return 1 }
        let t = y.rounded(.towardZero)
        let ti = Int(t)
        if x != ti { return x < ti ? -1 : 1 }
        let frac = y - t
        return frac > 0 ? -1 : frac < 0 ? 1 : 0
    }

    /// Runs `body` with the UTF-8 bytes of two strings, without copying contiguous ones.
    @inline(__always)
    static func withBytes<R>(_ a: String, _ b: String, _ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let r = a.utf8.withContiguousStorageIfAvailable({ x in b.utf8.withContiguousStorageIfAvailable { y in body(x, y) } }), let r {
            return r
        }
        return Array(a.utf8).withUnsafeBufferPointer { x in Array(b.utf8).withUnsafeBufferPointer { y in body(x, y) } }
    }

    /// Whether two strings have the same UTF-8 bytes (the same Unicode scalars): at once
    /// when they are one value bit for bit (the same small string, or the same storage).
    @inline(__always)
    static func bytesEqual(_ a: String, _ b: String) -> Bool {
        a._isIdentical(to: b) || a.utf8.count == b.utf8.count && withBytes(a, b) { x, y in LiteralSet.equal(x, y) }
    }

    static func compareBytes(_ a: String, _ b: String) -> Int {
        withBytes(a, b) { x, y in
            let n = min(x.count, y.count)
            if n > 0 {
                let c = memcmp(x.baseAddress!, y.baseAddress!, n)
                if c != 0 { return c < 0 ? -1 : 1 }
            }
            return x.count < y.count ? -1 : x.count == y.count ? 0 : 1
        }
    }

    static func hasPrefix(_ a: String, _ p: String) -> Bool {
        withBytes(a, p) { x, y in y.count <= x.count && (y.count == 0 || memcmp(x.baseAddress!, y.baseAddress!, y.count) == 0) }
    }

    static func hasSuffix(_ a: String, _ s: String) -> Bool {
        withBytes(a, s) { x, y in
            y.count <= x.count && (y.count == 0 || memcmp(x.baseAddress! + (x.count - y.count), y.baseAddress!, y.count) == 0)
        }
    }

    static func contains(_ a: String, _ s: String) -> Bool {
        withBytes(a, s) { x, y in
            if y.count == 0 { return true }
            if y.count > x.count { return false }
            let first = y[0]
            var i = 0
            let last = x.count - y.count
            while i <= last {
                if x[i] == first, memcmp(x.baseAddress! + i, y.baseAddress!, y.count) == 0 { return true }
                i += 1
            }
            return false
        }
    }
}

/// `value in [literals]` for a known value, shared by the compiled rules and the explainer:
/// a string table when every literal is a string (no hashing of `Value`s), else a set of
/// keys normalised across int and double, with strings parsed when the list holds only
/// versions or only datetimes.
struct MemberTest: Sendable {
    private enum Storage: Sendable {
        case empty
        case strings(LiteralSet)
        case keys(Set<MemberKey>, families: Set<Int>)
    }
    private let storage: Storage

    init(_ values: [Value]) {
        let strings = values.compactMap(\.stringValue)
        if values.isEmpty {
            storage = .empty
        } else if strings.count == values.count {
            storage = .strings(LiteralSet(strings))
        } else {
            let keys = Set(values.map(MemberKey.init))
            storage = .keys(keys, families: Set(keys.map(\.family)))
        }
    }

    /// Whether the list holds `v`; nil when `v` is of a type the list cannot hold (unknown).
    /// A known value is never in an empty list.
    func contains(_ v: Value) -> Bool? {
        switch storage {
        case .empty:
            return false
        case .strings(let table):
            guard case .string(let s) = v else { return nil }
            return table.contains(s)
        case .keys(let keys, let families):
            return Self.contains(v, keys, families)
        }
    }

    /// A list of other values than strings, or of several kinds: `v` as a key. Out of
    /// line, so that the string lists' lookup stays small enough to be inlined whole.
    @inline(never)
    private static func contains(_ v: Value, _ keys: Set<MemberKey>, _ families: Set<Int>) -> Bool? {
        var v = v
        if case .string(let s) = v {
            if families == [3] {
                guard let parsed = SemanticVersion(s) else { return nil }
                v = .version(parsed)
            } else if families == [4] {
                guard let parsed = DateTime.parse(s) else { return nil }
                v = .datetime(parsed)
            }
        }
        let key = MemberKey(v)
        guard families.contains(key.family) else { return nil }
        return keys.contains(key)
    }
}

/// A hashable key for `in` lookups: numbers normalised across int and double, strings by
/// their UTF-8 bytes.
enum MemberKey: Hashable, Sendable {
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(ByteString)
    case version(SemanticVersion)
    case datetime(Double)
    /// A list, which no literal list holds.
    case list

    init(_ v: Value) {
        switch v {
        case .bool(let b): self = .bool(b)
        case .int(let i): self = .int(i)
        case .double(let d):
            if d == d.rounded(), let i = Int(exactly: d) { self = .int(i) } else { self = .double(d) }
        case .string(let s): self = .string(ByteString(s))
        case .version(let x): self = .version(x)
        case .datetime(let d): self = .datetime(d.timeIntervalSince1970)
        case .list, .object: self = .list
        }
    }

    /// The family of a key, for telling a mistyped value (unknown) from a miss (false).
    var family: Int {
        switch self {
        case .bool: return 0
        case .int, .double: return 1
        case .string: return 2
        case .version: return 3
        case .datetime: return 4
        case .list: return 5
        }
    }
}

/// A string compared and hashed by its UTF-8 bytes, without Unicode normalisation.
struct ByteString: Hashable, Sendable {
    let string: String
    init(_ s: String) { string = s }

    static func == (a: ByteString, b: ByteString) -> Bool { Comparison.bytesEqual(a.string, b.string) }

    func hash(into hasher: inout Hasher) {
        if string.utf8.withContiguousStorageIfAvailable({ hasher.combine(bytes: UnsafeRawBufferPointer($0)) }) == nil {
            for b in string.utf8 { hasher.combine(b) }
        }
    }
}
