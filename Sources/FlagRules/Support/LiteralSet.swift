import Foundation

/// A fixed set of strings looked up by their UTF-8 bytes (Unicode scalars, no
/// normalisation), answering each string's position in the list it was made from.
///
/// The strings' bytes are stored once, end to end. A set of up to `scanLimit` strings
/// (enum cases, most `in` lists) is scanned: a lookup compares lengths, then bytes. A
/// larger set adds an open-addressing table of 8-byte slots, at most half full. A string
/// of up to 7 bytes (codes, short ids) is held in its slot whole, with its length, so one
/// read of a slot answers a lookup of it; a longer string's slot holds 31 bits of its hash
/// and its position, and a lookup that matches them compares the stored bytes. The cost
/// does not grow with the number of strings. Hashes come from `StringHash`, seeded per
/// process, so literals cannot be chosen to collide.
///
/// Before the table, a hashed set's filter (one bit a hash, about eight bits a string, so
/// an eighth the table's size) answers most strings that are not in the set: a lookup
/// that misses reads a small array that stays in cache rather than the table, which for a
/// long list does not.
///
/// The same code runs on every platform; it reads strings only through their UTF-8 view.
package struct LiteralSet: Sendable {
    /// Sets of at most this many strings are scanned rather than hashed.
    static let scanLimit = 8

    /// The set's arrays, in one object: a set is one reference to copy, retain or capture.
    private final class Storage: Sendable {
        /// Every string's UTF-8 bytes, end to end.
        let bytes: [UInt8]
        /// Where each string starts in `bytes`, by position, and one more entry: the end.
        let starts: [UInt32]
        /// The hash table (empty for a scanned set): `Slot.short` or `Slot.long` of a
        /// string, 0 for an empty slot.
        let slots: [UInt64]
        /// Each slot's string's position (read by `index(of:)` only).
        let positions: [UInt32]
        /// A scanned set's strings themselves (empty for a hashed set), for `identical`.
        let strings: [String]
        /// A hashed set's filter: the bit `Filter.bit(hash, shift)` is set for each string's
        /// hash (empty for a scanned set).
        let filter: [UInt64]
        /// How far `Filter.bit` shifts a mixed hash to index `filter`.
        let filterShift: UInt32
        /// `LiteralHash.seed`, read here without the global's lazy-initialization check.
        let seed: UInt64

        init(
            bytes: [UInt8], starts: [UInt32], slots: [UInt64] = [], positions: [UInt32] = [], strings: [String] = [],
            filter: [UInt64] = [], filterShift: UInt32 = 32
        ) {
            self.bytes = bytes
            self.starts = starts
            self.slots = slots
            self.positions = positions
            self.strings = strings
            self.filter = filter
            self.filterShift = filterShift
            seed = LiteralHash.seed
        }

        /// Whether a string of this hash may be in the set (false: it is not).
        @inline(__always)
        func mayHold(_ hash: UInt32) -> Bool {
            let bit = Filter.bit(hash, filterShift)
            return filter.withUnsafeBufferPointer { $0[bit >> 6] >> UInt64(bit & 63) & 1 != 0 }
        }
    }

    /// Where a hash falls in a filter of `1 << (32 - shift)` bits: its bits mixed by an odd
    /// multiplier, so that the filter's bit does not follow the table's slot (the hash's
    /// low bits).
    enum Filter {
        @inline(__always)
        static func bit(_ hash: UInt32, _ shift: UInt32) -> Int {
            Int(truncatingIfNeeded: (hash &* 0x9E37_79B1) >> shift)
        }
    }

    private let storage: Storage

    /// What a slot holds.
    enum Slot {
        /// A string of up to 7 bytes: its bytes, zero-padded, and its length + 1 in the top
        /// byte (never 0, never with the top bit set).
        @inline(__always)
        static func short(_ key: UnsafeBufferPointer<UInt8>) -> UInt64 {
            var word = UInt64(key.count + 1) << 56
            guard let base = key.baseAddress else { return word }
            for i in 0..<key.count { word |= UInt64(base[i]) << (8 * UInt64(i)) }
            return word
        }

        /// A longer string: the top bit set, 31 bits of its hash, and its position.
        @inline(__always)
        static func long(hash: UInt32, position: Int) -> UInt64 {
            1 << 63 | UInt64(hash >> 1) << 32 | UInt64(UInt32(truncatingIfNeeded: position))
        }

        /// Whether a long string's slot has `hash`.
        @inline(__always)
        static func matches(_ slot: UInt64, longHash hash: UInt32) -> Bool {
            slot >> 32 == (1 << 31 | UInt64(hash >> 1))
        }
    }

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
            // A string listed again is kept as its first occurrence, so that the identity
            // shortcut finds the first position too.
            let kept = strings.map { s in strings.first { $0 == s } ?? s }
            storage = Storage(bytes: bytes, starts: starts, strings: kept)
            return
        }
        var capacity = 16
        while capacity < strings.count * 2 { capacity *= 2 }
        var slots = [UInt64](repeating: 0, count: capacity)
        var positions = [UInt32](repeating: 0, count: capacity)
        var filterBits = 512
        while filterBits < strings.count * 8 { filterBits *= 2 }
        let filterShift = UInt32(32 - filterBits.trailingZeroBitCount)
        var filter = [UInt64](repeating: 0, count: filterBits / 64)
        bytes.withUnsafeBufferPointer { all in
            for position in strings.indices {
                let key = UnsafeBufferPointer(rebasing: all[Int(starts[position])..<Int(starts[position + 1])])
                let h = StringHash.key(key)
                let existing = slots.withUnsafeBufferPointer { Self.findSlot(key, hash: h, $0, all, starts) }
                guard existing == nil else { continue }
                var i = Int(truncatingIfNeeded: h) & (capacity - 1)
                while slots[i] != 0 { i = (i + 1) & (capacity - 1) }
                slots[i] = key.count <= 7 ? Slot.short(key) : Slot.long(hash: h, position: position)
                positions[i] = UInt32(truncatingIfNeeded: position)
                let bit = Filter.bit(h, filterShift)
                filter[bit >> 6] |= 1 << UInt64(bit & 63)
            }
        }
        storage = Storage(
            bytes: bytes, starts: starts, slots: slots, positions: positions, filter: filter, filterShift: filterShift)
    }

    /// The number of strings, duplicates included.
    var count: Int { storage.starts.count - 1 }

    /// Whether lookups hash (true) or scan (false).
    var isHashed: Bool { !storage.slots.isEmpty }

    /// The position of `s`, or nil when it is not in the set.
    @inline(__always)
    package func index(of s: String) -> Int? {
        if let i = identical(s) { return i }
        return StringHash.withBytes(s) { key in
            guard isHashed else { return scan(key) }
            return hashedSlot(key, hash: hash(key)).map { Int(storage.positions[$0]) }
        }
    }

    /// Whether `s` is in the set.
    @inline(__always)
    func contains(_ s: String) -> Bool {
        if identical(s) != nil { return true }
        return StringHash.withBytes(s) { key in
            (isHashed ? hashedSlot(key, hash: hash(key)) : scan(key)) != nil
        }
    }

    /// Whether `s`, whose `StringHash.key` is `hash`, is in the set (a prepared context
    /// looks a string up in every large set that reads it, with one hash for all).
    @inline(__always)
    func contains(_ s: String, hash: UInt32) -> Bool {
        if isHashed, !storage.mayHold(hash) { return false }
        return StringHash.withBytes(s) { key in
            (isHashed ? findSlot(key, hash: hash) : scan(key)) != nil
        }
    }

    /// Whether the filter lets `s` through to the table (true for every string of the set
    /// and for a scanned set; for tests).
    func filterAdmits(_ s: String) -> Bool {
        !isHashed || storage.mayHold(StringHash.key(s))
    }

    /// `StringHash.key(key)`, with the seed this set keeps.
    @inline(__always)
    private func hash(_ key: UnsafeBufferPointer<UInt8>) -> UInt32 {
        UInt32(truncatingIfNeeded: LiteralHash.of(key, seed: storage.seed))
    }

    /// A hashed set's slot holding `key`: the filter first, then the table.
    @inline(__always)
    private func hashedSlot(_ key: UnsafeBufferPointer<UInt8>, hash: UInt32) -> Int? {
        storage.mayHold(hash) ? findSlot(key, hash: hash) : nil
    }

    /// The position of a scanned set's string that is `s` bit for bit, if one is: a string
    /// of up to 15 UTF-8 bytes is held in the `String` value itself, the same bits for the
    /// same bytes, so an attribute's value usually finds its case or literal this way, two
    /// words compared a string, without reading its bytes. Nil says nothing (the bytes are
    /// compared next).
    @inline(__always)
    private func identical(_ s: String) -> Int? {
        storage.strings.withUnsafeBufferPointer { strings in
            for position in strings.indices where strings[position]._isIdentical(to: s) { return position }
            return nil
        }
    }

    private func scan(_ key: UnsafeBufferPointer<UInt8>) -> Int? {
        storage.bytes.withUnsafeBufferPointer { all in
            storage.starts.withUnsafeBufferPointer { starts in
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

    private func findSlot(_ key: UnsafeBufferPointer<UInt8>, hash: UInt32) -> Int? {
        storage.slots.withUnsafeBufferPointer { slots in
            storage.bytes.withUnsafeBufferPointer { bytes in Self.findSlot(key, hash: hash, slots, bytes, storage.starts) }
        }
    }

    /// The slot holding `key` in the table `slots` (built so far) over the strings'
    /// `bytes` and `starts`, found by its hash.
    @inline(__always)
    private static func findSlot(
        _ key: UnsafeBufferPointer<UInt8>, hash: UInt32, _ slots: UnsafeBufferPointer<UInt64>,
        _ bytes: UnsafeBufferPointer<UInt8>, _ starts: [UInt32]
    ) -> Int? {
        let mask = slots.count - 1
        var i = Int(truncatingIfNeeded: hash) & mask
        if key.count <= 7 {
            let wanted = Slot.short(key)
            while true {
                let slot = slots[i]
                if slot == wanted { return i }
                if slot == 0 { return nil }
                i = (i + 1) & mask
            }
        }
        while true {
            let slot = slots[i]
            if slot == 0 { return nil }
            if Slot.matches(slot, longHash: hash) {
                let position = Int(truncatingIfNeeded: slot & 0xFFFF_FFFF)
                let start = Int(starts[position]), end = Int(starts[position + 1])
                if equal(key, UnsafeBufferPointer(rebasing: bytes[start..<end])) { return i }
            }
            i = (i + 1) & mask
        }
    }

    /// Whether two byte strings are equal: compared eight bytes at a time in place (the
    /// strings compared are mostly names and codes of a few bytes, for which a library
    /// call would cost more than the comparison).
    @inline(__always)
    static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        guard let x = a.baseAddress, let y = b.baseAddress, x != y else { return true }
        let n = a.count
        let p = UnsafeRawPointer(x), q = UnsafeRawPointer(y)
        var i = 0
        while i + 8 <= n {
            if p.loadUnaligned(fromByteOffset: i, as: UInt64.self) != q.loadUnaligned(fromByteOffset: i, as: UInt64.self) { return false }
            i += 8
        }
        while i < n {
            if x[i] != y[i] { return false }
            i += 1
        }
        return true
    }
}

/// The hashes of a string's UTF-8 bytes: contexts' keys (`of`, the standard library's
/// `Hasher`, SipHash) and literal sets' strings (`key`, `LiteralHash`), each keyed by a
/// seed drawn once per process, so that neither can be chosen to collide without knowing
/// it. A context whose keys collide anyway moves them to a per-instance dictionary after a
/// bounded probe (`ContextStorage.maxProbes`).
enum StringHash {
    /// The hash of `bytes`, for a context's keys.
    @inline(__always)
    static func of(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hasher = Hasher()
        hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
        return UInt64(UInt(bitPattern: hasher.finalize()))
    }

    /// The hash of `s`'s UTF-8 bytes, for a context's keys.
    @inline(__always)
    static func of(_ s: String) -> UInt64 { withBytes(s) { of($0) } }

    /// The 32 bits of the hash that literal sets index by.
    @inline(__always)
    static func key(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
        UInt32(truncatingIfNeeded: LiteralHash.of(bytes, seed: LiteralHash.seed))
    }

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
