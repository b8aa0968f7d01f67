import FlagRules
import Foundation

/// GrowthBook's SDK payload (`{"features": {…}}`) as a `.flags` file.
///
/// A feature's rules are tried in order as GrowthBook tries them: a force rule gives its
/// value when its condition holds and the unit is in its rollout (`rollout(unit, "seed",
/// growthbookV1) < N%`, hash version 1 unless the rule says 2); an experiment rule is a split
/// by GrowthBook's ranges (coverage 1). Conditions keep GrowthBook's meaning for absent
/// attributes: a comparison with an absent attribute is false, so its negation (`$ne`,
/// `$nin`, `$not`, `$nor`) is true (`not has(x) or …`).
struct GrowthBookImport {
    var notes: [ImportNote] = []
    var names = ImportNames()
    /// Each feature's name and kind, for prerequisites.
    private var declared: [String: (name: String, type: String)] = [:]
    /// Each feature's prerequisites' ids, of all its rules (a cycle of them is refused).
    private var prerequisiteIDs: [String: [String]] = [:]
    /// The features with a gate prerequisite, which give no value when it fails.
    private var gated: Set<String> = []
    /// The payload's features, by id.
    private var payloadKeys: Set<String> = []
    /// The prerequisites each feature's imported rules read, by id.
    private var parentsRead: [String: Set<String>] = [:]
    /// The features that give null (no default value): no value, which the caller's
    /// default stands for (GrowthBook's `getFeatureValue(key, fallback)`).
    private var nullable: Set<String> = []
    /// The values each declaration (by name) can give, for version tests of them.
    var declaredValues: [String: [JSON]] = [:]
    /// The payload's saved groups, by id.
    var savedGroups: [String: JSON] = [:]
    /// Saved groups written as segments (their names, by id, and a list group's by id and
    /// path), condition groups that could not be, and those being written (a reference
    /// back to one is a cycle).
    var groupSegments: [String: String] = [:]
    var failedGroups: Set<String> = []
    var writingGroups: [String] = []
    /// Bytes written so far from what rules refer to (see ``spend(_:at:)``).
    var expansion = 0
    /// The most bytes an import writes from what rules refer to (a real payload's saved
    /// groups are written once each, and a test of a parent's value lists a few values).
    let expansionLimit: Int
    var segments: [(name: String, doc: [String], condition: ImportedCondition)] = []

    init(expansionLimit: Int = 8 << 20) { self.expansionLimit = expansionLimit }

