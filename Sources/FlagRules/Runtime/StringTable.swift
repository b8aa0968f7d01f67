#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CFlagRules

/// A fixed set of strings looked up by their UTF-8 bytes (no Unicode normalisation),
/// returning each string's position, with the same work per lookup for 3 strings or
/// 100,000.
///
/// - Tables of up to eight strings (enum cases, most `in` lists) skip hashing: a lookup
///   compares the packed key with each slot.
/// - Larger tables keep their slots in lines of one cache line each, about half full:
///   eight 8-byte slots when every key has at most 7 bytes (country codes, short ids),
///   else four 16-byte ones, which hold a key of up to 15 bytes inline, or a longer key's
///   length, a fingerprint and where its bytes are. A key sits in the line its hash picks,
///   or when that was full in one of the next lines it tries (a full line passed is
///   marked), or when those were full too, in the overflow list. A lookup reads one line,
///   compared as vectors, with no branch on which slot matched (and a long key's bytes).
///
/// Tables of 16,384 strings and more, whose lines outgrow the core's cache, also have a
/// miss filter (a blocked Bloom filter of eight bits a string) that answers about 96% of
/// misses without reading a line, and a lookup starts loading its line while it reads the
/// filter. The overflow list is sorted and searched by binary search, so crafted hash
/// collisions cost a little time and no more.
struct StringTable: Sendable {
    private let storage: StringTableStorage

    /// The table of `strings`; a string listed twice keeps its first position.
    init(_ strings: [String]) { storage = StringTableStorage(strings, everyKeyInOverflow: false) }

    /// A table whose keys all go to the overflow list, when `everyKeyInOverflow` (for tests).
    init(_ strings: [String], everyKeyInOverflow: Bool) { storage = StringTableStorage(strings, everyKeyInOverflow: everyKeyInOverflow) }

    /// The number of strings, duplicates included.
    var count: Int { storage.count }

    /// How many distinct strings are in the overflow list (zero unless hashes collide).
    var overflowCount: Int { storage.overflowCount }

    /// How the table is laid out (for tests).
    var layout: Layout { storage.layout }

    /// How many keys of a table in lines sit in a line other than their first (which was
    /// full).
    var displacedCount: Int { storage.displacedCount }

    /// A table's layout, chosen by its size and its longest key.
    enum Layout: Equatable {
        /// Up to eight strings, compared one by one.
        case scanned
        /// Every key at most 7 bytes: 8-byte slots, eight to a cache line.
        case narrowLines
        /// Some key longer: 16-byte slots, four to a cache line (keys longer than 15 bytes
        /// by their length, fingerprint and the offset of their bytes).
        case wideLines
    }

    /// Whether the table has a miss filter (tables of at least
    /// `StringTableStorage.filterMinimum` distinct strings).
    var hasMissFilter: Bool { storage.hasMissFilter }

    /// Whether the miss filter lets `s` through to a slot (true without a filter); for tests.
    func missFilterAdmits(_ s: String) -> Bool {
        withBytes(s) { storage.mayContain(TableHash.of($0)) }
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
        if let packed = StringBits.packedKey(s), let hit = storage.findSmall(packed) { return storage.position(hit) }
        return withBytes(s) { storage.index(ofBytes: $0) }
    }

    /// Whether the table holds `s` (without reading its position).
    @inline(__always)
    func contains(_ s: String) -> Bool {
        if let packed = StringBits.packedKey(s), let hit = storage.findSmall(packed, inline: true) { return hit != .none }
        return withBytes(s) { storage.find($0) != .none }
    }

    /// Whether the table holds `s`, whose key hash (`TableHash.key(s)`) is `keyHash`: the
    /// lookup of a prepared context's string, hashed when the context was prepared. (A
    /// scanned table does not hash.)
    @inline(__always)
    func contains(_ s: String, keyHash: UInt32) -> Bool {
        if let packed = StringBits.packedKey(s) { return storage.containsSmall(packed, keyHash: keyHash) }
        return withBytes(s) { storage.find($0, longKeyHash: keyHash) != .none }
    }

    @inline(__always)
    private func withBytes<R>(_ s: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let found = s.utf8.withContiguousStorageIfAvailable(body) { return found }
        return Array(s.utf8).withUnsafeBufferPointer(body)
    }
}

/// A key as a slot holds it: up to 15 bytes inline (zero-padded, the length in the last
/// byte), or for a longer key its length (tag 0x80 in the last byte), hash fingerprint and
/// the offset of its bytes. An empty slot has tag 0xFF.
struct PackedKey: Equatable {
    var low: UInt64
    var high: UInt64

    static let longTag: UInt64 = 0x80 << 56
    static let empty = PackedKey(low: 0, high: 0xFF << 56)

