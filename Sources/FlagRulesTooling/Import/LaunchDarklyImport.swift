import FlagRules
import Foundation

/// LaunchDarkly's flag and segment JSON, as its SDKs' file data source reads it
/// (`{"flags": {…}, "segments": {…}, "flagValues": {…}}`), as a `.flags` file.
///
/// Evaluation is LaunchDarkly's, step by step: a flag that is off gives its off variation
/// (`@disabled`, with the off variation as the default); a failed prerequisite gives the
/// off variation (a first rule); then individual targets, rules in order, and the
/// fallthrough (the default, or a last split). Rollouts bucket as LaunchDarkly does
/// (`launchdarkly` scheme, salt `flagKey.salt`, or an experiment's seed). Attributes of the
/// `user` context kind are top-level; another kind's are an object named by the kind
/// (`organization.key`).
struct LaunchDarklyImport {
    var notes: [ImportNote] = []
    var names = ImportNames()
    private var flags: [(key: String, json: JSON)] = []
    var segments: [String: JSON] = [:]
    /// Segments written (in the order they are, each after those it reads), those that
    /// could not be, and those being written.
    var writtenSegments: [(name: String, doc: [String], condition: ImportedCondition)] = []
    var failedSegments: Set<String> = []
    var writingSegments: Set<String> = []
    /// Each imported flag's kind and its variations' results.
    private var shapes: [String: Shape] = [:]
    var segmentNames: [String: String] = [:]
    private var flagValues: [(key: String, json: JSON)] = []
    /// Whether each flag is on, by key.
    private var onByKey: [String: Bool] = [:]
    /// The flags each imported flag reads as prerequisites.
    private var reads: [String: Set<String>] = [:]
    /// Flags whose prerequisites cannot be read.
    private var unreadable: Set<String> = []

    struct Shape {
        var kind: ImportedDeclaration.Kind
        /// The result each variation gives, as a rule writes it (`enabled`, a case, a literal).
        var results: [String]
        /// The condition that the flag gives variation `i` (for prerequisites).
        var gives: (Int) -> ImportedCondition
    }

    init() {}

    mutating func run(_ root: JSON) throws(ImportError) -> ImportedFile {
        guard case .object(let members) = root else {
            throw ImportError(
                "a LaunchDarkly file is a JSON object with \"flags\", \"segments\" or \"flagValues\"; this is \(root.kindName)")
        }
        var file = ImportedFile()
        file.header = ["Imported from LaunchDarkly by 'flags import --from launchdarkly'."]
        for (key, value) in members {
            switch key {
            case "flags":
                guard case .object(let entries) = value else { throw ImportError("\"flags\" is \(value.kindName), not an object") }
                flags = lastOfEach(entries, at: "flags", notes: &notes)
            case "segments":
                guard case .object(let entries) = value else { throw ImportError("\"segments\" is \(value.kindName), not an object") }
                for (k, v) in lastOfEach(entries, at: "segments", notes: &notes) { segments[k] = v }
            case "flagValues":
                guard case .object(let entries) = value else { throw ImportError("\"flagValues\" is \(value.kindName), not an object") }
                flagValues = lastOfEach(entries, at: "flagValues", notes: &notes)
            default:
                notes.append(ImportNote(.notImported, at: key, "LaunchDarkly's file data source reads only flags, segments and flagValues"))
            }
        }
        // A flag given in both "flags" and "flagValues" is the former's.
        for (k, v) in flagValues {
            guard !flags.contains(where: { $0.key == k }) else {
                notes.append(ImportNote(.notImported, at: "flagValues.\(k)", "'\(k)' is in \"flags\" too: that one is imported"))
                continue
            }
            flags.append(
                (
                    k,
                    .object([
                        ("key", .string(k)), ("on", .bool(true)), ("variations", .array([v])),
                        ("fallthrough", .object([("variation", .int(0))])),
                    ])
                ))
        }
        for flag in flags { onByKey[flag.key] = flag.json["on"] == .bool(true) }
        // Names first: prerequisites and segments may be read before they are declared. The
        // attributes the rules read (and the context kinds, objects here) keep their names.
        var read: Set<String> = ["key"]
        for json in flags.map(\.json) + Array(segments.values) {
            for rule in json["rules"]?.elements ?? [] {
                for clause in rule["clauses"]?.elements ?? [] {
                    if let a = clause["attribute"]?.string { read.insert(String(a.split(separator: "/").first ?? Substring(a))) }
                    if let k = clause["contextKind"]?.string { read.insert(k) }
                }
                for field in [rule["rollout"]?["bucketBy"], rule["bucketBy"], rule["rollout"]?["contextKind"], rule["rolloutContextKind"]] {
                    if let a = field?.string { read.insert(String(a.split(separator: "/").first ?? Substring(a))) }
                }
            }
            for field in [json["fallthrough"]?["rollout"]?["bucketBy"], json["fallthrough"]?["rollout"]?["contextKind"]] {
                if let a = field?.string { read.insert(String(a.split(separator: "/").first ?? Substring(a))) }
            }
            for target in (json["contextTargets"]?.elements ?? []) + (json["includedContexts"]?.elements ?? [])
                + (json["excludedContexts"]?.elements ?? [])
            {
                if let k = target["contextKind"]?.string { read.insert(k) }
            }
        }
        names.reserve(read)
        names.claim(flags.map(\.key))
        for (key, json) in flags {
            let name = names.name(for: key)
            if let note = names.renameNote(for: key, at: "flags.\(key)") { notes.append(note) }
            if let shape = shape(of: json, key: key, name: name) { shapes[key] = shape }
        }
        for key in segments.keys.sorted() { _ = segment(key) }
        file.segments = writtenSegments
        var declarations: [String: ImportedDeclaration] = [:]
        for (key, json) in flags {
            guard let shape = shapes[key] else { continue }
            if let declaration = declaration(json, key: key, shape: shape), !unreadable.contains(key) { declarations[key] = declaration }
        }
        prune(&declarations)
        file.declarations = flags.compactMap { declarations[$0.key] }
        return file
    }

