#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

/// Byte-level helpers for ASCII text: the lexer, the address parser, and the readers of
/// LSP and HTTP header blocks.
package enum ASCII {
    /// The value of a hex digit (`0-9`, `A-F`, `a-f`), or nil for any other byte.
    @inline(__always)
    package static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x41...0x46: return c - 0x41 + 10
        case 0x61...0x66: return c - 0x61 + 10
        default: return nil
        }
    }

    /// The index of the first `\r\n\r\n` at or after `start`, looked for in `limit` bytes
    /// (the end of an LSP or an HTTP header block).
    package static func blankLine(in buffer: [UInt8], from start: Int, within limit: Int) -> Int? {
        let end = min(buffer.count, start + limit + 4)
        guard start >= 0, start + 3 < end else { return nil }
        return buffer.withUnsafeBufferPointer { b in
            // Each CR found by memchr is a candidate: a header block is mostly other bytes.
            var i = start
            while i + 3 < end {
                guard let found = memchr(b.baseAddress! + i, 13, end - 3 - i) else { return nil }
                i = b.baseAddress!.distance(to: found.assumingMemoryBound(to: UInt8.self))
                if b[i + 1] == 10, b[i + 2] == 13, b[i + 3] == 10 { return i }
                i += 1
            }
            return nil
        }
    }

    /// Appends a literal's bytes to `out` (no string made, no generic iteration).
    @inlinable
    package static func append(_ text: StaticString, to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends `n` in decimal to `out`, without making a string.
    package static func appendDecimal(_ n: Int, to out: inout [UInt8]) {
        if n < 0 {
            out.append(UInt8(ascii: "-"))
            if n == .min {
                out.append(contentsOf: String(n).utf8.dropFirst())
                return
            }
            appendDecimal(-n, to: &out)
            return
        }
        var divisor = 1
        while divisor <= n / 10 { divisor *= 10 }
        var rest = n
        while divisor > 0 {
            out.append(UInt8(truncatingIfNeeded: 48 + rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }
}
