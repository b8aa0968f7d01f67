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
/// reference until the end, when `resolved` reads the tree.
private final class EncodedNode {
    enum Content {
        case empty
        case value(Value?)
        case object([String: EncodedNode])
        case list([EncodedNode])
    }
    var content = Content.empty

    /// The value: objects with their absent fields left out; a list's absent element an
    /// empty list (mistyped, as JSON's `null` is).
    var resolved: Value? {
        switch content {
        case .empty: return nil
        case .value(let v): return v
        case .object(let fields): return .object(fields.compactMapValues(\.resolved))
        case .list(let elements): return .list(elements.map { $0.resolved ?? .list([]) })
        }
    }

    func field(_ key: String) -> EncodedNode {
        if case .object(let fields) = content, let node = fields[key] { return node }
        var fields: [String: EncodedNode] = [:]
        if case .object(let existing) = content { fields = existing }
        let node = EncodedNode()
        fields[key] = node
        content = .object(fields)
        return node
    }

    func appended() -> EncodedNode {
        var elements: [EncodedNode] = []
        if case .list(let existing) = content { elements = existing }
        let node = EncodedNode()
        elements.append(node)
        content = .list(elements)
        return node
    }

    func makeObject() { if case .object = content {} else { content = .object([:]) } }
    func makeList() { if case .list = content {} else { content = .list([]) } }
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
            node.content = .value(scalar)
            return
        }
        try value.encode(to: ContextEncoder(node: node, codingPath: path))
    }

    struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let node: EncodedNode
        let codingPath: [any CodingKey]

        mutating func encodeNil(forKey key: Key) throws { node.field(key.stringValue).content = .value(nil) }
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
            if case .list(let elements) = node.content { return elements.count }
            return 0
        }

        mutating func encodeNil() throws { node.appended().content = .value(nil) }
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

        mutating func encodeNil() throws { node.content = .value(nil) }
        mutating func encode<T: Encodable>(_ value: T) throws { try ContextEncoder.encode(value, into: node, at: codingPath) }
    }
}