    /// Leaves out each flag whose prerequisites cannot be read: one left out, one of a
    /// cycle (LaunchDarkly's SDKs answer an error and the caller's default), one more than
    /// 30 prerequisites deep (past what `.flags` chains).
    private mutating func prune(_ declarations: inout [String: ImportedDeclaration]) {
        var changed = true
        while changed {
            changed = false
            for key in declarations.keys.sorted() {
                if let missing = (reads[key] ?? []).sorted().first(where: { declarations[$0] == nil }) {
                    declarations[key] = nil
                    notes.append(
                        ImportNote(
                            .notImported, at: "flags.\(key).prerequisites",
                            "prerequisite '\(missing)' is not imported; flag '\(key)' left out"))
                    changed = true
                } else if let erring = (reads[key] ?? []).sorted().first(where: {
                    declarations[$0]?.rules.contains { $0.result == ImportedDeclaration.Rule.fallback && $0.condition != .never } == true
                }) {
                    // (LaunchDarkly passes a prerequisite's error on, where a rule reading a
                    // flag that falls back reads it as unknown.)
                    declarations[key] = nil
                    notes.append(
                        ImportNote(
                            .notImported, at: "flags.\(key).prerequisites",
                            "prerequisite '\(erring)' answers an error for some contexts (a fallback rule), which LaunchDarkly passes on; flag '\(key)' left out"
                        ))
                    changed = true
                }
            }
            // Depth of each flag's prerequisites (nil: on a cycle).
            var depth: [String: Int?] = [:]
            func measure(_ key: String, _ visiting: inout Set<String>) -> Int? {
                if let known = depth[key] { return known }
                guard !visiting.contains(key) else { return nil }
                visiting.insert(key)
                var deepest = 0
                for other in reads[key] ?? [] where declarations[other] != nil {
                    guard let d = measure(other, &visiting) else {
                        visiting.remove(key)
                        depth[key] = .some(nil)
                        return nil
                    }
                    deepest = max(deepest, d + 1)
                }
                visiting.remove(key)
                depth[key] = .some(deepest)
                return deepest
            }
            for key in declarations.keys.sorted() {
                var visiting: Set<String> = []
                let d = measure(key, &visiting)
                if d == nil || d! > 30 {
                    declarations[key] = nil
                    notes.append(
                        ImportNote(
                            .notImported, at: "flags.\(key).prerequisites",
                            d == nil
                                ? "its prerequisites go round in a cycle (LaunchDarkly answers an error); flag '\(key)' left out"
                                : "prerequisites more than 30 deep; flag '\(key)' left out"))
                    changed = true
                }
            }
        }
    }