    /// The inline form of a key of at most 15 bytes.
    @inline(__always)
    init(inline key: UnsafeBufferPointer<UInt8>) {
        guard let base = key.baseAddress else {
            self.init(low: 0, high: 0)
            return
        }
        let p = UnsafeRawPointer(base), n = key.count
        if n >= 8 {
            self.init(low: UInt64(littleEndian: p.loadUnaligned(as: UInt64.self)), high: Self.word(p + 8, n - 8) | UInt64(n) << 56)
        } else {
            self.init(low: Self.word(p, n), high: UInt64(n) << 56)
        }
    }

    /// The `n` bytes at `p` (0...7) as a zero-padded little-endian word, read without
    /// touching memory past them (and without a copy through the stack).
    @inline(__always)
    static func word(_ p: UnsafeRawPointer, _ n: Int) -> UInt64 {
        if n >= 4 {
            let first = UInt64(UInt32(littleEndian: p.loadUnaligned(as: UInt32.self)))
            let last = UInt64(UInt32(littleEndian: p.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self)))
            return first | (last >> (8 * (8 - n))) << 32
        }
        guard n > 0 else { return 0 }
        let b = p.assumingMemoryBound(to: UInt8.self)
        return UInt64(b[0]) | UInt64(b[n / 2]) << (8 * (n / 2)) | UInt64(b[n - 1]) << (8 * (n - 1))
    }

    init(low: UInt64, high: UInt64) {
        self.low = low
        self.high = high
    }

    /// The `high` word of a long key of `length` bytes.
    @inline(__always)
    static func longHigh(_ length: Int) -> UInt64 { longTag | UInt64(truncatingIfNeeded: length) }
}

/// Hashing for the table: a multiply-fold (as in wyhash) over the key's 8-byte words, to
/// a 32-bit key hash, which one multiply spreads to the 64 bits that pick a key's lines and
/// its miss-filter bits. A prepared context keeps each string's key hash (`key(_:)`), so a
/// lookup of a slot's string need not hash it again. For inline keys the constants each
/// have a 0xFF byte, which UTF-8 never holds, so no key makes a factor zero. A crafted
/// collision costs only speed: colliding keys that find no room in their lines go to the
/// overflow list.
enum TableHash {
    @inline(__always)
    static func fold(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let p = a.multipliedFullWidth(by: b)
        return p.high ^ p.low
    }

    /// The 64 bits a table reads for a key with key hash `k`: its lines and filter word
    /// from the high bits, its filter bits from the low ones (a bijection of `k`: the low
    /// half is `k` times an odd number, so it also serves as a long key's fingerprint).
    @inline(__always)
    static func spread(_ k: UInt32) -> UInt64 { UInt64(k) &* 0x9E37_79B9_7F4A_7C15 }

    /// The key hash of an inline key (at most 15 bytes, packed).
    @inline(__always)
    static func key(_ key: PackedKey) -> UInt32 {
        let h = fold(key.low ^ 0xE703_7ED1_A0B4_28FF, key.high ^ 0x8EBC_6AF0_9C88_C6FF)
        return UInt32(truncatingIfNeeded: h ^ h >> 32)
    }

    /// The key hash of a key of any length, by its bytes.
    static func key(_ key: UnsafeBufferPointer<UInt8>) -> UInt32 {
        if key.count <= 15 { return Self.key(PackedKey(inline: key)) }
        var h: UInt64 = 0xA076_1D64_78BD_642F
        var i = 0
        let p = UnsafeRawPointer(key.baseAddress!)
        while i + 8 <= key.count {
            h = fold(h ^ UInt64(littleEndian: p.loadUnaligned(fromByteOffset: i, as: UInt64.self)), 0xE703_7ED1_A0B4_28FF)
            i += 8
        }
        if i < key.count { h = fold(h ^ PackedKey.word(p + i, key.count - i), 0xE703_7ED1_A0B4_28FF) }
        h = fold(h ^ UInt64(key.count), 0x8EBC_6AF0_9C88_C6FF)
        return UInt32(truncatingIfNeeded: h ^ h >> 32)
    }

    /// The key hash of a string (a small string's packed form, else its bytes).
    @inline(__always)
    static func key(_ s: String) -> UInt32 {
        if let packed = StringBits.packedKey(s) { return key(packed) }
        return keyOfBytes(s)
    }

    /// `key(_:)` for a string not held small (out of line: rare on hot paths).
    @inline(never)
    private static func keyOfBytes(_ s: String) -> UInt32 {
        var s = s
        return s.withUTF8 { key($0) }
    }

    /// The spread hash of an inline key.
    @inline(__always)
    static func inline(_ key: PackedKey) -> UInt64 { spread(Self.key(key)) }

    /// The spread hash of a key longer than 15 bytes.
    static func long(_ key: UnsafeBufferPointer<UInt8>) -> UInt64 { spread(Self.key(key)) }

    /// The spread hash of a key of any length.
    @inline(__always)
    static func of(_ key: UnsafeBufferPointer<UInt8>) -> UInt64 {
        key.count <= 15 ? inline(PackedKey(inline: key)) : long(key)
    }

