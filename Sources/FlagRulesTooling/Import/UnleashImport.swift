import FlagRules
import Foundation

/// Unleash's client features payload (`{"version": 2, "features": […], "segments": […]}`)
/// as a `.flags` file.
///
/// Each feature is a `flag` (Unleash's `isEnabled`: on when any of its strategies is), and a
/// feature with variants also a `variant` named after it (`getVariant`: `disabled` unless
/// the flag is on, then an override or Unleash's variant split). `.flags`' own bucketing is
/// Unleash's, so rollouts and splits need no scheme: `rollout(userId ?? sessionId, "groupId")`.
/// Constraints keep Unleash's meaning for a missing field: the operator is false, so an
/// inverted one (or `NOT_IN`) is true.
struct UnleashImport {
    var notes: [ImportNote] = []
    private var names = ImportNames()
    private var segments: [Int: [JSON]] = [:]
    /// Each feature's flag name, and its variant declaration's name if it has one.
    private var declared: [String: (flag: String, variant: String?)] = [:]
    private var byKey: [String: JSON] = [:]

    /// Bytes of feature variants written again for each run of strategies without their
    /// own, and the most an import writes so.
    private var spent = 0
    private let expansionLimit: Int

    init(expansionLimit: Int = 8 << 20) { self.expansionLimit = expansionLimit }

    mutating func run(_ root: JSON) throws(ImportError) -> ImportedFile {
        guard case .object = root else {
            throw ImportError("an Unleash payload is a JSON object with \"features\"; this is \(root.kindName)")
        }
        guard let features = root["features"] else {
            throw ImportError("an Unleash payload has \"features\" (the client API's /api/client/features)")
        }
        guard let list = features.elements else { throw ImportError("\"features\" is \(features.kindName), not an array") }
        for (i, segment) in (root["segments"]?.elements ?? []).enumerated() {
            guard let id = segment["id"]?.integer else {
                notes.append(ImportNote(.notImported, at: "segments[\(i)]", "a segment without an id"))
                continue
            }
            segments[id] = segment["constraints"]?.elements ?? []
        }
        var file = ImportedFile()
        file.header = ["Imported from Unleash by 'flags import --from unleash'."]
        // The context fields the constraints read, and the stickiness fields, keep their names.
        var read: Set<String> = ["userId", "sessionId", "remoteAddress"]
        for constraint in Self.allConstraints(root) {
            if let name = constraint["contextName"]?.string { read.insert(name) }
        }
        names.reserve(read)
        names.claim(list.compactMap { $0["name"]?.string })
        var keyed: [(key: String, json: JSON)] = []
        var last: [String: Int] = [:]
        for (i, feature) in list.enumerated() { if let name = feature["name"]?.string { last[name] = i } }
        for (i, feature) in list.enumerated() {
            guard let key = feature["name"]?.string else {
                notes.append(ImportNote(.notImported, at: "features[\(i)]", "a feature without a name"))
                continue
            }
            guard last[key] == i else {
                notes.append(ImportNote(.notImported, at: "features[\(i)]", "'\(key)' is given twice: its last entry is imported"))
                continue
            }
            let flag = names.name(for: key)
            if let note = names.renameNote(for: key, at: "features[\(i)]") { notes.append(note) }
            let hasVariants =
                !(feature["variants"]?.elements ?? []).isEmpty
                || (feature["strategies"]?.elements ?? []).contains { !($0["variants"]?.elements ?? []).isEmpty }
            declared[key] = (flag, hasVariants ? names.name(for: key + " variant", base: flag + "Variant") : nil)
            keyed.append((key, feature))
            byKey[key] = feature
        }
        for (i, entry) in keyed.enumerated() {
            file.declarations += declarations(entry.json, key: entry.key, at: "features[\(i)]")
        }
        return file
    }

    /// The variant names a feature can give: those of a weight, and the feature's own that
    /// an override gives (a strategy's overrides are unread). Others are no case of its
    /// `variant`, which would be one no rule gives.
    static func givable(_ feature: JSON) -> Set<String> {
        var names: Set<String> = []
        for strategy in feature["strategies"]?.elements ?? [] {
            for v in strategy["variants"]?.elements ?? [] where (v["weight"]?.integer ?? 0) > 0 {
                if let name = v["name"]?.string { names.insert(name) }
            }
        }
        for v in feature["variants"]?.elements ?? [] where (v["weight"]?.integer ?? 0) > 0 || !(v["overrides"]?.elements ?? []).isEmpty {
            if let name = v["name"]?.string { names.insert(name) }
        }
        return names
    }

