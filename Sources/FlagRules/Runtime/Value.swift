import Foundation

/// A value in an evaluation context or a resolution: what an attribute holds and what a
/// declaration resolves to.
///
/// Contexts built from JSON or dictionary literals hold `bool`, `int`, `double`, `string`,
/// `list` and `object`; a `string` read through a `version`, `datetime` or `ip` attribute is
/// parsed then. `version` and `datetime` values can also be given directly from Swift.
public enum Value: Sendable, Hashable, CustomStringConvertible {
    /// A boolean.
    case bool(Bool)
    /// A 64-bit signed integer.
    case int(Int)
    /// A finite double.
    case double(Double)
    /// A string (also how enum cases and variant names are held).
    case string(String)
    /// A semantic version (semver 2.0); boxed, so that a `Value` stays small.
    indirect case version(SemanticVersion)
    /// A point in time.
    case datetime(Date)
    /// A list (a JSON array; `[string]`, `[int]` and `[enum(…)]` attributes hold one). A
    /// list whose elements are not all of the attribute's element type is mistyped; a JSON
    /// `null` element is held as an empty list, which no element type accepts.
    case list([Value])
    /// An object (a JSON object, a nested dictionary or an encoded struct), whose fields
    /// rules read as `org.plan`. A field that is absent reads as absent. Boxed, like a
    /// version: one pointer in the enum's payload.
    indirect case object([String: Value])

    /// The value as a split's unit, as text: a string as it is, an int in decimal, anything
    /// else as written (what exposures and sticky assignments record).
    var unitText: String {
        switch self {
        case .string(let text): text
        case .int(let i): String(i)
        default: description
        }
    }

    /// Whether both values are bools, ints, doubles or strings (the types a caller's default
    /// gives), read without copying a payload.
    @inline(__always)
    func isSameCase(as other: Value) -> Bool {
        switch (self, other) {
        case (.bool, .bool), (.int, .int), (.double, .double), (.string, .string): true
        default: false
        }
    }

    /// The value as written in `.flags` source and in `flags eval` output: strings quoted,
    /// versions and datetimes quoted in their canonical form.
    public var description: String {
        switch self {
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .double(let d): return Value.format(d)
        case .string(let s): return StringEscaping.quoted(s)
        case .version(let v): return "\"\(v)\""
        case .datetime(let d): return "\"\(DateTime.format(d))\""
        case .list(let elements): return "[" + elements.map(\.description).joined(separator: ", ") + "]"
        case .object(let fields):
            guard !fields.isEmpty else { return "{}" }
            return "{ " + fields.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + " }"
        }
    }

    /// The name of the value's type, as used in diagnostics and explanations.
    public var typeName: String {
        switch self {
        case .bool: return "bool"
        case .int: return "int"
        case .double: return "double"
        case .string: return "string"
        case .version: return "version"
        case .datetime: return "datetime"
        case .list: return "list"
        case .object: return "object"
        }
    }

    /// Whether this is a `datetime`.
    package var isDatetime: Bool { if case .datetime = self { return true } else { return false } }

