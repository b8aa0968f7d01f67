/// FNV-1a, 64 bits: a stable hash of bytes, the same in every process and on every host
/// (for names and versions written to disk or sent to other hosts; not for tables that
/// input can attack, which use `LiteralHash`).
package enum FNV1a {
    package static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325

    /// The hash of `bytes`, continuing from `h`.
    package static func hash<Bytes: Sequence>(_ bytes: Bytes, from h: UInt64 = offsetBasis) -> UInt64 where Bytes.Element == UInt8 {
        var h = h
        for b in bytes { h = step(h, b) }
        return h
    }

    /// The hash of `bytes`, read in place.
    package static func hash(_ bytes: [UInt8], from h: UInt64 = offsetBasis) -> UInt64 {
        bytes.withUnsafeBufferPointer { bytes in
            var h = h
            for b in bytes { h = step(h, b) }
            return h
        }
    }

    /// The hash of a text's UTF-8 bytes, continuing from `h` (read in place: the generic
    /// one, called from another module, walks the bytes through an iterator's witnesses).
    package static func hash(_ text: String.UTF8View, from h: UInt64 = offsetBasis) -> UInt64 {
        if let hashed = text.withContiguousStorageIfAvailable({ bytes in
            var h = h
            for b in bytes { h = step(h, b) }
            return h
        }) {
            return hashed
        }
        var h = h
        for b in text { h = step(h, b) }
        return h
    }

    @inline(__always)
    private static func step(_ h: UInt64, _ b: UInt8) -> UInt64 { (h ^ UInt64(b)) &* 0x100_0000_01b3 }
}
