import FlagRules
import Foundation

/// The systems `flags import` reads, by the names its `--from` takes.
package enum ImportFormat: String, Sendable, CaseIterable {
    case growthbook, launchdarkly, flagd, unleash

    /// The system's name, as its users write it.
    package var system: String {
        switch self {
        case .growthbook: "GrowthBook"
        case .launchdarkly: "LaunchDarkly"
        case .flagd: "flagd"
        case .unleash: "Unleash"
        }
    }
}

/// Something of a vendor's file that `flags import` did not carry over exactly: where it is
/// (a JSON path into the file), the vendor's key of the flag it belongs to, and why.
package struct ImportNote: Sendable, Equatable, CustomStringConvertible {
    /// What the note says of the result.
    package enum Kind: Sendable, Equatable {
        /// Left out, or imported with another meaning: the exit status says so.
        case notImported
        /// Imported exactly, under another name (a key that is no `.flags` name).
        case renamed
        /// Imported exactly; worth knowing (the vendor's rule that the import follows).
        case remark
    }

    package let kind: Kind
    package let place: String
    package let message: String

    package init(_ kind: Kind, at place: String, _ message: String) {
        self.kind = kind
        self.place = place
        self.message = message
    }

    /// `place: not imported: message`, one line.
    package var description: String {
        switch kind {
        case .notImported: return "\(place): not imported: \(message)"
        case .renamed: return "\(place): renamed: \(message)"
        case .remark: return "\(place): note: \(message)"
        }
    }
}

/// Why a vendor's file could not be imported at all.
package struct ImportError: Error, Sendable, CustomStringConvertible {
    package let message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}

/// A condition as an importer builds it, written out with the fewest parentheses.
///
/// `.atom` is a comparison, a call or a name: it binds tighter than `not`.
package indirect enum ImportedCondition: Sendable, Equatable {
    case always
    case never
    case atom(String)
    case not(ImportedCondition)
    case all([ImportedCondition])
    case any([ImportedCondition])

    /// Every one of `conditions`: `always` when there are none.
    package static func and(_ conditions: [ImportedCondition]) -> ImportedCondition {
        var parts: [ImportedCondition] = []
        for condition in conditions {
            switch condition {
            case .always: continue
            case .never: return .never
            case .all(let inner): parts += inner
            default: parts.append(condition)
            }
        }
        return parts.isEmpty ? .always : parts.count == 1 ? parts[0] : .all(parts)
    }

    /// Any one of `conditions`: `never` when there are none.
    package static func or(_ conditions: [ImportedCondition]) -> ImportedCondition {
        var parts: [ImportedCondition] = []
        for condition in conditions {
            switch condition {
            case .never: continue
            case .always: return .always
            case .any(let inner): parts += inner
            default: parts.append(condition)
            }
        }
        return parts.isEmpty ? .never : parts.count == 1 ? parts[0] : .any(parts)
    }

    /// The negation (`not`), simplified where it is constant or doubled.
    package static func negated(_ condition: ImportedCondition) -> ImportedCondition {
        switch condition {
        case .always: return .never
        case .never: return .always
        case .not(let inner): return inner
        default: return .not(condition)
        }
    }

    /// The condition true or false, never unknown (`(…) ?? false`): false where an attribute
    /// it reads is absent or of another type, so that its negation holds there, as a
    /// vendor's two-valued test (a segment, a saved group, an evaluator) reads.
    package var knownOrFalse: ImportedCondition {
        isKnown ? self : .atom("(\(text)) ?? false")
    }

    /// Whether the condition is never unknown: made of constants, `has(…)` tests and
    /// atoms that already read false when unknown.
    private var isKnown: Bool {
        switch self {
        case .always, .never: true
        case .atom(let text):
            (text.hasPrefix("has(") && text.hasSuffix(")") && !text.dropFirst(4).contains("("))
                || (text.hasSuffix(" ?? false") && Self.isParenthesized(text.dropLast(9)))
        case .not(let inner): inner.isKnown
        case .all(let parts), .any(let parts): parts.allSatisfy(\.isKnown)
        }
    }

    /// Whether `text` is one parenthesized expression: its first `(` closes at its end
    /// (strings in it are the importers' own, quoted, with no parenthesis that matters
    /// outside them).
    private static func isParenthesized(_ text: Substring) -> Bool {
        guard text.first == "(", text.last == ")" else { return false }
        var depth = 0
        var quoted = false
        var escaped = false
        for (offset, c) in text.enumerated() {
            if quoted {
                if escaped { escaped = false } else if c == "\\" { escaped = true } else if c == "\"" { quoted = false }
                continue
            }
            switch c {
            case "\"": quoted = true
            case "(": depth += 1
            case ")":
                depth -= 1
                if depth == 0 { return offset == text.count - 1 }
            default: break
            }
        }
        return false
    }

    /// The condition as `.flags` source (`always` and `never` as `true` and `false`).
    package var text: String { text(inside: .or) }

    private enum Level: Int { case or, and, not }

    private func text(inside level: Level) -> String {
        switch self {
        case .always: return "true"
        case .never: return "false"
        case .atom(let text): return text
        case .not(let inner):
            if case .atom(let text) = inner { return ImportNames.isName(text) ? "not \(text)" : "not (\(text))" }
            return "not " + inner.text(inside: .not)
        case .all(let parts):
            let text = parts.map { $0.text(inside: .and) }.joined(separator: " and ")
            return level.rawValue > Level.and.rawValue ? "(\(text))" : text
        case .any(let parts):
            // (An `and` beside an `or` is bracketed for the reader, though it binds tighter.)
            let text = parts.map { part in
                if case .all = part { "(\(part.text(inside: .and)))" } else { part.text(inside: .or) }
            }
            .joined(separator: " or ")
            return level.rawValue > Level.or.rawValue ? "(\(text))" : text
        }
    }
}

