#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A set of strings looked up by their UTF-8 bytes (no Unicode normalisation), returning
/// each string's position: an open-addressing hash table (FNV-1a, cheap for the short keys
/// rules use), so that a lookup costs the same for 3 strings or 100,000.
struct StringTable: Sendable {
    private let storage: StringTableStorage

    /// The table of `strings`; a string listed twice keeps its first position.
    init(_ strings: [String]) { storage = StringTableStorage(strings) }

    /// The number of strings.
    var count: Int { storage.count }

    /// FNV-1a over the bytes, then a final mix so that the low bits spread.
    @inline(__always)
    static func hash(_ b: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in b { h = (h ^ UInt64(byte)) &* 0x100_0000_01b3 }
        h ^= h >> 29
        h = h &* 0xbf58_476d_1ce4_e5b9
        return h ^ (h >> 32)
    }

    @inline(__always)
    static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        guard let x = a.baseAddress, let y = b.baseAddress else { return true }
        if a.count <= 16 {
            for i in 0..<a.count where x[i] != y[i] { return false }
            return true
        }
        return memcmp(x, y, a.count) == 0
    }

    /// The position of `s`, or nil.
    @inline(__always)
    func index(of s: String) -> Int? {
        if let found = s.utf8.withContiguousStorageIfAvailable({ storage.index(ofBytes: $0) }) { return found }
        return Array(s.utf8).withUnsafeBufferPointer { storage.index(ofBytes: $0) }
    }
}

/// One hash slot: the string's hash fingerprint, position + 1 (0: empty), and where its
/// bytes are, so that a miss usually costs one cache line and a hit one more.
struct StringTableSlot {
    var fingerprint: UInt32
    var entry: UInt32
    var offset: UInt32
    var length: UInt32
}

/// The table's memory: all bytes back to back, and the hash slots. Allocated once, never
/// mutated.
final class StringTableStorage: @unchecked Sendable {
    let count: Int
    private let bytes: UnsafeMutablePointer<UInt8>
    private let slots: UnsafeMutablePointer<StringTableSlot>
    private let mask: Int

    init(_ strings: [String]) {
        count = strings.count
        let total = strings.reduce(0) { $0 + $1.utf8.count }
        bytes = .allocate(capacity: max(total, 1))
        var capacity = 8
        while capacity < strings.count * 2 { capacity *= 2 }
        slots = .allocate(capacity: capacity)
        slots.initialize(repeating: StringTableSlot(fingerprint: 0, entry: 0, offset: 0, length: 0), count: capacity)
        mask = capacity - 1
        var position = 0
        for (i, s) in strings.enumerated() {
            let start = position
            for b in s.utf8 {
                bytes[position] = b
                position += 1
            }
            let item = UnsafeBufferPointer(start: bytes + start, count: position - start)
            guard index(ofBytes: item) == nil else { continue }
            let h = StringTable.hash(item)
            var slot = Int(truncatingIfNeeded: h) & mask
            while slots[slot].entry != 0 { slot = (slot + 1) & mask }
            slots[slot] = StringTableSlot(fingerprint: UInt32(truncatingIfNeeded: h >> 32), entry: UInt32(i + 1),
                                          offset: UInt32(start), length: UInt32(position - start))
        }
    }

    deinit {
        bytes.deallocate()
        slots.deallocate()
    }

    @inline(__always)
    func index(ofBytes key: UnsafeBufferPointer<UInt8>) -> Int? {
        let h = StringTable.hash(key)
        let fingerprint = UInt32(truncatingIfNeeded: h >> 32)
        var slot = Int(truncatingIfNeeded: h) & mask
        while true {
            let s = slots[slot]
            if s.entry == 0 { return nil }
            if s.fingerprint == fingerprint, Int(s.length) == key.count,
               StringTable.equal(key, UnsafeBufferPointer(start: bytes + Int(s.offset), count: Int(s.length))) {
                return Int(s.entry) - 1
            }
            slot = (slot + 1) & mask
        }
    }
}