    mutating func run(_ root: JSON) throws(ImportError) -> ImportedFile {
        guard case .object = root else {
            throw ImportError("a GrowthBook payload is a JSON object with \"features\"; this is \(root.kindName)")
        }
        guard let features = root["features"] else {
            throw ImportError("a GrowthBook payload has \"features\" (the SDK payload an SDK fetches)")
        }
        guard case .object(let members) = features else { throw ImportError("\"features\" is \(features.kindName), not an object") }
        let entries = lastOfEach(members, at: "features", notes: &notes)
        if let experiments = root["experiments"]?.elements, !experiments.isEmpty {
            notes.append(
                ImportNote(.notImported, at: "experiments", "visual editor and URL-redirect experiments run in a browser, not on rules"))
        }
        if root["encryptedFeatures"] != nil {
            throw ImportError("the payload's features are encrypted: import the decrypted payload (the SDK's decryption key decrypts it)")
        }
        if let groups = root["savedGroups"] {
            guard case .object(let members) = groups else { throw ImportError("\"savedGroups\" is \(groups.kindName), not an object") }
            for (id, group) in lastOfEach(members, at: "savedGroups", notes: &notes) { savedGroups[id] = group }
        }
        var file = ImportedFile()
        file.header = ["Imported from GrowthBook by 'flags import --from growthbook'."]
        // The attributes the conditions read keep their names.
        var read: Set<String> = []
        func attribute(_ json: JSON?) {
            if let a = json?.string { read.insert(String(a.split(separator: ".").first ?? Substring(a))) }
        }
        for (key, feature) in entries {
            let parents = (feature["rules"]?.elements ?? []).flatMap { $0["parentConditions"]?.elements ?? [] }
            prerequisiteIDs[key] = parents.compactMap { $0["id"]?.string }
            if parents.contains(where: { $0["gate"] == .bool(true) }) { gated.insert(key) }
            if values(feature).contains(.null) { nullable.insert(key) }
        }
        for (_, feature) in entries {
            for rule in feature["rules"]?.elements ?? [] {
                if let condition = rule["condition"] { ImportNames.attributes(in: condition, into: &read) }
                for field in ["hashAttribute", "fallbackAttribute"] { attribute(rule[field]) }
                for filter in rule["filters"]?.elements ?? [] { attribute(filter["attribute"]) }
            }
        }
        for (_, group) in savedGroups {
            if let condition = group["condition"] { ImportNames.attributes(in: condition, into: &read) }
            attribute(group["attributeKey"])
        }
        read.insert("id")
        names.reserve(read)
        names.claim(entries.map(\.key))
        payloadKeys = Set(entries.map(\.key))
        for (key, feature) in entries {
            let name = names.name(for: key)
            if let note = names.renameNote(for: key, at: "features.\(key)") { notes.append(note) }
            if let type = type(of: feature, key: key) {
                declared[key] = (name, type)
                declaredValues[name] = values(feature)
            }
        }
        var declarations: [String: ImportedDeclaration] = [:]
        for (key, feature) in entries {
            guard let (name, type) = declared[key] else { continue }
            declarations[key] = declaration(feature, key: key, name: name, type: type)
        }
        prune(&declarations)
        file.declarations = entries.compactMap { declarations[$0.key] }
        file.segments = segments
        return file
    }

    /// Leaves out each feature whose imported rules read a prerequisite that is not
    /// imported whole (left out, or with a rule left out: its value may differ from
    /// GrowthBook's), until none is left.
    private mutating func prune(_ declarations: inout [String: ImportedDeclaration]) {
        func incomplete(_ key: String) -> Bool {
            declarations[key] == nil || notes.contains { $0.kind == .notImported && $0.place.hasPrefix("features.\(key).rules[") }
        }
        var changed = true
        while changed {
            changed = false
            for key in declarations.keys.sorted() {
                guard let parent = (parentsRead[key] ?? []).sorted().first(where: incomplete) else { continue }
                declarations[key] = nil
                notes.append(
                    ImportNote(
                        .notImported, at: "features.\(key)",
                        "prerequisite '\(parent)' is not imported whole (its value may differ from GrowthBook's); feature '\(key)' left out"
                    ))
                changed = true
            }
        }
    }

    // MARK: Types

    /// Every value a feature can give: its default, its rules' forced values and variations.
    private func values(_ feature: JSON) -> [JSON] {
        var out = [feature["defaultValue"] ?? .null]
        for rule in feature["rules"]?.elements ?? [] {
            if let force = rule["force"], force != .null { out.append(force) }
            out += rule["variations"]?.elements ?? []
        }
        return out
    }

    /// `flag` for a boolean feature without experiments, else the value type (of the values
    /// other than null, which is a `fallback`); nil (and a note) for JSON objects, arrays or
    /// mixed types.
    private mutating func type(of feature: JSON, key: String) -> String? {
        let all = values(feature).filter { $0 != .null }
        func every(_ test: (JSON) -> Bool) -> Bool { all.allSatisfy(test) }
        let experiments = (feature["rules"]?.elements ?? []).contains { $0["variations"] != nil && ($0["force"] ?? .null) == .null }
        if every({ if case .bool = $0 { true } else { false } }) { return experiments ? "bool" : "flag" }
        if every({ $0.string != nil }) { return "string" }
        if every({ if case .int = $0 { true } else { false } }) { return "int" }
        if every({
            switch $0 {
            case .int, .double: true;
            default: false
            }
        }) {
            return "double"
        }
        notes.append(
            ImportNote(
                .notImported, at: "features.\(key)",
                "values of JSON objects, arrays or mixed types have no .flags type; feature '\(key)' left out"))
        return nil
    }

