import Foundation

/// A compiled `.flags` file: immutable, `Sendable`, and safe to evaluate from any number
/// of threads at once without locks.
///
/// ```swift
/// let rules = try RuleSet(source: text, name: "app.flags")
/// let context: EvaluationContext = ["build": "alpha", "userId": "u-42"]
/// if rules.isEnabled("darkMode", in: context) { … }
/// ```
public struct RuleSet: Sendable {
    /// Everything a load produced, behind one reference: copying a rule set (out of a
    /// store, into a closure) costs one retain, not one for each part.
    final class Loaded: Sendable {
        let program: Program
        let checked: CheckedProgram
        let source: SourceText
        let warnings: [Diagnostic]
        /// Every declaration's metadata, worked out on first read (the attributes each one
        /// reads take a walk of the whole program: a load that no one lists skips it).
        private let info = Locked<[DeclarationInfo]?>(nil)
        /// Each declaration's version, by index, worked out on first read (exposures).
        private let versions = Locked<[String]?>(nil)
        /// Each declaration's split rules and the attribute each buckets by (for exposures
        /// and sticky assignments), by declaration index.
        let splitUnits: [[SplitUnit]]
        /// A hash of the whole text (FNV-1a, base 36), made once: a served file's ETag.
        let contentVersion: String

        init(program: Program, checked: CheckedProgram, source: SourceText, warnings: [Diagnostic]) {
            self.program = program
            self.checked = checked
            self.source = source
            self.warnings = warnings
            contentVersion = String(FNV1a.hash(source.bytes), radix: 36)
            splitUnits = checked.declarations.map { d in
                d.rules.compactMap { r in
                    guard case .split(let s) = r.outcome, case .attribute(let name, _, _) = s.unit.kind else { return nil }
                    return SplitUnit(rule: r.index, attribute: name)
                }
            }
        }

        /// Each declaration's version, by index: a hash of its tokens as written (FNV-1a,
        /// base 36), so that an edit of its rules changes it and a comment, the layout or
        /// another declaration does not.
        var declarationVersions: [String] {
            versions.withLock { versions in
                if let versions { return versions }
                let tokens = Lexer(source).tokens
                let bytes = source.bytes
                var made: [String] = []
                made.reserveCapacity(checked.declarations.count)
                var k = 0
                for d in checked.declarations {
                    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
                    while k < tokens.count, tokens[k].range.start.offset < d.range.start.offset { k += 1 }
                    var j = k
                    while j < tokens.count, tokens[j].range.end.offset <= d.range.end.offset {
                        let t = tokens[j]
                        j += 1
                        if case .newline = t.kind { continue }
                        hash = FNV1a.hash(bytes[t.range.start.offset..<t.range.end.offset], from: hash)
                        hash = FNV1a.hash(CollectionOfOne(UInt8(0x1F)), from: hash)
                    }
                    made.append(String(hash, radix: 36))
                }
                versions = made
                return made
            }
        }

        /// Every flag, variant, value and segment, in source order, with its metadata.
        var declarations: [DeclarationInfo] {
            info.withLock { info in
                if let info { return info }
                let reads = AttributeReads(checked)
                let made = checked.declarations.enumerated().map { i, d in
                    let (read, units) = reads.of(i)
                    return DeclarationInfo(d, reads: read, bucketingUnits: units)
                }
                info = made
                return made
            }
        }
    }

    /// A split rule (by its 1-based index) and the attribute it buckets by.
    /// The attribute a split rule buckets by (a class: handing one out costs one retain).
    final class SplitUnit: Sendable {
        let rule: Int
        /// The top-level attribute it reads, by name.
        let attribute: Frame.Key
        /// The fields below it, for a path (`device.id`).
        let fields: [String]
        /// The attribute or the path, as written.
        let path: String

        init(rule: Int, attribute path: String) {
            self.rule = rule
            self.path = path
            let parts = Path.names(path)
            attribute = Frame.Key(parts[0])
            fields = Array(parts.dropFirst())
        }
    }

    let loaded: Loaded
    var program: Program { loaded.program }
    /// The checked declarations (for explanations), the tests and the symbol table (for
    /// checking an expression against the file, as the REPL does).
    package var checked: CheckedProgram { loaded.checked }
    /// The source the rules were compiled from (for rendering diagnostics and explanations).
    public var source: SourceText { loaded.source }
    /// Warnings found while loading (an `@expires` date in the past, …).
    public var warnings: [Diagnostic] { loaded.warnings }
    /// Every flag, variant, value and segment, in source order, with its metadata: worked
    /// out on the first read (the attributes each reads take a walk of the whole program),
    /// then kept.
    public var declarations: [DeclarationInfo] { loaded.declarations }
    /// The `context { … }` schema, when the file declares one.
    public var schema: ContextSchema? { program.schema }

