import FlagRules
import Foundation

/// flagd's flag definition (`{"flags": {…}, "$evaluators": {…}, "metadata": {…}}`) as a
/// `.flags` file.
///
/// A flag's targeting is JsonLogic that gives a variant's name: `if` chains become rules in
/// order, a branch that gives `null` (or no `else`) the default variant, `fractional` a
/// split bucketed as flagd-core 2.0 buckets (`flagd` scheme: MurmurHash3 of the canonical
/// CBOR of `[flagKey, targetingKey]`). Conditions keep JsonLogic's meaning for a missing
/// attribute: `==` is false and `!=` true, and a number compares as `0` (JavaScript's
/// `null < 5`).
struct FlagdImport {
    var notes: [ImportNote] = []
    var names = ImportNames()
    var evaluators: [String: JSON] = [:]
    /// Evaluators read as conditions, each a segment written once (their names, and
    /// those being written, for cycles).
    var segmentNames: [String: String] = [:]
    var segments: [(name: String, doc: [String], condition: ImportedCondition)] = []
    var writing: Set<String> = []
    /// Each evaluator's place in the file, and the evaluator whose body is being read:
    /// flagd-core fills in each `$ref` of the file's text in the order the evaluators are
    /// listed, so a `$ref` inside an evaluator to one listed no later is left unfilled.
    var evaluatorOrder: [String: Int] = [:]
    var insideEvaluator: String?
    /// What one flag's translation may still visit: `$ref`s in a targeting's results are
    /// written out where they stand, and a file may nest them to any size.
    var budget = 0

    /// A flag's variants as rules give them.
    struct Shape {
        var kind: ImportedDeclaration.Kind
        var results: [String: String]
        var order: [String]
    }

    /// Why a targeting could not be translated (already noted).
    struct Untranslatable: Error {}

    init() {}

    mutating func run(_ root: JSON) throws(ImportError) -> ImportedFile {
        guard case .object = root else { throw ImportError("a flagd file is a JSON object with \"flags\"; this is \(root.kindName)") }
        guard let flags = root["flags"] else { throw ImportError("a flagd file has \"flags\" (flagd's flag definition)") }
        guard case .object(let members) = flags else { throw ImportError("\"flags\" is \(flags.kindName), not an object") }
        let entries = lastOfEach(members, at: "flags", notes: &notes)
        if let shared = root["$evaluators"] {
            guard case .object(let members) = shared else { throw ImportError("\"$evaluators\" is \(shared.kindName), not an object") }
            for (i, entry) in lastOfEach(members, at: "$evaluators", notes: &notes).enumerated() {
                evaluators[entry.key] = entry.json
                evaluatorOrder[entry.key] = i
            }
        }
        var file = ImportedFile()
        file.header = ["Imported from flagd by 'flags import --from flagd' (fractional as flagd-core 2.0 buckets)."]
        var read: Set<String> = ["targetingKey"]
        for (_, flag) in entries { Self.variables(in: flag["targeting"] ?? .null, into: &read) }
        for (_, evaluator) in evaluators { Self.variables(in: evaluator, into: &read) }
        names.reserve(read)
        names.claim(entries.map(\.key))
        for (key, flag) in entries {
            let name = names.name(for: key)
            if let note = names.renameNote(for: key, at: "flags.\(key)") { notes.append(note) }
            budget = 100_000
            if let declaration = declaration(flag, key: key, name: name) { file.declarations.append(declaration) }
        }
        file.segments = segments
        return file
    }

    /// The attribute names `{"var": …}` reads anywhere under `json` (first names of paths).
    static func variables(in json: JSON, into names: inout Set<String>) {
        switch json {
        case .object(let members):
            for (key, value) in members {
                if key == "var", let path = (value.string ?? value.elements?.first?.string) {
                    names.insert(String(path.split(separator: ".").first ?? ""))
                }
                variables(in: value, into: &names)
            }
        case .array(let elements):
            for element in elements { variables(in: element, into: &names) }
        default:
            break
        }
    }

    // MARK: Flags