    func description(_ json: JSON) -> [String] {
        guard let text = json["description"]?.string, !text.isEmpty else { return [] }
        return text.split(whereSeparator: \.isNewline).map { String($0) }
    }

    // MARK: Variations

    /// The flag's kind from its variations: a flag for `true` and `false`, a variant for
    /// distinct strings that are names, a value otherwise; nil (and a note) for JSON objects,
    /// arrays, nulls or mixed types.
    private mutating func shape(of json: JSON, key: String, name: String) -> Shape? {
        let place = "flags.\(key).variations"
        guard let variations = json["variations"]?.elements, !variations.isEmpty else {
            notes.append(ImportNote(.notImported, at: place, "a flag needs at least one variation"))
            return nil
        }
        let bools = variations.compactMap { if case .bool(let b) = $0 { b } else { nil } }
        if bools.count == variations.count, Set(bools).count == 2, bools.count == 2 {
            return Shape(
                kind: .flag, results: bools.map { $0 ? "enabled" : "disabled" },
                gives: { i in bools[i] ? .atom(name) : .not(.atom(name)) })
        }
        let strings = variations.compactMap(\.string)
        if strings.count == variations.count, Set(strings).count == strings.count, strings.allSatisfy(ImportNames.isName) {
            return Shape(kind: .variant(strings), results: strings, gives: { i in .atom("\(name) == \(strings[i])") })
        }
        guard let type = ImportedSource.valueType(of: variations) else {
            notes.append(
                ImportNote(
                    .notImported, at: place,
                    "variations of JSON objects, arrays, nulls or mixed types have no .flags type; flag '\(key)' left out"))
            return nil
        }
        let literals = variations.map { ImportedSource.literal($0, as: type) }
        return Shape(kind: .value(type), results: literals, gives: { i in .atom("\(name) == \(literals[i])") })
    }

    // MARK: Flags

    /// Whether another flag reads the flag `key` as a prerequisite.
    private func isPrerequisite(_ key: String) -> Bool {
        flags.contains { flag in (flag.json["prerequisites"]?.elements ?? []).contains { $0["key"]?.string == key } }
    }

    private mutating func declaration(_ json: JSON, key: String, shape: Shape) -> ImportedDeclaration? {
        let place = "flags.\(key)"
        let name = names.existing(key) ?? key
        let count = shape.results.count
        func variation(_ index: JSON?, _ where_: String) -> Int? {
            guard let i = index?.integer else { return nil }
            guard i >= 0, i < count else {
                notes.append(ImportNote(.notImported, at: where_, "variation \(i) does not exist (the flag has \(count))"))
                return nil
            }
            return i
        }
        let on = json["on"] == .bool(true)
        let noted = notes.count
        let off = variation(json["offVariation"], place + ".offVariation")
        let fallthroughJSON = json["fallthrough"] ?? .null
        // The default: what the fallthrough gives a context without its bucketing attribute
        // (bucket 0), or its variation.
        var fallthroughFirst: Int?
        if let v = variation(fallthroughJSON["variation"], place + ".fallthrough") {
            fallthroughFirst = v
        } else if let entries = fallthroughJSON["rollout"]?["variations"]?.elements {
            fallthroughFirst = entries.first { ($0["weight"]?.integer ?? 0) > 0 }.flatMap {
                variation($0["variation"], place + ".fallthrough.rollout")
            }
        }
        var out = ImportedDeclaration(name: name, kind: shape.kind, defaultText: "")
        out.place = place
        out.doc = description(json)
        func literalDefault(_ i: Int) -> String {
            switch shape.kind {
            case .flag: return shape.results[i] == "enabled" ? "true" : "false"
            default: return shape.results[i]
            }
        }
        if !on {
            guard let off else {
                if !isPrerequisite(key) {
                    // Every evaluation gives the caller's default, as a flag the file does
                    // not declare does: nothing of it applies (its variations' notes go too).
                    notes.removeSubrange(noted...)
                    notes.append(
                        ImportNote(
                            .remark, at: place + ".offVariation",
                            "flag '\(key)' is off with no off variation (or one that does not exist): LaunchDarkly's SDKs give the caller's default, as FlagRules does for a flag the file does not declare; written as a comment"
                        ))
                    out.comments.append("Off with no off variation in LaunchDarkly: every evaluation gives the caller's default.")
                    out.commentedOut = true
                    out.defaultText = literalDefault(0)
                    return out
                }
                notes.append(
                    ImportNote(
                        .notImported, at: place + ".offVariation",
                        "flag '\(key)' is off with no off variation: LaunchDarkly's SDKs give the caller's default; imported as off with its first variation"
                    ))
                out.attributes.append("@disabled")
                out.defaultText = literalDefault(0)
                return out
            }
            if case .flag = shape.kind, shape.results[off] == "enabled" {
                // Exact: LaunchDarkly never applies an off flag's rules.
                notes.append(
                    ImportNote(
                        .remark, at: place,
                        "flag '\(key)' is off and serves true: imported as true for everyone (an off flag's rules never apply, so they are not carried over)"
                    ))
                out.defaultText = "true"
                return out
            }
            // Off: the default is the off variation, and the rules (the fallthrough written
            // last) stand for when it is turned on.
            out.attributes.append("@disabled")
            out.defaultText = literalDefault(off)
            rules(json, key: key, shape: shape, into: &out, off: off, fallthroughAsRule: true)
            return out
        }
        guard let fallthroughFirst else {
            // (Neither a variation nor a rollout of variations: an error in LaunchDarkly.)
            let malformed =
                fallthroughJSON["variation"] == nil && (fallthroughJSON["rollout"]?["variations"]?.elements?.isEmpty ?? true)
            guard malformed, !shape.results.isEmpty else {
                notes.append(
                    ImportNote(.notImported, at: place + ".fallthrough", "flag '\(key)' has no fallthrough variation or rollout; left out"))
                return nil
            }
            // An error where the fallthrough is reached: a fallback rule, written last (the
            // default, its first variation, is never given).
            out.defaultText = literalDefault(0)
            rules(json, key: key, shape: shape, into: &out, off: off, fallthroughAsRule: true)
            return out
        }
        out.defaultText = literalDefault(fallthroughFirst)
        rules(json, key: key, shape: shape, into: &out, off: off, fallthroughAsRule: fallthroughJSON["rollout"] != nil)
        return out
    }

