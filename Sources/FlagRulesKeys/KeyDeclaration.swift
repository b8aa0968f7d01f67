import FlagRulesSyntax

/// A declaration as its typed key needs it: name, kind, default, variants and doc comment,
/// read from a file's syntax alone. The build plugin's tool reads a file this way, so that
/// an app's build compiles the language's text and no more of the library; `flags generate
/// swift` checks the whole file first and then writes the same keys.
package struct KeyDeclaration: Sendable, Hashable {
    /// What a key reads, with its default.
    package enum Kind: Sendable, Hashable {
        /// A flag and its default (false for a `@disabled` one: a kill switch is off
        /// before rules load too).
        case flag(default: Bool)
        /// A variant's cases in order, and its default case.
        case variant(cases: [String], default: String)
        /// A value of a Swift type (`Swift.Int`, …) with its default as a Swift literal.
        case value(type: String, typeName: String, default: String)
    }

    /// The declared name.
    package var name: String
    /// What it declares.
    package var kind: Kind
    /// The `///` doc comment, lines joined with line breaks.
    package var doc: String?
    /// The line where the declaration starts (its attributes included).
    package var line: Int

    package init(name: String, kind: Kind, doc: String?, line: Int) {
        self.name = name
        self.kind = kind
        self.doc = doc
        self.line = line
    }

    /// Why a file's declarations cannot be read as keys: a syntax error, or a declaration
    /// whose key would have no type or default. Each message names the file and line.
    package struct ReadError: Error, Sendable, CustomStringConvertible {
        /// One line a problem, as `file:line:column: error: message`.
        package let description: String
    }

    /// The flags, variants and values of `source`, in the order written (segments,
    /// contexts and tests have no key).
    package static func read(_ source: SourceText) throws(ReadError) -> [KeyDeclaration] {
        let (file, diagnostics) = Parser.parse(source)
        var problems = diagnostics.filter { $0.severity == .error }.map { "\(source.name):\($0.range.start): error: \($0.message)" }
        var declarations: [KeyDeclaration] = []
        for declaration in file.declarations {
            do {
                if let key = try KeyDeclaration(declaration) { declarations.append(key) }
            } catch {
                problems.append("\(source.name):\(error.range.start): error: \(error.message)")
            }
        }
        guard problems.isEmpty else { throw ReadError(description: problems.joined(separator: "\n")) }
        return declarations
    }

    /// A problem at one place of a declaration.
    private struct Problem: Error {
        let message: String
        let range: SourceRange
    }

    /// The key of one declaration, or nil for one that has none.
    private init?(_ declaration: DeclarationSyntax) throws(Problem) {
        let header = declaration.header
        let name = header.name.name
        switch declaration {
        case .flag(let f):
            // The parser refuses a default other than true or false.
            var value = false
            if let literal = f.defaultValue, case .bool(let b) = literal.value { value = b }
            let disabled = header.attributes.contains { $0.name.name == "disabled" }
            kind = .flag(default: disabled ? false : value)
        case .variant(let v):
            let cases = v.variants.map(\.name)
            guard let first = cases.first else {
                throw Problem(message: "variant '\(name)' lists no variants", range: header.name.range)
            }
            if let given = v.defaultVariant, !cases.contains(given.name) {
                throw Problem(message: "'\(given.name)' is no variant of '\(name)'", range: given.range)
            }
            kind = .variant(cases: cases, default: v.defaultVariant?.name ?? first)
        case .value(let v):
            guard case .named(let typeName) = v.type.kind,
                let swiftType = ["int": "Swift.Int", "double": "Swift.Double", "string": "Swift.String", "bool": "Swift.Bool"][
                    typeName.name]
            else {
                throw Problem(message: "a value's type is int, double, string or bool", range: v.type.range)
            }
            guard let literal = v.defaultValue else {
                throw Problem(message: "value '\(name)' has no default", range: header.name.range)
            }
            let text: String?
            switch (typeName.name, literal.value) {
            case ("int", .int(let i)): text = "\(i)"
            case ("double", .int(let i)): text = KeyDeclaration.doubleLiteral(Double(i))
            case ("double", .double(let d)): text = KeyDeclaration.doubleLiteral(d)
            case ("string", .string(let s, _)): text = SwiftKeyGenerator.literal(s)
            case ("bool", .bool(let b)): text = "\(b)"
            default: text = nil
            }
            guard let text else {
                throw Problem(message: "expected a default of type \(typeName.name), found \(literal.text)", range: literal.range)
            }
            kind = .value(type: swiftType, typeName: typeName.name, default: text)
        case .segment, .context, .test:
            return nil
        }
        self.name = name
        doc = header.doc?.text
        line = header.range.start.line
    }

    /// A Swift literal of type `Double`: always with a point or an exponent.
    package static func doubleLiteral(_ d: Double) -> String {
        let text = "\(d)"
        return text.contains(".") || text.contains("e") ? text : text + ".0"
    }
}