    /// `x` scaled into `0..<n` by its high bits (Lemire's fast range).
    @inline(__always)
    static func range(_ x: UInt64, _ n: Int) -> Int {
        Int(truncatingIfNeeded: x.multipliedFullWidth(by: UInt64(truncatingIfNeeded: n)).high)
    }

    /// The miss filter's word for a key with hash `h`, in a filter of `words` words, and
    /// the bits the key sets in it.
    @inline(__always)
    static func filter(_ h: UInt64, _ words: Int) -> (word: Int, mask: UInt64) {
        let mask = (1 as UInt64) << (h & 63) | (1 as UInt64) << (h >> 6 & 63) | (1 as UInt64) << (h >> 12 & 63) | (1 as UInt64) << (h >> 18 & 63)
        return (range(h, words), mask)
    }

    /// The line a key tries after its first line, `range(h, lines)`, and then
    /// `attempt - 1` others, were full.
    @inline(__always)
    static func line(_ h: UInt64, attempt: Int, _ lines: Int) -> Int {
        range(fold(h ^ (UInt64(truncatingIfNeeded: attempt) &* 0x2D35_8DCC_AA6C_78A5), 0x8BB8_4B93_962E_ACC9), lines)
    }
}

/// Where a lookup found its key: a slot, an overflow record, or nowhere.
enum TableHit: Equatable {
    case slot(Int)
    case overflow(Int)
    case none
}

/// One key of the overflow list: its bytes and its position.
struct OverflowRecord {
    var offset: UInt32
    var length: UInt32
    var position: UInt32
}

/// The table's memory, allocated once and never mutated: slots (or lines of slots), each
/// slot's position, the overflow list, the miss filter and the bytes of long keys, in one
/// block (on huge pages when it is large, so that lookups do not miss the TLB).
final class StringTableStorage: @unchecked Sendable {
    let count: Int
    let overflowCount: Int
    private let slotCount: Int
    private let block: UnsafeMutableRawPointer
    private let alignedOnHugePages: Bool
    /// The slots of a scanned table, padded to four or eight, at the block's start (aligned
    /// for vector loads).
    private let slots: UnsafeMutablePointer<PackedKey>
    /// The number of 64-byte lines (zero when the table is scanned).
    private let lineCount: Int
    /// Whether the lines hold eight 8-byte slots (a key of at most 7 bytes with its length
    /// in the top byte, 0xFF there for an empty slot), not four `PackedKey`s (a key of up
    /// to 15 bytes inline, or a longer key's length, fingerprint and bytes' offset).
    private let narrow: Bool
    /// The lines, eight words each, on cache lines.
    private let lines: UnsafeMutablePointer<UInt64>
    /// One bit a line: some key tried this line, found it full and went on (to another
    /// line or the overflow list).
    private let spilled: UnsafeMutablePointer<UInt64>
    /// How many keys sit in a line other than their first (for tests).
    let displacedCount: Int
    private let filterWords: Int
    private let filter: UnsafeMutablePointer<UInt64>
    private let positions: UnsafeMutablePointer<UInt32>
    private let overflow: UnsafeMutablePointer<OverflowRecord>
    private let bytes: UnsafeMutablePointer<UInt8>

    /// Tables of at most this many strings are scanned: comparing a few packed keys costs
    /// less than hashing.
    static let scanLimit = 8
    /// Tables of at least this many distinct keys get a miss filter: their slots outgrow
    /// the core's cache, and the filter (each key sets four bits of one 64-bit word)
    /// answers most misses without reading a slot.
    static let filterMinimum = 16_384
    /// The filter's size: bits per distinct key.
    static let filterBitsPerKey = 8
    /// Keys a line: half full (lines of eight 8-byte slots, or four 16-byte ones).
    static let narrowKeysPerLine = 4, wideKeysPerLine = 2
    /// Lines a key may try (its first included) before the overflow list.
    static let lineAttempts = 4

    var layout: StringTable.Layout {
        lineCount == 0 ? .scanned : narrow ? .narrowLines : .wideLines
    }

