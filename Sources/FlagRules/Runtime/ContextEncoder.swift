import Foundation

extension EvaluationContext {
    /// A context from any `Encodable` value whose encoding is keyed (a struct, a class, a
    /// dictionary keyed by strings): each property an attribute. Nested structs become
    /// objects, whose fields rules read as `org.plan`; a nil optional is absent; arrays and
    /// sets are lists; a `Date` is a datetime; a `RawRepresentable` enum is its raw value; an
    /// integer of the standard library is an int, or its digits when no `Int` holds it (a
    /// type of another library is what its own encoding writes).
    ///
    /// ```swift
    /// struct User: Encodable { let id: String; let email: String?; let org: Org }
    /// let context = try EvaluationContext(encoding: user)
    /// rules.isEnabled("teamFeatures", in: context)   // reads org.plan
    /// ```
    ///
    /// Throws a ``ContextError`` when the value does not encode as keyed (a bare string or
    /// array), or when its encoding throws.
    public init(encoding value: some Encodable) throws(ContextError) {
        let root = EncodedNode()
        do {
            try ContextEncoder.encodeNested(value, into: root, at: [])
        } catch let error as ContextError {
            throw error
        } catch {
            throw ContextError(message: "\(type(of: value)) cannot be encoded as a context: \(error)")
        }
        guard let context = root.context else {
            throw ContextError(
                message:
                    "\(type(of: value)) encodes as \(root.resolved?.typeName ?? "nothing"), not as an object: a context encodes from a struct or a dictionary keyed by strings"
            )
        }
        self = context
    }
}

/// A value being encoded: containers fill it in after it is handed out, so it is a
/// reference until the end, when `resolved` reads the tree. A scalar field or element is
/// kept in place (no node of its own); an object's fields and a list's elements are grown
/// in place (a field or an element added costs the same however many came before), an
/// object's in the order given (a key given again replaces the value before, when the tree
/// is read).
private final class EncodedNode {
    enum Kind { case empty, value, object, list }
    /// A field or an element: a scalar (nil: absent), or a node its own encoding fills.
    enum Slot {
        case value(Value?)
        case node(EncodedNode)

        var resolved: Value? {
            switch self {
            case .value(let v): return v
            case .node(let node): return node.resolved
            }
        }
    }
    /// A field (its key) or an element (an empty key) and its slot.
    struct Entry {
        let key: String
        let slot: Slot
    }
    // A node belongs to the one encoding that makes it, on one thread: its accesses are not
    // checked at run time (each check a lookup in a thread-local set).
    @exclusivity(unchecked) private(set) var kind = Kind.empty
    @exclusivity(unchecked) private var scalar: Value?
    /// An object's fields in the order given, or a list's elements.
    @exclusivity(unchecked) private var entries: [Entry] = []
    /// An object's latest position of each key, kept once it has many fields (a nested
    /// container asked for by key finds the node given before without a scan).
    @exclusivity(unchecked) private var positions: [String: Int] = [:]
    private static let scannedFields = 16

    /// The number of elements, when this is a list.
    var count: Int { kind == .list ? entries.count : 0 }

    /// The value: objects with their absent fields left out; a list's absent element an
    /// empty list (mistyped, as JSON's `null` is).
    var resolved: Value? {
        switch kind {
        case .empty: return nil
        case .value: return scalar
        case .object:
            var fields: [String: Value] = [:]
            fields.reserveCapacity(entries.count)
            for entry in entries { fields[entry.key] = entry.slot.resolved }
            return .object(fields)
        case .list: return .list(entries.map { $0.slot.resolved ?? .list([]) })
        }
    }

    /// An object's fields as a context (a key given again takes the later value); nil
    /// for anything else.
    var context: EvaluationContext? {
        guard kind == .object else { return nil }
        return EvaluationContext(count: entries.count) { set in
            for entry in entries { set(entry.key, entry.slot.resolved) }
        }
    }