    static func allConstraints(_ json: JSON) -> [JSON] {
        switch json {
        case .object(let members):
            return members.flatMap { key, value in key == "constraints" ? (value.elements ?? []) : allConstraints(value) }
        case .array(let elements):
            return elements.flatMap(allConstraints)
        default:
            return []
        }
    }

    // MARK: Features

    private mutating func declarations(_ feature: JSON, key: String, at place: String) -> [ImportedDeclaration] {
        guard let (flagName, variantName) = declared[key] else { return [] }
        var flag = ImportedDeclaration(name: flagName, kind: .flag, defaultText: "false")
        flag.place = place
        if let text = feature["description"]?.string, !text.isEmpty { flag.doc = text.split(whereSeparator: \.isNewline).map(String.init) }
        if feature["enabled"] != .bool(true) { flag.attributes.append("@disabled") }
        // Dependencies: the parent's state (and variant) first.
        var parents: [ImportedCondition] = []
        for (i, dependency) in (feature["dependencies"]?.elements ?? []).enumerated() {
            guard let parent = dependency["feature"]?.string, let names = declared[parent] else {
                notes.append(
                    ImportNote(
                        .remark, at: "\(place).dependencies[\(i)]",
                        "its parent feature is not in the file: the feature is off for everyone, as in Unleash"))
                parents.append(.never)
                continue
            }
            if !(byKey[parent]?["dependencies"]?.elements ?? []).isEmpty {
                // Unleash follows one level of dependencies: a parent with its own turns
                // its children off.
                notes.append(
                    ImportNote(
                        .remark, at: "\(place).dependencies[\(i)]",
                        "parent '\(parent)' has dependencies of its own: Unleash keeps this feature off, and so does the import"))
                parents.append(.never)
                continue
            }
            let enabled = dependency["enabled"] != .bool(false)
            var condition: ImportedCondition = enabled ? .atom(names.flag) : .not(.atom(names.flag))
            if let variants = dependency["variants"]?.elements?.compactMap(\.string), !variants.isEmpty, let variantName = names.variant {
                let given = Self.givable(byKey[parent] ?? .null)
                let listed = variants.filter { given.contains($0) }.map(ImportedSource.caseName)
                condition = .and([condition, listed.isEmpty ? .never : .atom("\(variantName) in [\(listed.joined(separator: ", "))]")])
            }
            parents.append(condition)
        }
        let dependencies = ImportedCondition.and(parents)
        // Strategies: on when any is; off for everyone when Unleash's engine refuses one.
        var strategies: [(condition: ImportedCondition, json: JSON, at: String)] = []
        let list = feature["strategies"]?.elements ?? []
        var refused: (Int, String)?
        for (i, strategy) in list.enumerated() where refused == nil {
            refused = refusal(of: strategy).map { (i, $0) }
        }
        if let (i, why) = refused {
            notes.append(
                ImportNote(
                    .remark, at: "\(place).strategies[\(i)]", "\(why): Unleash's engine keeps the feature off for everyone, as imported"))
        } else {
            for (i, strategy) in list.enumerated() {
                let at = "\(place).strategies[\(i)]"
                // (A strategy's `disabled` is the server's to drop from the payload:
                // UnleashClient evaluates a strategy the payload holds, and so does the import.)
                guard let condition = self.strategy(strategy, feature: key, at: at) else { continue }
                strategies.append((condition, strategy, at))
            }
        }
        // No strategy at all: on.
        let on: ImportedCondition = refused != nil ? .never : list.isEmpty ? .always : .or(strategies.map(\.condition))
        flag.rules = [.init("enabled", when: .and([dependencies, on]))]
        guard let variantName else { return [flag] }
        // The variant: `disabled` unless the flag is on; then the first strategy on with
        // variants of its own, else the feature's (overrides first).
        var cases = ["disabled"]
        let given = Self.givable(feature)
        var rules: [ImportedDeclaration.Rule] = []
        // Each variant's payload text by its name (nil: none), and the first place one name
        // is given another payload.
        var payloads: [String: String?] = [:]
        var payloadClash: String?
        func addCases(_ variants: [JSON], at: String) -> [(name: String, weight: Int, payload: String?)]? {
            var entries: [(name: String, weight: Int, payload: String?)] = []
            for (i, variant) in variants.enumerated() {
                guard let name = variant["name"]?.string, ImportNames.isQuotable(name), name != "disabled" else {
                    notes.append(
                        ImportNote(
                            .notImported, at: "\(at)[\(i)]",
                            "a variant's name that is empty, holds a control character or is 'disabled'; the feature's variants are left out"
                        ))
                    return nil
                }
                var payload: String? = nil
                if let json = variant["payload"], json != .null {
                    guard let text = json["value"]?.string else {
                        notes.append(
                            ImportNote(
                                .notImported, at: "\(at)[\(i)].payload",
                                "a payload's value is a string; the feature's variants are left out"))
                        return nil
                    }
                    payload = text
                    if let type = json["type"]?.string, type != "string" {
                        notes.append(
                            ImportNote(
                                .remark, at: "\(at)[\(i)].payload",
                                "a \(type) payload is given as its text: read it as \(type) where it is used"))
                    }
                }
                if given.contains(name) {
                    if let known = payloads[name], known != payload, payloadClash == nil { payloadClash = "\(at)[\(i)].payload" }
                    payloads[name] = payload
                }
                if !cases.contains(name), given.contains(name) { cases.append(name) }
                entries.append((name, max(0, variant["weight"]?.integer ?? 0), payload))
            }
            return entries
        }
        // What a payload is where one variant name has two: for each variant rule, the
        // payload of each variant it may give (`v == name`).
        var payloadRules: [ImportedDeclaration.Rule] = []
        func payloadTests(of entries: [(name: String, weight: Int, payload: String?)]) -> [(String, ImportedCondition)] {
            entries.filter { given.contains($0.name) }.map {
                (StringEscaping.quoted($0.payload ?? ""), .atom("\(variantName) == \(ImportedSource.caseName($0.name))"))
            }
        }
        // The feature's variants (overrides first), for when the first strategy on has none.
        var featureRules: [(result: String, condition: ImportedCondition, payloads: [(String, ImportedCondition)])] = []
        if let variants = feature["variants"]?.elements, !variants.isEmpty {
            guard let entries = addCases(variants, at: place + ".variants") else { return [flag] }
            for (i, variant) in variants.enumerated() {
                for (j, override) in (variant["overrides"]?.elements ?? []).enumerated() {
                    guard let field = override["contextName"]?.string, let path = ImportedSource.path([field]) else {
                        notes.append(
                            ImportNote(
                                .notImported, at: "\(place).variants[\(i)].overrides[\(j)]", "an override of no field a rule can read"))
                        continue
                    }
                    let values = (override["values"]?.elements ?? []).compactMap(\.string).map(StringEscaping.quoted)
                    guard !values.isEmpty else { continue }
                    featureRules.append(
                        (
                            Identifier.written(entries[i].name), .atom("\(path) in [\(values.joined(separator: ", "))]"),
                            [(StringEscaping.quoted(entries[i].payload ?? ""), .always)]
                        ))
                }
            }
            guard
                let split = split(
                    entries.map { ($0.name, $0.weight) }, stickiness: variants[0]["stickiness"]?.string, groupId: key,
                    at: place + ".variants")
            else { return [flag] }
            featureRules.append((split, .always, payloadTests(of: entries)))
        } else {
            featureRules = [("disabled", .always, [("\"\"", .always)])]
        }
        // The first strategy on decides: its own variants (their overrides unread), or the
        // feature's. Strategies in a row without variants share one set of the feature's.
        // (With no strategy of variants of its own, the flag on is all it takes.)
        let anyOwn = strategies.contains { !($0.json["variants"]?.elements ?? []).isEmpty }
        var withoutVariants: [ImportedCondition] = anyOwn ? [] : [.always]
        func addFeatureVariants() {
            guard !withoutVariants.isEmpty else { return }
            let on = ImportedCondition.and([.atom(flagName), .or(withoutVariants)])
            spent += featureRules.reduce(0) { $0 + $1.result.utf8.count + $1.condition.text.utf8.count }
            rules += featureRules.map { .init($0.result, when: .and([on, $0.condition])) }
            for rule in featureRules {
                payloadRules += rule.payloads.map { .init($0.0, when: .and([on, rule.condition, $0.1])) }
            }
            withoutVariants = []
        }
        for strategy in strategies {
            guard let variants = strategy.json["variants"]?.elements, !variants.isEmpty else {
                if anyOwn { withoutVariants.append(strategy.condition) }
                continue
            }
            addFeatureVariants()
            // (A strategy's variants are bucketed by the strategy's stickiness, not theirs.)
            guard let entries = addCases(variants, at: strategy.at + ".variants"),
                let split = split(
                    entries.map { ($0.name, $0.weight) }, stickiness: strategy.json["parameters"]?["stickiness"]?.string,
                    groupId: strategy.json["parameters"]?["groupId"]?.string ?? key, at: strategy.at + ".variants")
            else { return [flag] }
            let on = ImportedCondition.and([.atom(flagName), strategy.condition])
            rules.append(.init(split, when: on))
            payloadRules += payloadTests(of: entries).map { .init($0.0, when: .and([on, $0.1])) }
        }
        addFeatureVariants()
        guard spent <= expansionLimit else {
            notes.append(
                ImportNote(
                    .notImported, at: place + ".variants",
                    "the feature's variants written for each run of strategies without their own pass \(expansionLimit) bytes, the most an import writes; the variants are left out"
                ))
            return [flag]
        }
        var variant = ImportedDeclaration(name: variantName, kind: .variant(cases), defaultText: "disabled")
        variant.doc = ["The variant of \(flagName) (Unleash's getVariant): disabled while \(flagName) is off."]
        variant.rules = rules
        guard payloads.values.contains(where: { $0 != nil }) else { return [flag, variant] }
        var payload = ImportedDeclaration(
            name: names.name(for: key + " payload", base: flagName + "Payload"), kind: .value("string"), defaultText: "\"\"")
        payload.doc = ["The payload of \(variantName)'s variant (Unleash's getVariant payload value): empty for one without."]
        if payloadClash == nil {
            // Each variant name has one payload: the payload is by the variant given.
            payload.rules = payloads.sorted { $0.key < $1.key }.compactMap { name, text in
                text.flatMap {
                    $0.isEmpty ? nil : .init(StringEscaping.quoted($0), when: .atom("\(variantName) == \(ImportedSource.caseName(name))"))
                }
            }
        } else {
            spent += payloadRules.reduce(0) { $0 + $1.result.utf8.count + $1.condition.text.utf8.count }
            guard spent <= expansionLimit else {
                notes.append(
                    ImportNote(
                        .notImported, at: payloadClash!,
                        "the payloads, by the rule that gives the variant, pass \(expansionLimit) bytes, the most an import writes; left out"
                    ))
                return [flag, variant]
            }
            payload.rules = payloadRules
        }
        return [flag, variant, payload]
    }