    init(_ strings: [String], everyKeyInOverflow: Bool) {
        count = strings.count
        let build = TableBuild(strings, everyKeyInOverflow: everyKeyInOverflow)
        slotCount = build.slotCount
        overflowCount = build.overflow.count
        filterWords = build.filter.count
        lineCount = build.lineCount
        narrow = build.narrow
        displacedCount = build.displacedCount

        let slotBytes = build.slots.count * MemoryLayout<PackedKey>.stride + build.lineWords.count * 8
        let spilledBytes = build.spilled.count * 8
        let filterBytes = filterWords * 8
        let positionBytes = slotCount * 4
        let overflowBytes = overflowCount * MemoryLayout<OverflowRecord>.stride
        let size = max(slotBytes + spilledBytes + filterBytes + positionBytes + overflowBytes + build.tailBytes.count, 16)
        (block, alignedOnHugePages) = Self.allocate(size)
        var next = block
        func carve<T>(_ type: T.Type, _ count: Int) -> UnsafeMutablePointer<T> {
            defer { next += count * MemoryLayout<T>.stride }
            return next.bindMemory(to: T.self, capacity: count)
        }
        slots = carve(PackedKey.self, build.slots.count)
        lines = carve(UInt64.self, build.lineWords.count)  // at the block's start when used: on cache lines
        precondition(lineCount == 0 || Int(bitPattern: lines) & 63 == 0, "string table lines off cache lines")
        spilled = carve(UInt64.self, build.spilled.count)
        filter = carve(UInt64.self, filterWords)
        positions = carve(UInt32.self, slotCount)
        overflow = carve(OverflowRecord.self, overflowCount)
        bytes = carve(UInt8.self, build.tailBytes.count)
        slots.initialize(from: build.slots, count: build.slots.count)
        lines.initialize(from: build.lineWords, count: build.lineWords.count)
        spilled.initialize(from: build.spilled, count: build.spilled.count)
        filter.initialize(from: build.filter, count: filterWords)
        positions.initialize(from: build.positions, count: slotCount)
        overflow.initialize(from: build.overflow, count: overflowCount)
        bytes.initialize(from: build.tailBytes, count: build.tailBytes.count)
    }