    private mutating func shape(_ flag: JSON, key: String, splits: Bool) -> Shape? {
        let place = "flags.\(key).variants"
        guard case .object(let members) = flag["variants"] ?? .null, !members.isEmpty else {
            notes.append(ImportNote(.notImported, at: place, "a flag needs variants; flag '\(key)' left out"))
            return nil
        }
        let variants = lastOfEach(members, at: place, notes: &notes).map { ($0.key, $0.json) }
        let order = variants.map(\.0)
        let values = variants.map(\.1)
        let bools = values.compactMap { if case .bool(let b) = $0 { b } else { nil } }
        if bools.count == values.count, !splits {
            return Shape(
                kind: .flag,
                results: Dictionary(uniqueKeysWithValues: variants.map { ($0.0, $0.1 == .bool(true) ? "enabled" : "disabled") }),
                order: order)
        }
        let strings = values.compactMap(\.string)
        if strings.count == values.count, zip(order, strings).allSatisfy({ $0 == $1 && ImportNames.isName($0) }) {
            return Shape(kind: .variant(order), results: Dictionary(uniqueKeysWithValues: order.map { ($0, $0) }), order: order)
        }
        guard let type = ImportedSource.valueType(of: values) else {
            notes.append(
                ImportNote(
                    .notImported, at: place,
                    "variants of JSON objects, arrays, nulls or mixed types have no .flags type; flag '\(key)' left out"))
            return nil
        }
        let results = variants.map { name, v in (name, ImportedSource.literal(v, as: type)) }
        return Shape(kind: .value(type), results: Dictionary(uniqueKeysWithValues: results), order: order)
    }

    private mutating func declaration(_ flag: JSON, key: String, name: String) -> ImportedDeclaration? {
        let place = "flags.\(key)"
        let targeting = flag["targeting"].flatMap { $0 == .object([]) || $0 == .null ? nil : $0 }
        let splits = targeting.map(Self.hasFractional) ?? false
        guard let shape = shape(flag, key: key, splits: splits) else { return nil }
        // (flagd-core reads a boolean default as the variant "true" or "false", and an empty
        // one as none.)
        let defaultName = flag["defaultVariant"].flatMap { json -> String? in
            if case .bool(let b) = json { return b ? "true" : "false" }
            return json.string.flatMap { $0.isEmpty ? nil : $0 }
        }
        // No default variant: flagd gives the caller's default (its code default) where the
        // default would be, a `fallback` rule here; the declaration's default is then never
        // given, and is its first variant.
        let defaultResult: String
        let declared: String
        if let defaultName, let result = shape.results[defaultName] {
            (defaultResult, declared) = (result, result)
        } else if defaultName == nil, let first = shape.order.first, let result = shape.results[first] {
            (defaultResult, declared) = (ImportedDeclaration.Rule.fallback, result)
            notes.append(
                ImportNote(
                    .remark, at: place + ".defaultVariant",
                    "no default variant: where flagd would give it, the caller's default (a fallback rule)"))
        } else {
            notes.append(
                ImportNote(
                    .notImported, at: place + ".defaultVariant",
                    "the default variant is no variant of the flag (flagd answers an error); flag '\(key)' left out"))
            return nil
        }
        var out = ImportedDeclaration(name: name, kind: shape.kind, defaultText: Self.defaultText(declared, shape.kind))
        out.place = place
        if let text = flag["metadata"]?["description"]?.string, !text.isEmpty {
            out.doc = text.split(whereSeparator: \.isNewline).map(String.init)
        }
        if flag["state"]?.string == "DISABLED" {
            // Every evaluation gives the caller's default, as a flag the file does not
            // declare does (flagd's flags read no other flag).
            notes.append(
                ImportNote(
                    .remark, at: place + ".state",
                    "a disabled flag gives the caller's default in flagd, as a flag the file does not declare does in FlagRules; written as a comment"
                ))
            out.comments.append("DISABLED in flagd: every evaluation gives the caller's default.")
            out.commentedOut = true
        }
        guard let targeting else {
            if defaultResult == ImportedDeclaration.Rule.fallback { out.rules = [.fallback(when: .always)] }
            return out
        }
        guard case .object = targeting else {
            notes.append(
                ImportNote(
                    .notImported, at: place + ".targeting", "a targeting is a JSON object (flagd answers an error); flag '\(key)' left out")
            )
            return nil
        }
        let noted = notes.count
        do {
            var rules: [ImportedDeclaration.Rule] = []
            try translate(
                targeting, when: .always, key: key, shape: shape, defaultResult: defaultResult, at: place + ".targeting", depth: 0,
                into: &rules)
            // (What the rules leave is the default: with none, the caller's.)
            if defaultResult == ImportedDeclaration.Rule.fallback, rules.last.map({ $0.condition != .always }) ?? true {
                rules.append(.fallback(when: .always))
            }
            out.rules = rules
        } catch {
            // (A note inside an evaluator names the evaluator: this one names the flag.)
            if !notes[noted...].contains(where: { $0.place.hasPrefix(place) }) {
                notes.append(
                    ImportNote(.notImported, at: place + ".targeting", "an evaluator it reads is not imported; flag '\(key)' left out"))
            }
            return nil
        }
        return out
    }

