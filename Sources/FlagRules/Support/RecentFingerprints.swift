/// A set of nonzero 64-bit fingerprints that remembers at least the last `window` distinct
/// ones inserted, and at most twice as many: two generations of open-addressing tables. New
/// fingerprints go into the current generation; when it holds `window`, it becomes the
/// previous one and the previous one is forgotten. A fingerprint found in the previous
/// generation moves to the current one, so one seen again and again is never forgotten.
///
/// A fingerprint's low 32 bits place it in a table (fingerprints that share them share a
/// probe sequence).
///
/// Every operation is O(1) amortized (a generation is cleared once per `window`
/// insertions, a table doubles as it fills), and the tables grow with what is remembered,
/// not with the window. A value: its owner keeps it under a lock.
struct RecentFingerprints {
    let window: Int
    private var current = FingerprintTable()
    private var previous = FingerprintTable()

    init(window: Int) {
        self.window = max(window, 1)
    }

    /// Whether `fingerprint` is remembered (nothing changes).
    func contains(_ fingerprint: UInt64) -> Bool {
        let f = fingerprint == 0 ? 1 : fingerprint
        return current.contains(f) || previous.contains(f)
    }

    /// Adds `fingerprint`; whether it is new (not among those remembered).
    mutating func insert(_ fingerprint: UInt64) -> Bool {
        let f = fingerprint == 0 ? 1 : fingerprint
        if current.contains(f) { return false }
        let remembered = previous.contains(f)
        if current.count >= window {
            swap(&current, &previous)
            current.removeAll()
        }
        current.insert(f)
        return !remembered
    }

    /// How many fingerprints are remembered (one in both generations counts twice).
    var count: Int { current.count + previous.count }
}

/// An open-addressing set of nonzero 64-bit fingerprints (linear probing, at most half
/// full), placed by their low 32 bits mixed (a fingerprint such as FNV-1a's mixes its low
/// bits poorly).
struct FingerprintTable {
    private var slots: [UInt64]
    private(set) var count = 0
    private var mask: Int

    /// An empty table (of 16 slots).
    init() {
        slots = Array(repeating: 0, count: 16)
        mask = 15
    }

    func contains(_ f: UInt64) -> Bool {
        slots.withUnsafeBufferPointer { table in
            var i = FingerprintTable.home(f, mask)
            while true {
                let slot = table[i]
                if slot == f { return true }
                if slot == 0 { return false }
                i = (i + 1) & mask
            }
        }
    }

    /// Inserts `f`, which the table must not hold, doubling the table when it would be more
    /// than half full.
    mutating func insert(_ f: UInt64) {
        if (count + 1) * 2 > slots.count { grow() }
        let mask = mask
        slots.withUnsafeMutableBufferPointer { table in
            var i = FingerprintTable.home(f, mask)
            while table[i] != 0 { i = (i + 1) & mask }
            table[i] = f
        }
        count += 1
    }

    /// The slot a fingerprint's probe starts at: its low 32 bits through MurmurHash3's
    /// 64-bit finalizer.
    @inline(__always)
    static func home(_ f: UInt64, _ mask: Int) -> Int {
        var h = f & 0xFFFF_FFFF
        h ^= h >> 33
        h &*= 0xff51_afd7_ed55_8ccd
        h ^= h >> 33
        h &*= 0xc4ce_b9fe_1a85_ec53
        h ^= h >> 33
        return Int(truncatingIfNeeded: h) & mask
    }

    /// Empties the table, keeping its size.
    mutating func removeAll() {
        slots.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
        count = 0
    }

    private mutating func grow() {
        let old = slots
        slots = Array(repeating: 0, count: old.count * 2)
        mask = slots.count - 1
        count = 0
        for f in old where f != 0 { insert(f) }
    }
}