    /// A block of `size` bytes, 2 MiB-aligned and advised onto huge pages when it spans
    /// at least one (Linux), else aligned on a cache line (64 bytes).
    private static func allocate(_ size: Int) -> (UnsafeMutableRawPointer, Bool) {
#if os(Linux)
        let hugePage = 1 << 21
        if size >= hugePage {
            var raw: UnsafeMutableRawPointer?
            if posix_memalign(&raw, hugePage, size) == 0, let raw {
                _ = madvise(raw, size, Int32(MADV_HUGEPAGE))
                return (raw, true)
            }
        }
#endif
        return (UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 64), false)
    }

    deinit {
        if alignedOnHugePages { free(block) } else { block.deallocate() }
    }

    var hasMissFilter: Bool { filterWords > 0 }

    /// The position of the key, or nil. A lookup in lines is a call here: names and enum
    /// cases are looked up from many places, which should not each carry a copy of it
    /// (`contains`, on the `in` operator's path, keeps it inline).
    @inline(__always)
    func index(ofBytes key: UnsafeBufferPointer<UInt8>) -> Int? {
        position(lineCount == 0 ? find(key) : findInLines(key))
    }

    /// The position of the key a lookup found.
    @inline(__always)
    func position(_ hit: TableHit) -> Int? {
        switch hit {
        case .slot(let s): return Int(positions[s])
        case .overflow(let i): return Int(overflow[i].position)
        case .none: return nil
        }
    }

    /// `find` for a key of at most 15 bytes, from its packed form alone (a small string's
    /// comes straight from `StringBits.packedKey`); nil when the answer needs the key's
    /// bytes: a key whose line was full (a scanned table has no overflow list). A lookup
    /// in lines is a call unless `inline`.
    @inline(__always)
    func findSmall(_ packed: PackedKey, inline: Bool = false) -> TableHit? {
        guard lineCount == 0 else { return inline ? findSmallInLinesInline(packed) : findSmallInLines(packed) }
        let matches = scannedMatches(packed)
        return matches != 0 ? .slot(matches.trailingZeroBitCount) : TableHit.none
    }

    /// Whether the table holds the inline key `packed`, whose key hash is `keyHash`.
    ///
    /// No branch depends on the answer, except for a table with a miss filter. Whether a
    /// value is in a list, or which of a few literals it is, is as random as the value: in
    /// a half-and-half mix a branch on it is mispredicted on about half the lookups (3
    /// literals, one call a context: 33 → 29 ns; a batch: 25 → 18 ns; 1,000 literals in a
    /// batch: 24 → 19 ns). A table with a filter keeps `findSmall`'s branch on the filter:
    /// a caller that branches on the answer (most do) then learns a miss from the filter,
    /// which stays in the cache, without waiting for the line (with no branch, 100,000
    /// literals one call a context went from 41 to 50 ns).
    @inline(__always)
    func containsSmall(_ packed: PackedKey, keyHash: UInt32) -> Bool {
        // A scanned table has no overflow list (`TableBuild.scan`).
        guard lineCount > 0 else { return scannedMatches(packed) != 0 }
        if narrow && packed.high >> 56 > 7 { return false }
        let h = TableHash.spread(keyHash)
        guard filterWords == 0 else {
            guard let hit = findSmallInLinesInline(packed, h) else { return containsAfterFirstLine(packed, h) }
            return hit != .none
        }
        let line = TableHash.range(h, lineCount)
        let words = lines + line &* 8
        let found = narrow
            ? flagrules_line_index(words, packed.low | packed.high) < 8
            : flagrules_wide_line_matches(words, packed.low, packed.high, ~0) != 0
        // A miss in a line some key found full: the key may sit in a line tried after.
        // (Opaque: else the compiler tests `found` first, which is a branch on the answer.)
        let unsettled = flagrules_opaque(spilled[line >> 6] >> UInt64(line & 63) & (found ? 0 : 1))
        return unsettled == 0 ? found : containsAfterFirstLine(packed, h)
    }

    /// Whether a table in lines holds the inline key `packed` (spread hash `h`), for a key
    /// not in its first line, which was full: the lines after it, then the overflow list
    /// (by the key's bytes, which the packed form holds). Out of line: rare.
    @inline(never)
    private func containsAfterFirstLine(_ packed: PackedKey, _ h: UInt64) -> Bool {
        var words = (packed.low.littleEndian, packed.high.littleEndian)
        let length = Int(truncatingIfNeeded: packed.high >> 56)
        return withUnsafeBytes(of: &words) { raw in
            let key = UnsafeBufferPointer(start: raw.baseAddress!.assumingMemoryBound(to: UInt8.self), count: length)
            return findInLaterLines(packed, h, key) != .none
        }
    }

    /// `findSmall` in a table in lines, called rather than inlined.
    @inline(never)
    private func findSmallInLines(_ packed: PackedKey) -> TableHit? {
        findSmallInLinesInline(packed)
    }

    /// An inline key's first line (and the miss filter before it).
    @inline(__always)
    private func findSmallInLinesInline(_ packed: PackedKey, _ knownHash: UInt64? = nil) -> TableHit? {
        if narrow && packed.high >> 56 > 7 { return TableHit.none }
        let h = knownHash ?? TableHash.inline(packed)
        let line = TableHash.range(h, lineCount)
        // The line starts loading now, while the filter is read: a hit then waits for one
        // memory read, not two in turn (the filter's, then the line's).
        let words = flagrules_prefetch(lines + line &* 8)
        guard mayContain(h) else { return TableHit.none }
        if let s = inlineSlot(of: packed, in: words, line) { return .slot(s) }
        return spilled[line >> 6] & 1 << (line & 63) == 0 ? TableHit.none : nil
    }

    /// Where `key` is: in a scanned table, the slot equal to it; in a table in lines, its
    /// first line, then if that was full the next lines it tried, then the overflow list.
    /// A key longer than 15 bytes is hashed unless its key hash is given.
    @inline(__always)
    func find(_ key: UnsafeBufferPointer<UInt8>, longKeyHash: UInt32? = nil) -> TableHit {
        guard key.count <= 15 else {
            return lineCount == 0 ? findScannedLong(key, longKeyHash) : narrow ? .none : findLong(key, longKeyHash)
        }
        // A short key's first steps need only its packed form; the overflow list and the
        // lines after a full one need its bytes.
        let packed = PackedKey(inline: key)
        if let hit = findSmall(packed, inline: true) { return hit }
        return findInLaterLines(packed, TableHash.inline(packed), key)  // (only lines answer nil)
    }

    /// A bit for each slot of a scanned table equal to `probe` (at most one), from the
    /// slots compared four at a time as vectors: which of a few literals a value equals is
    /// as random as the value, and a branch on it would be mispredicted on most hits.
    /// (`lowMask`: the bits of the low words compared; a long key's slot is matched by its
    /// length and fingerprint, not the offset of its bytes.)
    @inline(__always)
    private func scannedMatches(_ probe: PackedKey, lowMask: UInt64 = ~0) -> UInt32 {
        guard slotCount > 0 else { return 0 }
        let words = UnsafeRawPointer(slots).assumingMemoryBound(to: UInt64.self)
        let first = flagrules_wide_line_matches(words, probe.low, probe.high, lowMask)
        return slotCount <= 4 ? first : first | flagrules_wide_line_matches(words + 8, probe.low, probe.high, lowMask) << 4
    }

    /// `find` in a table in lines, called rather than inlined.
    @inline(never)
    private func findInLines(_ key: UnsafeBufferPointer<UInt8>) -> TableHit {
        find(key)
    }

    /// A key longer than 15 bytes in a scanned table (which has no overflow list): the
    /// slots of its length and fingerprint (almost always one, or none), compared as
    /// vectors, then their bytes. Hashing the key (unless its key hash is given) costs less
    /// than comparing its bytes with each literal of its length (3 UUIDs, by name: 112–120 →
    /// 79–84 ns; on the fastest path 41–47 → 38–39 ns).
    private func findScannedLong(_ key: UnsafeBufferPointer<UInt8>, _ keyHash: UInt32?) -> TableHit {
        let h = keyHash.map(TableHash.spread) ?? TableHash.long(key)
        var candidates = scannedMatches(PackedKey(low: UInt64(UInt32(truncatingIfNeeded: h)) << 32, high: PackedKey.longHigh(key.count)),
                                        lowMask: 0xFFFF_FFFF_0000_0000)
        while candidates != 0 {
            let s = candidates.trailingZeroBitCount
            if isKey(key, at: slots[s].low) { return .slot(s) }
            candidates &= candidates &- 1
        }
        return .none
    }

    /// A key longer than 15 bytes in a table of 16-byte slots: its slot holds its length,
    /// and a fingerprint (the hash's low half) beside the offset of its bytes, which the
    /// compare masks out. (The steps are `find`'s: a helper shared by both was left out
    /// of line in the `in` operator's lookup, a call on every evaluation.)
    private func findLong(_ key: UnsafeBufferPointer<UInt8>, _ keyHash: UInt32?) -> TableHit {
        let h = keyHash.map(TableHash.spread) ?? TableHash.long(key)
        let probe = PackedKey(low: UInt64(UInt32(truncatingIfNeeded: h)) << 32, high: PackedKey.longHigh(key.count))
        let line = TableHash.range(h, lineCount)
        let words = flagrules_prefetch(lines + line &* 8)
        guard mayContain(h) else { return .none }
        if let s = slot(of: probe, key, in: words, line) { return .slot(s) }
        return spilled[line >> 6] & 1 << (line & 63) == 0 ? .none : findInLaterLines(probe, h, key)
    }

    /// False when the miss filter proves the key with hash `h` absent. The filter holds
    /// every distinct key (those in the overflow list too) and is small enough to stay in
    /// cache, so a miss reads neither a slot nor, once predicted, waits on one.
    @inline(__always)
    func mayContain(_ h: UInt64) -> Bool {
        guard filterWords > 0 else { return true }
        let (word, mask) = TableHash.filter(h, filterWords)
        return filter[word] & mask == mask
    }

    /// The slot holding the key packed as `probe` in line number `line`, whose words are
    /// at `words` (a line holds a key at most once), compared as vectors, with no branch on
    /// which slot matched.
    @inline(__always)
    private func slot(of probe: PackedKey, _ key: UnsafeBufferPointer<UInt8>, in words: UnsafePointer<UInt64>?, _ line: Int) -> Int? {
        if narrow || key.count <= 15 { return inlineSlot(of: probe, in: words, line) }
        return longSlot(of: probe, key, in: words, line)
    }

    /// `slot(of:…)` for a key of at most 15 bytes, which its packed form holds whole.
    @inline(__always)
    private func inlineSlot(of probe: PackedKey, in words: UnsafePointer<UInt64>?, _ line: Int) -> Int? {
        if narrow {
            let i = Int(flagrules_line_index(words, probe.low | probe.high))
            return i < 8 ? line &* 8 &+ i : nil
        }
        let i = Int(flagrules_wide_line_index(words, probe.low, probe.high))
        return i < 4 ? line &* 4 &+ i : nil
    }

    /// The slot of a long key: slots of the same length and fingerprint (almost always
    /// one), then their bytes.
    private func longSlot(of probe: PackedKey, _ key: UnsafeBufferPointer<UInt8>, in words: UnsafePointer<UInt64>?, _ line: Int) -> Int? {
        var candidates = UInt32(flagrules_wide_line_matches(words, probe.low, probe.high, 0xFFFF_FFFF_0000_0000))
        while candidates != 0 {
            let s = line &* 4 &+ candidates.trailingZeroBitCount
            if isKey(key, at: lines[2 &* s]) { return s }
            candidates &= candidates &- 1
        }
        return nil
    }

    /// A key whose first line was full: the lines it tried next, in turn, while each was
    /// full too, and then the overflow list.
    private func findInLaterLines(_ probe: PackedKey, _ h: UInt64, _ key: UnsafeBufferPointer<UInt8>) -> TableHit {
        for attempt in 1..<Self.lineAttempts {
            let line = TableHash.line(h, attempt: attempt, lineCount)
            if let s = slot(of: probe, key, in: lines + line &* 8, line) { return .slot(s) }
            if spilled[line >> 6] & 1 << (line & 63) == 0 { return .none }
        }
        return overflowCount == 0 ? .none : findInOverflow(key)
    }

    /// Whether the long key whose slot's low word is `low` (the offset of its bytes in its
    /// low half) has the bytes of `key` (its length already matched).
    @inline(__always)
    private func isKey(_ key: UnsafeBufferPointer<UInt8>, at low: UInt64) -> Bool {
        StringTable.equal(key, UnsafeBufferPointer(start: bytes + Int(truncatingIfNeeded: low & 0xFFFF_FFFF), count: key.count))
    }

    private func findInOverflow(_ key: UnsafeBufferPointer<UInt8>) -> TableHit {
        var low = 0, high = overflowCount
        while low < high {
            let mid = (low + high) / 2
            let record = overflow[mid]
            let order = TableBuild.compare(UnsafeBufferPointer(start: bytes + Int(record.offset), count: Int(record.length)), key)
            if order == 0 { return .overflow(mid) }
            if order < 0 { low = mid + 1 } else { high = mid }
        }
        return .none
    }
}