/// A declaration as an importer builds it.
package struct ImportedDeclaration: Sendable {
    package enum Kind: Sendable, Equatable {
        case flag
        case variant([String])
        /// `int`, `double`, `string` or `bool`.
        case value(String)
    }

    /// A rule: what it gives (`enabled`, a variant, a literal or a split) and when.
    package struct Rule: Sendable {
        package var result: String
        package var condition: ImportedCondition
        package init(_ result: String, when condition: ImportedCondition) {
            self.result = result
            self.condition = condition
        }

        /// The result of a `fallback` rule (the caller's default), told apart from a
        /// variant named `fallback` (written in backticks).
        package static let fallback = "\u{1}fallback"

        /// A `fallback` rule.
        package static func fallback(when condition: ImportedCondition) -> Rule { Rule(fallback, when: condition) }
    }

    package var name: String
    package var kind: Kind
    /// The default as source: `true`, a variant's name, a literal.
    package var defaultText: String
    package var doc: [String] = []
    package var attributes: [String] = []
    package var rules: [Rule] = []
    /// The vendor file's place of what the declaration is imported from (`features.x`),
    /// and comments written above it (what of it was not imported).
    package var place: String?
    package var comments: [String] = []
    /// Written as a comment below `comments`, not declared: a flag every evaluation of which
    /// gives the caller's default in the vendor's SDKs, as a flag the file does not declare
    /// does in FlagRules.
    package var commentedOut = false

    package init(name: String, kind: Kind, defaultText: String) {
        self.name = name
        self.kind = kind
        self.defaultText = defaultText
    }

    /// The declaration as source. A rule that never matches is left out, and so is every
    /// rule after one that always matches (written last, without `when`; a split matches
    /// only a context holding its unit).
    package var source: String {
        let comment = comments.map { "# \($0)\n" }.joined()
        guard !commentedOut else {
            var declared = self
            declared.commentedOut = false
            declared.comments = []
            return comment + declared.source.split(separator: "\n").map { "#   \($0)\n" }.joined()
        }
        var out = comment
        out += doc.map { "/// \($0)\n" }.joined()
        if !attributes.isEmpty { out += attributes.joined(separator: " ") + "\n" }
        switch kind {
        case .flag: out += "flag \(name) = \(defaultText)"
        case .variant(let cases): out += "variant \(name) [\(cases.map(Identifier.written).joined(separator: ", "))] = \(defaultText)"
        case .value(let type): out += "value \(name): \(type) = \(defaultText)"
        }
        var lines: [String] = []
        func written(_ result: String) -> String {
            if result == Rule.fallback { return "fallback" }
            if case .variant = kind, result == "fallback" { return "`fallback`" }
            return result
        }
        for rule in rules {
            switch rule.condition {
            case .never: continue
            case .always: lines.append(written(rule.result))
            default: lines.append("\(written(rule.result)) when \(rule.condition.text)")
            }
            // (A split without a condition may still not match: its unit may be absent.)
            if case .always = rule.condition, !rule.result.hasPrefix("split(") { break }
        }
        if lines.isEmpty { return out + "\n" }
        return out + " {\n" + lines.map { "  \($0)\n" }.joined() + "}\n"
    }
}