    private func literal(_ value: JSON, type: String) -> String {
        switch (type, value) {
        case ("flag", .bool(let b)): return b ? "enabled" : "disabled"
        default: return ImportedSource.literal(value, as: type)
        }
    }

    // MARK: Features

    private mutating func declaration(_ feature: JSON, key: String, name: String, type: String) -> ImportedDeclaration {
        let place = "features.\(key)"
        let defaultValue = feature["defaultValue"] ?? .null
        var out = ImportedDeclaration(
            name: name, kind: type == "flag" ? .flag : .value(type),
            defaultText: type == "flag"
                ? (defaultValue == .bool(true) ? "true" : "false")
                : literal(defaultValue == .null ? Self.zero(type) : defaultValue, type: type))
        out.place = place
        if let text = feature["description"]?.string, !text.isEmpty { out.doc = text.split(whereSeparator: \.isNewline).map(String.init) }
        for (i, rule) in (feature["rules"]?.elements ?? []).enumerated() {
            let at = "\(place).rules[\(i)]"
            var unsupported: [String] = []
            if rule["contextualBanditRef"] != nil && rule["contextualBanditRef"] != .null {
                unsupported.append("contextual bandits")
            }
            // (The SDK drops the fallback of a rule with `disableStickyBucketing`.)
            let fallback =
                Self.isTruthy(rule["disableStickyBucketing"]) ? nil : rule["fallbackAttribute"]?.string.flatMap { $0.isEmpty ? nil : $0 }
            if let fallback, fallback.contains(".") {
                unsupported.append("a fallback attribute named with a dot (GrowthBook reads it as one flat name)")
            }
            if let attribute = rule["hashAttribute"]?.string, attribute.contains(".") {
                unsupported.append("a hash attribute named with a dot (GrowthBook reads it as one flat name)")
            }
            if !unsupported.isEmpty {
                notes.append(
                    ImportNote(.notImported, at: at, "\(unsupported.joined(separator: ", ")) have no .flags form; the rule is left out"))
                continue
            }
            var condition = ImportedCondition.always
            if let parents = rule["parentConditions"]?.elements {
                guard let (prerequisites, gates) = self.prerequisites(parents, of: key, at: at + ".parentConditions") else { continue }
                // A failing gate ends the evaluation with no value: the caller's default.
                for gate in gates { out.rules.append(.fallback(when: gate)) }
                condition = prerequisites
            }
            if let json = rule["condition"] {
                guard let c = self.condition(json, negated: false, at: at + ".condition") else { continue }
                condition = .and([condition, c])
            }
            let unit = rule["hashAttribute"]?.string ?? "id"
            // (A null force is none, as GrowthBook reads it.)
            if let force = rule["force"], force != .null {
                guard var rollout = rollout(rule, key: key, unit: unit, at: at) else { continue }
                // A unit without a usable value (absent, empty, not a string or a number):
                // the fallback attribute's, as GrowthBook takes it.
                if let fallback, rollout != .always, rollout != .never, let other = self.rollout(rule, key: key, unit: fallback, at: at) {
                    rollout = .atom("(\(rollout.text)) ?? (\(other.text))")
                }
                if let json = rule["filters"] {
                    guard let f = filters(json, at: at + ".filters") else { continue }
                    rollout = .and([f, rollout])
                }
                out.rules.append(.init(literal(force, type: type), when: .and([condition, rollout])))
                continue
            }
            guard let variations = rule["variations"]?.elements else {
                notes.append(ImportNote(.remark, at: at, "neither force nor variations: GrowthBook skips it, and so does the import"))
                continue
            }
            guard let rules = experiment(rule, variations: variations, key: key, unit: unit, type: type, when: condition, at: at) else {
                continue
            }
            if fallback != nil {
                notes.append(
                    ImportNote(
                        .remark, at: at + ".fallbackAttribute",
                        "GrowthBook reads an experiment's fallback attribute only with sticky bucketing, which .flags has not: a user without '\(unit)' is not in the experiment"
                    ))
            }
            out.rules += rules
        }
        // No default value: no value where no rule gives one.
        if defaultValue == .null { out.rules.append(.fallback(when: .always)) }
        return out
    }

