import FlagRules

/// The canonical layout of `.flags` files, with no options (like gofmt).
///
/// - one declaration per line group; blank lines kept where they were (at most one)
/// - attributes on one line above their declaration; doc comments above that
/// - two-space indentation, one rule per line; a one-rule body written on one line stays on
///   one line when it fits in 100 columns
/// - context blocks aligned on the colon
/// - `and`/`or`/`not` for `&&`/`||`/`!`, single spaces around operators, `[a, b]` lists
/// - literals normalised (`007` → `7`, `2.50` → `2.5`, `20.0%` → `20%`)
/// - every comment kept: on its own line where it was, or at the end of the line it ended
/// - a rule longer than 100 columns breaks after its top-level `and`/`or`
///
/// Formatting is idempotent and never changes meaning; both are tested over every example
/// and every golden input.
public enum FlagsFormatter {
    /// The width a line may reach before a long rule is broken.
    public static let lineWidth = 100

    /// The formatted text; throws the syntax errors of a file that does not parse.
    public static func format(_ source: SourceText) throws(RuleSetError) -> String {
        let (file, diagnostics) = Parser.parse(source)
        if diagnostics.contains(where: { $0.severity == .error }) {
            throw .invalid(source: source, diagnostics: diagnostics)
        }
        var printer = Printer(file: file, source: source)
        printer.printFile()
        return Printer.alignTrailingComments(printer.out)
    }

    /// The formatted text of source code (named for diagnostics).
    public static func format(_ text: String, name: String = "<input>") throws(RuleSetError) -> String {
        try format(SourceText(text, name: name))
    }
}

struct Printer {
    let file: FileSyntax
    let source: SourceText
    var out = ""
    /// Comments not yet printed (doc comments attached to declarations are removed).
    var comments: [Comment]
    var nextComment = 0
    /// Where the next declaration starts: a comment from there on is not a trailing
    /// comment of the lines before it.
    var trailingBefore = Int.max
    /// The source line where the last printed element ended, for keeping blank lines.
    var lastLine: Int?
    var indent = ""

    init(file: FileSyntax, source: SourceText) {
        self.file = file
        self.source = source
        var attached = Set<Int>()
        for d in file.declarations {
            if let doc = d.header.doc {
                for c in file.comments
                where c.isDoc && c.range.start.offset >= doc.range.start.offset && c.range.end.offset <= doc.range.end.offset {
                    attached.insert(c.range.start.offset)
                }
            }
        }
        // Comments inside a split or list that keeps its lines are printed with it.
        var multiline: [SourceRange] = []
        for d in file.declarations { Printer.collectMultiline(d, source: source, comments: file.comments, into: &multiline) }
        for c in file.comments
        where multiline.contains(where: { c.range.start.offset > $0.start.offset && c.range.start.offset < $0.end.offset }) {
            attached.insert(c.range.start.offset)
        }
        multilineRanges = Set(multiline.map(\.start.offset))
        comments = file.comments.filter { !attached.contains($0.range.start.offset) }
    }

    /// The start offsets of the splits and lists that keep one entry a line.
    var multilineRanges: Set<Int> = []

    /// Whether a split or list keeps one entry a line: it was written over several lines,
    /// or holds a comment.
    static func keepsLines(_ range: SourceRange, comments: [Comment]) -> Bool {
        range.start.line != range.end.line
            || comments.contains { $0.range.start.offset > range.start.offset && $0.range.start.offset < range.end.offset }
    }

