/// A set of strings looked up by their UTF-8 bytes (no Unicode normalisation), returning
/// each string's position: an open-addressing hash table (FNV-1a, cheap for the short keys
/// rules use), so that a lookup costs the same for 3 strings or 100,000.
struct StringTable: Sendable {
    /// All strings' bytes, back to back.
    private let bytes: [UInt8]
    /// Where each string starts in `bytes`; one more entry marks the end.
    private let offsets: [Int]
    /// Hash slots holding index + 1 (0 is empty); empty for small tables.
    private let slots: [Int32]
    private let mask: Int

    /// The table of `strings`; a string listed twice keeps its first position.
    init(_ strings: [String]) {
        var bytes: [UInt8] = []
        var offsets: [Int] = [0]
        for s in strings {
            bytes += s.utf8
            offsets.append(bytes.count)
        }
        self.bytes = bytes
        self.offsets = offsets
        var capacity = 8
        while capacity < strings.count * 2 { capacity *= 2 }
        var table = [Int32](repeating: 0, count: capacity)
        bytes.withUnsafeBufferPointer { all in
            for i in 0..<strings.count {
                let item = UnsafeBufferPointer(rebasing: all[offsets[i]..<offsets[i + 1]])
                var slot = Int(truncatingIfNeeded: StringTable.hash(item)) & (capacity - 1)
                var duplicate = false
                while table[slot] != 0 {
                    let j = Int(table[slot]) - 1
                    if StringTable.equal(item, UnsafeBufferPointer(rebasing: all[offsets[j]..<offsets[j + 1]])) {
                        duplicate = true
                        break
                    }
                    slot = (slot + 1) & (capacity - 1)
                }
                if !duplicate { table[slot] = Int32(i + 1) }
            }
        }
        slots = table
        mask = capacity - 1
    }

    /// The number of strings.
    var count: Int { offsets.count - 1 }

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
        if a.count <= 16 {
            for i in 0..<a.count where a[i] != b[i] { return false }
            return true
        }
        return memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0
    }

    /// The position of `s`, or nil.
    @inline(__always)
    func index(of s: String) -> Int? {
        if let found = s.utf8.withContiguousStorageIfAvailable({ index(ofBytes: $0) }) { return found }
        return Array(s.utf8).withUnsafeBufferPointer { index(ofBytes: $0) }
    }

    func index(ofBytes key: UnsafeBufferPointer<UInt8>) -> Int? {
        bytes.withUnsafeBufferPointer { all in
            var slot = Int(truncatingIfNeeded: StringTable.hash(key)) & mask
            while true {
                let entry = Int(slots[slot])
                if entry == 0 { return nil }
                let i = entry - 1
                if StringTable.equal(key, UnsafeBufferPointer(rebasing: all[offsets[i]..<offsets[i + 1]])) { return i }
                slot = (slot + 1) & mask
            }
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
