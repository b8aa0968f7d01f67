/// A small JSON value with a strict parser and a stable serializer.
///
/// The parser accepts RFC 8259 JSON only, nests at most `maxDepth` levels, rejects
/// numbers that do not fit a finite double, and reports the byte offset of the first
/// problem. Object members keep their order.
package enum JSON: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` / `false`.
    case bool(Bool)
    /// A number without fraction or exponent that fits in 64 bits.
    case int(Int)
    /// Any other finite number.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSON])
    /// An object, members in written order.
    case object([(String, JSON)])

    /// The deepest nesting the parser accepts.
    package static let maxDepth = 64

    /// Why JSON did not parse.
    package struct ParseError: Error, Sendable, CustomStringConvertible {
        /// What is wrong.
        package let message: String
        /// The byte offset where it went wrong.
        package let offset: Int
        /// The message and the byte offset, as one line.
        package var description: String { "\(message) at byte \(offset)" }
    }

    /// "object", "array", "string", … for messages.
    package var kindName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .int, .double: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    /// Structural equality; objects are equal when they have the same keys with equal
    /// values in the same order (an object keeps its keys in the order written).
    package static func == (a: JSON, b: JSON) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.int(let x), .int(let y)): return x == y
        case (.double(let x), .double(let y)): return x == y
        case (.string(let x), .string(let y)): return x == y
        case (.array(let x), .array(let y)): return x == y
        case (.object(let x), .object(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    /// Hashes the value as `==` compares it (an object's keys in order).
    package func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let b): hasher.combine(b)
        case .int(let i): hasher.combine(i)
        case .double(let d): hasher.combine(d)
        case .string(let s): hasher.combine(s)
        case .array(let a): hasher.combine(a)
        case .object(let o):
            for (k, v) in o { hasher.combine(k); hasher.combine(v) }
        }
    }

    /// Parses a complete JSON text.
    package static func parse(_ text: String) throws(ParseError) -> JSON {
        try parse(bytes: Array(text.utf8))
    }

    /// Parses a complete JSON text from bytes (which must be UTF-8).
    package static func parse(bytes: [UInt8]) throws(ParseError) -> JSON {
        var p = JSONParser(bytes: bytes)
        p.skipSpace()
        let value = try p.value(depth: 0)
        p.skipSpace()
        guard p.i == bytes.count else { throw ParseError(message: "unexpected text after the JSON value", offset: p.i) }
        return value
    }

    /// Compact serialization (`{"a": 1}`); with `pretty`, two-space indentation.
    package func serialized(pretty: Bool = false) -> String {
        String(decoding: serializedBytes(pretty: pretty), as: UTF8.self)
    }

    /// The serialization's UTF-8 bytes (what an HTTP answer's body is): written byte by
    /// byte into one buffer, with no string built on the way.
    package func serializedBytes(pretty: Bool = false) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(to: &out, pretty: pretty, indent: 0)
        return out
    }

    /// Appends the compact serialization to `out`.
    package func write(to out: inout [UInt8]) { write(to: &out, pretty: false, indent: 0) }

    private func write(to out: inout [UInt8], pretty: Bool, indent: Int) {
        func newline(_ depth: Int) {
            out.append(0x0A)
            out.append(contentsOf: repeatElement(0x20, count: 2 * depth))
        }
        switch self {
        case .null: out += "null".utf8
        case .bool(let b): out += (b ? "true" : "false").utf8
        case .int(let i): ASCII.appendDecimal(i, to: &out)
        case .double(let d):
            if d.isFinite {
                out += (d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) + ".0" : "\(d)").utf8
            } else {
                out += "null".utf8
            }
        case .string(let s): JSON.writeString(s, to: &out)
        case .array(let items):
            if items.isEmpty { out += "[]".utf8; return }
            out.append(0x5B)
            for (k, item) in items.enumerated() {
                if k > 0 { out.append(0x2C) }
                if pretty { newline(indent + 1) }
                item.write(to: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty { newline(indent) }
            out.append(0x5D)
        case .object(let members):
            if members.isEmpty { out += "{}".utf8; return }
            out.append(0x7B)
            for (k, (key, value)) in members.enumerated() {
                if k > 0 { out += (pretty ? "," : ", ").utf8 }
                if pretty { newline(indent + 1) }
                JSON.writeString(key, to: &out)
                out += ": ".utf8
                value.write(to: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty { newline(indent) }
            out.append(0x7D)
        }
    }

    /// `s` as a JSON string, quoted and escaped: runs of bytes that need no escape are
    /// copied whole (every escaped character is ASCII, so a run never splits a scalar).
    package static func writeString(_ s: String, to out: inout [UInt8]) {
        out.append(0x22)
        // A native string's bytes are read in place; another (bridged) one's through a copy.
        if s.utf8.withContiguousStorageIfAvailable({ writeEscaped($0, to: &out) }) == nil {
            var text = s
            text.withUTF8 { writeEscaped($0, to: &out) }
        }
        out.append(0x22)
    }

    /// `bytes` with JSON's escapes, the runs between them appended whole.
    private static func writeEscaped(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        var run = 0
        for i in bytes.indices {
            let b = bytes[i]
            guard b == 0x22 || b == 0x5C || b < 0x20 else { continue }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<i]))
            run = i + 1
            out.append(0x5C)
            switch b {
            case 0x22: out.append(0x22)
            case 0x5C: out.append(0x5C)
            case 0x0A: out.append(0x6E)
            case 0x0D: out.append(0x72)
            case 0x09: out.append(0x74)
            default:
                let hex: StaticString = "0123456789abcdef"
                out += [0x75, 0x30, 0x30, hex.utf8Start[Int(b >> 4)], hex.utf8Start[Int(b & 0xF)]]
            }
        }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run...]))
    }
}

extension JSON {
    /// The same value with every object's members sorted by key (recursively): two
    /// spellings of one object serialize alike.
    package var canonical: JSON {
        switch self {
        case .object(let members):
            return .object(members.map { ($0.0, $0.1.canonical) }.sorted { $0.0 < $1.0 })
        case .array(let elements):
            return .array(elements.map(\.canonical))
        default:
            return self
        }
    }
}

struct JSONParser {
    let bytes: [UInt8]
    var i = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    func fail(_ message: String) -> JSON.ParseError { JSON.ParseError(message: message, offset: i) }

    mutating func skipSpace() {
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x09 || bytes[i] == 0x0A || bytes[i] == 0x0D { i += 1 }
    }

    mutating func literal(_ word: String, _ value: JSON) throws(JSON.ParseError) -> JSON {
        let w = Array(word.utf8)
        guard i + w.count <= bytes.count, Array(bytes[i..<i + w.count]) == w else { throw fail("invalid literal") }
        i += w.count
        return value
    }

    mutating func value(depth: Int) throws(JSON.ParseError) -> JSON {
        guard depth < JSON.maxDepth else { throw fail("nested more than \(JSON.maxDepth) levels deep") }
        guard i < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[i] {
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "["):
            i += 1
            var items: [JSON] = []
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
            while true {
                skipSpace()
                items.append(try value(depth: depth + 1))
                skipSpace()
                guard i < bytes.count else { throw fail("unterminated array") }
                if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                if bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
                throw fail("expected ',' or ']'")
            }
        case UInt8(ascii: "{"):
            var members: [(String, JSON)] = []
            try self.members(depth: depth) { key, parser throws(JSON.ParseError) in
                members.append((key, try parser.value(depth: depth + 1)))
            }
            return .object(members)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try number()
        default:
            throw fail("unexpected character")
        }
    }

    /// Reads the object at `i` member by member: `member` gets each key with the parser at
    /// its value, and reads the value (nested `depth + 1`) before it returns.
    mutating func members(depth: Int, _ member: (String, inout JSONParser) throws(JSON.ParseError) -> Void) throws(JSON.ParseError) {
        try namedMembers(depth: depth) { name, parser throws(JSON.ParseError) in try member(parser.text(of: name), &parser) }
    }

    /// A member's name as read: where its bytes lie in the input when it is ASCII with no
    /// escape, else its text.
    enum MemberName {
        case bytes(Range<Int>)
        case text(String)
    }

    /// The text of a member's name.
    func text(of name: MemberName) -> String {
        switch name {
        case .bytes(let range): return text(range)
        case .text(let text): return text
        }
    }

    /// The bytes in `range`, as text (they were read as ASCII).
    func text(_ range: Range<Int>) -> String {
        bytes.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self) }
    }

    /// Whether a member's name is `wanted`.
    func isNamed(_ name: MemberName, _ wanted: StaticString) -> Bool {
        switch name {
        case .bytes(let range):
            guard range.count == wanted.utf8CodeUnitCount else { return false }
            return bytes.withUnsafeBufferPointer { b in (0..<range.count).allSatisfy { b[range.lowerBound + $0] == wanted.utf8Start[$0] } }
        case .text(let text):
            return text.utf8.elementsEqual(UnsafeBufferPointer(start: wanted.utf8Start, count: wanted.utf8CodeUnitCount))
        }
    }

    /// `members`, each name as read (no string made for a name with no escape).
    mutating func namedMembers(depth: Int, _ member: (MemberName, inout JSONParser) throws(JSON.ParseError) -> Void)
        throws(JSON.ParseError)
    {
        guard depth < JSON.maxDepth else { throw fail("nested more than \(JSON.maxDepth) levels deep") }
        guard i < bytes.count, bytes[i] == UInt8(ascii: "{") else { throw fail("expected an object") }
        i += 1
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "}") {
            i += 1
            return
        }
        while true {
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw fail("expected a string key") }
            let name: MemberName
            if let range = plainString() { name = .bytes(range) } else { name = .text(try string()) }
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            i += 1
            skipSpace()
            try member(name, &self)
            skipSpace()
            guard i < bytes.count else { throw fail("unterminated object") }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "}") {
                i += 1
                return
            }
            throw fail("expected ',' or '}'")
        }
    }

    /// Where the string at `i` (at its opening quote) lies when it is ASCII with no escape
    /// or control character up to its closing quote; `i` moves past it. Nil for any other
    /// string, `i` left where it was.
    mutating func plainString() -> Range<Int>? {
        let start = i + 1
        let end: Int? = bytes.withUnsafeBufferPointer { b in
            guard let base = b.baseAddress, start <= b.count else { return nil }
            var j = start
            while j < b.count {
                let c = base[j]
                if c == 0x22 { return j }
                // A control character, a backslash or a byte over 0x7F.
                if c &- 0x20 >= 0x60 || c == 0x5C { return nil }
                j &+= 1
            }
            return nil
        }
        guard let end else { return nil }
        i = end + 1
        return start..<end
    }

    mutating func number() throws(JSON.ParseError) -> JSON {
        let start = i
        if bytes[i] == UInt8(ascii: "-") { i += 1 }
        func digits() -> Int {
            let s = i
            while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1 }
            return i - s
        }
        let intStart = i
        let n = digits()
        guard n > 0 else { throw fail("invalid number") }
        if n > 1, bytes[intStart] == 0x30 {
            i = start
            throw fail("leading zero in a number")
        }
        var isInteger = true
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            isInteger = false
            guard digits() > 0 else { throw fail("invalid number") }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            i += 1
            isInteger = false
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard digits() > 0 else { throw fail("invalid number") }
        }
        let text = String(decoding: bytes[start..<i], as: UTF8.self)
        if isInteger, let v = Int(text) { return .int(v) }
        guard let d = Double(text), d.isFinite else {
            i = start
            throw fail("number out of range")
        }
        return .double(d)
    }

    mutating func hex4() throws(JSON.ParseError) -> UInt32 {
        guard i + 4 <= bytes.count else { throw fail("invalid \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[i]
            let d: UInt32
            switch c {
            case 0x30...0x39: d = UInt32(c - 0x30)
            case 0x41...0x46: d = UInt32(c - 0x41 + 10)
            case 0x61...0x66: d = UInt32(c - 0x61 + 10)
            default: throw fail("invalid \\u escape")
            }
            v = v << 4 | d
            i += 1
        }
        return v
    }

    mutating func string() throws(JSON.ParseError) -> String {
        // The common case first: ASCII with no escape up to the closing quote, read in place.
        if let range = plainString() { return text(range) }
        i += 1
        var out = String.UnicodeScalarView()
        var runStart = i
        func flush(_ end: Int) {
            if end > runStart { out.append(contentsOf: String(decoding: bytes[runStart..<end], as: UTF8.self).unicodeScalars) }
        }
        while true {
            guard i < bytes.count else { throw fail("unterminated string") }
            let c = bytes[i]
            if c == UInt8(ascii: "\"") {
                // A string without escapes is its bytes (already checked as UTF-8).
                if out.isEmpty {
                    let text = String(decoding: bytes[runStart..<i], as: UTF8.self)
                    i += 1
                    return text
                }
                flush(i)
                i += 1
                return String(out)
            }
            if c < 0x20 { throw fail("control character in a string") }
            if c >= 0x80 {
                let length = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0
                guard length > 0, c <= 0xF4, i + length <= bytes.count,
                    String(validating: bytes[i..<i + length], as: UTF8.self) != nil
                else {
                    throw fail("invalid UTF-8 in a string")
                }
                i += length
                continue
            }
            if c == UInt8(ascii: "\\") {
                flush(i)
                i += 1
                guard i < bytes.count else { throw fail("unterminated string") }
                let e = bytes[i]
                i += 1
                switch e {
                case UInt8(ascii: "\""): out.append("\"")
                case UInt8(ascii: "\\"): out.append("\\")
                case UInt8(ascii: "/"): out.append("/")
                case UInt8(ascii: "b"): out.append("\u{08}")
                case UInt8(ascii: "f"): out.append("\u{0C}")
                case UInt8(ascii: "n"): out.append("\n")
                case UInt8(ascii: "r"): out.append("\r")
                case UInt8(ascii: "t"): out.append("\t")
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if code >= 0xD800, code < 0xDC00 {
                        guard i + 6 <= bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else {
                            throw fail("lone surrogate in \\u escape")
                        }
                        i += 2
                        let low = try hex4()
                        guard low >= 0xDC00, low < 0xE000 else { throw fail("lone surrogate in \\u escape") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    } else if code >= 0xDC00, code < 0xE000 {
                        throw fail("lone surrogate in \\u escape")
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw fail("invalid \\u escape") }
                    out.append(scalar)
                default:
                    throw fail("invalid escape")
                }
                runStart = i
                continue
            }
            i += 1
        }
    }
}

extension JSON {
    /// An object's member, the last of that name as JSON readers (JavaScript's, Python's,
    /// Go's) keep it; nil for any other value or a missing key.
    package subscript(key: String) -> JSON? {
        guard case .object(let members) = self else { return nil }
        return members.last { $0.0 == key }?.1
    }

    /// The string, when this is one.
    package var string: String? { if case .string(let s) = self { return s } else { return nil } }

    /// The integer, when this is one (or a double holding a whole number).
    package var integer: Int? {
        switch self {
        case .int(let i): return i
        case .double(let d) where d.rounded() == d && abs(d) < 9e15: return Int(d)
        default: return nil
        }
    }

    /// The elements, when this is an array.
    package var elements: [JSON]? { if case .array(let a) = self { return a } else { return nil } }
}