    /// A literal of the type standing for a default that is never given (a feature with no
    /// default value ends in an unconditional `fallback`).
    private static func zero(_ type: String) -> JSON {
        switch type {
        case "string": .string("")
        case "int": .int(0)
        case "double": .double(0)
        default: .bool(false)
        }
    }

    /// A force rule's rollout: its coverage or range of the unit's hash, or always.
    private mutating func rollout(_ rule: JSON, key: String, unit attribute: String, at: String) -> ImportedCondition? {
        let coverage = rule["coverage"].flatMap(Self.number)
        let range = rule["range"]?.elements?.compactMap(Self.number)
        if coverage == nil, range == nil { return .always }
        if range == nil, coverage == 0 { return .never }
        guard let unit = path(attribute, at: at + ".hashAttribute") else { return nil }
        let version = Self.orDefault(rule["hashVersion"]?.integer, 1)
        // GrowthBook includes no one in a rollout of an unknown hash version.
        guard version == 1 || version == 2 else { return .never }
        let seed = Self.orDefault(rule["seed"]?.string, key)
        if let range {
            guard range.count == 2 else {
                notes.append(ImportNote(.notImported, at: at + ".range", "a range is two numbers; the rule is left out"))
                return nil
            }
            return Self.bucketRange(unit, seed: seed, version: version, from: range[0], to: range[1])
        }
        return Self.bucketRange(unit, seed: seed, version: version, from: 0, to: coverage!)
    }

    /// `from <= n < to` for GrowthBook's `n` of the unit (`gbhash(seed, unit, version)`),
    /// each bound a count of the hash's buckets below it, as the SDK divides and compares:
    /// unknown for an absent or empty unit, which GrowthBook leaves out.
    static func bucketRange(_ unit: String, seed: String, version: Int, from low: Double, to high: Double) -> ImportedCondition {
        let scale = version == 2 ? 10_000 : 1_000
        func threshold(_ bound: Double) -> Int {
            guard bound.isFinite else { return bound > 0 ? 100_000 : 0 }
            var count = Int(max(0, min(Double(scale), (bound * Double(scale)).rounded(.down))))
            while count > 0, !(Double(count - 1) / Double(scale) < bound) { count -= 1 }
            while count < scale, Double(count) / Double(scale) < bound { count += 1 }
            return count * (100_000 / scale)
        }
        let call = "rollout(\(unit), \(StringEscaping.quoted(seed)), \(version == 2 ? "growthbook" : "growthbookV1"))"
        let lower = threshold(low), upper = threshold(high)
        guard upper > lower else { return .never }
        var parts: [ImportedCondition] = []
        if lower > 0 { parts.append(.not(.atom("\(call) < \(ImportedSource.percent(thousandths: lower))"))) }
        parts.append(.atom("\(call) < \(ImportedSource.percent(thousandths: upper))"))
        return .and(parts)
    }

    /// An attribute path as a rule reads it; nil (and a note) otherwise.
    private mutating func path(_ attribute: String, at: String) -> String? {
        guard let path = ImportedSource.path(attribute.split(separator: ".", omittingEmptySubsequences: false).map(String.init)) else {
            notes.append(
                ImportNote(.notImported, at: at, "'\(attribute)' is no attribute a .flags rule can read; the rule is left out"))
            return nil
        }
        return path
    }