    /// Gathers the multi-line splits and lists of a declaration's rules.
    static func collectMultiline(_ d: DeclarationSyntax, source: SourceText, comments: [Comment], into ranges: inout [SourceRange]) {
        func expression(_ e: ExprSyntax) {
            switch e.kind {
            case .list(let xs):
                if keepsLines(e.range, comments: comments) { ranges.append(e.range) }
                xs.forEach(expression)
            case .literal, .name: break
            case .not(let x), .parenthesized(let x): expression(x)
            case .and(let xs), .or(let xs), .coalesce(let xs): xs.forEach(expression)
            case .comparison(_, let l, let r):
                expression(l)
                expression(r)
            case .call(_, let xs): xs.forEach(expression)
            }
        }
        func body(_ b: BodySyntax?) {
            for r in b?.rules ?? [] {
                if case .split(let split) = r.outcome, !split.entries.isEmpty, keepsLines(split.range, comments: comments) {
                    ranges.append(split.range)
                }
                if let c = r.condition { expression(c) }
            }
        }
        switch d {
        case .flag(let f): body(f.body)
        case .variant(let v): body(v.body)
        case .value(let v): body(v.body)
        case .segment(let s): expression(s.condition)
        case .context, .test: break
        }
    }

    /// Items one a line between an opening and a closing line, each comment inside kept on
    /// the line it was written on (trailing) or on a line of its own.
    func multiline(open: String, openLine: Int, items: [(range: SourceRange, text: String)], close: String, in range: SourceRange) -> String
    {
        let inner = file.comments.filter {
            $0.range.start.offset > range.start.offset && $0.range.start.offset < range.end.offset && !$0.isDoc
        }
        let itemIndent = indent + "  "
        var used = Set<Int>()
        func trailing(line: Int, after: Int, before: Int) -> String {
            guard
                let c = inner.first(where: {
                    $0.range.start.line == line && $0.range.start.offset >= after && $0.range.start.offset < before
                })
            else { return "" }
            used.insert(c.range.start.offset)
            return Printer.commentMark + commentText(c)
        }
        func ownLines(before: Int) -> String {
            var text = ""
            for c in inner where c.range.start.offset < before && !used.contains(c.range.start.offset) {
                used.insert(c.range.start.offset)
                text += "\n" + itemIndent + commentText(c)
            }
            return text
        }
        var out = open + trailing(line: openLine, after: range.start.offset, before: items.first?.range.start.offset ?? range.end.offset)
        for (k, item) in items.enumerated() {
            out += ownLines(before: item.range.start.offset)
            let next = k + 1 < items.count ? items[k + 1].range.start.offset : range.end.offset - 1
            out += "\n" + itemIndent + item.text + (k + 1 < items.count ? "," : "")
            out += trailing(line: item.range.end.line, after: item.range.end.offset, before: next)
        }
        out += ownLines(before: range.end.offset)
        return out + "\n" + indent + close
    }

    // MARK: Lines and comments

    /// Marks where a trailing comment starts, until comments are aligned (no NUL byte can
    /// reach the output otherwise: they are errors in source and escaped in strings).
    static let commentMark = "\u{0}"

    /// Aligns the trailing comments of each run of consecutive lines that have one, two
    /// spaces after the longest line of the run.
    static func alignTrailingComments(_ text: String) -> String {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var i = 0
        while i < lines.count {
            guard lines[i].contains(commentMark) else { i += 1; continue }
            var j = i
            while j < lines.count, lines[j].contains(commentMark) { j += 1 }
            let width = lines[i..<j].map { $0.prefix { $0 != "\u{0}" }.unicodeScalars.count }.max() ?? 0
            for k in i..<j {
                let parts = lines[k].split(separator: "\u{0}", maxSplits: 1, omittingEmptySubsequences: false)
                let code = String(parts[0])
                lines[k] = code + String(repeating: " ", count: width - code.unicodeScalars.count + 2) + parts[1]
            }
            i = j
        }
        return lines.joined(separator: "\n")
    }

    /// Starts a new output line for an element beginning at `line` in the source, keeping
    /// one blank line where the source had at least one.
    mutating func startLine(at line: Int) {
        if let last = lastLine, line - last > 1, !out.isEmpty, !out.hasSuffix("{\n"), !out.hasSuffix("\n\n") {
            out += "\n"
        }
        out += indent
    }