/// Builds a table's contents: scanned slots in list order, or distinct keys in hash order
/// placed in lines.
struct TableBuild {
    var slotCount = 0
    /// The slots of a scanned table.
    var slots: [PackedKey] = []
    /// The lines of a hashed table: eight words each, as eight 8-byte slots (`narrow`) or
    /// four `PackedKey`s.
    var lineWords: [UInt64] = []
    var lineCount = 0
    var narrow = false
    /// The lines some key found full and went on from, a bit each.
    var spilled: [UInt64] = []
    var displacedCount = 0
    var positions: [UInt32] = []
    var overflow: [OverflowRecord] = []
    /// The miss filter's words (empty for tables under `StringTableStorage.filterMinimum`).
    var filter: [UInt64] = []
    /// The bytes of long keys and of keys in the overflow list.
    var tailBytes: [UInt8] = []

    /// One distinct key: its hash, its first position and where its bytes are.
    private struct Key {
        var hash: UInt64
        var position: UInt32
        var offset: Int
        var length: Int
    }

    /// Byte-wise order (a shorter prefix first).
    static func compare(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        let n = min(a.count, b.count)
        if n > 0, let x = a.baseAddress, let y = b.baseAddress {
            let c = memcmp(x, y, n)
            if c != 0 { return c < 0 ? -1 : 1 }
        }
        return a.count < b.count ? -1 : a.count == b.count ? 0 : 1
    }