    /// Whether a context with a value that does not fit the schema (a number for a string,
    /// an unparsable version, a case the enum lacks) gives reason `ERROR` with
    /// `INVALID_CONTEXT` naming the attribute, rather than reading the attribute as absent.
    /// Off by default (three-valued logic); checking costs a pass over the context's keys
    /// on each evaluation by name. Strictness is about the values of declared attributes:
    /// an attribute the schema does not declare (a struct's other fields) is read by no
    /// rule and never an error; ``problems(in:)`` lists it.
    public var checksContextsStrictly = false

    /// The name its file is served under, one name wherever it is read: for rules fetched
    /// from a URL, what follows `/rules/` in its path (`flags serve`'s name for the file),
    /// else the URL's last path component; for a file, its name without its directory.
    package var servedName: String {
        let name = source.name
        if name.contains("://"), let url = URL(string: name) {
            let path = url.path
            if let range = path.range(of: "/rules/", options: .backwards), range.upperBound < path.endIndex {
                return String(path[range.upperBound...])
            }
            return url.lastPathComponent.isEmpty ? name : url.lastPathComponent
        }
        return name.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? name
    }

    /// Parses, checks and compiles `.flags` source. Throws a `RuleSetError` listing every
    /// diagnostic when the source has errors.
    public init(source: String, name: String = "<input>") throws(RuleSetError) {
        try self.init(source: SourceText(source, name: name), today: Date())
    }