    static func defaultText(_ result: String, _ kind: ImportedDeclaration.Kind) -> String {
        if case .flag = kind { return result == "enabled" ? "true" : "false" }
        return result
    }

    static func hasFractional(_ json: JSON) -> Bool {
        switch json {
        case .object(let members): return members.contains { $0.0 == "fractional" || hasFractional($0.1) }
        case .array(let elements): return elements.contains(where: hasFractional)
        default: return false
        }
    }

    // MARK: Targeting

    /// Rules for `node` under `condition`, complete: whatever `node` gives under it is
    /// decided by these rules (a `null` is the default variant, written as a rule).
    private mutating func translate(
        _ node: JSON, when condition: ImportedCondition, key: String, shape: Shape, defaultResult: String, at: String, depth: Int,
        into rules: inout [ImportedDeclaration.Rule]
    ) throws(Untranslatable) {
        // (What a condition that never holds leads to is never given, as in flagd.)
        if condition == .never { return }
        budget -= 1
        guard depth < 32, budget > 0 else {
            notes.append(
                ImportNote(.notImported, at: at, "targeting nested over 32 levels, or too large written out; flag '\(key)' left out"))
            throw Untranslatable()
        }
        switch node {
        case .null:
            rules.append(.init(defaultResult, when: condition))
        case .string(let variant):
            guard let result = shape.results[variant] else {
                notes.append(
                    ImportNote(
                        .notImported, at: at, "'\(variant)' is no variant of the flag (flagd answers an error); flag '\(key)' left out"))
                throw Untranslatable()
            }
            rules.append(.init(result, when: condition))
        case .bool(let b):
            try translate(
                .string(b ? "true" : "false"), when: condition, key: key, shape: shape, defaultResult: defaultResult, at: at,
                depth: depth + 1, into: &rules)
        case .object(let members) where members.count == 1:
            let (op, argument) = members[0]
            switch op {
            case "$ref":
                guard let name = argument.string, let shared = evaluators[name] else {
                    notes.append(ImportNote(.notImported, at: at, "$ref names no evaluator of the file; flag '\(key)' left out"))
                    throw Untranslatable()
                }
                guard filled(name) else {
                    notes.append(ImportNote(.notImported, at: at, Self.unfilled(name, insideEvaluator) + "; flag '\(key)' left out"))
                    throw Untranslatable()
                }
                let outer = insideEvaluator
                insideEvaluator = name
                defer { insideEvaluator = outer }
                try translate(
                    shared, when: condition, key: key, shape: shape, defaultResult: defaultResult, at: "$evaluators.\(name)",
                    depth: depth + 1, into: &rules)
            case "if", "?:":
                let parts = argument.elements ?? []
                // `fractional` as the condition of an if between two variants: its entries'
                // truthiness chooses, so the fractional of those two variants, whose null (no
                // unit, no weight) is the else.
                if parts.count == 3, let yes = parts[1].string, let no = parts[2].string, let otherwise = shape.results[no],
                    let chooser = Self.fractionalChoosing(parts[0], yes: yes, no: no)
                {
                    try translate(
                        chooser, when: condition, key: key, shape: shape, defaultResult: otherwise, at: "\(at).\(op)[0]",
                        depth: depth + 1, into: &rules)
                    return
                }
                var i = 0
                while i + 1 < parts.count {
                    let test = try self.condition(parts[i], negated: false, at: "\(at).\(op)[\(i)]", depth: depth + 1)
                    try translate(
                        parts[i + 1], when: .and([condition, test]), key: key, shape: shape, defaultResult: defaultResult,
                        at: "\(at).\(op)[\(i + 1)]",
                        depth: depth + 1, into: &rules)
                    i += 2
                }
                try translate(
                    i < parts.count ? parts[i] : .null, when: condition, key: key, shape: shape, defaultResult: defaultResult,
                    at: "\(at).\(op)[\(i)]",
                    depth: depth + 1, into: &rules)
            case "fractional":
                // An entry's variant or weight chosen by an `if`: the same fractional under each
                // branch's condition, with that branch's value (JsonLogic evaluates the entry
                // before `fractional` reads it).
                if let branched = Self.branchingEntry(argument) {
                    try translate(
                        branched, when: condition, key: key, shape: shape, defaultResult: defaultResult, at: at, depth: depth + 1,
                        into: &rules)
                    return
                }
                if let (entry, path) = Self.variableEntry(argument) {
                    // An entry's variant read from an attribute: the fractional for each
                    // variant it may name; for a missing one (null) with the default
                    // variant there; for any other value (no variant of that name, an
                    // error in flagd) with the caller's default there.
                    for name in shape.order {
                        guard let test = Self.names(path, name) else { continue }
                        if let split = try fractional(
                            argument, key: key, shape: shape, at: at + ".fractional", substitute: (entry, shape.results[name]!))
                        {
                            rules.append(.init(split, when: .and([condition, test])))
                        }
                    }
                    if let split = try fractional(
                        argument, key: key, shape: shape, at: at + ".fractional", substitute: (entry, defaultResult))
                    {
                        rules.append(.init(split, when: .and([condition, .not(.atom("has(\(path))"))])))
                    }
                    if let split = try fractional(
                        argument, key: key, shape: shape, at: at + ".fractional", substitute: (entry, ImportedDeclaration.Rule.fallback))
                    {
                        rules.append(.init(split, when: condition))
                    }
                } else if let split = try fractional(argument, key: key, shape: shape, at: at + ".fractional") {
                    rules.append(.init(split, when: condition))
                }
                // flagd gives the default variant when the unit is missing.
                rules.append(.init(defaultResult, when: condition))
            case "sem_ver", "starts_with", "ends_with":
                // Its true or false names the variant of that name; its null (an operand it
                // cannot read, or arguments of another form) the default variant.
                let test: ImportedCondition?
                do {
                    test = try Self.readableTest(op, argument.elements ?? [argument])
                } catch {
                    notes.append(
                        ImportNote(
                            .notImported, at: at, "'\(op)' of an attribute and a literal is what is imported; flag '\(key)' left out"))
                    throw error
                }
                if let test {
                    guard let yes = shape.results["true"], let no = shape.results["false"] else {
                        notes.append(
                            ImportNote(
                                .notImported, at: at,
                                "'\(op)' names the variant 'true' or 'false', which the flag lacks (flagd answers an error where the test is true or false); flag '\(key)' left out"
                            ))
                        throw Untranslatable()
                    }
                    rules.append(.init(yes, when: .and([condition, test])))
                    rules.append(.init(no, when: .and([condition, .negated(test)])))
                }
                rules.append(.init(defaultResult, when: condition))
            default:
                notes.append(
                    ImportNote(
                        .notImported, at: at, "a targeting that gives a variant by '\(op)' has no .flags form; flag '\(key)' left out"))
                throw Untranslatable()
            }
        default:
            notes.append(
                ImportNote(
                    .notImported, at: at,
                    "a targeting gives a variant's name, an if or a fractional, not \(node.kindName); flag '\(key)' left out"))
            throw Untranslatable()
        }
    }