    /// The flag's prerequisites, targets, rules and (when it is a split, or the flag is
    /// off) its fallthrough, in LaunchDarkly's order.
    private mutating func rules(
        _ json: JSON, key: String, shape: Shape, into out: inout ImportedDeclaration, off: Int?, fallthroughAsRule: Bool
    ) {
        let place = "flags.\(key)"
        let salt = json["salt"]?.string ?? ""
        // Prerequisites: each must be on and give its variation, else the off variation.
        var failed: [ImportedCondition] = []
        for (i, prerequisite) in (json["prerequisites"]?.elements ?? []).enumerated() {
            let at = "\(place).prerequisites[\(i)]"
            guard let other = prerequisite["key"]?.string, let v = prerequisite["variation"]?.integer else {
                notes.append(ImportNote(.notImported, at: at, "a prerequisite needs a key and a variation"))
                continue
            }
            guard other != key else {
                notes.append(
                    ImportNote(
                        .notImported, at: at,
                        "flag '\(key)' is its own prerequisite (LaunchDarkly answers an error); flag '\(key)' left out"))
                unreadable.insert(key)
                break
            }
            guard let otherShape = shapes[other], onByKey[other] == true, v >= 0, v < otherShape.results.count else {
                // Missing, off or not imported: it always fails.
                failed = [.always]
                if shapes[other] == nil {
                    // (A prerequisite the file lacks fails in LaunchDarkly too.)
                    let inFile = flags.contains { $0.key == other }
                    notes.append(
                        ImportNote(
                            inFile ? .notImported : .remark, at: at,
                            inFile
                                ? "prerequisite '\(other)' is not imported: it fails for everyone"
                                : "prerequisite '\(other)' is not in the file: it fails for everyone, as in LaunchDarkly"))
                }
                break
            }
            // A prerequisite names a variation by its index: two variations giving one value
            // cannot be told apart by reading the flag.
            guard otherShape.results.filter({ $0 == otherShape.results[v] }).count == 1 else {
                notes.append(
                    ImportNote(
                        .notImported, at: at,
                        "prerequisite '\(other)' has two variations of one value, so its index cannot be read; flag '\(key)' left out"))
                unreadable.insert(key)
                break
            }
            reads[key, default: []].insert(other)
            failed.append(.negated(otherShape.gives(v)))
        }
        if !failed.isEmpty {
            if let off {
                out.rules.append(.init(shape.results[off], when: .or(failed)))
            } else {
                // (No value at all, which a flag reading this one as its prerequisite
                // would see as failed: the flag is left out, and so are they.)
                notes.append(
                    ImportNote(
                        .notImported, at: place + ".prerequisites",
                        "a failed prerequisite gives the caller's default (no off variation); flag '\(key)' left out"))
                unreadable.insert(key)
            }
        }
        // Individual targets, in LaunchDarkly's order.
        let targets = json["targets"]?.elements ?? []
        let contextTargets = json["contextTargets"]?.elements ?? []
        func target(_ values: [JSON], kind: String?) -> ImportedCondition {
            let keys = values.compactMap(\.string)
            guard !keys.isEmpty, let attribute = reference("key", kind: kind) else { return .never }
            return .atom(
                keys.count == 1
                    ? "\(attribute) == \(StringEscaping.quoted(keys[0]))"
                    : "\(attribute) in [\(keys.map(StringEscaping.quoted).joined(separator: ", "))]")
        }
        // (Without context targets, the user targets in order; with them, theirs, a user
        // entry with no values standing for the user targets of its variation.)
        for t in contextTargets.isEmpty ? targets : contextTargets {
            let v = t["variation"]?.integer
            let kind = contextTargets.isEmpty ? nil : (t["contextKind"]?.string).flatMap { $0.isEmpty ? nil : $0 } ?? "user"
            var values = t["values"]?.elements ?? []
            // (A user entry stands for the first user targets of its variation, its own
            // values unread.)
            if kind == "user" {
                values = targets.first { $0["variation"]?.integer == v }?["values"]?.elements ?? []
            }
            guard let v, v >= 0, v < shape.results.count else {
                // An error for a context it targets: the caller's default.
                notes.append(
                    ImportNote(
                        .remark, at: place + ".targets",
                        "a target of no variation of the flag: LaunchDarkly answers an error (MALFORMED_FLAG) for whom it targets, a fallback rule here"
                    ))
                out.rules.append(.fallback(when: target(values, kind: kind)))
                continue
            }
            out.rules.append(.init(shape.results[v], when: target(values, kind: kind)))
        }
        // Rules.
        for (i, rule) in (json["rules"]?.elements ?? []).enumerated() {
            let at = "\(place).rules[\(i)]"
            let ruleClauses = rule["clauses"]?.elements ?? []
            // A clause with no attribute, or a malformed reference, is an error once it is
            // reached (the clauses before it match) for a context of its kind: the caller's
            // default.
            if let k = ruleClauses.firstIndex(where: Self.isMalformed(clause:)) {
                guard let before = clauses(Array(ruleClauses[..<k]), at: at) else { continue }
                let kind = ruleClauses[k]["contextKind"]?.string.flatMap { $0.isEmpty ? nil : $0 } ?? "user"
                guard let key = reference("key", kind: kind) else { continue }
                notes.append(
                    ImportNote(
                        .remark, at: "\(at).clauses[\(k)]",
                        "a clause with no attribute or a malformed one: LaunchDarkly answers an error (MALFORMED_FLAG) where it is reached, a fallback rule here"
                    ))
                out.rules.append(.fallback(when: .and([before, .atom("has(\(key))")])))
                continue
            }
            guard let condition = clauses(ruleClauses, at: at) else { continue }
            append(rule, when: condition, key: key, salt: salt, shape: shape, at: at, into: &out)
        }
        if fallthroughAsRule {
            let fallthroughJSON = json["fallthrough"] ?? .null
            append(fallthroughJSON, when: .always, key: key, salt: salt, shape: shape, at: place + ".fallthrough", into: &out)
        }
    }