    /// Loads and compiles a `.flags` file. Throws a `RuleSetError` for unreadable files
    /// and for files with errors.
    public init(contentsOf url: URL) throws(RuleSetError) {
        let name = url.isFileURL ? url.path : url.absoluteString
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw .unreadable(name: name, underlying: error)
        }
        try self.init(source: SourceText(bytes: Array(data), name: name), today: Date())
    }

    /// Compiles already-read source; `today` decides which `@expires` dates have passed.
    public init(source: SourceText, today: Date) throws(RuleSetError) {
        let (file, syntaxDiagnostics) = Parser.parse(source)
        var diagnostics = syntaxDiagnostics
        var checked: CheckedProgram?
        if !syntaxDiagnostics.contains(where: { $0.severity == .error }) {
            let result = Checker.check(file, source: source, today: today)
            checked = result.0
            diagnostics += result.1
        }
        diagnostics = diagnostics.map { $0.withSuggestedFix(in: source) }
        guard let checked, !diagnostics.contains(where: { $0.severity == .error }) else {
            throw .invalid(source: source, diagnostics: diagnostics)
        }
        loaded = Loaded(
            program: Compiler.compile(checked), checked: checked, source: source, warnings: diagnostics)
    }

    /// A rule set from a program already checked without errors (an editor's, which
    /// checked it for its names), compiled here.
    package init(checked: CheckedProgram, source: SourceText, warnings: [Diagnostic]) {
        loaded = Loaded(program: Compiler.compile(checked), checked: checked, source: source, warnings: warnings)
    }

    // MARK: Evaluation (shells over the one evaluation path: Evaluation.swift)

    /// Resolves one declaration. An unknown name gives `fallback` (or `false` when none is
    /// given) with reason `ERROR` and `FLAG_NOT_FOUND`; with a `fallback`, a declaration whose
    /// value is of another type gives `fallback` with `TYPE_MISMATCH` (an int where a double
    /// is expected is converted).
    public func evaluate(_ name: String, in context: EvaluationContext = [:], default fallback: Value? = nil) -> Resolution {
        resolve(name, index(of: name), context, expecting: nil, default: fallback, nil)
    }

    /// ``evaluate(_:in:default:)`` of the declaration at `index` in ``declarations``, called
    /// `name`, found without a lookup.
    package func evaluate(declaration index: Int, named name: String, in context: EvaluationContext) -> Resolution {
        resolve(name, declarations.indices.contains(index) ? index : nil, context, expecting: nil, default: nil, nil)
    }

    /// Resolves a declaration, checking that it is of the expected kind; on any error the
    /// resolution carries `fallback`.
    public func evaluate(
        _ name: String, in context: EvaluationContext, expecting kind: DeclarationKind, default fallback: Value
    ) -> Resolution {
        resolve(name, index(of: name), context, expecting: kind, default: fallback, nil)
    }

    /// Whether a flag is on; `fallback` when the flag is unknown or is not a flag.
    public func isEnabled(_ name: String, in context: EvaluationContext = [:], default fallback: Bool = false) -> Bool {
        isOn(name, index(of: name), context, default: fallback, nil)
    }

    /// Resolves every flag, variant and value (not segments), keyed by name.
    public func evaluateAll(in context: EvaluationContext = [:]) -> [String: Resolution] {
        resolveAll(context, nil)
    }

    /// A `fallback` rule's resolution: the caller's default when one is given (else the
    /// declaration's, as resolved), and no variant; a default of another type than the
    /// declaration's is a mismatch, as without a fallback.
    @inline(never)
    static func fellBack(_ r: Resolution, _ name: String, default fallback: Value?) -> Resolution {
        var given = r
        given.variant = nil
        guard let fallback else { return given }
        given = typed(given, name, fallback)
        if given.reason != .error { given.value = fallback }
        return given
    }

    /// `r` typed by `fallback` when one is given (`typed(_:_:_:)`), else `r` as it is.
    @inline(__always)
    static func typed(_ r: consuming Resolution, _ name: String, _ fallback: Value?) -> Resolution {
        guard let fallback else { return r }
        return typed(r, name, fallback)
    }

    /// The metadata of the declaration called `name`, if there is one.
    package func declaration(named name: String) -> DeclarationInfo? {
        index(of: name).map { declarations[$0] }
    }

    /// The top-level attributes its declarations read (`org` for `org.plan`), each once, in
    /// declaration order: the names a context for these rules is likely to hold.
    package var attributesRead: [String] {
        var seen = Set<String>()
        return declarations.flatMap(\.reads).map(\.attribute.name).filter { seen.insert($0).inserted }
    }

    /// The first of a declaration's `reads` (``DeclarationInfo/reads``, in the order it reads
    /// them) whose value in `context` is of another type than its schema's (`now` not a
    /// datetime): what OFREP answers `INVALID_CONTEXT` for. Attributes the declaration does
    /// not read are not its concern; an absent one is absent, not mistyped.
    package func mistypedRead(_ reads: [DeclarationInfo.AttributeRead], in context: EvaluationContext) -> ContextProblem? {
        // Read in place: a copy of each read would retain its strings and fields.
        reads.withUnsafeBufferPointer { reads in
            guard let first = reads.baseAddress else { return nil }
            for i in reads.indices {
                if let expected = mistyped(first + i, in: context) {
                    return ContextProblem(attribute: reads[i].name, kind: .mistyped(expected: expected))
                }
            }
            return nil
        }
    }

    /// What `read`'s value in `context` should have been, when it is of another type.
    private func mistyped(_ read: UnsafePointer<DeclarationInfo.AttributeRead>, in context: EvaluationContext) -> String? {
        guard let top = context[read.pointee.attribute] else { return nil }
        guard let value = read.pointee.fields.isEmpty ? top : top.value(at: read.pointee.fields) else { return nil }
        switch read.pointee.check {
        case .now:
            let fits: Bool
            if case .string(let s) = value { fits = DateTime.parse(s) != nil } else { fits = value.isDatetime }
            return fits ? nil : "an ISO 8601 datetime"
        case .coercion(let slot):
            return program.coercions[slot].fits(value) ? nil : ContextSchema.describe(read.pointee.type)
        case .none:
            return nil
        }
    }

    /// `r` when its value has `fallback`'s type (an int converted to a double), else
    /// `fallback` with reason `ERROR` and `TYPE_MISMATCH`. The common case, a value of the
    /// default's type, is returned as it is, without copying either value.
    @inline(__always)
    static func typed(_ r: consuming Resolution, _ name: String, _ fallback: Value) -> Resolution {
        if r.value.isSameCase(as: fallback) { return r }
        return converted(r, name, fallback)
    }

    @inline(never)
    private static func converted(_ r: Resolution, _ name: String, _ fallback: Value) -> Resolution {
        if case .int(let i) = r.value, case .double = fallback {
            var copy = r
            copy.value = .double(Double(i))
            return copy
        }
        return .error(.typeMismatch, "'\(name)' is \(r.value.typeName), not \(fallback.typeName)", default: fallback)
    }
}