    /// `sem_ver`, `starts_with` or `ends_with` as a test that is unknown where flagd's answer is
    /// null (a missing attribute, one of another type, a text that is no version), or nil when
    /// its arguments make it null for every context.
    static func readableTest(_ op: String, _ args: [JSON]) throws(Untranslatable) -> ImportedCondition? {
        if op == "sem_ver" {
            guard args.count == 3 else { return nil }
            guard let path = variable(args[0]) else { throw Untranslatable() }
            // An operator or a version computed by an expression is compared in flagd.
            for arg in args[1...] {
                switch arg {
                case .object, .array: throw Untranslatable()
                default: continue
                }
            }
            // A version given as a number is its text, as version() reads a context's number.
            let written: Value?
            switch args[2] {
            case .string(let text): written = .string(text)
            case .int(let n): written = .int(n)
            case .double(let d): written = .double(d)
            default: written = nil
            }
            guard let symbol = args[1].string, let written, let parsed = ListOperations.version(written), case .version(let v) = parsed
            else { return nil }
            let subject = "version(\(path))"
            if let mapped = ["=": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="][symbol] {
                return .atom("\(subject) \(mapped) \(v)")
            }
            // `^` and `~`: the same major (and minor), whatever the rest.
            let range: (String, String?)
            switch symbol {
            case "^": range = ("\(v.major).0.0-0", v.major == Int.max ? nil : "\(v.major + 1).0.0-0")
            case "~": range = ("\(v.major).\(v.minor).0-0", v.minor == Int.max ? nil : "\(v.major).\(v.minor + 1).0-0")
            default: return nil
            }
            return .and([.atom("\(subject) >= \(range.0)"), range.1.map { .atom("\(subject) < \($0)") } ?? .always])
        }
        guard args.count == 2 else { return nil }
        guard let path = variable(args[0]) else { throw Untranslatable() }
        guard let text = args[1].string else {
            if ImportedSource.literal(args[1]) != nil || args[1] == .null { return nil }
            throw Untranslatable()
        }
        return .atom("\(path) \(op == "starts_with" ? "starts with" : "ends with") \(StringEscaping.quoted(text))")
    }

