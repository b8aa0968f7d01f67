/// Renders diagnostics the way compilers do: `path:line:col: error: message`, then the
/// source line in a gutter with `^~~~` under the span, then notes and help.
package struct DiagnosticRenderer: Sendable {
    /// Whether to use ANSI colours (only on a terminal, never with `NO_COLOR`).
    package var colored: Bool
    /// The most characters of a source line shown; longer lines are cut around the span.
    package var maxLineWidth = 120

    /// A renderer.
    package init(colored: Bool = false) { self.colored = colored }

    private func paint(_ text: String, _ code: String) -> String {
        colored ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }

    /// The full text for one diagnostic, ending in a newline.
    package func render(_ d: Diagnostic, in source: SourceText) -> String {
        let label = d.severity == .error ? paint("error", "1;31") : paint("warning", "1;33")
        // A lint's code, which `# flags:ignore FR101` names, closes its line.
        let code = d.code.hasPrefix("FR") ? " [\(d.code)]" : ""
        var out =
            paint("\(source.name):\(d.range.start.line):\(d.range.start.column):", "1") + " \(label): "
            + paint(d.message, "1") + code + "\n"
        out += snippet(d.range, in: source)
        for note in d.notes {
            if let r = note.range {
                out += paint("\(source.name):\(r.start.line):\(r.start.column):", "1") + " " + paint("note", "1;36") + ": \(note.message)\n"
            } else {
                out += paint("note", "1;36") + ": \(note.message)\n"
            }
        }
        if let help = d.help { out += paint("help", "1;32") + ": \(help)\n" }
        return out
    }

    /// All diagnostics, in order, separated by blank lines.
    package func render(_ diagnostics: [Diagnostic], in source: SourceText) -> String {
        diagnostics.map { render($0, in: source) }.joined(separator: "\n")
    }

    /// The gutter, the source line and the underline for a range.
    func snippet(_ range: SourceRange, in source: SourceText) -> String {
        let lineNumber = range.start.line
        guard lineNumber >= 1, lineNumber <= source.lineCount else { return "" }
        var scalars = Array(source.line(lineNumber).unicodeScalars)
        var caretColumn = max(range.start.column - 1, 0)
        var width: Int
        if range.end.line == range.start.line {
            width = max(range.end.column - range.start.column, 1)
        } else {
            width = max(scalars.count - caretColumn, 1)
        }
        caretColumn = min(caretColumn, scalars.count)
        var prefix = ""
        var suffix = ""
        if scalars.count > maxLineWidth {
            let start = max(0, min(caretColumn - maxLineWidth / 3, scalars.count - maxLineWidth))
            let end = min(scalars.count, start + maxLineWidth)
            if start > 0 { prefix = "…" }
            if end < scalars.count { suffix = "…" }
            scalars = Array(scalars[start..<end])
            caretColumn = caretColumn - start + (start > 0 ? 1 : 0)
            width = min(width, scalars.count + (start > 0 ? 1 : 0) - caretColumn + 1)
            width = max(width, 1)
        }
        var text = String.UnicodeScalarView()
        for s in scalars { text.append(s == "\t" || s.value >= 0x20 && s.value != 0x7F ? s : "\u{FFFD}") }
        let shown = prefix + String(text) + suffix
        let shownScalars = Array(shown.unicodeScalars)
        var pad = ""
        for k in 0..<min(caretColumn, shownScalars.count) { pad += shownScalars[k] == "\t" ? "\t" : " " }
        if caretColumn > shownScalars.count { pad += String(repeating: " ", count: caretColumn - shownScalars.count) }
        let number = String(lineNumber)
        let gutter = String(repeating: " ", count: number.count)
        let underline = "^" + String(repeating: "~", count: max(width - 1, 0))
        return paint("\(number) |", "34") + " " + shown + "\n" + paint("\(gutter) |", "34") + " " + pad + paint(underline, "1;32") + "\n"
    }
}
