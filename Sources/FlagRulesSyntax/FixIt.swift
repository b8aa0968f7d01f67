import Foundation

/// Fix-its: the edits that fix a diagnostic, and applying them to a source.
extension Diagnostic {
    /// This diagnostic with a fix-it for its "did you mean 'X'?" suggestion, when it points
    /// at exactly the one word to replace (not a quoted string, nor a span of several
    /// tokens); unchanged otherwise.
    package func withSuggestedFix(in source: SourceText) -> Diagnostic {
        guard fixIts.isEmpty, message.hasSuffix("'?"), let marker = message.range(of: "did you mean '", options: .backwards)
        else { return self }
        let suggestion = String(message[marker.upperBound..<message.index(message.endIndex, offsetBy: -2)])
        let written = source.text(of: range)
        guard !written.isEmpty, !suggestion.isEmpty,
            !written.contains(where: { $0.isWhitespace || $0 == "\"" || $0 == "'" || $0 == "#" }),
            !suggestion.contains(where: { $0.isWhitespace && $0 != " " })
        else { return self }
        var fixed = self
        fixed.fixIts = [FixIt("replace '\(written)' with '\(suggestion)'", [Edit(range, suggestion)])]
        return fixed
    }

    /// A fix-it deleting whole lines `range` spans (with their line break), when nothing
    /// but `range` and blanks is on them; nil otherwise. With `docComment`, the `///` lines
    /// just above go too (left behind, they would document the next declaration).
    package static func deletingLines(of range: SourceRange, in source: SourceText, message: String, docComment: Bool = false) -> FixIt? {
        let bytes = source.bytes
        var start = range.start.offset
        var line = range.start.line
        while start > 0, bytes[start - 1] == UInt8(ascii: " ") || bytes[start - 1] == UInt8(ascii: "\t") { start -= 1 }
        guard start == 0 || bytes[start - 1] == UInt8(ascii: "\n") else { return nil }
        // Whether a line is a `///` comment, read from its bytes (no string is made).
        func isDocLine(_ n: Int) -> Bool {
            let text = source.lineBytes(n).drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
            return text.starts(with: "///".utf8)
        }
        while docComment, line > 1, isDocLine(line - 1) {
            line -= 1
            start -= 1  // the line break before
            while start > 0, bytes[start - 1] != UInt8(ascii: "\n") { start -= 1 }
        }
        var end = range.end.offset
        while end < bytes.count, bytes[end] == UInt8(ascii: " ") || bytes[end] == UInt8(ascii: "\t") || bytes[end] == UInt8(ascii: "\r") {
            end += 1
        }
        guard end == bytes.count || bytes[end] == UInt8(ascii: "\n") else { return nil }
        if end < bytes.count { end += 1 }
        // Between a blank line (or the start) and another, the second blank goes too.
        func isBlankLine(from i: Int) -> Bool {
            var j = i
            while j < bytes.count, bytes[j] == UInt8(ascii: " ") || bytes[j] == UInt8(ascii: "\t") || bytes[j] == UInt8(ascii: "\r") {
                j += 1
            }
            return j < bytes.count && bytes[j] == UInt8(ascii: "\n")
        }
        var previousStart = start - 1
        while previousStart > 0, bytes[previousStart - 1] != UInt8(ascii: "\n") { previousStart -= 1 }
        var extraLines = 0
        if start == 0 || isBlankLine(from: max(previousStart, 0)), isBlankLine(from: end) {
            while bytes[end] != UInt8(ascii: "\n") { end += 1 }
            end += 1
            extraLines = 1
        }
        let from = SourcePosition(offset: start, line: line, column: 1)
        // The end is the start of a line, or (a last line without a break) the end of the
        // range and the blanks after it, one column each.
        let endsMidLine = end == bytes.count && bytes.last != UInt8(ascii: "\n")
        let to =
            endsMidLine
            ? SourcePosition(offset: end, line: range.end.line, column: range.end.column + end - range.end.offset)
            : SourcePosition(offset: end, line: range.end.line + 1 + extraLines, column: 1)
        return FixIt(message, [Edit(SourceRange(start: from, end: to), "")])
    }
}

/// Applies fix-its to a source.
package enum FixApplier {
    /// `source` with the edits of `fixIts` made; an edit overlapping one already taken (in
    /// source order) is skipped with the rest of its fix-it. Returns the bytes and how many
    /// fix-its were applied.
    package static func apply(_ fixIts: [Diagnostic.FixIt], to source: SourceText) -> (bytes: [UInt8], applied: Int) {
        let ordered = fixIts.sorted {
            ($0.edits.map(\.range.start.offset).min() ?? 0) < ($1.edits.map(\.range.start.offset).min() ?? 0)
        }
        var taken: [Diagnostic.Edit] = []
        var applied = 0
        for fix in ordered {
            let overlaps = fix.edits.contains { e in
                taken.contains { t in
                    e.range.start.offset < t.range.end.offset && t.range.start.offset < e.range.end.offset
                        || e.range.start.offset == t.range.start.offset
                }
            }
            let inBounds = fix.edits.allSatisfy {
                $0.range.start.offset >= 0 && $0.range.start.offset <= $0.range.end.offset && $0.range.end.offset <= source.bytes.count
            }
            guard !overlaps, inBounds else { continue }
            taken += fix.edits
            applied += 1
        }
        var bytes = source.bytes
        for edit in taken.sorted(by: { $0.range.start.offset > $1.range.start.offset }) {
            bytes.replaceSubrange(edit.range.start.offset..<edit.range.end.offset, with: Array(edit.replacement.utf8))
        }
        return (bytes, applied)
    }
}