    /// A rule's `filters`: the unit of each in one of its ranges (a user without the
    /// attribute is filtered out).
    private mutating func filters(_ json: JSON, at: String) -> ImportedCondition? {
        guard let list = json.elements else {
            notes.append(ImportNote(.notImported, at: at, "filters are a list; the rule is left out"))
            return nil
        }
        var all: [ImportedCondition] = []
        for (i, filter) in list.enumerated() {
            let attribute = filter["attribute"]?.string ?? "id"
            guard !attribute.contains(".") else {
                notes.append(
                    ImportNote(
                        .notImported, at: "\(at)[\(i)].attribute", "GrowthBook reads '\(attribute)' as one flat name; the rule is left out")
                )
                return nil
            }
            guard let unit = path(attribute, at: "\(at)[\(i)].attribute") else { return nil }
            let version = filter["hashVersion"]?.integer ?? 2
            guard version == 1 || version == 2 else {
                all.append(.never)
                continue
            }
            let seed = filter["seed"]?.string ?? ""
            var any: [ImportedCondition] = []
            for range in filter["ranges"]?.elements ?? [] {
                guard let bounds = range.elements?.compactMap(Self.number), bounds.count == 2 else {
                    notes.append(ImportNote(.notImported, at: "\(at)[\(i)].ranges", "a range is two numbers; the rule is left out"))
                    return nil
                }
                any.append(Self.bucketRange(unit, seed: seed, version: version, from: bounds[0], to: bounds[1]))
            }
            all.append(.or(any))
        }
        return .and(all)
    }

    /// An experiment rule under `condition`: a split by GrowthBook's ranges when they are
    /// its weights at coverage 1 in ten-thousandths, else a rule per variation whose bucket
    /// range holds the unit (coverage below 1, explicit ranges, other weights), in order.
    private mutating func experiment(
        _ rule: JSON, variations: [JSON], key: String, unit attribute: String, type: String, when condition: ImportedCondition, at: String
    ) -> [ImportedDeclaration.Rule]? {
        // GrowthBook runs no experiment of fewer than two variations, or of an unknown hash.
        let version = Self.orDefault(rule["hashVersion"]?.integer, 1)
        guard variations.count >= 2, version == 1 || version == 2 else { return [] }
        guard !variations.contains(.null) else {
            notes.append(
                ImportNote(.notImported, at: at + ".variations", "a variation of null (no value) has no split form; the rule is left out"))
            return nil
        }
        guard let unit = path(attribute, at: at + ".hashAttribute") else { return nil }
        var condition = condition
        if let json = rule["filters"], json.elements?.isEmpty != true {
            guard let f = filters(json, at: at + ".filters") else { return nil }
            condition = .and([condition, f])
        } else if let namespace = rule["namespace"]?.elements {
            guard namespace.count == 3, let name = namespace[0].string, let low = Self.number(namespace[1]),
                let high = Self.number(namespace[2])
            else {
                notes.append(ImportNote(.notImported, at: at + ".namespace", "a namespace is [name, start, end]; the rule is left out"))
                return nil
            }
            condition = .and([condition, Self.bucketRange(unit, seed: "__" + name, version: 1, from: low, to: high)])
        }
        let seed = Self.orDefault(rule["seed"]?.string, Self.orDefault(rule["key"]?.string, key))
        let values = variations.map { literal($0, type: type == "flag" ? "bool" : type) }
        // A passthrough variation (a holdout's other side) goes on to the next rule: no rule
        // of its range.
        let meta = rule["meta"]?.elements ?? []
        let passthrough = Set(variations.indices.filter { $0 < meta.count && Self.isTruthy(meta[$0]["passthrough"]) })
        // GrowthBook's weights: as given when valid, else equal.
        let given = (rule["weights"]?.elements ?? []).map(Self.number)
        let valid = given.count == variations.count && given.allSatisfy { $0.map { $0.isFinite && $0 >= 0 } ?? false }
        let sum = given.compactMap { $0 }.reduce(0, +)
        let weights =
            valid && sum >= 0.99 && sum <= 1.01
            ? given.map { $0! } : Array(repeating: 1 / Double(variations.count), count: variations.count)
        let coverage = min(1, max(0, rule["coverage"].flatMap(Self.number) ?? 1))
        let scheme = version == 2 ? "growthbook" : "growthbookV1"
        // The split form, where it is exact.
        let scaled = weights.map { ($0 * 10_000).rounded() }
        let equal = !(valid && sum >= 0.99 && sum <= 1.01)
        let explicitRanges = (rule["ranges"]?.elements).flatMap { $0.isEmpty ? nil : $0 }  // [] is no ranges to the SDK
        if explicitRanges == nil, coverage == 1, Set(values).count == values.count, passthrough.isEmpty,
            equal || (zip(scaled, weights).allSatisfy { $0 / 10_000 == $1 } && scaled.reduce(0, +) == 10_000)
        {
            let entries = zip(values, equal ? Array(repeating: 1, count: values.count) : scaled.map(Int.init)).filter { $0.1 > 0 }
            let body = entries.map { "\($0.0): \($0.1)" }.joined(separator: ", ")
            return [.init("split(\(unit), \(StringEscaping.quoted(seed)), \(scheme)) { \(body) }", when: condition)]
        }
        // A rule per variation: the ranges as GrowthBook computes them.
        var ranges: [(Double, Double)] = []
        if let explicit = explicitRanges {
            for (i, range) in explicit.enumerated() {
                guard let bounds = range.elements?.compactMap(Self.number), bounds.count == 2 else {
                    notes.append(ImportNote(.notImported, at: "\(at).ranges[\(i)]", "a range is two numbers; the rule is left out"))
                    return nil
                }
                ranges.append((bounds[0], bounds[1]))
            }
        } else {
            var cumulative = 0.0
            for w in weights {
                let start = cumulative
                cumulative += w
                ranges.append((start, start + coverage * w))
            }
        }
        return zip(values, ranges).enumerated().filter { !passthrough.contains($0.offset) }.map { _, entry in
            .init(entry.0, when: .and([condition, Self.bucketRange(unit, seed: seed, version: version, from: entry.1.0, to: entry.1.1)]))
        }
    }