    /// Ends an output line whose element ended at `line`, at source offset `offset`,
    /// appending a comment that followed it on the same line.
    /// A comment at or after `before` is left for a later element (the rule that shares
    /// the line of a body's `{`).
    mutating func endLine(at line: Int, offset: Int, before: Int = Int.max) {
        if nextComment < comments.count, comments[nextComment].range.start.line == line,
            comments[nextComment].range.start.offset >= offset, comments[nextComment].range.start.offset < min(before, trailingBefore)
        {
            out += Printer.commentMark + commentText(comments[nextComment])
            nextComment += 1
        }
        out += "\n"
        lastLine = line
    }

    func commentText(_ c: Comment) -> String {
        let text = c.text.hasSuffix(" ") ? String(c.text.reversed().drop { $0 == " " || $0 == "\t" }.reversed()) : c.text
        return (c.isDoc ? "///" : "#") + text
    }

    /// Prints every comment that starts before `offset`, each on its own line.
    mutating func flushComments(before offset: Int) {
        while nextComment < comments.count, comments[nextComment].range.start.offset < offset {
            let c = comments[nextComment]
            nextComment += 1
            startLine(at: c.range.start.line)
            out += commentText(c) + "\n"
            lastLine = c.range.end.line
        }
    }

    func hasComments(in range: SourceRange) -> Bool {
        comments[nextComment...].contains { $0.range.start.offset >= range.start.offset && $0.range.start.offset < range.end.offset }
    }

    // MARK: Declarations

    mutating func printFile() {
        for (k, d) in file.declarations.enumerated() {
            // A comment after the next declaration, on the line this one ends on, is that
            // declaration's trailing comment, not this one's.
            let next = k + 1 < file.declarations.count ? file.declarations[k + 1].header : nil
            trailingBefore = next.map { $0.doc?.range.start.offset ?? $0.range.start.offset } ?? Int.max
            printDeclaration(d)
        }
        flushComments(before: Int.max)
    }

    mutating func printDeclaration(_ d: DeclarationSyntax) {
        let header = d.header
        flushComments(before: header.doc?.range.start.offset ?? header.range.start.offset)
        if let doc = header.doc {
            for (k, line) in doc.lines.enumerated() {
                startLine(at: doc.range.start.line + k)
                out += "///" + (line.isEmpty ? "" : " " + line) + "\n"
                lastLine = doc.range.start.line + k
            }
        }
        if !header.attributes.isEmpty {
            let first = header.attributes[0], last = header.attributes[header.attributes.count - 1]
            flushComments(before: first.range.start.offset)
            startLine(at: first.range.start.line)
            out += header.attributes.map(attribute).joined(separator: " ")
            endLine(at: last.range.end.line, offset: last.range.end.offset)
        }
        flushComments(before: header.keyword.range.start.offset)
        switch d {
        case .context(let c): printContext(c)
        case .segment(let s): printSegment(s)
        case .flag(let f):
            var head = "flag \(f.header.name.written)"
            if let v = f.defaultValue { head += " = " + literal(v.value) }
            printBody(head: head, header: f.header, body: f.body, rule: { $0.rule($1) })
        case .variant(let v):
            var head = "variant \(v.header.name.written) [" + v.variants.map(\.written).joined(separator: ", ") + "]"
            if let dv = v.defaultVariant { head += " = " + dv.written }
            printBody(head: head, header: v.header, body: v.body, rule: { $0.rule($1) })
        case .value(let v):
            var head = "value \(v.header.name.written): \(Parser.typeText(v.type))"
            if let dv = v.defaultValue { head += " = " + literal(dv.value) }
            printBody(head: head, header: v.header, body: v.body, rule: { $0.rule($1) })
        case .test(let t):
            printTest(t)
        }
    }

    func attribute(_ a: AttributeSyntax) -> String {
        var s = "@" + a.name.name
        if !a.arguments.isEmpty { s += "(" + a.arguments.map { literal($0.value) }.joined(separator: ", ") + ")" }
        return s
    }

    mutating func printContext(_ c: ContextSyntax) {
        startLine(at: c.header.keyword.range.start.line)
        out += "context {"
        endLine(
            at: c.header.keyword.range.start.line, offset: c.header.keyword.range.end.offset,
            before: c.fields.first?.range.start.offset ?? Int.max)
        indent = "  "
        printFields(c.fields)
        flushComments(before: c.header.range.end.offset - 1)
        indent = ""
        startLine(at: c.header.range.end.line)
        out += "}"
        endLine(at: c.header.range.end.line, offset: c.header.range.end.offset)
    }