    /// A variant split by Unleash's variant algorithm (FlagRules' own `split`).
    private mutating func split(_ entries: [(String, Int)], stickiness: String?, groupId: String, at: String) -> String? {
        let kept = entries.filter { $0.1 > 0 }
        let total = kept.reduce(0) { min($0 + min($1.1, Int(Int32.max) + 1), Int(Int32.max) + 1) }
        guard !kept.isEmpty, total <= Int(Int32.max), Set(kept.map(\.0)).count == kept.count else {
            notes.append(
                ImportNote(
                    .notImported, at: at, "variants with no weight, or one variant twice, have no split form; the variants are left out"))
            return nil
        }
        // One variant with weight: every bucket is in it, even a random one (Unleash's with
        // neither a user id nor a session id).
        if kept.count == 1 { return Identifier.written(kept[0].0) }
        guard let unit = self.unit(stickiness, at: at) else { return nil }
        let entries = kept.map { "\(Identifier.writtenAsOutcome($0.0)): \($0.1)" }.joined(separator: ", ")
        return "split(\(unit), \(StringEscaping.quoted(groupId))) { \(entries) }"
    }

    /// The unit a stickiness names: `default` is the user id, else the session id.
    private mutating func unit(_ stickiness: String?, at: String) -> String? {
        switch stickiness ?? "default" {
        case "default": return "userId ?? sessionId"
        case "random":
            notes.append(ImportNote(.notImported, at: at, "random stickiness gives each call its own bucket; left out"))
            return nil
        case let field:
            guard let path = ImportedSource.path([field]) else {
                notes.append(ImportNote(.notImported, at: at, "stickiness '\(field)' is no field a rule can read; left out"))
                return nil
            }
            return path
        }
    }

