/// The hash of a literal set's strings (`StringHash.key`): a folded multiply over 8-byte
/// words (the mixing step of wyhash and foldhash), keyed by a seed drawn once per process.
/// A `contains any` looks several strings up an evaluation, so this is a few nanoseconds
/// where SipHash is twenty; the file's author chooses the literals, and a context's value
/// only probes the table they made.
enum LiteralHash {
    /// The seed, drawn once per process.
    static let seed: UInt64 = UInt64.random(in: 1...UInt64.max)

    /// `a × b` as 128 bits, its halves xored: the mixing step.
    @inline(__always)
    static func fold(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let m = a.multipliedFullWidth(by: b)
        return m.high ^ m.low
    }

    /// The hash of `bytes` under `seed` (tests try other seeds).
    static func of(_ bytes: UnsafeBufferPointer<UInt8>, seed: UInt64) -> UInt64 {
        let n = bytes.count
        var h = fold(seed ^ 0x243F_6A88_85A3_08D3, UInt64(truncatingIfNeeded: n) ^ 0x1319_8A2E_0370_7344)
        guard let base = bytes.baseAddress, n > 0 else { return fold(h, 0xA409_3822_299F_31D0) }
        let raw = UnsafeRawPointer(base)
        var i = 0
        while i + 16 <= n {
            let a = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            let b = raw.loadUnaligned(fromByteOffset: i + 8, as: UInt64.self)
            h = fold(a ^ h, b ^ 0xA409_3822_299F_31D0)
            i += 16
        }
        // The last 1–16 bytes: two words, overlapping when fewer than 16 remain.
        var a: UInt64 = 0
        var b: UInt64 = 0
        let rest = n - i
        if rest >= 8 {
            a = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            b = raw.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
        } else if rest > 0 {
            for k in 0..<rest { a |= UInt64(base[i + k]) << (8 * UInt64(k)) }
        }
        h = fold(a ^ h ^ 0x082E_FA98_EC4E_6C89, b ^ seed)
        return fold(h ^ 0x4528_21E6_38D0_1377, UInt64(truncatingIfNeeded: n) ^ 0xBE54_66CF_34E9_0C6C)
    }

}
