import Foundation

/// The attributes an evaluation reads: build configuration, user id, country, ….
///
/// A context is a plain value; build it from a dictionary literal, a dictionary, or JSON.
/// A missing key and JSON `null` both mean the attribute is absent. The key `now`
/// (a datetime or an ISO 8601 string) overrides the evaluation time. Keys compare by
/// their bytes, without Unicode normalisation, like every string in the language. A
/// double that is NaN or infinite is refused: the attribute is absent (and `init(json:)`
/// throws).
public struct EvaluationContext: Sendable, Hashable, ExpressibleByDictionaryLiteral {
    /// Copy-on-write storage, read by compiled rules with precomputed key hashes.
    private var box: StorageBox
    var storage: ContextStorage {
        get { box.buffer }
        set { box.buffer = newValue }
    }

    /// A context holding `values`.
    public init(_ values: [String: FlagRules.Value] = [:]) {
        guard !values.isEmpty else {
            box = EvaluationContext.empty
            return
        }
        box = StorageBox(buffer: ContextStorage.make(capacity: values.count))
        for (k, v) in values { storage.set(v, for: k) }
    }

    /// A context of the attributes `fill` sets, in order: a key set again takes the later
    /// value, and a nil one leaves it out. `count` is the most it sets.
    init(count: Int, _ fill: ((String, FlagRules.Value?) -> Void) -> Void) {
        guard count > 0 else {
            box = EvaluationContext.empty
            return
        }
        let storage = ContextStorage.make(capacity: count)
        fill { storage.set($1, for: $0) }
        box = StorageBox(buffer: storage)
    }

    /// The storage every empty context shares (never mutated: a write copies it first), so
    /// that an empty context allocates nothing and costs no cache miss to look at.
    private static let empty = StorageBox(buffer: ContextStorage.make(capacity: 0))

    /// A context from a literal, whose values may be literals, variables or ``Value``s:
    /// `["build": "alpha", "age": 31, "userId": user.id, "groups": user.groups]`. A nil
    /// optional leaves its key out; a dictionary is an object.
    public init(dictionaryLiteral elements: (String, any ContextValueConvertible)...) {
        box = StorageBox(buffer: ContextStorage.make(capacity: elements.count))
        for (k, v) in elements { storage.set(v.contextValueIfPresent, for: k) }
    }

    /// A context holding a dictionary's values: `EvaluationContext(["userId": id, "country": cc])`
    /// for a `[String: String]`, or any other values that can be attributes.
    public init<V: ContextValueConvertible>(_ values: [String: V]) {
        box = StorageBox(buffer: ContextStorage.make(capacity: values.count))
        for (k, v) in values { storage.set(v.contextValueIfPresent, for: k) }
    }

    /// The attributes, as names and values. (Names are distinct by their bytes: two
    /// names that Swift's `String` equality calls equal, such as "é" written as one scalar
    /// and as "e" and an accent, are two attributes here, as everywhere in the language.)
    public var entries: [(name: String, value: FlagRules.Value)] {
        (0..<storage.count).map { i in
            let e = storage.entry(i)
            return (e.key, e.value)
        }
    }

    /// The number of attributes.
    public var count: Int { storage.count }

    /// The attribute called `key`; setting nil removes it.
    public subscript(key: String) -> FlagRules.Value? {
        get { storage.value(for: key, hash: ContextStorage.hash(key)) }
        set { set(newValue, for: key, hash: ContextStorage.hash(key)) }
    }

    /// The attribute named by a key whose hash is known.
    @inline(__always)
    subscript(key: Frame.Key) -> FlagRules.Value? { storage.value(for: key.name, hash: key.hash) }

    /// The value a split buckets by: its attribute, or the field its path names.
    subscript(unit: RuleSet.SplitUnit) -> FlagRules.Value? {
        let v = storage.value(for: unit.attribute.name, hash: unit.attribute.hash)
        return unit.fields.isEmpty ? v : v?.value(at: unit.fields)
    }

    /// This context with `other`'s attributes added, `other`'s value winning where both
    /// have one: a per-call context over a base context.
    public func merging(_ other: EvaluationContext) -> EvaluationContext {
        guard other.count > 0 else { return self }
        guard count > 0 else { return other }
        var merged = self
        let added = other.storage
        for i in 0..<added.count {
            let entry = added.entry(i)
            merged[entry.key] = entry.value
        }
        return merged
    }

    /// The attribute or field a path names (`org.billing.country`): nil when an object on
    /// the way is absent or not an object, or lacks the field.
    public func value(atPath path: String) -> FlagRules.Value? {
        // Most paths name an attribute: no parts to make.
        if !path.utf8.contains(0x2E) { return self[path] }
        let parts = path.split(separator: ".", omittingEmptySubsequences: false)
        return self[String(parts[0])]?.value(at: parts.dropFirst().map(String.init))
    }

