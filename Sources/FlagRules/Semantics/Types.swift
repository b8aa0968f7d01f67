/// The static type of an expression or attribute.
public indirect enum FlagType: Sendable, Hashable, CustomStringConvertible {
    /// `true`/`false`.
    case bool
    /// 64-bit integer.
    case int
    /// Double (percentages and `rollout(…)` are doubles on the 0–100 scale).
    case double
    /// String.
    case string
    /// Semantic version.
    case version
    /// ISO 8601 point in time.
    case datetime
    /// `enum(a, b, …)`: one of the cases.
    case enumeration([String])
    /// The result of a variant declaration: one of its variants.
    case variant(String, [String])
    /// An IPv4 or IPv6 address, given as a string (`10.1.2.3`, `2001:db8::1`).
    case ip
    /// `[string]`, `[int]` or `[enum(…)]`: a list whose elements are all of one type.
    case list(FlagType)
    /// Without a schema, a bare name in a case position: its own name as a string.
    case symbol
    /// Without a schema: an attribute of unknown type, checked at evaluation.
    case dynamic

    /// The type as messages name it (`bool`, `enum(debug, alpha)`, `variant of 'checkout'`).
    public var description: String {
        switch self {
        case .bool: return "bool"
        case .int: return "int"
        case .double: return "double"
        case .string: return "string"
        case .version: return "version"
        case .datetime: return "datetime"
        case .enumeration(let cases): return "enum(" + cases.joined(separator: ", ") + ")"
        case .variant(let name, _): return "variant of '\(name)'"
        case .ip: return "ip"
        case .list(let element): return "[\(element)]"
        case .symbol: return "symbol"
        case .dynamic: return "dynamic"
        }
    }

    package var isNumeric: Bool { self == .int || self == .double }
    var isDynamic: Bool { self == .dynamic }

    /// The element type of a list type; nil for other types.
    package var element: FlagType? {
        if case .list(let e) = self { return e }
        return nil
    }

    /// Whether this is a list type.
    package var isList: Bool { element != nil }

    /// The cases, for enums and variants.
    package var cases: [String]? {
        switch self {
        case .enumeration(let c), .variant(_, let c): return c
        default: return nil
        }
    }

    /// Whether values of this type can be a rollout or split unit.
    var isBucketable: Bool {
        switch self {
        case .string, .int, .enumeration, .variant, .dynamic, .symbol: return true
        default: return false
        }
    }

    /// Whether the type has an order for `<`.
    var isOrdered: Bool {
        switch self {
        case .int, .double, .string, .version, .datetime, .dynamic, .symbol: return true
        default: return false
        }
    }

    /// Whether `==` between values of these types is meaningful. Each type is its own: an
    /// enum compares with the same enum (its cases, quoted or not, are of its type once
    /// checked), a variant with the same variant, and neither with a string or another
    /// enum or variant.
    func isComparable(with other: FlagType) -> Bool {
        if self == other || isDynamic || other.isDynamic { return true }
        if isNumeric && other.isNumeric { return true }
        switch (self, other) {
        case (.string, .symbol), (.symbol, .string): return true
        case (.enumeration, .symbol), (.symbol, .enumeration), (.variant, .symbol), (.symbol, .variant): return true
        default: return false
        }
    }
}

/// The `context { … }` schema: each attribute's type and its slot.
public struct ContextSchema: Sendable {
    /// One declared attribute.
    public struct Attribute: Sendable {
        /// Its name.
        public let name: String
        /// Its type.
        public let type: FlagType
        /// Its position in the schema (the slot of a slotted context).
        public let slot: Int
    }

    /// The attributes in declaration order.
    public let attributes: [Attribute]
    /// The attributes' names by slot, for evaluation's lookups (a program reads its
    /// context's keys through it).
    let slots: LiteralSet
    /// Each attribute's slot by its name (a name listed twice keeps its first slot): the
    /// checker's table.
    private let slotByName: [String: Int]

    init(_ attributes: [(String, FlagType)]) {
        self.attributes = attributes.enumerated().map { Attribute(name: $1.0, type: $1.1, slot: $0) }
        slots = LiteralSet(attributes.map(\.0))
        slotByName = Dictionary(attributes.enumerated().map { ($1.0, $0) }, uniquingKeysWith: { a, _ in a })
    }

    /// The attribute called `name`.
    public subscript(name: String) -> Attribute? {
        slotByName[name].map { attributes[$0] }
    }
}
