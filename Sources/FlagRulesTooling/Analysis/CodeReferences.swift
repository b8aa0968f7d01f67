import FlagRules
import Foundation

/// A place in source code that reads a declaration: a string literal of its name, or (in
/// Swift) a member access to the key the build plugin generates for it (`.darkMode`).
package struct CodeReference: Sendable, Hashable {
    package enum Kind: String, Sendable {
        /// `"darkMode"`, in any language.
        case string
        /// `.darkMode` or `FlagKeys.darkMode` in Swift: the generated key.
        case generatedKey = "generated key"
    }
    package let name: String
    package let file: String
    package let line: Int
    package let column: Int
    package let kind: Kind
    /// Whether the literal is the first argument of a call that reads a flag
    /// (`isEnabled("…")`, `getBooleanValue("…")`): a name read, declared or not.
    package let isFlagRead: Bool
}

/// Finds the names of declarations in source code: string literals in any language,
/// generated keys in Swift. Comments and multi-line string literals (which hold rules
/// text in tests) are skipped.
package enum CodeScanner {
    /// The extensions of the files scanned.
    package static let extensions: Set<String> = [
        "swift", "py", "js", "mjs", "cjs", "ts", "tsx", "jsx", "kt", "kts", "java", "go", "rb", "cs", "m", "mm", "dart", "php", "rs",
        "scala",
    ]
    /// A file larger than this is skipped (generated or vendored code).
    package static let maxFileBytes = 4 << 20

    /// Call names whose first string argument is a flag's name.
    static func readsFlag(_ call: String) -> Bool {
        let c = call.lowercased()
        return ["enabled", "variant", "value", "evaluate", "explain", "details", "flag", "resolution"].contains { c.contains($0) }
    }

    /// Every string literal of `text` (with the call it is the first argument of), and in
    /// Swift every `.identifier` whose identifier is in `names`.
    package static func scan(_ text: String, file: String, names: Set<String>) -> [CodeReference] {
        let bytes = Array(text.utf8)
        let ext = (file as NSString).pathExtension.lowercased()
        let swift = ext == "swift"
        let hashComments = ["py", "rb"].contains(ext)
        let singleQuoted = !["swift", "rs", "go", "java", "kt", "kts", "cs", "scala", "dart", "m", "mm"].contains(ext)
        var out: [CodeReference] = []
        var i = 0, line = 1, lineStart = 0
        var lastIdentifier = ""  // the identifier before the last `(`
        var callOpen = false  // just after `identifier(`
        func isIdentifierByte(_ b: UInt8) -> Bool { b == 95 || (b >= 48 && b <= 57) || (b | 0x20 >= 97 && b | 0x20 <= 122) }
        var depth = 0  // open parentheses
        var interpolations: [(depth: Int, quote: UInt8)] = []  // Swift's `\(` inside a literal
        /// Scans a literal's rest from `start`; the index after it (or after an
        /// interpolation's `\(`, its code scanned next). `plain`: no escape or
        /// interpolation so far, so the literal may be a name.
        func string(from start: Int, quote: UInt8, contentStart: Int, plain: Bool) -> Int {
            var i = start
            var plain = plain
            while i < bytes.count, bytes[i] != quote, bytes[i] != 10 {
                if bytes[i] == 92 {
                    if swift, i + 1 < bytes.count, bytes[i + 1] == 40 {
                        interpolations.append((depth, quote))
                        callOpen = false
                        return i + 2
                    }
                    plain = false
                    // (A backslash at a line's end escapes nothing here: the line ends, and
                    // is counted.)
                    if i + 1 < bytes.count, bytes[i + 1] != 10 { i += 1 }
                }
                i += 1
            }
            if i < bytes.count, bytes[i] == quote, plain {
                let content = String(decoding: bytes[contentStart..<i], as: UTF8.self)
                let read = callOpen && readsFlag(lastIdentifier)
                if names.contains(content) || (read && !content.isEmpty && content.count <= 100) {
                    out.append(
                        CodeReference(
                            name: content, file: file, line: line,
                            column: text.utf8Column(contentStart - 1 - lineStart, lineStart: lineStart), kind: .string, isFlagRead: read))
                }
            }
            callOpen = false
            // An unclosed literal ends at its line's end, which is left for the line count.
            return i < bytes.count && bytes[i] == quote ? i + 1 : i
        }
        while i < bytes.count {
            let b = bytes[i]
            if b == 10 {
                line += 1
                lineStart = i + 1
                i += 1
                continue
            }
            // Comments.
            if !hashComments, b == 47, i + 1 < bytes.count, bytes[i + 1] == 47 {
                while i < bytes.count, bytes[i] != 10 { i += 1 }
                continue
            }
            if hashComments, b == 35 {
                while i < bytes.count, bytes[i] != 10 { i += 1 }
                continue
            }
            if !hashComments, b == 47, i + 1 < bytes.count, bytes[i + 1] == 42 {
                i += 2
                while i + 1 < bytes.count, !(bytes[i] == 42 && bytes[i + 1] == 47) {
                    if bytes[i] == 10 {
                        line += 1
                        lineStart = i + 1
                    }
                    i += 1
                }
                i += 2
                continue
            }
            // Triple-quoted strings: skipped whole.
            if (b == 34 || (b == 39 && singleQuoted)), i + 2 < bytes.count, bytes[i + 1] == b, bytes[i + 2] == b {
                i += 3
                while i + 2 < bytes.count, !(bytes[i] == b && bytes[i + 1] == b && bytes[i + 2] == b) {
                    if bytes[i] == 10 {
                        line += 1
                        lineStart = i + 1
                    }
                    i += 1
                }
                i += 3
                callOpen = false
                continue
            }
            // One-line string literals; in Swift, an interpolation's code is scanned as code
            // and the literal goes on after it.
            if b == 34 || (b == 39 && singleQuoted) || (b == 96 && singleQuoted) {
                i = string(from: i + 1, quote: b, contentStart: i + 1, plain: true)
                continue
            }
            if b == 40 { depth += 1 }
            if b == 41 {
                if let resume = interpolations.last, resume.depth == depth {
                    interpolations.removeLast()
                    i = string(from: i + 1, quote: resume.quote, contentStart: i + 1, plain: false)
                    continue
                }
                depth -= 1
            }
            if isIdentifierByte(b) {
                let start = i
                while i < bytes.count, isIdentifierByte(bytes[i]) { i += 1 }
                let word = String(decoding: bytes[start..<i], as: UTF8.self)
                if swift, start > 0, bytes[start - 1] == 46, names.contains(word) {
                    out.append(
                        CodeReference(
                            name: word, file: file, line: line, column: text.utf8Column(start - lineStart, lineStart: lineStart),
                            kind: .generatedKey, isFlagRead: false))
                }
                var j = i
                while j < bytes.count, bytes[j] == 32 { j += 1 }
                if j < bytes.count, bytes[j] == 40 {
                    lastIdentifier = word
                    callOpen = true
                    i = j + 1
                } else {
                    callOpen = false
                }
                continue
            }
            if b != 32 && b != 9 { callOpen = false }
            i += 1
        }
        return out
    }

    /// The source files under `paths` (files given are taken whatever their extension);
    /// hidden directories and `.build` are skipped.
    package static func files(under paths: [String]) -> [String] {
        var out: [String] = []
        let manager = FileManager.default
        for path in paths {
            var isDirectory: ObjCBool = false
            guard manager.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
            guard isDirectory.boolValue else {
                out.append(path)
                continue
            }
            guard let walker = manager.enumerator(atPath: path) else { continue }
            var found: [String] = []
            while let item = walker.nextObject() as? String {
                let last = (item as NSString).lastPathComponent
                if last.hasPrefix(".") || last == "node_modules" {
                    walker.skipDescendants()
                    continue
                }
                if extensions.contains((last as NSString).pathExtension.lowercased()) {
                    found.append(path.hasSuffix("/") ? path + item : path + "/" + item)
                }
            }
            out += found.sorted()
        }
        return out
    }
}

extension String {
    /// The 1-based column, in characters, of the byte `offset` bytes after `lineStart`.
    fileprivate func utf8Column(_ offset: Int, lineStart: Int) -> Int {
        let view = utf8
        let start = view.index(view.startIndex, offsetBy: lineStart)
        let end = view.index(start, offsetBy: offset)
        return self[start..<end].count + 1
    }
}