    /// `fractional`: a split by flagd's bucketing, of the shorthand's targeting key or of
    /// an attribute; nil where flagd's answer is null for every context (no weight, or weights
    /// past 2^31).
    /// `substitute`: the result of the entry at that index of `argument` in place of its
    /// variant (`ImportedDeclaration.Rule.fallback` for the caller's default).
    private mutating func fractional(
        _ argument: JSON, key: String, shape: Shape, at: String, substitute: (index: Int, result: String)? = nil
    ) throws(Untranslatable) -> String? {
        var entries = argument.elements ?? []
        var offset = 0
        var unit = "targetingKey"
        var salt = key
        var scheme = "flagd"
        if let first = entries.first, first.elements == nil {
            // A null bucketing value: flagd-core answers null for every context.
            if first == .null { return nil }
            if let path = Self.variable(first) {
                unit = path
                salt = ""
            } else if let (path, prefix) = Self.catBucketing(first, key: key) {
                (unit, salt, scheme) = (path, prefix, "flagdCat")
            } else {
                notes.append(
                    ImportNote(
                        .notImported, at: at + "[0]",
                        "a fractional bucketing by an expression other than an attribute, or a cat of texts then one attribute, has no .flags form; flag '\(key)' left out"
                    ))
                throw Untranslatable()
            }
            entries.removeFirst()
            offset = 1
        }
        var weights: [(String, Int)] = []
        for (i, entry) in entries.enumerated() {
            guard var parts = entry.elements, (1...2).contains(parts.count) else {
                notes.append(ImportNote(.notImported, at: "\(at)[\(i)]", "a fractional entry is [variant, weight]; flag '\(key)' left out"))
                throw Untranslatable()
            }
            let substituted = substitute.flatMap { $0.index == i + offset ? $0.result : nil }
            if substituted != nil { parts[0] = .string("") }
            let variant: String
            switch parts[0] {
            case .string(let s): variant = s
            case .bool(let b): variant = b ? "true" : "false"
            case .int(let n): variant = String(n)
            default:
                notes.append(ImportNote(.notImported, at: "\(at)[\(i)]", "a fractional entry's variant is a name; flag '\(key)' left out"))
                throw Untranslatable()
            }
            var weight = 1
            if parts.count == 2 {
                guard case .int(let w) = parts[1] else {
                    notes.append(
                        ImportNote(.notImported, at: "\(at)[\(i)]", "a fractional weight is a whole number; flag '\(key)' left out"))
                    throw Untranslatable()
                }
                weight = max(0, w)
            }
            guard let result = substituted ?? shape.results[variant] else {
                notes.append(ImportNote(.notImported, at: "\(at)[\(i)]", "'\(variant)' is no variant of the flag; flag '\(key)' left out"))
                throw Untranslatable()
            }
            weights.append((result, weight))
        }
        // Adjacent entries of one value are one range of buckets.
        var kept: [(String, Int)] = []
        for entry in weights where entry.1 > 0 {
            // (Each past flagd's limit counts as just past it: the sum cannot overflow.)
            let cap = Int(Int32.max) + 1
            if let last = kept.last, last.0 == entry.0 {
                kept[kept.count - 1].1 = min(last.1, cap) + min(entry.1, cap)
            } else {
                kept.append(entry)
            }
        }
        // (Summed without overflow: any total past flagd's limit is refused.)
        let total = kept.reduce(0) { min($0 + min($1.1, Int(Int32.max) + 1), Int(Int32.max) + 1) }
        // No weight, or weights past 2^31: flagd's answer is null, the default variant.
        guard !kept.isEmpty, total <= Int(Int32.max) else { return nil }
        guard Set(kept.map(\.0)).count == kept.count else {
            notes.append(
                ImportNote(.notImported, at: at, "a fractional with one value in two entries has no split form; flag '\(key)' left out"))
            throw Untranslatable()
        }
        // (A variant named `fallback` in backticks; the caller's default is the bare word.)
        func written(_ result: String) -> String {
            result == ImportedDeclaration.Rule.fallback ? "fallback" : result == "fallback" ? "`fallback`" : result
        }
        let body = kept.map { "\(written($0.0)): \($0.1)" }.joined(separator: ", ")
        return "split(\(unit), \(StringEscaping.quoted(salt)), \(scheme)) { \(body) }"
    }

