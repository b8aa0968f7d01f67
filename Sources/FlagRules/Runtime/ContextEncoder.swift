import Foundation

extension EvaluationContext {
    /// A context from any `Encodable` value whose encoding is keyed (a struct, a class, a
    /// dictionary keyed by strings): each property an attribute. Nested structs become
    /// objects, whose fields rules read as `org.plan`; a nil optional is absent; arrays and
    /// sets are lists; a `Date` is a datetime; a `RawRepresentable` enum is its raw value.
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
            try value.encode(to: ContextEncoder(node: root, codingPath: []))
        } catch let error as ContextError {
            throw error
        } catch {
            throw ContextError(message: "\(type(of: value)) cannot be encoded as a context: \(error)")
        }
        guard case .object(let fields)? = root.resolved else {
            throw ContextError(
                message:
                    "\(type(of: value)) encodes as \(root.resolved?.typeName ?? "nothing"), not as an object: a context encodes from a struct or a dictionary keyed by strings"
            )
        }
        self.init(fields)
    }
}

/// A value being encoded: containers fill it in after it is handed out, so it is a
/// reference until the end, when `resolved` reads the tree. An object's fields and a list's
/// elements are grown in place (a field or an element added costs the same however many
/// came before).
private final class EncodedNode {
    enum Kind { case empty, value, object, list }
    private(set) var kind = Kind.empty
    private var scalar: Value?
    private var fields: [String: EncodedNode] = [:]
    private var elements: [EncodedNode] = []

    /// The number of elements, when this is a list.
    var count: Int { kind == .list ? elements.count : 0 }

    /// The value: objects with their absent fields left out; a list's absent element an
    /// empty list (mistyped, as JSON's `null` is).
    var resolved: Value? {
        switch kind {
        case .empty: return nil
        case .value: return scalar
        case .object: return .object(fields.compactMapValues(\.resolved))
        case .list: return .list(elements.map { $0.resolved ?? .list([]) })
        }
    }

    /// Makes this a scalar (nil: absent).
    func set(_ value: Value?) {
        kind = .value
        scalar = value
        fields = [:]
        elements = []
    }

    func field(_ key: String) -> EncodedNode {
        makeObject()
        if let node = fields[key] { return node }
        let node = EncodedNode()
        fields[key] = node
        return node
    }

    func appended() -> EncodedNode {
        makeList()
        let node = EncodedNode()
        elements.append(node)
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
    static func value<T: Encodable>(_ v: T) -> Value?? {
        switch v {
        case let s as String: return .string(s)
        case let b as Bool: return .bool(b)
        case let d as Double: return d.isFinite ? .double(d) : .some(nil)
        case let f as Float: return f.isFinite ? .double(Double(f)) : .some(nil)
        case let date as Date: return .datetime(date)
        case let version as SemanticVersion: return .version(version)
        case let url as URL: return .string(url.absoluteString)
        case let i as any BinaryInteger:
            guard let fits = Int(exactly: i) else { return .some(.string(String(describing: i))) }
            return .int(fits)
        default: return nil
        }
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

    /// Encodes `value` into `node`: a scalar directly, anything else through its own
    /// `encode(to:)`.
    static func encode<T: Encodable>(_ value: T, into node: EncodedNode, at path: [any CodingKey]) throws {
        guard path.count < Path.maxNames else {
            let where_ = path.map(\.stringValue).joined(separator: ".")
            throw ContextError(
                message: "the value nests more than \(Path.maxNames) levels deep (at \(where_.prefix(200))…), deeper than a context may")
        }
        if let scalar = Scalar.value(value) {
            node.set(scalar)
            return
        }
        try value.encode(to: ContextEncoder(node: node, codingPath: path))
    }

    struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let node: EncodedNode
        let codingPath: [any CodingKey]

        mutating func encodeNil(forKey key: Key) throws { node.field(key.stringValue).set(nil) }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            try ContextEncoder.encode(value, into: node.field(key.stringValue), at: codingPath + [key])
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

        mutating func encodeNil() throws { node.appended().set(nil) }
        mutating func encode<T: Encodable>(_ value: T) throws {
            let path = codingPath + [IndexKey(count)]
            try ContextEncoder.encode(value, into: node.appended(), at: path)
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
        mutating func encode<T: Encodable>(_ value: T) throws { try ContextEncoder.encode(value, into: node, at: codingPath) }
    }
}