    /// Makes this a scalar (nil: absent).
    func set(_ value: Value?) {
        kind = .value
        scalar = value
        entries = []
        positions = [:]
    }

    /// Sets the field `key` to a scalar.
    func setField(_ key: String, _ value: Value?) {
        makeObject()
        append(Entry(key: key, slot: .value(value)))
    }

    /// The node of the field `key`: the one given before when there is one (a nested
    /// container asked for twice fills one object), else a new one.
    func field(_ key: String) -> EncodedNode {
        makeObject()
        if let i = position(of: key), case .node(let node) = entries[i].slot { return node }
        return newField(key)
    }

    /// A new node for the field `key`, after what was before.
    private func newField(_ key: String) -> EncodedNode {
        makeObject()
        let node = EncodedNode()
        append(Entry(key: key, slot: .node(node)))
        return node
    }

    private func append(_ entry: Entry) {
        if entries.isEmpty { entries.reserveCapacity(8) }
        entries.append(entry)
        let count = entries.count
        if count > EncodedNode.scannedFields {
            if count == EncodedNode.scannedFields + 1 {
                for (i, e) in entries.enumerated() { positions[e.key] = i }
            } else {
                positions[entry.key] = count - 1
            }
        }
    }

    private func position(of key: String) -> Int? {
        if entries.count > EncodedNode.scannedFields { return positions[key] }
        return entries.lastIndex { $0.key == key }
    }

    /// Appends a scalar element.
    func appendElement(_ value: Value?) {
        makeList()
        entries.append(Entry(key: "", slot: .value(value)))
    }

    /// Appends scalar elements.
    func appendElements(_ values: [Value]) {
        makeList()
        if entries.isEmpty { entries.reserveCapacity(values.count) }
        for value in values { entries.append(Entry(key: "", slot: .value(value))) }
    }

    func appended() -> EncodedNode {
        makeList()
        let node = EncodedNode()
        entries.append(Entry(key: "", slot: .node(node)))
        return node
    }

    func makeObject() {
        guard kind != .object else { return }
        set(nil)
        kind = .object
    }

    func makeList() {
        guard kind != .list else { return }
        set(nil)
        kind = .list
    }
}

/// The key of a list element in a coding path.
private struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { String(intValue ?? 0) }
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

/// A scalar as a context value, the way `Codable` hands it over.
private enum Scalar {
    /// The value of a scalar type (nil inside: absent, as a double that is not finite);
    /// nil for any other type, which encodes itself. Told apart by the type itself, not by
    /// casts (each a lookup in the runtime).
    @inline(__always)
    static func value<T: Encodable>(_ v: T) -> Value?? {
        if T.self == String.self { return .string(unsafeBitCast(v, to: String.self)) }
        if T.self == Int.self { return .int(unsafeBitCast(v, to: Int.self)) }
        if T.self == Bool.self { return .bool(unsafeBitCast(v, to: Bool.self)) }
        if T.self == Double.self { return double(unsafeBitCast(v, to: Double.self)) }
        if T.self == Date.self { return .datetime(unsafeBitCast(v, to: Date.self)) }
        if T.self == BuildConfiguration.self, let build = v as? BuildConfiguration { return .string(build.name) }
        if T.self == SemanticVersion.self, let version = v as? SemanticVersion { return .version(version) }
        if T.self == URL.self, let url = v as? URL { return .string(url.absoluteString) }
        if T.self == Float.self { return double(Double(unsafeBitCast(v, to: Float.self))) }
        // The 128-bit integers, whose own encodings a context's containers cannot take (the
        // standard library's other integers encode themselves through the containers'
        // overloads for them).
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
            if T.self == Int128.self { return integer(unsafeBitCast(v, to: Int128.self)) }
            if T.self == UInt128.self { return integer(unsafeBitCast(v, to: UInt128.self)) }
        }
        return nil
    }

    /// The elements of a list of strings or of ints, the lists a context holds most (taken
    /// whole, not through a container element by element); nil for any other type.
    @inline(__always)
    static func elements<T: Encodable>(_ v: T) -> [Value]? {
        if T.self == [String].self { return unsafeBitCast(v, to: [String].self).map(Value.string) }
        if T.self == [Int].self { return unsafeBitCast(v, to: [Int].self).map(Value.int) }
        return nil
    }

    static func double(_ d: Double) -> Value?? { d.isFinite ? .double(d) : .some(nil) }

    /// An integer: an int when it fits, else its digits.
    static func integer<I: BinaryInteger>(_ i: I) -> Value {
        guard let fits = Int(exactly: i) else { return .string(String(describing: i)) }
        return .int(fits)
    }
}