/// What a declaration is, for listings, debug screens, audits and generated code.
public struct DeclarationInfo: Sendable, Hashable {
    /// Its name.
    public let name: String
    /// flag, variant, value or segment.
    public let kind: DeclarationKind
    /// Its result type (`bool`, `int`, `variant of 'checkout'`, …).
    public let type: String
    /// The default value (segments: `false`).
    public let defaultValue: Value
    /// For variants, the variant names in order.
    public let variants: [String]
    /// The `///` doc comment.
    public let doc: String?
    /// `@owner("…")`.
    public let owner: String?
    /// `@expires("YYYY-MM-DD")`, as midnight UTC.
    public let expires: Date?
    /// `@disabled`.
    public let isDisabled: Bool
    /// The number of rules.
    public let ruleCount: Int
    /// The line where the declaration starts.
    public let line: Int
    /// The line where it ends.
    package let endLine: Int
    /// What its rules serve by share, to be seen without evaluating: each split's shares,
    /// each `rollout(…) < N%` and each ramp's course, in rule order.
    package let shares: [Share]
    /// The context attributes its rules read, directly or through the segments and
    /// declarations they read, in the order first read, with their schema types (`dynamic`
    /// without a schema); `now` when a rule reads the time (`now`, `ramp(…)`).
    package let reads: [AttributeRead]
    /// The attributes its resolution buckets by (`rollout(…)` and `split(…)` units),
    /// through the segments and declarations it reads, sorted.
    package let bucketingUnits: [String]

    /// A context attribute a declaration reads, and its type.
    package struct AttributeRead: Sendable, Hashable {
        /// The attribute's name.
        package let name: String
        /// Its type in the schema (`[string]`, `ip`, …).
        package let type: FlagType
        /// The top-level attribute read, its hash made once.
        let attribute: Frame.Key
        /// The fields below it, for a path (`org.billing.country`).
        let fields: [String]
        /// How a value read is checked against the schema.
        let check: Check

        /// How a value read is checked: `now` as a datetime, another attribute by its
        /// schema entry's coercion, or not at all (no schema entry).
        enum Check: Sendable {
            case now
            case coercion(slot: Int)
            case none
        }

        init(name: String, type: FlagType, slot: Int? = nil) {
            self.name = name
            self.type = type
            let parts = name.split(separator: ".", omittingEmptySubsequences: false)
            attribute = Frame.Key(String(parts[0]))
            fields = parts.dropFirst().map(String.init)
            check = name == "now" ? .now : slot.map { .coercion(slot: $0) } ?? .none
        }

        package static func == (a: AttributeRead, b: AttributeRead) -> Bool { a.name == b.name && a.type == b.type }

        package func hash(into hasher: inout Hasher) {
            hasher.combine(name)
            hasher.combine(type)
        }
    }

    /// A share of a declaration's contexts that one rule serves.
    package enum Share: Sendable, Hashable {
        /// `split(…) { … }`: each outcome (nil: `fallback`, the caller's default) and its
        /// share in percent.
        case split(rule: Int, outcomes: [Value?], percents: [Double])
        /// `rollout(…) < N%`.
        case rollout(rule: Int, percent: Double)
        /// `ramp(from, to, start, end)`: the share grows (or shrinks) from `start` percent at
        /// `from` to `end` percent at `to`.
        case ramp(rule: Int, from: Date, to: Date, start: Double, end: Double)
    }

    init(_ d: CheckedDeclaration, reads: [AttributeRead], bucketingUnits: [String]) {
        self.reads = reads
        self.bucketingUnits = bucketingUnits
        endLine = d.range.end.line
        var shares: [Share] = []
        for rule in d.rules {
            if case .split(let s) = rule.outcome {
                let total = Double(s.weights.reduce(0, +))
                shares.append(
                    .split(
                        rule: rule.index, outcomes: s.outcomes.indices.map { s.isFallback($0) ? nil : s.outcomes[$0] },
                        percents: s.weights.map { total > 0 ? Double($0) / total * 100 : 0 }))
            }
            rule.condition?.forEach { b in
                switch b.kind {
                case .compare(.less, let l, let r):
                    if case .rollout = l.kind, case .percent(let p) = r.kind {
                        shares.append(.rollout(rule: rule.index, percent: Double(p) / 1_000))
                    }
                case .ramp(let from, let to, let start, let end):
                    shares.append(.ramp(rule: rule.index, from: from, to: to, start: start, end: end))
                default: break
                }
            }
        }
        self.shares = shares
        name = d.name
        kind = d.kind
        type = d.type.description
        defaultValue = d.defaultValue
        variants = d.variants
        doc = d.doc
        owner = d.owner
        expires = d.expires
        isDisabled = d.disabled
        ruleCount = d.rules.count
        line = d.range.start.line
    }
}

