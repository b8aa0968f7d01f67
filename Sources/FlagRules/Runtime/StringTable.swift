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

/// The table's memory: all bytes back to back, each string's start offset (one more marks
/// the end), and the hash slots (index + 1; 0 is empty). Allocated once, never mutated.
final class StringTableStorage: @unchecked Sendable {
    let count: Int
    private let bytes: UnsafeMutablePointer<UInt8>
    private let offsets: UnsafeMutablePointer<Int>
    private let slots: UnsafeMutablePointer<Int32>
    private let mask: Int

    init(_ strings: [String]) {
        count = strings.count
        let total = strings.reduce(0) { $0 + $1.utf8.count }
        bytes = .allocate(capacity: max(total, 1))
        offsets = .allocate(capacity: strings.count + 1)
        var position = 0
        for (i, s) in strings.enumerated() {
            offsets[i] = position
            for b in s.utf8 {
                bytes[position] = b
                position += 1
            }
        }
        offsets[strings.count] = position
        var capacity = 8
        while capacity < strings.count * 2 { capacity *= 2 }
        slots = .allocate(capacity: capacity)
        slots.initialize(repeating: 0, count: capacity)
        mask = capacity - 1
        for i in 0..<strings.count where index(ofBytes: item(i)) == nil {
            var slot = Int(truncatingIfNeeded: StringTable.hash(item(i))) & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = Int32(i + 1)
        }
    }

    deinit {
        bytes.deallocate()
        offsets.deallocate()
        slots.deallocate()
    }

    @inline(__always)
    private func item(_ i: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: bytes + offsets[i], count: offsets[i + 1] - offsets[i])
    }

    @inline(__always)
    func index(ofBytes key: UnsafeBufferPointer<UInt8>) -> Int? {
        var slot = Int(truncatingIfNeeded: StringTable.hash(key)) & mask
        while true {
            let entry = Int(slots[slot])
            if entry == 0 { return nil }
            if StringTable.equal(key, item(entry - 1)) { return entry - 1 }
            slot = (slot + 1) & mask
        }
    }
}
