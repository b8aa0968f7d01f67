/// A position in a source file: a byte offset, and the 1-based line and column that
/// editors show. Columns count Unicode scalars; a tab counts 1.
public struct SourcePosition: Sendable, Hashable, Comparable, CustomStringConvertible {
    // 32 bits each (sources are at most 16 MiB): every token and node carries two of these.
    private var storedOffset: Int32
    private var storedLine: Int32
    private var storedColumn: Int32

    /// Byte offset from the start of the file.
    public var offset: Int {
        get { Int(storedOffset) }
        set { storedOffset = Int32(clamping: newValue) }
    }
    /// 1-based line.
    public var line: Int {
        get { Int(storedLine) }
        set { storedLine = Int32(clamping: newValue) }
    }
    /// 1-based column, in Unicode scalars.
    public var column: Int {
        get { Int(storedColumn) }
        set { storedColumn = Int32(clamping: newValue) }
    }

    /// A location.
    package init(offset: Int, line: Int, column: Int) {
        storedOffset = Int32(clamping: offset)
        storedLine = Int32(clamping: line)
        storedColumn = Int32(clamping: column)
    }

    /// Earlier in the text (by byte offset).
    public static func < (a: SourcePosition, b: SourcePosition) -> Bool { a.offset < b.offset }

    /// `line:column`, both 1-based.
    public var description: String { "\(line):\(column)" }
}

/// A half-open span of source text, `start..<end`.
public struct SourceRange: Sendable, Hashable, CustomStringConvertible {
    /// The first position in the span.
    public var start: SourcePosition
    /// The position just past the span.
    public var end: SourcePosition

    /// A span.
    package init(start: SourcePosition, end: SourcePosition) {
        self.start = start
        self.end = end
    }

    /// The smallest span covering both.
    package func union(_ other: SourceRange) -> SourceRange {
        SourceRange(start: min(start, other.start), end: max(end, other.end))
    }

    /// `line:column-line:column`.
    public var description: String { "\(start)-\(end)" }
}

/// The text of one `.flags` file with its name, kept for rendering diagnostics.
public struct SourceText: Sendable {
    /// The name shown in diagnostics (usually the path).
    public let name: String
    /// The raw bytes, as read.
    package let bytes: [UInt8]
    /// Byte offsets where each line starts.
    package let lineStarts: [Int]

    /// Source from text.
    public init(_ text: String, name: String) {
        self.init(bytes: Array(text.utf8), name: name)
    }

    /// Source from raw bytes (which need not be valid UTF-8).
    package init(bytes: [UInt8], name: String) {
        self.name = name
        self.bytes = bytes
        var starts = [0]
        bytes.withUnsafeBufferPointer { b in
            var i = 0
            while i < b.count {
                // One test a byte for most of them: both line endings are below 0x0E.
                if b[i] < 0x0E {
                    if b[i] == 0x0A {
                        starts.append(i + 1)
                    } else if b[i] == 0x0D {
                        if i + 1 < b.count, b[i + 1] == 0x0A { i += 1 }
                        starts.append(i + 1)
                    }
                }
                i += 1
            }
        }
        lineStarts = starts
    }

    /// The number of lines.
    package var lineCount: Int { lineStarts.count }

    /// The bytes of a 1-based line, without its line ending.
    package func lineBytes(_ line: Int) -> ArraySlice<UInt8> {
        guard line >= 1, line <= lineStarts.count else { return [] }
        let start = lineStarts[line - 1]
        var end = line < lineStarts.count ? lineStarts[line] : bytes.count
        while end > start, bytes[end - 1] == 0x0A || bytes[end - 1] == 0x0D { end -= 1 }
        return bytes[start..<end]
    }

    /// The text of a 1-based line (invalid UTF-8 shown as U+FFFD).
    package func line(_ line: Int) -> String {
        String(decoding: lineBytes(line), as: UTF8.self)
    }
}

extension SourceText {
    /// The source text of a range.
    public func text(of range: SourceRange) -> String {
        let start = min(max(range.start.offset, 0), bytes.count)
        let end = min(max(range.end.offset, start), bytes.count)
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }
}

/// Quoting and escaping of strings the way `.flags` source writes them.
package enum StringEscaping {
    /// `s` in double quotes with `\" \\ \n \t` and `\u{…}` for other control characters.
    package static func quoted(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