    /// Fields, one a line, their types aligned; an object type stays on its line when it
    /// was written on one, fits in 100 columns and holds no comment, else takes a line a
    /// field, indented.
    mutating func printFields(_ fields: [ContextFieldSyntax]) {
        let width = fields.map(\.name.written.count).max() ?? 0
        for f in fields {
            flushComments(before: f.range.start.offset)
            startLine(at: f.range.start.line)
            out += f.name.written + String(repeating: " ", count: width - f.name.written.count) + " : "
            let inline = Parser.typeText(f.type)
            guard case .object(let inner) = f.type.kind,
                f.type.range.start.line != f.type.range.end.line || hasComments(in: f.type.range)
                    || indent.count + width + 3 + inline.count > 100
            else {
                out += inline
                endLine(at: f.range.end.line, offset: f.range.end.offset)
                continue
            }
            out += "{"
            endLine(at: f.type.range.start.line, offset: f.type.range.start.offset + 1, before: inner.first?.range.start.offset ?? Int.max)
            let outer = indent
            indent += "  "
            printFields(inner)
            flushComments(before: f.type.range.end.offset - 1)
            indent = outer
            startLine(at: f.type.range.end.line)
            out += "}"
            endLine(at: f.range.end.line, offset: f.range.end.offset)
        }
    }

    mutating func printSegment(_ s: SegmentSyntax) {
        startLine(at: s.header.keyword.range.start.line)
        let head = "segment \(s.header.name.written) = "
        out += head + wrapped(s.condition, column: indent.count + head.count, continuation: indent + "    ")
        endLine(at: s.header.range.end.line, offset: s.header.range.end.offset)
    }

    mutating func printBody(head: String, header: DeclarationHeader, body: BodySyntax?, rule: (Printer, RuleSyntax) -> String) {
        startLine(at: header.keyword.range.start.line)
        guard let body, !(body.rules.isEmpty && !hasComments(in: body.range)) else {
            out += head
            endLine(at: header.range.end.line, offset: header.range.end.offset)
            return
        }
        if body.rules.count == 1, header.keyword.range.start.line == body.range.end.line, !hasComments(in: body.range) {
            let line = head + " { " + rule(self, body.rules[0]) + " }"
            if indent.count + line.count <= FlagsFormatter.lineWidth {
                out += line
                endLine(at: body.range.end.line, offset: body.range.end.offset)
                return
            }
        }
        out += head + " {"
        // A comment after a first rule written on the `{` line stays with that rule.
        endLine(at: body.range.start.line, offset: body.range.start.offset + 1, before: body.rules.first?.range.start.offset ?? Int.max)
        indent = "  "
        for (k, r) in body.rules.enumerated() {
            flushComments(before: r.range.start.offset)
            startLine(at: r.range.start.line)
            out += ruleText(r, rule)
            // A comment after the next rule on the same line is that rule's.
            let next = k + 1 < body.rules.count ? body.rules[k + 1].range.start.offset : Int.max
            endLine(at: r.range.end.line, offset: r.range.end.offset, before: next)
        }
        flushComments(before: body.range.end.offset - 1)
        indent = ""
        startLine(at: body.range.end.line)
        out += "}"
        endLine(at: body.range.end.line, offset: body.range.end.offset)
    }

    /// A rule, broken after its top-level `and`/`or` when it is too long for one line.
    func ruleText(_ r: RuleSyntax, _ rule: (Printer, RuleSyntax) -> String) -> String {
        let flat = rule(self, r)
        guard indent.count + flat.count > FlagsFormatter.lineWidth, !flat.contains("\n"), let condition = r.condition else { return flat }
        var copy = r
        copy.condition = nil
        let head = rule(self, copy) + " when "
        return head + wrapped(condition, column: indent.count + head.count, continuation: indent + "    ")
    }

