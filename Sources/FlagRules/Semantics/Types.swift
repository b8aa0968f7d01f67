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
    /// `{ plan : enum(free, team), seats : int }`: an object, whose fields rules read as
    /// `org.plan`. An object is never compared as a whole.
    case object(names: [String], types: [FlagType])
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
        case .object(let names, let types):
            return "{ " + zip(names, types).map { "\($0): \($1)" }.joined(separator: ", ") + " }"
        case .symbol: return "symbol"
        case .dynamic: return "dynamic"
        }
    }

    /// The fields, in order, for an object type.
    public var fields: [(name: String, type: FlagType)]? {
        if case .object(let names, let types) = self { return Array(zip(names, types)) }
        return nil
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
        if self.fields != nil || other.fields != nil { return false }
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
///
/// An object attribute's fields, at any depth, are attributes too, named by their path
/// (`org.plan`, `org.billing.country`), each with a slot of its own, listed after the
/// object that holds them.
public struct ContextSchema: Sendable {
    /// One declared attribute, or a field of an object attribute.
    public struct Attribute: Sendable {
        /// Its name: the attribute's, or a field's path (`org.billing.country`).
        public let name: String
        /// Its type.
        public let type: FlagType
        /// Its position in the schema (the slot of a slotted context).
        public let slot: Int
        /// The slot of the object it is a field of; nil for a top-level attribute.
        public let parent: Int?
        /// The field's own name (`country`); the name for a top-level attribute.
        public var fieldName: String { name.split(separator: ".").last.map(String.init) ?? name }
        /// The fields' names from the top-level attribute (`["billing", "country"]`).
        public var fieldPath: [String] { name.split(separator: ".").dropFirst().map(String.init) }
    }

    /// The attributes in declaration order, each object followed by its fields.
    public let attributes: [Attribute]
    /// The top-level attributes (a context's keys), in declaration order.
    public var topLevel: [Attribute] { attributes.filter { $0.parent == nil } }
    /// The attributes' names by slot, for evaluation's lookups (a program reads its
    /// context's keys through it).
    let slots: LiteralSet
    /// Each attribute's slot by its name (a name listed twice keeps its first slot): the
    /// checker's table.
    private let slotByName: [String: Int]

    /// The schema of these top-level attributes, their objects' fields flattened after them.
    init(_ topLevel: [(String, FlagType)]) {
        var attributes: [Attribute] = []
        func add(_ name: String, _ type: FlagType, parent: Int?) {
            let slot = attributes.count
            attributes.append(Attribute(name: name, type: type, slot: slot, parent: parent))
            for field in type.fields ?? [] { add(name + "." + field.name, field.type, parent: slot) }
        }
        for (name, type) in topLevel { add(name, type, parent: nil) }
        self.attributes = attributes
        slots = LiteralSet(attributes.map(\.name))
        slotByName = Dictionary(attributes.map { ($0.name, $0.slot) }, uniquingKeysWith: { a, _ in a })
    }

    /// The attribute called `name`, or the field whose path `name` is (`org.plan`).
    public subscript(name: String) -> Attribute? {
        slotByName[name].map { attributes[$0] }
    }

    /// The top-level attribute a context's key names: the key is the attribute's name,
    /// dots and all, so a field's path (`org.plan`) names none.
    package func attribute(forKey key: String) -> Attribute? {
        guard let attribute = self[key], attribute.parent == nil else { return nil }
        return attribute
    }
}