    /// Sets the attribute or field a path names (`org.billing.country`): the objects on the
    /// way are made, or replace a value that is not an object; nil removes the field. A
    /// path of more than 64 names sets nothing (no context nests deeper).
    public mutating func set(_ value: FlagRules.Value?, atPath path: String) {
        let parts = Path.names(path)
        guard parts.count <= Path.maxNames else { return }
        guard parts.count > 1 else {
            self[path] = value
            return
        }
        self[parts[0]] = FlagRules.Value.placing(value, in: self[parts[0]], at: parts.dropFirst())
    }

    /// Sets `key` with its hash given (tests give many keys one hash, as crafted
    /// collisions would).
    mutating func set(_ value: FlagRules.Value?, for key: String, hash: UInt64) {
        if !isKnownUniquelyReferenced(&box.buffer) || storage.count == storage.capacity {
            storage = storage.copy(capacity: storage.count == storage.capacity ? storage.capacity * 2 : storage.capacity)
        }
        storage.set(value, for: key, hash: hash)
    }

    /// Contexts are equal when they hold the same attributes with equal values, in any
    /// order.
    public static func == (a: EvaluationContext, b: EvaluationContext) -> Bool {
        guard a.count == b.count else { return false }
        for i in 0..<a.storage.count {
            let e = a.storage.entry(i)
            if b.storage.value(for: e.key, hash: UInt64(e.hash)) != e.value { return false }
        }
        return true
    }

    /// Hashes the attributes without regard to their order, as `==` compares them.
    public func hash(into hasher: inout Hasher) {
        // Order-independent: the sum of each entry's own hash.
        var sum = 0
        for i in 0..<storage.count {
            let e = storage.entry(i)
            var h = Hasher()
            h.combine(e.hash)
            h.combine(e.value)
            sum = sum &+ h.finalize()
        }
        hasher.combine(storage.count)
        hasher.combine(sum)
    }

    /// The largest JSON context `init(json:)` reads (4 MiB).
    public static let maxJSONBytes = 4 << 20
    /// The most keys a JSON context may have.
    public static let maxJSONKeys = 100_000

    /// A context from a JSON object whose values are strings, numbers, booleans, arrays
    /// (lists), objects or null, of at most `maxJSONBytes` bytes and `maxJSONKeys` keys.
    /// Throws a `ContextError` for malformed JSON or a number that is not finite, naming the
    /// attribute. An object's `null` fields are absent; an array element that is `null` or
    /// an object makes its list mistyped (read as unknown), as a wrong-typed element does.
    public init(json: String) throws(ContextError) {
        let size = json.utf8.count
        guard size <= EvaluationContext.maxJSONBytes else {
            throw ContextError(message: "the JSON context is \(size) bytes; the limit is \(EvaluationContext.maxJSONBytes)")
        }
        let parsed: JSON
        do {
            parsed = try JSON.parse(json)
        } catch {
            throw ContextError(message: "invalid JSON: \(error.description)")
        }
        guard case .object(let members) = parsed else {
            throw ContextError(message: "the context must be a JSON object, as in {\"userId\": \"u-1\"}")
        }
        try self.init(jsonMembers: members)
    }

    /// An empty context with room for `capacity` attributes.
    init(reserving capacity: Int) {
        box = StorageBox(buffer: ContextStorage.make(capacity: capacity))
    }

    /// A context from the members of a parsed JSON object (as `init(json:)` reads them).
    package init(jsonMembers members: [(String, JSON)]) throws(ContextError) {
        guard members.count <= EvaluationContext.maxJSONKeys else {
            throw ContextError(message: "the JSON context has \(members.count) keys; the limit is \(EvaluationContext.maxJSONKeys)")
        }
        box = StorageBox(buffer: ContextStorage.make(capacity: members.count))
        for (key, value) in members { try setJSON(value, for: key) }
    }

    /// Sets the attribute `key` to a JSON value as `init(json:)` reads it (the storage grown
    /// as a context's is).
    private mutating func setJSON(_ value: JSON, for key: String) throws(ContextError) {
        self[key] = try EvaluationContext.value(ofJSON: value, for: key)
    }