    /// Whether the prerequisites of `start` (and theirs) lead to `target`, or `start` is it.
    private func reaches(_ start: String, _ target: String) -> Bool {
        var seen: Set<String> = []
        var pending = [start]
        while let id = pending.popLast() {
            if id == target { return true }
            guard seen.insert(id).inserted else { continue }
            pending += prerequisiteIDs[id] ?? []
        }
        return false
    }

    /// Prerequisites, tried in order: all of them passing (the rule's condition), and for
    /// each `gate` one, when it is the first to fail (the evaluation then ends with no value,
    /// a `fallback` rule); the first non-gate one to fail skips the rule.
    private mutating func prerequisites(_ parents: [JSON], of key: String, at: String) -> (ImportedCondition, gates: [ImportedCondition])? {
        var parts: [ImportedCondition] = []
        var gates: [ImportedCondition] = []
        for (i, parent) in parents.enumerated() {
            guard case .object(let members) = parent["condition"] ?? .object([]), members.allSatisfy({ $0.0 == "value" }) else {
                notes.append(
                    ImportNote(
                        .notImported, at: "\(at)[\(i)].condition", "a prerequisite's condition reads only \"value\"; the rule is left out"))
                return nil
            }
            guard let id = parent["id"]?.string else {
                notes.append(ImportNote(.notImported, at: "\(at)[\(i)]", "a prerequisite names a feature by its id; the rule is left out"))
                return nil
            }
            // What each test gives a null value (GrowthBook's for a feature the payload
            // lacks, or one that gives no value); nil where that is not worked out here.
            let onNull: Bool? = members.reduce(true) { all, member in all.flatMap { a in Self.nullAnswer(member.1).map { a && $0 } } }
            let passedBefore = parts
            var passes: [ImportedCondition] = []
            if !payloadKeys.contains(id) {
                // A feature the payload lacks is null to GrowthBook.
                guard let onNull else {
                    notes.append(
                        ImportNote(
                            .notImported, at: "\(at)[\(i)]",
                            "the payload has no feature '\(id)' (null to GrowthBook), and its test of null is not worked out; the rule is left out"
                        ))
                    return nil
                }
                notes.append(ImportNote(.remark, at: "\(at)[\(i)]", "the payload has no feature '\(id)': GrowthBook reads it as null"))
                passes = [onNull ? .always : .never]
            } else {
                guard let (name, type) = declared[id] else {
                    notes.append(ImportNote(.notImported, at: "\(at)[\(i)]", "its feature is not imported; the rule is left out"))
                    return nil
                }
                if reaches(id, key) {
                    notes.append(
                        ImportNote(
                            .notImported, at: "\(at)[\(i)]",
                            "prerequisites in a cycle (GrowthBook then gives no value); the rule is left out"))
                    return nil
                }
                for (_, test) in members {
                    // The parent's value: a flag reads as a bool.
                    guard
                        let c = valueCondition(
                            name, test, negated: false, at: "\(at)[\(i)].condition.value", parent: type)
                    else { return nil }
                    passes.append(c)
                }
                if nullable.contains(id) || gated.contains(id) {
                    // The parent gives no value (a fallback, unknown to a rule) for some
                    // users: there, the test of null GrowthBook makes.
                    guard let onNull else {
                        notes.append(
                            ImportNote(
                                .notImported, at: "\(at)[\(i)]",
                                "its feature gives no value (null) for some users, and its test of null is not worked out; the rule is left out"
                            ))
                        return nil
                    }
                    // (A test whose answer is the same for every value still reads the
                    // parent, so that its fallback is unknown there.)
                    let joined = ImportedCondition.and(passes)
                    let reads =
                        switch joined {
                        case .always: "\(name) == \(name)"
                        case .never: "\(name) != \(name)"
                        default: joined.text
                        }
                    passes = [.atom("(\(reads)) ?? \(onNull)")]
                }
                parentsRead[key, default: []].insert(id)
            }
            if parent["gate"] == .bool(true), !passes.isEmpty {
                gates.append(.and(passedBefore + [.negated(.and(passes))]))
            }
            parts += passes
        }
        return (.and(parts), gates)
    }

