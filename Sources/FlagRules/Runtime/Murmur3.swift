/// MurmurHash3 x86 32-bit (Austin Appleby), the hash behind `rollout` and `split`.
///
/// The hasher is incremental so that a precomputed prefix (`"salt:"`) can be continued
/// with a unit's bytes without building the key string.
struct Murmur3: Sendable {
    private static let c1: UInt32 = 0xcc9e_2d51
    private static let c2: UInt32 = 0x1b87_3593

    private var h1: UInt32
    private var tail: UInt32 = 0
    private var tailCount: UInt32 = 0
    private var length: UInt32 = 0

    /// A hasher with the given seed.
    init(seed: UInt32) { h1 = seed }

    /// The hash of `bytes` with `seed`.
    static func hash<C: Collection>(_ bytes: C, seed: UInt32) -> UInt32 where C.Element == UInt8 {
        var hasher = Murmur3(seed: seed)
        hasher.combine(bytes)
        return hasher.finalize()
    }

    /// The hash of the UTF-8 bytes of `text` with `seed`.
    static func hash(_ text: String, seed: UInt32) -> UInt32 {
        var hasher = Murmur3(seed: seed)
        hasher.combine(text)
        return hasher.finalize()
    }

    @inline(__always)
    private static func mixK(_ k: UInt32) -> UInt32 {
        var k = k &* c1
        k = (k << 15) | (k >> 17)
        return k &* c2
    }

    /// Adds one byte.
    @inline(__always)
    mutating func combine(byte: UInt8) {
        tail |= UInt32(byte) << (tailCount &* 8)
        tailCount &+= 1
        length &+= 1
        if tailCount == 4 {
            h1 ^= Murmur3.mixK(tail)
            h1 = (h1 << 13) | (h1 >> 19)
            h1 = h1 &* 5 &+ 0xe654_6b64
            tail = 0
            tailCount = 0
        }
    }

    /// Adds bytes.
    mutating func combine<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        for b in bytes { combine(byte: b) }
    }

    /// Adds the UTF-8 bytes of a string, without copying it when it is contiguous.
    @inline(__always)
    mutating func combine(_ text: String) {
        let done: Void? = text.utf8.withContiguousStorageIfAvailable { combine(buffer: $0) }
        if done == nil { for b in text.utf8 { combine(byte: b) } }
    }

    /// Adds bytes four at a time: each four read as one little-endian word, and joined
    /// to the bytes a partial block holds (its bytes first, then the word's low bytes; the
    /// word's high bytes are the next partial block), so that a prefix of any length
    /// (`"salt:"`) is continued a word at a time.
    @inline(__always)
    mutating func combine(buffer: UnsafeBufferPointer<UInt8>) {
        guard let base = buffer.baseAddress else { return }
        let n = buffer.count
        var i = 0
        if n >= 4 {
            var h = h1
            var pending = tail
            let shift = tailCount &* 8
            while i &+ 4 <= n {
                let word = UInt32(littleEndian: UnsafeRawPointer(base + i).loadUnaligned(as: UInt32.self))
                let k: UInt32
                if shift == 0 {
                    k = word
                } else {
                    k = pending | (word &<< shift)
                    pending = word &>> (32 &- shift)
                }
                h ^= Murmur3.mixK(k)
                h = (h &<< 13) | (h &>> 19)
                h = h &* 5 &+ 0xe654_6b64
                i &+= 4
            }
            h1 = h
            tail = pending
            length &+= UInt32(truncatingIfNeeded: i)
        }
        while i < n {
            combine(byte: base[i])
            i &+= 1
        }
    }

    /// Adds the decimal digits of an integer, without allocating.
    mutating func combine(decimal value: Int) {
        if value < 0 { combine(byte: UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes of scratch, enough for 20 digits
        var count = 0
        withUnsafeMutableBytes(of: &digits) { scratch in
            repeat {
                scratch[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            while count > 0 {
                count -= 1
                combine(byte: scratch[count])
            }
        }
    }

    /// The final hash.
    func finalize() -> UInt32 {
        var h = h1
        if tailCount > 0 {
            h ^= Murmur3.mixK(tail)
        }
        h ^= length
        h ^= h >> 16
        h = h &* 0x85eb_ca6b
        h ^= h >> 13
        h = h &* 0xc2b2_ae35
        h ^= h >> 16
        return h
    }
}