/// A `.flags` file as an importer builds it: a header comment, segments, declarations.
package struct ImportedFile: Sendable {
    package var header: [String] = []
    package var segments: [(name: String, doc: [String], condition: ImportedCondition)] = []
    package var declarations: [ImportedDeclaration] = []

    package init() {}

    /// The file as source (not yet formatted).
    package var source: String {
        var out = header.map { $0.isEmpty ? "#\n" : "# \($0)\n" }.joined()
        for segment in segments {
            out += "\n" + segment.doc.map { "/// \($0)\n" }.joined()
            out += "segment \(segment.name) = \(segment.condition.text)\n"
        }
        for declaration in declarations { out += "\n" + declaration.source }
        return out
    }
}

/// A JSON object's members with each key once, its last (as a JSON reader keeps it); the
/// keys given more than once, each with a note at `place.key`.
package func lastOfEach(_ entries: [(String, JSON)], at place: String, notes: inout [ImportNote]) -> [(key: String, json: JSON)] {
    var last: [String: Int] = [:]
    for (i, entry) in entries.enumerated() { last[entry.0] = i }
    return entries.enumerated().compactMap { i, entry in
        guard last[entry.0] == i else {
            notes.append(ImportNote(.notImported, at: "\(place).\(entry.0)", "'\(entry.0)' is given twice: its last entry is imported"))
            return nil
        }
        return (entry.0, entry.1)
    }
}

/// The names an import gives: each vendor key as a `.flags` name, one name per key.
package struct ImportNames: Sendable {
    private var given: [String: String] = [:]
    private var taken: Set<String> = []
    /// The context attributes kept from declarations, and the key each name was given to.
    private var attributeNames: Set<String> = []
    private var owner: [String: String] = [:]
    private var nextSuffix: [String: Int] = [:]

    package init() {}

    /// Words a name cannot be.
    static let reserved: Set<String> = ["true", "false", "and", "or", "not", "in", "when", "now"]

    /// Whether `text` is a `.flags` name as it stands.
    package static func isName(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, !reserved.contains(text) else { return false }
        func letter(_ s: Unicode.Scalar) -> Bool { ("a"..."z").contains(s) || ("A"..."Z").contains(s) || s == "_" }
        return letter(first) && text.unicodeScalars.allSatisfy { letter($0) || ("0"..."9").contains($0) }
    }

    /// Whether `text` can be a `.flags` name, in backticks if need be: not empty, and no
    /// control character.
    package static func isQuotable(_ text: String) -> Bool {
        !text.isEmpty && !text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
    }

    /// Keeps `names` (the context attributes the file's rules read) from being given to a
    /// declaration: in `.flags` a declaration's name would hide the attribute.
    package mutating func reserve(_ names: some Sequence<String>) {
        taken.formUnion(names)
        attributeNames.formUnion(names)
    }

    /// Gives each of `keys` that is a `.flags` name as it stands (and no attribute's) that
    /// name, before any other key is made into one: a key keeps its name, and a key made
    /// into a name never takes another's.
    package mutating func claim(_ keys: some Sequence<String>) {
        for key in keys where given[key] == nil && Self.isName(key) && !taken.contains(key) {
            taken.insert(key)
            given[key] = key
            owner[key] = key
        }
    }

    /// The note that vendor key `id` (written `key`), at `place`, is named otherwise; nil
    /// when it keeps its key as its name. The reason says why: not a name, an attribute's name, or another
    /// key's.
    package func renameNote(for id: String, key shown: String? = nil, at place: String, what: String = "") -> ImportNote? {
        let key = shown ?? id
        guard let name = given[id], name != key else { return nil }
        var reasons: [String] = []
        if !Self.isName(key) {
            reasons.append(Self.reserved.contains(key) ? "'\(key)' is a word of the language" : "a .flags name is letters, digits and '_'")
        }
        if attributeNames.contains(key) {
            reasons.append("a context attribute is named '\(key)', and a declaration of that name would hide it")
        }
        let base = name.prefix { !$0.isNumber }
        if name != base, let other = owner[String(base)], other != id {
            reasons.append("\(base) is taken by '\(other)'")
        }
        return ImportNote(.renamed, at: place, "\(what)'\(key)' is \(name) (\(reasons.joined(separator: "; ")))")
    }

    /// The attribute names a vendor file's conditions read: each object key under `json`
    /// that is no operator (`$…`), as the first name of its path.
    package static func attributes(in json: JSON, into names: inout Set<String>) {
        switch json {
        case .object(let members):
            for (key, value) in members {
                if !key.hasPrefix("$") { names.insert(String(key.split(separator: ".").first ?? "")) }
                attributes(in: value, into: &names)
            }
        case .array(let elements):
            for element in elements { attributes(in: element, into: &names) }
        default:
            break
        }
    }

    /// The name of vendor key `key` (the same key, the same name): `base` (the key unless
    /// given) when it is a name, else its words in lower camel case (`new-checkout` is
    /// `newCheckout`), made unique.
    package mutating func name(for key: String, base preferred: String? = nil) -> String {
        if let name = given[key] { return name }
        let text = preferred ?? key
        var base = text
        if !Self.isName(text) {
            let words = text.split { !($0.isASCII && ($0.isLetter || $0.isNumber)) }.map(String.init)
            base = words.enumerated().map { i, w in
                i == 0 ? w.prefix(1).lowercased() + w.dropFirst() : w.prefix(1).uppercased() + w.dropFirst()
            }
            .joined()
            if base.isEmpty || !Self.isName(base) { base = "f" + base.prefix(1).uppercased() + base.dropFirst() }
            if !Self.isName(base) { base = "imported" }
        }
        // (The next suffix to try is kept per base, so that many keys with one base stay
        // linear.)
        var name = base
        var n = nextSuffix[base] ?? 2
        while taken.contains(name) {
            name = "\(base)\(n)"
            n += 1
        }
        if name != base { nextSuffix[base] = n }
        taken.insert(name)
        given[key] = name
        owner[name] = key
        return name
    }

    /// The name already given to `key`, if any.
    package func existing(_ key: String) -> String? { given[key] }
}

