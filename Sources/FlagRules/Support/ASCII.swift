/// Byte-level helpers for ASCII text, shared by the lexer and the address parser.
enum ASCII {
    /// The value of a hex digit (`0-9`, `A-F`, `a-f`), or nil for any other byte.
    @inline(__always)
    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x41...0x46: return c - 0x41 + 10
        case 0x61...0x66: return c - 0x61 + 10
        default: return nil
        }
    }
}