private struct ContextEncoder: Encoder {
    let node: EncodedNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.makeObject()
        return KeyedEncodingContainer(Keyed(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.makeList()
        return Unkeyed(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { Single(node: node, codingPath: codingPath) }

    /// Encodes a value that is no scalar of `Scalar.value`'s into `node` at `path`, through
    /// its own `encode(to:)` (refused past the deepest path a context may hold).
    static func encodeNested<T: Encodable>(_ value: T, into node: EncodedNode, at path: [any CodingKey]) throws {
        try checkDepth(path.count) { path }
        try value.encode(to: ContextEncoder(node: node, codingPath: path))
    }

    /// Refuses a value whose path has `names` names, past the deepest path a context may
    /// hold (the path made only to say where).
    @inline(__always)
    static func checkDepth(_ names: Int, _ path: () -> [any CodingKey]) throws {
        guard names < Path.maxNames else {
            let where_ = path().map(\.stringValue).joined(separator: ".")
            throw ContextError(
                message: "the value nests more than \(Path.maxNames) levels deep (at \(where_.prefix(200))…), deeper than a context may")
        }
    }

    struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let node: EncodedNode
        let codingPath: [any CodingKey]

        /// Sets the field `key` to a scalar, at most as deep as a context may hold.
        private func set(_ value: Value?, _ key: Key) throws {
            try ContextEncoder.checkDepth(codingPath.count + 1) { codingPath + [key] }
            node.setField(key.stringValue, value)
        }

        mutating func encodeNil(forKey key: Key) throws { try set(nil, key) }
        mutating func encode(_ value: String, forKey key: Key) throws { try set(.string(value), key) }
        mutating func encode(_ value: Int, forKey key: Key) throws { try set(.int(value), key) }
        mutating func encode(_ value: Bool, forKey key: Key) throws { try set(.bool(value), key) }
        mutating func encode(_ value: Double, forKey key: Key) throws { try set(Scalar.double(value) ?? nil, key) }
        mutating func encode(_ value: Float, forKey key: Key) throws { try set(Scalar.double(Double(value)) ?? nil, key) }
        mutating func encode(_ value: Int8, forKey key: Key) throws { try set(Scalar.integer(value), key) }
        mutating func encode(_ value: Int16, forKey key: Key) throws { try set(Scalar.integer(value), key) }
        mutating func encode(_ value: Int32, forKey key: Key) throws { try set(Scalar.integer(value), key) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { try set(Scalar.integer(value), key) }
        mutating func encode(_ value: UInt, forKey key: Key) throws { try set(Scalar.integer(value), key) }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { try set(Scalar.integer(value), key) }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { try set(Scalar.integer(value), key) }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { try set(Scalar.integer(value), key) }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { try set(Scalar.integer(value), key) }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            if let scalar = Scalar.value(value) {
                try set(scalar, key)
                return
            }
            if let elements = Scalar.elements(value) {
                // As an unkeyed container fills it: a list given before for this key grows.
                try ContextEncoder.checkDepth(codingPath.count + (elements.isEmpty ? 1 : 2)) {
                    elements.isEmpty ? codingPath + [key] : codingPath + [key, IndexKey(0)]
                }
                node.field(key.stringValue).appendElements(elements)
                return
            }
            // Into the node given before for this key, if any: a value encoded twice for one
            // key, or after a nested container of it, fills one object (or list).
            try ContextEncoder.encodeNested(value, into: node.field(key.stringValue), at: codingPath + [key])
        }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<
            NestedKey
        > {
            let child = node.field(key.stringValue)
            child.makeObject()
            return KeyedEncodingContainer(Keyed<NestedKey>(node: child, codingPath: codingPath + [key]))
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            let child = node.field(key.stringValue)
            child.makeList()
            return Unkeyed(node: child, codingPath: codingPath + [key])
        }
        mutating func superEncoder() -> any Encoder { ContextEncoder(node: node.field("super"), codingPath: codingPath) }
        mutating func superEncoder(forKey key: Key) -> any Encoder {
            ContextEncoder(node: node.field(key.stringValue), codingPath: codingPath + [key])
        }
    }

    struct Unkeyed: UnkeyedEncodingContainer {
        let node: EncodedNode
        let codingPath: [any CodingKey]
        var count: Int {
            node.count
        }

        /// Appends a scalar element, at most as deep as a context may hold.
        private func append(_ value: Value?) throws {
            try ContextEncoder.checkDepth(codingPath.count + 1) { codingPath + [IndexKey(count)] }
            node.appendElement(value)
        }

        mutating func encodeNil() throws { try append(nil) }
        mutating func encode(_ value: String) throws { try append(.string(value)) }
        mutating func encode(_ value: Int) throws { try append(.int(value)) }
        mutating func encode(_ value: Bool) throws { try append(.bool(value)) }
        mutating func encode(_ value: Double) throws { try append(Scalar.double(value) ?? nil) }
        mutating func encode<T: Encodable>(_ value: T) throws {
            if let scalar = Scalar.value(value) {
                try append(scalar)
                return
            }
            let path = codingPath + [IndexKey(count)]
            try ContextEncoder.encodeNested(value, into: node.appended(), at: path)
        }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            let path = codingPath + [IndexKey(count)]
            let child = node.appended()
            child.makeObject()
            return KeyedEncodingContainer(Keyed<NestedKey>(node: child, codingPath: path))
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            let path = codingPath + [IndexKey(count)]
            let child = node.appended()
            child.makeList()
            return Unkeyed(node: child, codingPath: path)
        }
        mutating func superEncoder() -> any Encoder { ContextEncoder(node: node.appended(), codingPath: codingPath) }
    }

    struct Single: SingleValueEncodingContainer {
        let node: EncodedNode
        let codingPath: [any CodingKey]

        mutating func encodeNil() throws { node.set(nil) }
        mutating func encode(_ value: String) throws { node.set(.string(value)) }
        mutating func encode(_ value: Int) throws { node.set(.int(value)) }
        mutating func encode(_ value: Bool) throws { node.set(.bool(value)) }
        mutating func encode(_ value: Double) throws { node.set(Scalar.double(value) ?? nil) }
        mutating func encode(_ value: Float) throws { node.set(Scalar.double(Double(value)) ?? nil) }
        mutating func encode(_ value: Int8) throws { node.set(Scalar.integer(value)) }
        mutating func encode(_ value: Int16) throws { node.set(Scalar.integer(value)) }
        mutating func encode(_ value: Int32) throws { node.set(Scalar.integer(value)) }
        mutating func encode(_ value: Int64) throws { node.set(Scalar.integer(value)) }
        mutating func encode(_ value: UInt) throws { node.set(Scalar.integer(value)) }
        mutating func encode(_ value: UInt8) throws { node.set(Scalar.integer(value)) }
        mutating func encode(_ value: UInt16) throws { node.set(Scalar.integer(value)) }
        mutating func encode(_ value: UInt32) throws { node.set(Scalar.integer(value)) }
        mutating func encode(_ value: UInt64) throws { node.set(Scalar.integer(value)) }
        mutating func encode<T: Encodable>(_ value: T) throws {
            if let scalar = Scalar.value(value) {
                node.set(scalar)
                return
            }
            try ContextEncoder.encodeNested(value, into: node, at: codingPath)
        }
    }
}