    /// The boolean, when this is a `bool`.
    public var boolValue: Bool? { if case .bool(let b) = self { return b } else { return nil } }
    /// The integer, when this is an `int`.
    public var intValue: Int? { if case .int(let i) = self { return i } else { return nil } }
    /// The number, when this is an `int` or a `double`.
    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }
    /// The string, when this is a `string`.
    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }
    /// The elements, when this is a `list`.
    public var listValue: [Value]? { if case .list(let l) = self { return l } else { return nil } }
    /// The fields, when this is an `object`.
    public var objectValue: [String: Value]? { if case .object(let o) = self { return o } else { return nil } }

    /// `object` with `value` at `path` below it (nil: the field removed): the objects on the
    /// way are made, or replace a value that is not an object.
    package static func placing(_ value: Value?, in object: Value?, at path: ArraySlice<String>) -> Value? {
        guard let field = path.first, path.count < Path.maxNames else { return path.isEmpty ? value : object }
        var fields = object?.objectValue ?? [:]
        fields[field] = placing(value, in: fields[field], at: path.dropFirst())
        return .object(fields)
    }

    /// The value at `path` below this one (`["billing", "country"]`): nil when a step is
    /// not an object or lacks the field. An empty path is the value itself.
    public func value(at path: some Collection<String>) -> Value? {
        var current = self
        for field in path {
            guard case .object(let fields) = current, let next = fields[field] else { return nil }
            current = next
        }
        return current
    }

    /// Shortest round-tripping text for a double, always with a decimal point (`2.0`, `0.15`).
    package static func format(_ d: Double) -> String {
        if d.isNaN { return "nan" }
        if d.isInfinite { return d < 0 ? "-inf" : "inf" }
        if d == d.rounded(), abs(d) < 1e15 {
            return String(Int(d)) + ".0"
        }
        let s = "\(d)"
        return s
    }
}

extension Value: ExpressibleByStringLiteral {
    /// A `string` value.
    public init(stringLiteral value: String) { self = .string(value) }
}

extension Value: ExpressibleByIntegerLiteral {
    /// An `int` value.
    public init(integerLiteral value: Int) { self = .int(value) }
}

extension Value: ExpressibleByFloatLiteral {
    /// A `double` value.
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension Value: ExpressibleByArrayLiteral {
    /// A `list` value: `["qa", "staff"]`.
    public init(arrayLiteral elements: Value...) { self = .list(elements) }
}

extension Value: ExpressibleByDictionaryLiteral {
    /// An `object` value: `["plan": "team", "seats": 7]` (a key given twice keeps its last value).
    public init(dictionaryLiteral elements: (String, Value)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension Value: ExpressibleByBooleanLiteral {
    /// A `bool` value.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

/// Paths to an object attribute's fields (`org.billing.country`).
package enum Path {
    /// The most names a path may have (an attribute and its fields): as deep as a JSON
    /// context may nest.
    package static let maxNames = 64

    /// The names of a path (`["org", "billing", "country"]`; a name alone is one).
    package static func names(_ path: String) -> [String] {
        path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    /// The JSON that gives the field a path names inside its objects, its value elided:
    /// `{"org": {"plan": …}}` for `org.plan`.
    package static func nestedJSON(_ path: String) -> String {
        let names = Path.names(path)
        var text = "…"
        for name in names.reversed() { text = "{" + JSON.string(name).serialized() + ": " + text + "}" }
        return text
    }

    /// Whether `name` is a path (holds a dot), its bytes read in place.
    @inline(__always)
    static func isPath(_ name: String) -> Bool {
        StringHash.withBytes(name) { $0.contains(UInt8(ascii: ".")) }
    }
}

extension Value {
    /// The value, or nil for a double that is NaN or infinite (which no context holds).
    var refusingNonFinite: Value? {
        // The common case, nothing to refuse, is told without copying or comparing values.
        guard holdsNonFinite else { return self }
        switch self {
        case .double(let d) where !d.isFinite: return nil
        case .list(let elements) where elements.contains(where: { $0.refusingNonFinite == nil }):
            // A non-finite element is held as a mistyped one, as a JSON null is.
            return .list(elements.map { $0.refusingNonFinite ?? .list([]) })
        case .object(let fields) where fields.values.contains(where: { $0.refusingNonFinite != $0 }):
            // A non-finite field is absent.
            return .object(fields.compactMapValues(\.refusingNonFinite))
        default: return self
        }
    }

    /// Whether a double that is not finite is this value or anywhere inside it.
    private var holdsNonFinite: Bool {
        switch self {
        case .double(let d): return !d.isFinite
        case .list(let elements): return elements.contains { $0.holdsNonFinite }
        case .object(let fields): return fields.values.contains { $0.holdsNonFinite }
        default: return false
        }
    }
}