/// Literals and attribute references as `.flags` source writes them.
package enum ImportedSource {
    /// A JSON scalar as a literal: nil for null, arrays and objects.
    package static func literal(_ value: JSON) -> String? {
        switch value {
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .double(let d): return double(d)
        case .string(let s): return StringEscaping.quoted(s)
        default: return nil
        }
    }

    /// The `.flags` value type every one of `values` has: `bool`, `string`, `int` or
    /// `double` (ints among doubles); nil for objects, arrays, nulls or mixed types.
    package static func valueType(of values: [JSON]) -> String? {
        if values.allSatisfy({ if case .bool = $0 { true } else { false } }) { return "bool" }
        if values.allSatisfy({ $0.string != nil }) { return "string" }
        if values.allSatisfy({ if case .int = $0 { true } else { false } }) { return "int" }
        if values.allSatisfy({ if case .int = $0 { true } else if case .double = $0 { true } else { false } }) { return "double" }
        return nil
    }

    /// `value` as a literal of `type`: an int in a double's place is written as a double.
    package static func literal(_ value: JSON, as type: String) -> String {
        if type == "double", case .int(let i) = value { return double(Double(i)) ?? "0.0" }
        return literal(value) ?? "0"
    }

    /// A double as a `.flags` double literal (digits, a point, digits): nil when not finite.
    package static func double(_ d: Double) -> String? {
        guard d.isFinite else { return nil }
        var text = "\(d)"
        if text.contains("e") || text.contains("E") {
            text = String(format: "%.17f", d)
            while text.hasSuffix("0") { text.removeLast() }
            if text.hasSuffix(".") { text += "0" }
        }
        if !text.contains(".") { text += ".0" }
        return text
    }

    /// A share in thousandths of a percent (`12345` is `12.345%`).
    package static func percent(thousandths: Int) -> String {
        let whole = thousandths / 1_000
        var fraction = String(thousandths % 1_000)
        while fraction.count < 3 { fraction = "0" + fraction }
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return fraction.isEmpty ? "\(whole)%" : "\(whole).\(fraction)%"
    }

    /// A variant's case in an expression: bare when it is a plain name, else a string (a
    /// case compares with a string of its name; a quoted name in a rule holds no dot).
    package static func caseName(_ name: String) -> String {
        Identifier.isPlain(name) ? name : StringEscaping.quoted(name)
    }

    /// An attribute path (`org.plan`, `` `app-version` ``): each of `names` as `.flags`
    /// writes it, in backticks when it is no plain name; nil when one holds a dot (which
    /// separates a path's fields) or a control character, or is empty, or the first is
    /// `now` (the evaluation time).
    package static func path(_ names: [String]) -> String? {
        guard !names.isEmpty, names.count <= 64, names[0] != "now",
            names.allSatisfy({ ImportNames.isQuotable($0) && !$0.contains(".") })
        else { return nil }
        return names.map(Identifier.written).joined(separator: ".")
    }
}
