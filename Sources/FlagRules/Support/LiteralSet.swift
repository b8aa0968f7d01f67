import Foundation

/// A fixed set of strings looked up by their UTF-8 bytes (Unicode scalars, no
/// normalisation), answering each string's position in the list it was made from.
///
/// The strings' bytes are stored once, end to end. A set of up to `scanLimit` strings
/// (enum cases, most `in` lists) is scanned: a lookup compares lengths, then bytes. A
/// larger set adds an open-addressing table of 8-byte slots, at most half full, each
/// holding a string's position and a 32-bit key of its hash, so that a lookup reads one
/// slot for most misses and one slot and one string's bytes for a hit: the cost does not
/// grow with the number of strings. Hashes come from `StringHash`, seeded per process, so
/// literals cannot be chosen to collide.
///
/// The same code runs on every platform; it reads strings only through their UTF-8 view.
struct LiteralSet: Sendable {
    /// Sets of at most this many strings are scanned rather than hashed.
    static let scanLimit = 8

    /// The set's arrays, in one object: a set is one reference to copy, retain or capture.
    private final class Storage: Sendable {
        /// Every string's UTF-8 bytes, end to end.
        let bytes: [UInt8]
        /// Where each string starts in `bytes`, by position, and one more entry: the end.
        let starts: [UInt32]
        /// The hash table (empty for a scanned set): a slot is `position + 1` in its low
        /// half (0: empty) and the string's 32-bit key (`StringHash.key`) in its high half.
        let slots: [UInt64]

        init(bytes: [UInt8], starts: [UInt32], slots: [UInt64]) {
            self.bytes = bytes
            self.starts = starts
            self.slots = slots
        }
    }

    private let storage: Storage
    private var bytes: [UInt8] { storage.bytes }
    private var starts: [UInt32] { storage.starts }
    private var slots: [UInt64] { storage.slots }

    /// The set of `strings`; a string listed twice keeps its first position.
    init(_ strings: [String]) {
        var bytes: [UInt8] = []
        var starts: [UInt32] = []
        starts.reserveCapacity(strings.count + 1)
        for s in strings {
            starts.append(UInt32(truncatingIfNeeded: bytes.count))
            bytes.append(contentsOf: s.utf8)
        }
        starts.append(UInt32(truncatingIfNeeded: bytes.count))
        guard strings.count > Self.scanLimit else {
            storage = Storage(bytes: bytes, starts: starts, slots: [])
            return
        }
        var capacity = 16
        while capacity < strings.count * 2 { capacity *= 2 }
        var slots = [UInt64](repeating: 0, count: capacity)
        bytes.withUnsafeBufferPointer { all in
            for position in strings.indices {
                let key = UnsafeBufferPointer(rebasing: all[Int(starts[position])..<Int(starts[position + 1])])
                let h = UInt64(StringHash.key(key))
                var i = Int(truncatingIfNeeded: h) & (capacity - 1)
                var isDuplicate = false
                while slots[i] != 0 {
                    let other = Int(truncatingIfNeeded: slots[i] & 0xFFFF_FFFF) - 1
                    if slots[i] >> 32 == h,
                       Self.equal(key, UnsafeBufferPointer(rebasing: all[Int(starts[other])..<Int(starts[other + 1])])) {
                        isDuplicate = true
                        break
                    }
                    i = (i + 1) & (capacity - 1)
                }
                if !isDuplicate { slots[i] = h << 32 | UInt64(position + 1) }
            }
        }
        storage = Storage(bytes: bytes, starts: starts, slots: slots)
    }

    /// The number of strings, duplicates included.
    var count: Int { starts.count - 1 }

    /// Whether lookups hash (true) or scan (false).
    var isHashed: Bool { !slots.isEmpty }

    /// The position of `s`, or nil when it is not in the set.
    @inline(__always)
    func index(of s: String) -> Int? {
        StringHash.withBytes(s) { key in
            isHashed ? find(key, hash: StringHash.key(key)) : scan(key)
        }
    }

    /// Whether `s` is in the set.
    @inline(__always)
    func contains(_ s: String) -> Bool { index(of: s) != nil }

    /// Whether `s`, whose `StringHash.key` is `hash`, is in the set (a prepared context
    /// keeps its strings' keys, so a large set's lookup does not hash them again).
    @inline(__always)
    func contains(_ s: String, hash: UInt32) -> Bool {
        StringHash.withBytes(s) { key in
            (isHashed ? find(key, hash: hash) : scan(key)) != nil
        }
    }

    private func scan(_ key: UnsafeBufferPointer<UInt8>) -> Int? {
        bytes.withUnsafeBufferPointer { all in
            starts.withUnsafeBufferPointer { starts in
                for position in 0..<(starts.count - 1) {
                    let start = Int(starts[position]), end = Int(starts[position + 1])
                    if end - start == key.count, Self.equal(key, UnsafeBufferPointer(rebasing: all[start..<end])) {
                        return position
                    }
                }
                return nil
            }
        }
    }

    private func find(_ key: UnsafeBufferPointer<UInt8>, hash: UInt32) -> Int? {
        slots.withUnsafeBufferPointer { slots in
            let mask = slots.count - 1
            var i = Int(truncatingIfNeeded: hash) & mask
            while true {
                let slot = slots[i]
                if slot == 0 { return nil }
                if slot >> 32 == UInt64(hash) {
                    let position = Int(truncatingIfNeeded: slot & 0xFFFF_FFFF) - 1
                    let start = Int(starts[position]), end = Int(starts[position + 1])
                    let found = bytes.withUnsafeBufferPointer { Self.equal(key, UnsafeBufferPointer(rebasing: $0[start..<end])) }
                    if found { return position }
                }
                i = (i + 1) & mask
            }
        }
    }

    /// Whether two byte strings are equal.
    @inline(__always)
    static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        guard let x = a.baseAddress, let y = b.baseAddress, x != y else { return true }
        return memcmp(x, y, a.count) == 0
    }
}

/// The hash of a string's UTF-8 bytes that literal sets and contexts share: the standard
/// library's `Hasher` (SipHash, seeded per process), so that keys cannot be crafted to
/// collide.
enum StringHash {
    /// The hash of `bytes`.
    @inline(__always)
    static func of(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hasher = Hasher()
        hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
        return UInt64(UInt(bitPattern: hasher.finalize()))
    }

    /// The hash of `s`'s UTF-8 bytes.
    @inline(__always)
    static func of(_ s: String) -> UInt64 { withBytes(s) { of($0) } }

    /// The 32 bits of the hash that literal sets index by.
    @inline(__always)
    static func key(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt32 { UInt32(truncatingIfNeeded: of(bytes)) }

    /// The 32 bits of `s`'s hash that literal sets index by.
    @inline(__always)
    static func key(_ s: String) -> UInt32 { withBytes(s) { key($0) } }

    /// Runs `body` with `s`'s UTF-8 bytes, in place when the string stores them
    /// contiguously (every native string), else copied.
    @inline(__always)
    static func withBytes<R>(_ s: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let r = s.utf8.withContiguousStorageIfAvailable(body) { return r }
        return Array(s.utf8).withUnsafeBufferPointer(body)
    }
}