    /// A JSON value as a context holds it (nil for null); an error for a number that is not
    /// finite.
    static func value(ofJSON value: JSON, for key: String) throws(ContextError) -> FlagRules.Value? {
        switch value {
        case .null: return nil
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .double(let d):
            guard d.isFinite else { throw ContextError(message: "attribute '\(key)' is not a finite number") }
            return .double(d)
        case .string(let s): return .string(s)
        case .array(let items): return .list(items.map { FlagRules.Value(jsonElement: $0) })
        case .object(let fields):
            if let path = Self.nonFinitePath(fields) {
                throw ContextError(message: "attribute '\(key).\(path)' is not a finite number")
            }
            return .object(json: fields)
        }
    }
}

extension EvaluationContext {
    /// The path below an object of its first field holding a number that is not finite.
    static func nonFinitePath(_ members: [(String, JSON)]) -> String? {
        for (key, member) in members {
            switch member {
            case .double(let d) where !d.isFinite: return key
            case .object(let inner): if let path = nonFinitePath(inner) { return key + "." + path }
            default: continue
            }
        }
        return nil
    }
}

/// Holds a context's storage. `ManagedBuffer` is not `Sendable`; the storage is safe to
/// share because it is only mutated while uniquely referenced (copy-on-write).
struct StorageBox: @unchecked Sendable {
    var buffer: ContextStorage
}

/// One attribute of a context, with 32 bits of its key's hash: 40 bytes, so that a context's
/// first attributes share its first cache lines with the header.
struct ContextEntry {
    var key: String
    var value: Value
    var hash: UInt32

    init(hash: UInt64, key: String, value: Value) {
        self.key = key
        self.value = value
        self.hash = UInt32(truncatingIfNeeded: hash)
    }
}

/// The header of a context's storage: 16 bytes.
struct ContextHeader {
    var count: Int
    /// The index of a context of more than `ContextStorage.linearLimit` keys; nil before.
    var index: ContextIndex?
}

/// The index of a context with many keys: an open-addressing table of slots holding an
/// entry's index + 1 (0 is empty), and the keys whose probe sequence passed
/// `ContextStorage.maxProbes` full slots (only keys whose hashes collide, which a seeded hash
/// makes a matter of chance), by their bytes, to their index + 1: a dictionary seeded per
/// instance, so that no set of keys makes building or reading a context quadratic. Owned by
/// one storage and changed only with it.
final class ContextIndex {
    let table: UnsafeMutablePointer<Int32>
    /// A power of two, at least twice the number of entries.
    let capacity: Int
    var overflow: [ByteString: Int32] = [:]

    init(capacity: Int) {
        table = UnsafeMutablePointer<Int32>.allocate(capacity: capacity)
        table.initialize(repeating: 0, count: capacity)
        self.capacity = capacity
    }

    deinit { table.deallocate() }
}

/// The attributes of a context in one allocation: entries (key, value, hash) scanned by
/// hash for a few keys and indexed by an open-addressing table for many. Mutated only
/// through a uniquely referenced `EvaluationContext`, so sharing it between threads is safe.
final class ContextStorage: ManagedBuffer<ContextHeader, ContextEntry> {
    /// Up to this many keys, a lookup scans the hashes.
    static let linearLimit = 16

    static func make(capacity: Int) -> ContextStorage {
        let buffer = ContextStorage.create(minimumCapacity: max(capacity, 4)) { _ in
            ContextHeader(count: 0, index: nil)
        }
        return unsafeDowncast(buffer, to: ContextStorage.self)
    }

    /// A copy with room for at least `capacity` entries.
    func copy(capacity: Int) -> ContextStorage {
        let copy = ContextStorage.make(capacity: Swift.max(capacity, header.count))
        withUnsafeMutablePointerToElements { from in
            copy.withUnsafeMutablePointerToElements { to in to.initialize(from: from, count: header.count) }
        }
        copy.header.count = header.count
        copy.rebuildTable()
        return copy
    }

    deinit {
        withUnsafeMutablePointers { header, elements in
            _ = elements.deinitialize(count: header.pointee.count)
        }
    }

    /// The number of entries, read through the header's pointer: reading `header` itself
    /// (a class's stored property) costs a dynamic exclusivity check on every call.
    @inline(__always)
    var count: Int { withUnsafeMutablePointerToHeader { $0.pointee.count } }

    func entry(_ i: Int) -> ContextEntry { withUnsafeMutablePointerToElements { $0[i] } }

    /// The hash every lookup uses (computed once per attribute name by compiled rules):
    /// `StringHash`, seeded per process, so that a context's keys cannot be chosen to
    /// collide. Entries keep its low 32 bits.
    @inline(__always)
    static func hash(_ key: String) -> UInt64 { StringHash.of(key) }