    /// What a GrowthBook condition value gives a null attribute (as `evalConditionValue`):
    /// nil for an operator not worked out here.
    static func nullAnswer(_ test: JSON) -> Bool? {
        guard case .object(let members) = test, members.contains(where: { $0.0.hasPrefix("$") }) else { return test == .null }
        var all = true
        for (op, value) in members {
            let answer: Bool?
            switch op {
            case "$eq": answer = value == .null
            case "$ne": answer = value != .null
            case "$exists": answer = !isTruthy(value)
            case "$in": answer = value.elements.map { $0.contains(.null) } ?? false
            case "$nin": answer = value.elements.map { !$0.contains(.null) } ?? false
            case "$gt", "$gte", "$lt", "$lte", "$regex", "$regexi", "$size", "$all", "$alli", "$elemMatch": answer = false
            case "$not": answer = nullAnswer(value).map { !$0 }
            case "$type": answer = value.string == "null"
            default: answer = nil
            }
            guard let answer else { return nil }
            all = all && answer
        }
        return all
    }

    /// Whether Python reads `json` as true: not absent, null, false, zero or empty.
    static func isTruthy(_ json: JSON?) -> Bool {
        switch json {
        case nil, .null?, .bool(false)?, .int(0)?, .string("")?: false
        case .double(let d)?: d != 0
        case .array(let a)?: !a.isEmpty
        case .object(let o)?: !o.isEmpty
        default: true
        }
    }

    /// A value as Python's `value or fallback` reads it: a zero or an empty string is none.
    static func orDefault(_ value: Int?, _ fallback: Int) -> Int { value.flatMap { $0 == 0 ? nil : $0 } ?? fallback }
    static func orDefault(_ value: String?, _ fallback: String) -> String { value.flatMap { $0.isEmpty ? nil : $0 } ?? fallback }
}
