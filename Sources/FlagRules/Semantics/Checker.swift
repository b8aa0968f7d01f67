import Foundation

/// Validates a parsed file against its `context` schema and resolves every name.
///
/// Reports unknown names (with "did you mean"), operand type mismatches, enum cases,
/// variant names, value types, invalid version/datetime literals, duplicate names,
/// cycles between declarations, split weights, invalid patterns and misplaced rules —
/// every error in the file, not just the first.
package struct Checker {
    /// The longest chain of declarations reading each other that evaluation may follow.
    static let maxDependencyDepth = 32
    static let attributeNames = ["disabled", "owner", "expires", "sticky"]
    package static let typeNames = ["string", "int", "double", "bool", "version", "datetime", "ip", "enum"]
    package static let functions = ["has", "rollout", "count", "lower", "version", "datetime", "ramp", "any", "all"]
    /// Other languages' names for the types, for "did you mean".
    static let typeAliases = [
        "semver": "version", "integer": "int", "float": "double", "number": "double", "boolean": "bool",
        "date": "datetime", "timestamp": "datetime", "str": "string", "text": "string", "inet": "ip", "address": "ip",
        "ipaddr": "ip", "cidr": "ip",
    ]

    var diagnostics = DiagnosticBag()
    var schema: ContextSchema?
    var declarations: [DeclarationSyntax] = []
    /// The declarations' names by position, for the program's lookups at evaluation.
    var names = LiteralSet([])
    /// The declarations' names, by position.
    var declarationNames: [String] = []
    /// Each declaration's position by its name: the checker's own table (a plain
    /// dictionary: whether a name is declared, and where, is decided here).
    var declarationIndex: [String: Int] = [:]
    var types: [FlagType] = []
    var edges: [[(target: Int, range: SourceRange)]] = []
    var current = 0
    let today: Date
    var testSyntax: [TestSyntax] = []
    /// Where each schema attribute's name is written, by slot.
    var schemaRanges: [SourceRange] = []
    var sourceText: SourceText?
    /// Whether to record what each name refers to (for editors; loading rules does not).
    var recordsReferences = false
    /// Each name written in the file that reads a declaration or an attribute, when recorded.
    var references: [SymbolReference] = []

    init(today: Date) { self.today = today }

    /// Checks a file for an editor: the program even when the file has errors (what
    /// checked before them), with every reference recorded, and all diagnostics.
    package static func checkForTools(
        _ file: FileSyntax, source: SourceText, today: Date = Date()
    ) -> (CheckedProgram, [Diagnostic]) {
        var checker = Checker(today: today)
        checker.sourceText = source
        checker.recordsReferences = true
        var program = checker.run(file)
        program.references = checker.references
        return (program, checker.diagnostics.items)
    }

    /// Records that the name at `range` refers to `target` (when references are recorded).
    mutating func refer(_ range: SourceRange, to target: SymbolReference.Target) {
        if recordsReferences { references.append(SymbolReference(range: range, target: target)) }
    }

    /// Records each name of a path written at `range` (`org.billing.country`, no spaces):
    /// `org` refers to the attribute, `billing` to `org.billing`, `country` to the field,
    /// so that renaming an object or a field edits just its own name everywhere.
    mutating func referPath(_ path: String, _ range: SourceRange) {
        guard recordsReferences else { return }
        var start = range.start
        var prefix = ""
        for part in path.split(separator: ".", omittingEmptySubsequences: false) {
            prefix += prefix.isEmpty ? String(part) : "." + part
            var end = start
            end.offset += part.utf8.count
            end.column += part.unicodeScalars.count
            references.append(SymbolReference(range: SourceRange(start: start, end: end), target: .attribute(prefix)))
            start = end
            start.offset += 1
            start.column += 1
        }
    }

    /// Checks a file; returns the program when there are no errors, and all diagnostics.
    static func check(
        _ file: FileSyntax, source: SourceText? = nil, today: Date = Date()
    ) -> (CheckedProgram?, [Diagnostic]) {
        var checker = Checker(today: today)
        checker.sourceText = source
        let program = checker.run(file)
        return (checker.diagnostics.hasErrors ? nil : program, checker.diagnostics.items)
    }

    /// Checks one expression written outside any declaration (the REPL), with the names of
    /// an already checked file in scope: its symbol table, not the file again.
    package static func check(expression: ExprSyntax, in symbols: SymbolTable, today: Date = Date()) -> (Bound?, [Diagnostic]) {
        var checker = Checker(today: today)
        checker.schema = symbols.schema
        checker.names = symbols.names
        checker.declarationNames = symbols.declarationNames
        checker.declarationIndex = Dictionary(symbols.declarationNames.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
        checker.types = symbols.types
        checker.current = -1
        let bound = checker.expression(expression)
        return (checker.diagnostics.hasErrors ? nil : bound, checker.diagnostics.items)
    }

    mutating func run(_ file: FileSyntax) -> CheckedProgram {
        var firstContext: ContextSyntax?
        for d in file.declarations {
            guard case .context(let c) = d else { continue }
            if let first = firstContext {
                diagnostics.error(
                    "duplicate-context", "a file has at most one context block", at: c.header.keyword.range,
                    notes: [.init("the first context block is here", at: first.header.keyword.range)])
            } else {
                firstContext = c
            }
        }
        // A name already in the table is declared twice.
        var candidates: [DeclarationSyntax] = []
        for d in file.declarations {
            if case .context = d { continue }
            if case .test(let t) = d {
                testSyntax.append(t)
                continue
            }
            candidates.append(d)
        }
        declarations.reserveCapacity(candidates.count)
        declarationIndex.reserveCapacity(candidates.count)
        for d in candidates {
            let name = d.name
            if let first = declarationIndex[name.name] {
                diagnostics.error(
                    "duplicate-name", "'\(name.name)' is declared twice", at: name.range,
                    notes: [.init("the first declaration is here", at: declarations[first].header.name.range)])
                continue
            }
            declarationIndex[name.name] = declarations.count
            declarations.append(d)
        }
        declarationNames = declarations.map { $0.name.name }
        names = LiteralSet(declarationNames)
        if let c = firstContext { schema = buildSchema(c) }
        types = declarations.map(declaredType)
        edges = Array(repeating: [], count: declarations.count)
        let checked = checkDeclarations(declarations.indices)
        checkCycles()
        let tests = checkTests(checked)
        var symbols = SymbolTable(schema: schema, names: names, declarationNames: declarationNames, types: types)
        symbols.attributeRanges = schemaRanges
        return CheckedProgram(symbols: symbols, declarations: checked, tests: tests)
    }

    /// Checks the declarations at `range`, in order, until the error limit.
    mutating func checkDeclarations(_ range: Range<Int>) -> [CheckedDeclaration] {
        var checked: [CheckedDeclaration] = []
        checked.reserveCapacity(range.count)
        for i in range {
            if diagnostics.isFull { break }
            current = i
            var declaration = checkDeclaration(declarations[i])
            declaration.writtenRuleCount = declarations[i].writtenRuleCount
            checked.append(declaration)
        }
        return checked
    }

    // MARK: Declarations

    func declaredType(_ d: DeclarationSyntax) -> FlagType {
        switch d {
        case .flag, .segment, .context, .test: return .bool
        case .variant(let v): return .variant(v.header.name.name, v.variants.map { $0.name })
        case .value(let v):
            if case .named(let n) = v.type.kind {
                switch n.name {
                case "int": return .int
                case "double": return .double
                case "string": return .string
                case "bool": return .bool
                default: return .dynamic
                }
            }
            return .dynamic
        }
    }

    struct Attributes {
        var disabled = false
        var owner: String?
        var expires: Date?
        /// `@sticky` (version "") or `@sticky("v2")`, and where it is written.
        var sticky: (version: String, range: SourceRange)?
    }

    mutating func checkAttributes(_ header: DeclarationHeader, kind: DeclarationKind) -> Attributes {
        var result = Attributes()
        var seen: [String: SourceRange] = [:]
        for a in header.attributes {
            let name = a.name.name
            if let first = seen.firstPlace(of: name, at: a.range) {
                diagnostics.error(
                    "duplicate-attribute", "attribute '@\(name)' is given twice", at: a.range,
                    notes: [.init("first given here", at: first)])
                continue
            }
            func stringArgument() -> (String, SourceRange)? {
                guard a.arguments.count == 1, case .string(let s, _) = a.arguments[0].value else {
                    diagnostics.error(
                        "attribute-arguments",
                        "'@\(name)' takes one string, as in @\(name)(\(name == "owner" ? "\"team\"" : "\"2027-03-31\""))", at: a.range)
                    return nil
                }
                return (s, a.arguments[0].range)
            }
            switch name {
            case "disabled":
                if !a.arguments.isEmpty {
                    diagnostics.error("attribute-arguments", "'@disabled' takes no arguments", at: a.range)
                }
                if kind == .segment {
                    diagnostics.error(
                        "misplaced-attribute", "a segment cannot be '@disabled'", at: a.range,
                        help: "disable the flags that read it instead")
                }
                result.disabled = true
            case "owner":
                result.owner = stringArgument()?.0
            case "expires":
                guard let (text, range) = stringArgument() else { break }
                guard let date = DateTime.parseDate(text) else {
                    diagnostics.error("invalid-date", "'\(text)' is not a date; write YYYY-MM-DD", at: range)
                    break
                }
                result.expires = date
                if date < today {
                    diagnostics.warning(
                        "expired", "'\(header.name.name)' expired on \(text)", at: a.range,
                        help: "remove the declaration or move its expiry date")
                }
            case "sticky":
                guard kind == .variant || kind == .value else {
                    diagnostics.error(
                        "misplaced-attribute", "only a variant or a value can be '@sticky': it keeps what a split assigns",
                        at: a.range)
                    break
                }
                if a.arguments.isEmpty {
                    result.sticky = ("", a.range)
                } else if a.arguments.count == 1, case .string(let version, _) = a.arguments[0].value {
                    result.sticky = (version, a.range)
                } else {
                    diagnostics.error(
                        "attribute-arguments", "'@sticky' takes nothing or a version string, as in @sticky(\"v2\")", at: a.range)
                }
            default:
                let suggestion = Suggestions.closest(to: name, in: Checker.attributeNames).map { "; did you mean '@\($0)'?" } ?? ""
                diagnostics.error(
                    "unknown-attribute", "unknown attribute '@\(name)'" + suggestion,
                    at: a.range,
                    help: "the attributes are @disabled, @owner(\"…\"), @expires(\"YYYY-MM-DD\") and @sticky")
            }
        }
        return result
    }

    mutating func checkDeclaration(_ d: DeclarationSyntax) -> CheckedDeclaration {
        let header = d.header
        let name = header.name.name
        let syntaxBody: BodySyntax? = {
            switch d {
            case .flag(let f): return f.body
            case .variant(let v): return v.body
            case .value(let v): return v.body
            default: return nil
            }
        }()
        func make(
            _ kind: DeclarationKind, _ attributes: Attributes, type: FlagType, defaultValue: Value,
            variants: [String] = [], rules: [CheckedRule] = [], condition: Bound? = nil
        ) -> CheckedDeclaration {
            var d = CheckedDeclaration(
                name: name, kind: kind, type: type, defaultValue: defaultValue, variants: variants, rules: rules,
                condition: condition, disabled: attributes.disabled, owner: attributes.owner,
                expires: attributes.expires, doc: header.doc?.text, range: header.range)
            if let sticky = attributes.sticky {
                let splits = rules.contains { if case .split = $0.outcome { return true } else { return false } }
                // A split with an error (weights that do not add up) is still a split: no second error for it.
                let brokenSplit = syntaxBody?.rules.contains { if case .split = $0.outcome { return true } else { return false } } ?? false
                if splits || brokenSplit {
                    d.sticky = sticky.version
                } else {
                    diagnostics.error(
                        "sticky-without-split", "'\(name)' has no split: '@sticky' keeps what a split assigns", at: sticky.range,
                        help: "remove '@sticky', or assign with split(unit) { … }")
                }
            }
            return d
        }
        switch d {
        case .context, .test:
            return make(.segment, Attributes(), type: .bool, defaultValue: .bool(false))
        case .segment(let s):
            let attributes = checkAttributes(header, kind: .segment)
            let condition = self.condition(s.condition)
            return make(.segment, attributes, type: .bool, defaultValue: .bool(false), condition: condition)
        case .flag(let f):
            let attributes = checkAttributes(header, kind: .flag)
            var defaultValue = false
            if let literal = f.defaultValue, case .bool(let b) = literal.value { defaultValue = b }
            let rules = checkRules(f.body) { _, rule in
                switch rule.outcome {
                case .enabled: return .value(.bool(true))
                case .disabled: return .value(.bool(false))
                case .fallback: return .fallback
                default: return nil
                }
            }
            return make(.flag, attributes, type: .bool, defaultValue: .bool(defaultValue), rules: rules)
        case .variant(let v):
            let attributes = checkAttributes(header, kind: .variant)
            let names = v.variants.map { $0.name }
            if names.isEmpty {
                diagnostics.error(
                    "empty-variants", "variant '\(name)' lists no variants", at: header.name.range,
                    help: "list them, as in variant \(name) [control, treatment]")
            }
            var seen: [String: SourceRange] = [:]
            for variant in v.variants where seen.firstPlace(of: variant.name, at: variant.range) != nil {
                diagnostics.error("duplicate-variant", "variant '\(variant.name)' is listed twice", at: variant.range)
            }
            var defaultName = names.first ?? ""
            if let given = v.defaultVariant {
                if names.contains(given.name) {
                    defaultName = given.name
                } else {
                    unknownVariant(given, of: name, names)
                }
            }
            let rules = checkRules(v.body) { c, rule in
                switch rule.outcome {
                case .variant(let id):
                    guard names.contains(id.name) else {
                        c.unknownVariant(id, of: name, names)
                        return nil
                    }
                    return .value(.string(id.name))
                case .split(let s):
                    return c.checkSplit(s, keyType: .variant(name, names), salt: name, defaultValue: .string(defaultName)).map {
                        .split($0)
                    }
                case .fallback(let range):
                    if names.contains("fallback") {
                        c.diagnostics.warning(
                            "ambiguous-fallback", "'fallback' here gives the caller's default, not the variant 'fallback'",
                            at: range, help: "write the variant in backticks: `fallback`")
                    }
                    return .fallback
                default: return nil
                }
            }
            var declaration = make(
                .variant, attributes, type: .variant(name, names), defaultValue: .string(defaultName),
                variants: names, rules: rules)
            declaration.variantRanges = v.variants.map { $0.range }
            return declaration
        case .value(let v):
            let attributes = checkAttributes(header, kind: .value)
            let type = types[current]
            if type == .dynamic {
                let written = Parser.typeText(v.type)
                diagnostics.error(
                    "invalid-value-type", "a value's type is int, double, string or bool, not '\(written)'",
                    at: v.type.range)
            }
            var defaultValue: Value = .int(0)
            if type != .dynamic, let literal = v.defaultValue, let value = literalValue(literal, as: type) {
                defaultValue = value
            }
            let rules = checkRules(v.body) { c, rule in
                switch rule.outcome {
                case .literal(let literal):
                    guard type != .dynamic else { return nil }
                    return c.literalValue(literal, as: type).map { .value($0) }
                case .split(let s):
                    guard type != .dynamic else { return nil }
                    return c.checkSplit(s, keyType: type, salt: name, defaultValue: defaultValue).map { .split($0) }
                case .fallback: return .fallback
                default: return nil
                }
            }
            return make(.value, attributes, type: type, defaultValue: defaultValue, rules: rules)
        }
    }

    mutating func unknownVariant(_ id: Identifier, of declaration: String, _ names: [String]) {
        diagnostics.error(
            "unknown-variant", "'\(id.name)' is not a variant of '\(declaration)'" + didYouMean(id.name, names),
            at: id.range, help: names.isEmpty ? nil : "the variants are " + names.joined(separator: ", "))
    }

    /// A literal as a value of a declared value type; reports a mismatch.
    mutating func literalValue(_ literal: LiteralSyntax, as type: FlagType) -> Value? {
        switch (type, literal.value) {
        case (.int, .int(let i)): return .int(i)
        case (.double, .int(let i)): return .double(Double(i))
        case (.double, .double(let d)): return .double(d)
        case (.string, .string(let s, _)): return .string(s)
        case (.bool, .bool(let b)): return .bool(b)
        default:
            diagnostics.error(
                "type-mismatch", "expected \(Checker.article(type)) \(type), found \(Checker.describe(literal.value)) \(literal.text)",
                at: literal.range)
            return nil
        }
    }

    static func article(_ t: FlagType) -> String {
        switch t {
        case .int, .enumeration: return "an"
        default: return "a"
        }
    }

    static func describe(_ v: LiteralValue) -> String {
        switch v {
        case .bool: return "bool"
        case .int: return "int"
        case .double: return "double"
        case .percent: return "percentage"
        case .string: return "string"
        case .version: return "version"
        }
    }

    // MARK: Cycles

    mutating func checkCycles() {
        let n = declarations.count
        var color = [UInt8](repeating: 0, count: n)  // 0 new, 1 on stack, 2 done
        var depth = [Int](repeating: 1, count: n)
        var reported = Set<Int>()
        // One stack for every root (most roots read nothing: a stack each would be an
        // allocation a declaration).
        var stack: [(node: Int, next: Int)] = []
        for root in 0..<n where color[root] == 0 {
            stack.append((root, 0))
            color[root] = 1
            while let top = stack.last {
                let node = top.node
                if top.next < edges[node].count {
                    stack[stack.count - 1].next += 1
                    let edge = edges[node][top.next]
                    switch color[edge.target] {
                    case 0:
                        color[edge.target] = 1
                        stack.append((edge.target, 0))
                    case 1:
                        guard let start = stack.firstIndex(where: { $0.node == edge.target }) else { break }
                        let members = stack[start...].map(\.node)
                        if members.contains(where: reported.contains) { break }
                        reported.formUnion(members)
                        let path = (members + [edge.target]).map { declarations[$0].header.name.name }
                        diagnostics.error(
                            "cycle", "cycle between declarations: " + path.joined(separator: " -> "), at: edge.range,
                            help: "a declaration cannot depend on itself, directly or through others")
                    default:
                        break
                    }
                } else {
                    color[node] = 2
                    stack.removeLast()
                    for e in edges[node] where color[e.target] == 2 {
                        depth[node] = max(depth[node], depth[e.target] + 1)
                    }
                    if depth[node] == Checker.maxDependencyDepth + 1, reported.insert(node).inserted {
                        diagnostics.error(
                            "dependency-depth",
                            "'\(declarations[node].header.name.name)' reads a chain of \(depth[node]) declarations; the limit is \(Checker.maxDependencyDepth)",
                            at: declarations[node].header.name.range)
                    }
                }
            }
        }
    }
}

extension Dictionary where Value == SourceRange {
    /// Where `key` was first seen, to report a repeat with a note at the first; nil when it
    /// is new, and then it is recorded at `range`.
    mutating func firstPlace(of key: Key, at range: SourceRange) -> SourceRange? {
        if let first = self[key] { return first }
        self[key] = range
        return nil
    }
}