extension DeclarationInfo {
    /// The declaration's metadata as JSON (for `flags list --json` and debug screens).
    package var json: JSON {
        var members: [(String, JSON)] = [
            ("name", .string(name)), ("kind", .string(kind.rawValue)), ("type", .string(type)),
            ("default", defaultValue.json),
        ]
        if kind == .variant { members.append(("variants", .array(variants.map { .string($0) }))) }
        if let owner { members.append(("owner", .string(owner))) }
        if let expires { members.append(("expires", .string(String(DateTime.format(expires).prefix(10))))) }
        if let doc { members.append(("doc", .string(doc))) }
        members.append(("disabled", .bool(isDisabled)))
        members.append(("rules", .int(ruleCount)))
        members.append(("line", .int(line)))
        members.append(("endLine", .int(endLine)))
        var splits: [JSON] = []
        var rollouts: [JSON] = []
        var ramps: [JSON] = []
        for share in shares {
            switch share {
            case .split(let rule, let outcomes, let percents):
                let each = zip(outcomes, percents).map {
                    JSON.object([$0.map { ("outcome", $0.json) } ?? ("fallback", .bool(true)), ("percent", .double($1))])
                }
                splits.append(.object([("rule", .int(rule)), ("shares", .array(each))]))
            case .rollout(let rule, let percent):
                rollouts.append(.object([("rule", .int(rule)), ("percent", .double(percent))]))
            case .ramp(let rule, let from, let to, let start, let end):
                ramps.append(
                    .object([
                        ("rule", .int(rule)), ("from", .string(DateTime.format(from))), ("to", .string(DateTime.format(to))),
                        ("start", .double(start)), ("end", .double(end)),
                    ]))
            }
        }
        if !splits.isEmpty { members.append(("splits", .array(splits))) }
        if !rollouts.isEmpty { members.append(("rollouts", .array(rollouts))) }
        if !ramps.isEmpty { members.append(("ramps", .array(ramps))) }
        if !reads.isEmpty {
            members.append(("reads", .object(reads.map { ($0.name, .string($0.type.description)) })))
        }
        return .object(members)
    }
}

/// The context attributes each declaration reads, through the segments and declarations
/// it reads too (each worked out once).
struct AttributeReads {
    let checked: CheckedProgram

    init(_ checked: CheckedProgram) { self.checked = checked }

    /// What declaration `index` reads, in the order first read, and the attributes it
    /// buckets by, sorted.
    func of(_ index: Int) -> (reads: [DeclarationInfo.AttributeRead], units: [String]) {
        var found = Found()
        collect(index, &found)
        return (found.reads, found.units.sorted())
    }

    private struct Found {
        var seen = Set<String>()
        var reads: [DeclarationInfo.AttributeRead] = []
        var units = Set<String>()
        var visited = Set<Int>()
    }

    private func collect(_ index: Int, _ found: inout Found) {
        guard found.visited.insert(index).inserted else { return }
        let d = checked.declarations[index]
        func add(_ name: String, _ type: FlagType) {
            if found.seen.insert(name).inserted {
                found.reads.append(.init(name: name, type: type, slot: checked.schema?[name]?.slot))
            }
        }
        func unit(_ b: Bound) {
            if case .attribute(let name, _, _) = b.kind { found.units.insert(name) }
        }
        func walk(_ b: Bound) {
            if case .rollout(let x, _) = b.kind { unit(x) }
            switch b.kind {
            case .constant, .percent, .element: break
            case .quantified(let x, let test, _):
                walk(x)
                walk(test)
            case .attribute(let name, _, let type): add(name, type)
            case .has(let name, _): add(name, checked.schema?[name]?.type ?? .dynamic)
            case .now, .ramp: add("now", .datetime)
            case .declaration(let i): collect(i, &found)
            case .not(let x), .matches(let x, _), .member(let x, _, _), .rollout(let x, _), .vendorRollout(let x, _, _),
                .containsSet(let x, _, _), .count(let x),
                .lower(let x), .convert(let x, _), .network(let x, _, _):
                walk(x)
            case .and(let xs), .or(let xs), .coalesce(let xs): xs.forEach(walk)
            case .compare(_, let x, let y), .text(_, let x, let y):
                walk(x)
                walk(y)
            }
        }
        if let c = d.condition { walk(c) }
        for rule in d.rules {
            if let c = rule.condition { walk(c) }
            if case .split(let s) = rule.outcome {
                unit(s.unit)
                walk(s.unit)
            }
        }
    }
}