    init(_ strings: [String], everyKeyInOverflow: Bool) {
        if strings.count <= StringTableStorage.scanLimit {
            scan(strings)
            return
        }
        var all: [UInt8] = []
        all.reserveCapacity(strings.reduce(0) { $0 + $1.utf8.count })
        var keys: [Key] = []
        keys.reserveCapacity(strings.count)
        for (i, s) in strings.enumerated() {
            let offset = all.count
            all.append(contentsOf: s.utf8)
            let hash = all.withUnsafeBufferPointer { TableHash.of(UnsafeBufferPointer(rebasing: $0[offset...])) }
            keys.append(Key(hash: hash, position: UInt32(truncatingIfNeeded: i), offset: offset, length: all.count - offset))
        }
        all.withUnsafeBufferPointer { all in build(&keys, all, everyKeyInOverflow: everyKeyInOverflow) }
    }

    /// Appends a long key's bytes to the tail and returns its slot: offset, fingerprint and
    /// length.
    private mutating func appendLongKey(_ key: UnsafeBufferPointer<UInt8>, hash: UInt64) -> PackedKey {
        let offset = UInt64(truncatingIfNeeded: tailBytes.count)
        tailBytes.append(contentsOf: key)
        return PackedKey(low: offset | UInt64(UInt32(truncatingIfNeeded: hash)) << 32, high: PackedKey.longHigh(key.count))
    }

    /// A table small enough to be scanned: distinct keys in list order, no hashing.
    private mutating func scan(_ strings: [String]) {
        for (position, string) in strings.enumerated() {
            var string = string
            string.withUTF8 { key in
                if key.count <= 15 {
                    let packed = PackedKey(inline: key)
                    guard !slots.contains(packed) else { return }
                    slots.append(packed)
                } else {
                    let high = PackedKey.longHigh(key.count)
                    for stored in slots where stored.high == high {
                        let offset = Int(truncatingIfNeeded: stored.low & 0xFFFF_FFFF)
                        if tailBytes.withUnsafeBufferPointer({ StringTable.equal(key, UnsafeBufferPointer(rebasing: $0[offset..<offset + key.count])) }) {
                            return
                        }
                    }
                    slots.append(appendLongKey(key, hash: TableHash.long(key)))
                }
                positions.append(UInt32(truncatingIfNeeded: position))
            }
        }
        slotCount = slots.count
        // Padded with slots no key equals to four or eight, so that a lookup compares them
        // all as vectors, with no branch on which one matched.
        slots += repeatElement(.empty, count: (slotCount == 0 ? 0 : slotCount <= 4 ? 4 : 8) - slotCount)
    }

    private mutating func build(_ keys: inout [Key], _ all: UnsafeBufferPointer<UInt8>, everyKeyInOverflow: Bool) {
        func bytes(_ k: Key) -> UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(rebasing: all[k.offset..<k.offset + k.length]) }

