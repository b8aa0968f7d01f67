/// A string's own 16 bytes, read for the lookups on evaluation's hot paths (attribute
/// names in a dictionary context, enum cases, declaration names) without going through
/// `withContiguousStorageIfAvailable`, which copies a small string to the stack and calls
/// a closure.
///
/// On 64-bit little-endian platforms a string of at most 15 UTF-8 bytes is held "small":
/// its bytes in its representation, zero-padded, and in the last byte a discriminator
/// (bit 5: small; bit 6: ASCII) beside its length. Two small strings are therefore equal
/// exactly when their representations are. A larger string's representation is its
/// length and flags and a pointer to its storage: equal representations mean the same
/// bytes there too, but equal strings may be held apart. `StringBitsTests` pins the
/// layout on the platforms we build for; elsewhere every call answers "not small" and the
/// callers read the bytes as before.
enum StringBits {
    /// The two words of `s`'s representation.
    @inline(__always)
    static func words(_ s: String) -> (low: UInt64, high: UInt64) {
        let w = unsafeBitCast(s, to: (UInt64, UInt64).self)
        return (w.0, w.1)
    }

    /// Whether `s` is held small (its bytes in its representation).
    @inline(__always)
    static func isSmall(_ high: UInt64) -> Bool {
#if _endian(little) && _pointerBitWidth(_64)
        return high & (1 << 61) != 0
#else
        return false
#endif
    }

    /// Whether `a` and `b` are equal, answered from their representations alone when it
    /// can be (the same representation, or two different small ones); nil when their
    /// bytes must be compared.
    @inline(__always)
    static func equal(_ a: String, _ b: String) -> Bool? {
        let x = words(a), y = words(b)
        if x.low == y.low && x.high == y.high { return true }
        if isSmall(x.high) && isSmall(y.high) { return false }
        return nil
    }

    /// `s` packed as a string table's inline key (bytes zero-padded, length in the top
    /// byte), when `s` is held small; nil otherwise.
    @inline(__always)
    static func packedKey(_ s: String) -> PackedKey? {
        let w = words(s)
        guard isSmall(w.high) else { return nil }
        return PackedKey(low: w.low, high: w.high & 0x00FF_FFFF_FFFF_FFFF | (w.high >> 56 & 0xF) << 56)
    }
}