    // MARK: Strategies

    /// When a strategy is on: its kind's test, its constraints and its segments'.
    private mutating func strategy(_ strategy: JSON, feature: String, at: String) -> ImportedCondition? {
        let name = strategy["name"]?.string ?? ""
        let parameters = strategy["parameters"] ?? .object([])
        func text(_ key: String) -> String? {
            switch parameters[key] {
            case .string(let s)?: return s
            case .int(let i)?: return String(i)
            default: return nil
            }
        }
        var parts: [ImportedCondition] = []
        switch name {
        case "default":
            break
        case "flexibleRollout", "gradualRolloutUserId", "gradualRolloutSessionId":
            let percentText = text(name == "flexibleRollout" ? "rollout" : "percentage") ?? "100"
            guard let percent = Int(percentText), (0...100).contains(percent) else {
                notes.append(
                    ImportNote(.notImported, at: at + ".parameters", "'\(percentText)' is no whole percentage; the strategy is left out"))
                return nil
            }
            let stickiness =
                name == "gradualRolloutUserId" ? "userId" : name == "gradualRolloutSessionId" ? "sessionId" : text("stickiness")
            guard let unit = unit(stickiness, at: at + ".parameters.stickiness") else { return nil }
            let groupId = text("groupId") ?? feature
            if percent == 0 { return .never }
            // (A missing unit is off, as in Unleash.)
            if percent < 100 {
                parts.append(.atom("rollout(\(unit), \(StringEscaping.quoted(groupId))) < \(percent)%"))
            } else if (stickiness ?? "default") != "default" {
                parts.append(.atom("has(\(unit))"))  // a missing field of its own: off
            }  // (default stickiness at 100%: on for everyone, a missing id included)
        case "userWithId":
            // (An empty entry is kept, as Unleash keeps it: it is the empty user id.)
            let ids = (text("userIds") ?? "").split(separator: ",", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            parts.append(ids.isEmpty ? .never : .atom("userId in [\(ids.map(StringEscaping.quoted).joined(separator: ", "))]"))
        case "remoteAddress":
            let entries = (text("IPs") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let test = network("remoteAddress", entries, at: at + ".parameters.IPs") else { return nil }
            parts.append(test)
        default:
            notes.append(
                ImportNote(
                    .notImported, at: at,
                    "the '\(name)' strategy has no .flags form (it reads the host, or is custom); the strategy is left out"))
            return nil
        }
        for (i, constraint) in (strategy["constraints"]?.elements ?? []).enumerated() {
            guard let c = self.constraint(constraint, at: "\(at).constraints[\(i)]") else { return nil }
            parts.append(c)
        }
        for id in (strategy["segments"]?.elements ?? []).compactMap(\.integer) {
            guard let constraints = segments[id] else {
                notes.append(
                    ImportNote(.notImported, at: at + ".segments", "segment \(id) is not in the payload; the strategy is left out"))
                return nil
            }
            for (i, constraint) in constraints.enumerated() {
                guard let c = self.constraint(constraint, at: "segments[id \(id)].constraints[\(i)]") else { return nil }
                parts.append(c)
            }
        }
        return .and(parts)
    }

    /// Whether `text` is a time of the one RFC 3339 form Unleash's engine and `.flags`
    /// read as the same instant: `YYYY-MM-DDTHH:MM:SS`, no decimals or three (Unleash's
    /// engine matches no constraint of another number), `Z` or an offset `±HH:MM`.
    static func isPlainTimestamp(_ text: String) -> Bool {
        let b = Array(text.utf8)
        let shape = Array("0000-00-00T00:00:00".utf8)
        func digit(_ c: UInt8) -> Bool { (0x30...0x39).contains(c) }
        guard b.count >= 20, DateTime.parse(text) != nil,
            zip(shape, b).allSatisfy({ s, c in s == UInt8(ascii: "0") ? digit(c) : s == c })
        else { return false }
        var i = 19
        if b[i] == UInt8(ascii: ".") {
            let start = i + 1
            i = start
            while i < b.count, digit(b[i]) { i += 1 }
            guard i - start == 3 else { return false }
        }
        let zone = Array(b[i...])
        if zone == [UInt8(ascii: "Z")] { return true }
        return zone.count == 6 && (zone[0] == UInt8(ascii: "+") || zone[0] == UInt8(ascii: "-")) && digit(zone[1]) && digit(zone[2])
            && zone[3] == UInt8(ascii: ":") && digit(zone[4]) && digit(zone[5])
    }

    /// `path in [networks]`: entries that are no address or network never match in Unleash,
    /// and are left out; a network written another way than .flags reads it is not
    /// imported (nil, with a note).
    private mutating func network(_ path: String, _ entries: [String], at: String) -> ImportedCondition? {
        let ips = entries.filter { if case .failure(.notABlock) = IPBlock.parse($0) { false } else { true } }
        guard ips.allSatisfy({ if case .success = IPBlock.parse($0) { true } else { false } }) else {
            notes.append(
                ImportNote(.notImported, at: at, "addresses .flags does not read as IPs or networks; the strategy is left out"))
            return nil
        }
        return ips.isEmpty ? .never : .atom("\(path) in [\(ips.map(StringEscaping.quoted).joined(separator: ", "))]")
    }

    /// The operators Unleash's engine knows.
    static let operators: Set<String> = [
        "IN", "NOT_IN", "STR_CONTAINS", "STR_STARTS_WITH", "STR_ENDS_WITH", "NUM_EQ", "NUM_GT", "NUM_GTE", "NUM_LT", "NUM_LTE",
        "SEMVER_EQ", "SEMVER_GT", "SEMVER_GTE", "SEMVER_LT", "SEMVER_LTE", "DATE_AFTER", "DATE_BEFORE", "REGEX", "IN_CIDR",
    ]

    /// Why Unleash's engine refuses `strategy`, which turns its whole feature off: a
    /// constraint's operator it does not know (its own or a segment's), or a segment the
    /// payload lacks. Nil when it takes it.
    private func refusal(of strategy: JSON) -> String? {
        var constraints = strategy["constraints"]?.elements ?? []
        for id in (strategy["segments"]?.elements ?? []).compactMap(\.integer) {
            guard let held = segments[id] else { return "segment \(id) is not in the payload" }
            constraints += held
        }
        for constraint in constraints {
            let op = constraint["operator"]?.string ?? ""
            if !Self.operators.contains(op) { return "operator \(op.isEmpty ? "(none)" : op) is unknown" }
        }
        return nil
    }

    /// Whether Unleash's engine (Rust's `regex`, RE2's syntax) refuses `pattern`: a
    /// malformed one, a look-around or a back-reference. (Other patterns outside the
    /// `.flags` dialect are not imported.)
    static func engineRefuses(pattern: String) -> Bool {
        if LaunchDarklyImport.isMalformed(pattern) { return true }
        if ["(?=", "(?!", "(?<=", "(?<!"].contains(where: pattern.contains) { return true }
        var escaped = false
        for c in pattern {
            if escaped, c.isASCII, let digit = c.wholeNumberValue, digit > 0 { return true }
            escaped = !escaped && c == "\\"
        }
        return false
    }

    /// A constraint: its operator on a context field; false when the field is missing (so
    /// `NOT_IN` and an inverted constraint are true).
    private mutating func constraint(_ json: JSON, at: String) -> ImportedCondition? {
        let op = json["operator"]?.string ?? ""
        guard let field = json["contextName"]?.string, let path = ImportedSource.path([field]) else {
            notes.append(ImportNote(.notImported, at: at, "a constraint on no field a rule can read; the strategy is left out"))
            return nil
        }
        let values = (json["values"]?.elements ?? []).compactMap(\.string)
        let value = json["value"]?.string
        if op == "DATE_AFTER" || op == "DATE_BEFORE" {
            // Unleash's current time (its context's `currentTime`, now unless given) is `now`.
            guard field == "currentTime" else {
                notes.append(ImportNote(.notImported, at: at, "\(op) compares only currentTime in .flags; the strategy is left out"))
                return nil
            }
            guard let value, Self.isPlainTimestamp(value) else {
                notes.append(
                    ImportNote(
                        .notImported, at: at,
                        "'\(value ?? "")' is not a time such as 2026-06-01T00:00:00.000Z (or +02:00), the form Unleash's engine matches; the strategy is left out"
                    ))
                return nil
            }
            notes.append(
                ImportNote(.remark, at: at, "Unleash's currentTime is `now` in .flags: a context value `now` sets it, as currentTime does"))
            let test = ImportedCondition.atom("now \(op == "DATE_AFTER" ? ">" : "<") \(StringEscaping.quoted(value))")
            return json["inverted"] == .bool(true) ? .negated(test) : test
        }
        if field == "appName" || field == "environment" {
            notes.append(
                ImportNote(
                    .remark, at: at,
                    "Unleash's SDK fills \(field) from its configuration; a .flags context must carry it for this constraint to read it"))
        }
        let insensitive = json["caseInsensitive"] == .bool(true)
        let subject = insensitive ? "lower(\(path))" : path
        var test: ImportedCondition
        switch op {
        case "IN", "NOT_IN":
            test = values.isEmpty ? .never : .atom("\(path) in [\(values.map(StringEscaping.quoted).joined(separator: ", "))]")
        case "STR_CONTAINS", "STR_STARTS_WITH", "STR_ENDS_WITH":
            let word = ["STR_CONTAINS": "contains", "STR_STARTS_WITH": "starts with", "STR_ENDS_WITH": "ends with"][op]!
            test = .or(values.map { .atom("\(subject) \(word) \(StringEscaping.quoted(insensitive ? $0.lowercased() : $0))") })
        case "NUM_EQ", "NUM_GT", "NUM_GTE", "NUM_LT", "NUM_LTE":
            let symbol = ["NUM_EQ": "==", "NUM_GT": ">", "NUM_GTE": ">=", "NUM_LT": "<", "NUM_LTE": "<="][op]!
            guard let value, let number = Double(value), let literal = ImportedSource.double(number) else {
                notes.append(ImportNote(.notImported, at: at, "'\(value ?? "")' is no number; the strategy is left out"))
                return nil
            }
            test = .atom("\(path) \(symbol) \(literal)")
        case "SEMVER_EQ", "SEMVER_GT", "SEMVER_GTE", "SEMVER_LT", "SEMVER_LTE":
            let symbol = ["SEMVER_EQ": "==", "SEMVER_GT": ">", "SEMVER_GTE": ">=", "SEMVER_LT": "<", "SEMVER_LTE": "<="][op]!
            // (Unleash reads three numbers and no `v`: any other value never matches.)
            if let value, !value.hasPrefix("v"), let version = GrowthBookImport.version(value) {
                test = .atom("\(path) \(symbol) \(version)")
            } else {
                // (Inverted too: Unleash's engine reads such a constraint as false.)
                notes.append(
                    ImportNote(
                        .remark, at: at,
                        "'\(value ?? "")' is no version of three numbers: Unleash's constraint never matches, inverted or not"))
                return .never
            }
        case "REGEX":
            // (A search, as Unleash's engine matches; case-insensitive with (?i).)
            guard let value else {
                notes.append(ImportNote(.notImported, at: at, "REGEX without a pattern; the strategy is left out"))
                return nil
            }
            let pattern = insensitive ? "(?i)" + value : value
            if LaunchDarklyImport.compiles(pattern) {
                test = .atom("\(path) matches \(StringEscaping.quoted(pattern))")
            } else if Self.engineRefuses(pattern: value) {
                notes.append(
                    ImportNote(
                        .remark, at: at,
                        "the pattern \(StringEscaping.quoted(value)) is no regular expression Unleash's engine compiles: the constraint is false, as imported"
                    ))
                test = .never
            } else {
                notes.append(
                    ImportNote(
                        .notImported, at: at,
                        "the pattern \(StringEscaping.quoted(value)) is outside the .flags dialect; the strategy is left out"))
                return nil
            }
        case "IN_CIDR":
            guard let networks = network(path, values, at: at) else { return nil }
            test = networks
        default:
            notes.append(ImportNote(.notImported, at: at, "operator \(op) has no .flags form here; the strategy is left out"))
            return nil
        }
        // A missing field: the operator is false (NOT_IN is the negation of IN); so is a
        // number or a version Unleash cannot read, which .flags leaves unknown.
        let holds: ImportedCondition =
            op.hasPrefix("NUM_") || op.hasPrefix("SEMVER_") ? test.knownOrFalse : .and([.atom("has(\(path))"), test])
        let negate = (op == "NOT_IN") != (json["inverted"] == .bool(true))
        return negate ? .negated(holds) : test
    }
}