    /// How many table slots a lookup of `key` reads (1 with no collision); 0 while the
    /// entries are scanned. For tests of the table's spread.
    func probes(for key: String) -> Int {
        withUnsafeMutablePointers { header, entries in
            guard let index = header.pointee.index else { return 0 }
            let mask = index.capacity - 1
            let hash = UInt32(truncatingIfNeeded: ContextStorage.hash(key))
            var slot = Int(hash) & mask
            var count = 1
            while index.table[slot] != 0, count <= ContextStorage.maxProbes {
                let entry = Int(index.table[slot]) - 1
                if entries[entry].hash == hash, Comparison.bytesEqual(entries[entry].key, key) { return count }
                slot = (slot + 1) & mask
                count += 1
            }
            return count
        }
    }

    @inline(__always)
    func index(of key: String, hash fullHash: UInt64) -> Int? {
        withUnsafeMutablePointers { header, entries in
            let hash = UInt32(truncatingIfNeeded: fullHash)
            let n = header.pointee.count
            guard let index = header.pointee.index else {
                for i in 0..<n where entries[i].hash == hash {
                    if Comparison.bytesEqual(entries[i].key, key) { return i }
                }
                return nil
            }
            return ContextStorage.indexed(key, hash, index, entries)
        }
    }

    /// A lookup in a context of many keys (out of line: most contexts have a few).
    @inline(never)
    private static func indexed(_ key: String, _ hash: UInt32, _ index: ContextIndex, _ entries: UnsafeMutablePointer<ContextEntry>)
        -> Int?
    {
        let mask = index.capacity - 1
        var slot = Int(hash) & mask
        for _ in 0..<ContextStorage.maxProbes {
            let entry = Int(index.table[slot])
            if entry == 0 { break }
            if entries[entry - 1].hash == hash, Comparison.bytesEqual(entries[entry - 1].key, key) { return entry - 1 }
            slot = (slot + 1) & mask
        }
        guard !index.overflow.isEmpty else { return nil }
        return index.overflow[ByteString(key)].map { Int($0) - 1 }
    }

    /// How many keys sit in the overflow (for tests).
    var overflowCount: Int { withUnsafeMutablePointerToHeader { $0.pointee.index?.overflow.count ?? 0 } }

    @inline(__always)
    func value(for key: String, hash: UInt64) -> Value? {
        guard let i = index(of: key, hash: hash) else { return nil }
        return withUnsafeMutablePointerToElements { $0[i].value }
    }

    /// Sets or (with nil) removes a key; the caller guarantees room for one more entry.
    func set(_ value: Value?, for key: String) {
        set(value, for: key, hash: ContextStorage.hash(key))
    }

    /// `set(_:for:)` with the key's hash given (tests give keys one hash, as crafted
    /// collisions would).
    func set(_ value: Value?, for key: String, hash h: UInt64) {
        let value = value?.refusingNonFinite
        if let i = index(of: key, hash: h) {
            withUnsafeMutablePointers { header, entries in
                if let value {
                    entries[i].value = value
                } else {
                    let last = header.pointee.count - 1
                    if i != last { swap(&entries[i], &entries[last]) }
                    (entries + last).deinitialize(count: 1)
                    header.pointee.count -= 1
                }
            }
            if value == nil { rebuildTable() }
            return
        }
        guard let value else { return }
        // Through the header's pointer: a class's stored property checks exclusivity on
        // every access.
        let count = withUnsafeMutablePointers { header, entries in
            (entries + header.pointee.count).initialize(to: ContextEntry(hash: h, key: key, value: value))
            header.pointee.count += 1
            return header.pointee.count
        }
        if count > ContextStorage.linearLimit {
            if let index = header.index, count * 2 <= index.capacity {
                insert(count - 1, into: index)
            } else {
                rebuildTable()
            }
        }
    }

    /// The most slots a lookup reads before it asks the overflow.
    static let maxProbes = 32

    private func insert(_ i: Int, into index: ContextIndex) {
        let mask = index.capacity - 1
        var slot = Int(withUnsafeMutablePointerToElements { $0[i].hash }) & mask
        for _ in 0..<ContextStorage.maxProbes {
            if index.table[slot] == 0 {
                index.table[slot] = Int32(i + 1)
                return
            }
            slot = (slot + 1) & mask
        }
        let key = withUnsafeMutablePointerToElements { $0[i].key }
        index.overflow[ByteString(key)] = Int32(i + 1)
    }

    private func rebuildTable() {
        header.index = nil
        guard header.count > ContextStorage.linearLimit else { return }
        var capacity = 32
        while capacity < header.count * 2 { capacity *= 2 }
        let index = ContextIndex(capacity: capacity)
        header.index = index
        for i in 0..<header.count { insert(i, into: index) }
    }
}

/// A context that cannot be built (malformed JSON, a nested value).
public struct ContextError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong.
    public let message: String
    /// The message.
    public var description: String { message }
}