        // Distinct keys in hash order; keys sharing a whole hash are ordered by bytes, and
        // only the first position of equal bytes is kept.
        keys.sort { $0.hash != $1.hash ? $0.hash < $1.hash : $0.position < $1.position }
        var distinct: [Key] = []
        distinct.reserveCapacity(keys.count)
        var start = 0
        while start < keys.count {
            var end = start + 1
            while end < keys.count, keys[end].hash == keys[start].hash { end += 1 }
            if end - start == 1 {
                distinct.append(keys[start])
            } else {
                let run = keys[start..<end].sorted {
                    let order = Self.compare(bytes($0), bytes($1))
                    return order != 0 ? order < 0 : $0.position < $1.position
                }
                for k in run where distinct.last.map({ $0.hash != k.hash || Self.compare(bytes($0), bytes(k)) != 0 }) ?? true {
                    distinct.append(k)
                }
            }
            start = end
        }

        if distinct.count >= StringTableStorage.filterMinimum {
            filter = Array(repeating: 0, count: (distinct.count * StringTableStorage.filterBitsPerKey + 63) / 64)
            for key in distinct {
                let (word, mask) = TableHash.filter(key.hash, filter.count)
                filter[word] |= mask
            }
        }
        buildLines(distinct, all, everyKeyInOverflow: everyKeyInOverflow)
    }

    /// Slots in lines of one cache line each: eight of one word when every key has at most
    /// 7 bytes (the key, its length on top), else four `PackedKey`s. A key goes to the line
    /// its hash picks, or when that is full to up to three more lines in turn (each full
    /// line passed is marked), and when all are full (about one key in 10,000 with 16-byte
    /// slots, fewer with 8-byte ones, or crafted collisions) to the overflow list. Lines
    /// are about half full, so that few keys go on.
    private mutating func buildLines(_ distinct: [Key], _ all: UnsafeBufferPointer<UInt8>, everyKeyInOverflow: Bool) {
        let narrow = distinct.allSatisfy { $0.length <= 7 }
        self.narrow = narrow
        let slotsPerLine = narrow ? 8 : 4, keysPerLine = narrow ? StringTableStorage.narrowKeysPerLine : StringTableStorage.wideKeysPerLine
        lineCount = max(3, (distinct.count + keysPerLine - 1) / keysPerLine)
        slotCount = lineCount * slotsPerLine  // at least 12, more than `scanLimit`: never scanned
        lineWords = Array(repeating: 0, count: lineCount * 8)
        for s in 0..<slotCount {
            if narrow { lineWords[s] = PackedKey.empty.high } else { lineWords[2 * s + 1] = PackedKey.empty.high }
        }
        positions = Array(repeating: 0, count: slotCount)
        spilled = Array(repeating: 0, count: (lineCount + 63) / 64)
        var used = [UInt8](repeating: 0, count: lineCount)
        let capacity = everyKeyInOverflow ? 0 : slotsPerLine
        func place(_ key: Key, _ line: Int) -> Bool {
            guard used[line] < capacity else { return false }
            let s = line * slotsPerLine + Int(used[line])
            used[line] += 1
            let bytes = UnsafeBufferPointer(rebasing: all[key.offset..<key.offset + key.length])
            let packed = key.length <= 15 ? PackedKey(inline: bytes) : appendLongKey(bytes, hash: key.hash)
            if narrow {
                lineWords[s] = packed.low | packed.high
            } else {
                lineWords[2 * s] = packed.low
                lineWords[2 * s + 1] = packed.high
            }
            positions[s] = key.position
            return true
        }
        // First lines for all, then the other lines for the keys that did not fit, marking
        // every full line a key passed: a lookup goes on past a line only when it is marked.
        var waiting: [Key] = []
        for key in distinct where !place(key, TableHash.range(key.hash, lineCount)) { waiting.append(key) }
        var overflowKeys: [Key] = []
        for key in waiting {
            var line = TableHash.range(key.hash, lineCount)
            var placed = false
            for attempt in 1..<StringTableStorage.lineAttempts {
                spilled[line >> 6] |= 1 << (line & 63)
                line = TableHash.line(key.hash, attempt: attempt, lineCount)
                if place(key, line) {
                    placed = true
                    break
                }
            }
            if placed {
                displacedCount += 1
            } else {
                spilled[line >> 6] |= 1 << (line & 63)
                overflowKeys.append(key)
            }
        }
        appendOverflow(overflowKeys, all)
    }

    /// The overflow list: `keys` in byte order, their bytes appended to the tail.
    private mutating func appendOverflow(_ keys: [Key], _ all: UnsafeBufferPointer<UInt8>) {
        func bytes(_ k: Key) -> UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(rebasing: all[k.offset..<k.offset + k.length]) }
        for key in keys.sorted(by: { Self.compare(bytes($0), bytes($1)) < 0 }) {
            overflow.append(OverflowRecord(offset: UInt32(truncatingIfNeeded: tailBytes.count), length: UInt32(truncatingIfNeeded: key.length), position: key.position))
            tailBytes.append(contentsOf: bytes(key))
        }
    }
}