    /// A rule or the fallthrough: its variation, or its rollout as a split (a flag's as
    /// ranges of the bucket).
    private mutating func append(
        _ json: JSON, when condition: ImportedCondition, key: String, salt: String, shape: Shape, at: String,
        into out: inout ImportedDeclaration
    ) {
        if let v = json["variation"]?.integer {
            guard v >= 0, v < shape.results.count else {
                notes.append(
                    ImportNote(
                        .remark, at: at,
                        "variation \(v) does not exist: LaunchDarkly answers an error (MALFORMED_FLAG) where it applies, a fallback rule here"
                    ))
                out.rules.append(.fallback(when: condition))
                return
            }
            out.rules.append(.init(shape.results[v], when: condition))
            return
        }
        guard let rollout = json["rollout"], let entries = rollout["variations"]?.elements, !entries.isEmpty else {
            notes.append(
                ImportNote(
                    .remark, at: at,
                    "neither a variation nor a rollout: LaunchDarkly answers an error (MALFORMED_FLAG) where it applies, a fallback rule here"
                ))
            out.rules.append(.fallback(when: condition))
            return
        }
        let kind = rollout["contextKind"]?.string
        let experiment = rollout["kind"]?.string == "experiment"
        let seed = rollout["seed"]?.integer
        let bucketBy = experiment ? "key" : rollout["bucketBy"]?.string.flatMap { $0.isEmpty ? nil : $0 } ?? "key"
        guard let unit = reference(bucketBy, kind: kind) else {
            notes.append(ImportNote(.notImported, at: at + ".rollout.bucketBy", "'\(bucketBy)' is no attribute a .flags rule can read"))
            return
        }
        let hashed = seed.map(String.init) ?? "\(key).\(salt)"
        // Running weights in 100,000ths; LaunchDarkly gives a bucket past their sum to the
        // last variation, so the last entry takes what is left of 100,000.
        var weights: [(variation: Int, weight: Int)] = []
        var total = 0
        for entry in entries {
            guard let v = entry["variation"]?.integer, v >= 0, v < shape.results.count else {
                notes.append(ImportNote(.notImported, at: at + ".rollout", "a rollout entry names no variation of the flag"))
                return
            }
            let w = max(0, min(entry["weight"]?.integer ?? 0, 100_000 - total))
            total += w
            weights.append((v, w))
        }
        if total < 100_000 { weights[weights.count - 1].weight += 100_000 - total }
        // A context without the rollout's kind is bucket -1: the first variation listed,
        // whatever its weight.
        if let kind, kind != "user", let object = ImportedSource.path([kind]) {
            out.rules.append(.init(shape.results[weights[0].variation], when: .and([condition, .not(.atom("has(\(object))"))])))
        }
        weights.removeAll { $0.weight == 0 }
        let call = "rollout(\(unit), \(StringEscaping.quoted(hashed)), launchdarkly)"
        // A context without the bucketing attribute, or with one of no string or int, is
        // bucket 0: the first variation of a weight.
        let first = weights[0].variation
        let unbucketable = ImportedCondition.and([condition, .not(.atom("(\(call) < 100%) ?? false"))])
        if bucketBy != "key" || kind != nil { out.rules.append(.init(shape.results[first], when: unbucketable)) }
        if case .flag = shape.kind {
            // The bucket's ranges that give true, then false for the rest.
            var start = 0
            var ranges: [ImportedCondition] = []
            for (v, w) in weights {
                if shape.results[v] == "enabled" {
                    var parts: [ImportedCondition] = []
                    if start > 0 { parts.append(.not(.atom("\(call) < \(ImportedSource.percent(thousandths: start))"))) }
                    if start + w < 100_000 { parts.append(.atom("\(call) < \(ImportedSource.percent(thousandths: start + w))")) }
                    ranges.append(.and(parts))
                }
                start += w
            }
            out.rules.append(.init("enabled", when: .and([condition, .or(ranges)])))
            out.rules.append(.init("disabled", when: condition))
            return
        }
        // Entries of one result next to each other are one entry.
        var merged: [(result: String, weight: Int)] = []
        for entry in weights {
            let result = shape.results[entry.variation]
            if merged.last?.result == result {
                merged[merged.count - 1].weight += entry.weight
            } else {
                merged.append((result, entry.weight))
            }
        }
        guard Set(merged.map(\.result)).count == merged.count else {
            // One result in two places: a rule for each range of the bucket.
            var start = 0
            for (result, w) in merged {
                var parts: [ImportedCondition] = [condition]
                if start > 0 { parts.append(.not(.atom("\(call) < \(ImportedSource.percent(thousandths: start))"))) }
                if start + w < 100_000 { parts.append(.atom("\(call) < \(ImportedSource.percent(thousandths: start + w))")) }
                out.rules.append(.init(result, when: .and(parts)))
                start += w
            }
            return
        }
        let split = merged.map { "\($0.result): \($0.weight)" }.joined(separator: ", ")
        out.rules.append(.init("split(\(unit), \(StringEscaping.quoted(hashed)), launchdarkly) { \(split) }", when: condition))
    }
}