    /// Two strings in the order JsonLogic's Python implementation compares them (by code
    /// point): -1, 0 or 1.
    static func compareScalars(_ a: String, _ b: String) -> Int {
        let x = a.unicodeScalars.map(\.value), y = b.unicodeScalars.map(\.value)
        return x.lexicographicallyPrecedes(y) ? -1 : x == y ? 0 : 1
    }

    /// `{"var": "a.b"}` (or `["a.b"]`) as a path; nil for anything else (`$flagd` values,
    /// and a `var` with a default, which is never missing, included).
    static func variable(_ json: JSON) -> String? {
        guard case .object(let members) = json, members.count == 1, members[0].0 == "var",
            let text = members[0].1.string ?? members[0].1.elements.flatMap({ $0.count == 1 ? $0[0].string : nil }), !text.hasPrefix("$")
        else { return nil }
        return ImportedSource.path(text.split(separator: ".", omittingEmptySubsequences: false).map(String.init))
    }

    /// Whether flagd-core fills in a `$ref` to `name` where it stands.
    func filled(_ name: String) -> Bool {
        guard let inside = insideEvaluator else { return true }
        return (evaluatorOrder[name] ?? 0) > (evaluatorOrder[inside] ?? 0)
    }

    static func unfilled(_ name: String, _ inside: String?) -> String {
        "flagd-core leaves the $ref to '\(name)' inside evaluator '\(inside ?? "")' unfilled (it fills them in the order evaluators are listed) and answers an error"
    }
}