    /// An expression on one line, or broken after each top-level `and`/`or` when the line
    /// would pass the width.
    func wrapped(_ e: ExprSyntax, column: Int, continuation: String) -> String {
        let flat = expression(e)
        guard column + flat.count > FlagsFormatter.lineWidth else { return flat }
        switch e.kind {
        case .and(let xs): return xs.map(expression).joined(separator: " and\n" + continuation)
        case .or(let xs): return xs.map(expression).joined(separator: " or\n" + continuation)
        default: return flat
        }
    }

    func rule(_ r: RuleSyntax) -> String {
        var s: String
        switch r.outcome {
        case .enabled: s = "enabled"
        case .disabled: s = "disabled"
        // (A variant named `fallback` is quoted in a rule, where the bare word is the
        // outcome.)
        case .variant(let id): s = Identifier.writtenAsOutcome(id.name)
        case .fallback: s = "fallback"
        case .literal(let l): s = literal(l.value)
        case .split(let split):
            s = "split(" + expression(split.unit)
            if let salt = split.salt { s += ", " + literal(salt.value) }
            if let scheme = split.scheme { s += ", " + expression(scheme) }
            let entries = split.entries.map { entry in
                let key: String
                switch entry.key {
                case .name(let id): key = Identifier.writtenAsOutcome(id.name)
                case .literal(let l): key = literal(l.value)
                case .fallback: key = "fallback"
                }
                return (range: entry.range, text: key + ": " + literal(entry.weight.value))
            }
            if multilineRanges.contains(split.range.start.offset) {
                s = multiline(open: s + ") {", openLine: split.range.start.line, items: entries, close: "}", in: split.range)
            } else {
                s += ") { " + entries.map(\.text).joined(separator: ", ") + " }"
            }
        }
        if let c = r.condition { s += " when " + expression(c) }
        return s
    }

    mutating func printTest(_ t: TestSyntax) {
        startLine(at: t.header.keyword.range.start.line)
        out += "test " + StringEscaping.quoted(t.header.name.name) + " {"
        endLine(at: t.header.keyword.range.start.line, offset: t.header.name.range.end.offset + 1)
        indent = "  "
        // Givens and expectations in source order.
        var items: [(SourceRange, String)] = []
        var givenGroups: [[GivenSyntax]] = []
        for g in t.givens {
            if let last = givenGroups.last?.last, last.range.end.line + 1 >= g.range.start.line, sameBlock(last, g) {
                givenGroups[givenGroups.count - 1].append(g)
            } else {
                givenGroups.append([g])
            }
        }
        for group in givenGroups {
            let range = SourceRange(start: group[0].range.start, end: group[group.count - 1].range.end)
            let entries = group.map { g in
                return Identifier.writtenPath(g.key.name) + ": " + givenValue(g.value)
            }
            // Past the line width, the entries go into several `given` blocks, one a line,
            // as many to a line as fit (givens add up, so the test means the same).
            var lines: [String] = []
            var current: [String] = []
            for entry in entries {
                let candidate = "given { " + (current + [entry]).joined(separator: ", ") + " }"
                if !current.isEmpty, indent.count + candidate.count > FlagsFormatter.lineWidth {
                    lines.append("given { " + current.joined(separator: ", ") + " }")
                    current = [entry]
                } else {
                    current.append(entry)
                }
            }
            lines.append("given { " + current.joined(separator: ", ") + " }")
            items.append((range, lines.joined(separator: "\n" + indent)))
        }
        for e in t.expectations { items.append((e.range, expectation(e))) }
        items.sort { $0.0.start.offset < $1.0.start.offset }
        for (range, text) in items {
            flushComments(before: range.start.offset)
            startLine(at: range.start.line)
            out += text
            endLine(at: range.end.line, offset: range.end.offset)
        }
        flushComments(before: t.header.range.end.offset - 1)
        indent = ""
        startLine(at: t.header.range.end.line)
        out += "}"
        endLine(at: t.header.range.end.line, offset: t.header.range.end.offset)
    }

    func givenValue(_ v: GivenSyntax.Value) -> String {
        switch v {
        case .literal(let l): return literal(l.value)
        case .name(let id): return id.written
        case .list(let elements, _): return "[" + elements.map(givenValue).joined(separator: ", ") + "]"
        }
    }

    /// Whether two given entries were written in the same `given { … }` block.
    func sameBlock(_ a: GivenSyntax, _ b: GivenSyntax) -> Bool {
        let between = source.text(of: SourceRange(start: a.range.end, end: b.range.start))
        return !between.contains("given")
    }

    func expectation(_ e: ExpectationSyntax) -> String {
        var subject = e.subject.written
        if let p = e.property { subject += "." + p.name }
        switch e.expected {
        case .bare(let b): return "expect " + (b ? "" : "not ") + subject
        case .literal(let l): return "expect \(subject) \(e.negated ? "!=" : "==") " + literal(l.value)
        case .name(let id):
            // (A variant named `fallback` keeps its backticks: the bare word expects a fallback.)
            let written = id.name == "fallback" && source.text(of: id.range).hasPrefix("`") ? "`fallback`" : id.written
            return "expect \(subject) \(e.negated ? "!=" : "==") " + written
        }
    }

    // MARK: Expressions

    func expression(_ e: ExprSyntax) -> String {
        switch e.kind {
        case .literal(let l): return literal(l)
        case .name(let n): return Identifier.writtenPath(n)
        case .list(let xs):
            if multilineRanges.contains(e.range.start.offset), !xs.isEmpty {
                return multiline(
                    open: "[", openLine: e.range.start.line, items: xs.map { (range: $0.range, text: expression($0)) }, close: "]",
                    in: e.range)
            }
            return "[" + xs.map(expression).joined(separator: ", ") + "]"
        case .not(let x): return "not " + expression(x)
        case .and(let xs): return xs.map(expression).joined(separator: " and ")
        case .or(let xs): return xs.map(expression).joined(separator: " or ")
        case .comparison(let op, let l, let r):
            return expression(l) + " \(op.rawValue) " + expression(r)
        case .coalesce(let xs): return xs.map(expression).joined(separator: " ?? ")
        case .call(let name, let args): return name.name + "(" + args.map { expression($0) }.joined(separator: ", ") + ")"
        case .parenthesized(let x): return "(" + expression(x) + ")"
        }
    }

    // MARK: Literals

    func literal(_ v: LiteralValue) -> String {
        switch v {
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .double(let d): return Printer.decimal(d)
        case .percent(let t):
            let sign = t < 0 ? "-" : ""
            let m = t.magnitude
            var s = sign + String(m / 1000)
            if m % 1000 != 0 {
                var frac = String(m % 1000)
                frac = String(repeating: "0", count: 3 - frac.count) + frac
                while frac.hasSuffix("0") { frac.removeLast() }
                s += "." + frac
            }
            return s + "%"
        case .string(let s, let raw): return raw ? "#\"" + s + "\"#" : StringEscaping.quoted(s)
        case .version(let v): return v
        }
    }

    /// The shortest decimal that reads back as `d`, always with a point and never with an
    /// exponent (the language has none): `2.5`, `50.0`, `0.00001`.
    static func decimal(_ d: Double) -> String {
        var text = "\(d.magnitude)"
        var exponent = 0
        if let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            exponent = Int(text[text.index(after: e)...]) ?? 0
            text = String(text[..<e])
        }
        var parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        if parts.count == 1 { parts.append("0") }
        var digits = parts[0] + parts[1]
        var point = parts[0].count + exponent
        if point <= 0 {
            digits = String(repeating: "0", count: 1 - point) + digits
            point = 1
        }
        if point >= digits.count { digits += String(repeating: "0", count: point - digits.count + 1) }
        var whole = String(digits.prefix(point))
        var frac = String(digits.dropFirst(point))
        while whole.count > 1, whole.hasPrefix("0") { whole.removeFirst() }
        while frac.count > 1, frac.hasSuffix("0") { frac.removeLast() }
        if frac.isEmpty { frac = "0" }
        return (d < 0 ? "-" : "") + whole + "." + frac
    }
}
