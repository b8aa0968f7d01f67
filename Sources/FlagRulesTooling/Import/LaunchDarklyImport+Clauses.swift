import FlagRules
import Foundation

/// LaunchDarkly's clauses and segments: what a rule's conditions read.
extension LaunchDarklyImport {
    // MARK: Clauses

    /// A context attribute as a path: the `user` kind's at the top, another kind's in an
    /// object named by the kind; an attribute reference (`/address/city`) as a path where a
    /// context kind is given (without one, LaunchDarkly reads the whole text as a name).
    func reference(_ attribute: String, kind: String?) -> String? {
        var names: [String]
        if attribute.hasPrefix("/"), !(kind ?? "").isEmpty {
            let parts = attribute.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
            // A malformed reference (an empty part, `~` not before `0` or `1`) is an error
            // in LaunchDarkly.
            func wellFormed(_ part: Substring) -> Bool {
                !part.isEmpty
                    && part.indices.allSatisfy { i in part[i] != "~" || ["0", "1"].contains(part[part.index(after: i)...].first) }
            }
            guard parts.allSatisfy(wellFormed) else { return nil }
            names = parts.map { $0.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~") }
        } else {
            names = [attribute]
        }
        if let kind, kind != "user" { names.insert(kind, at: 0) }
        return ImportedSource.path(names)
    }

    /// Every clause of a rule; nil (and a note) when one cannot be read.
    mutating func clauses(_ clauses: [JSON], at place: String) -> ImportedCondition? {
        var parts: [ImportedCondition] = []
        for (i, clause) in clauses.enumerated() {
            guard let part = self.clause(clause, at: "\(place).clauses[\(i)]") else { return nil }
            parts.append(part)
        }
        return .and(parts)
    }

    /// One clause: its values (any of them) under its operator, negated when it says so; a
    /// missing attribute never matches, even negated (as `.flags`' unknown).
    mutating func clause(_ clause: JSON, at place: String) -> ImportedCondition? {
        let op = clause["op"]?.string ?? ""
        let values = clause["values"]?.elements ?? []
        let negate = clause["negate"] == .bool(true)
        if op == "segmentMatch" {
            var matched: [ImportedCondition] = []
            var unknown = 0
            for key in values.compactMap(\.string) {
                if let name = segment(key) {
                    matched.append(.atom(name))
                } else if segments[key] == nil {
                    // A segment the file does not hold matches no one in LaunchDarkly's SDKs.
                    notes.append(
                        ImportNote(.remark, at: place, "segment '\(key)' is not in the file: it matches no one, as in LaunchDarkly"))
                    unknown += 1
                }
            }
            if matched.count + unknown < values.count {
                notes.append(ImportNote(.notImported, at: place, "a segment it names is not imported; the rule is left out"))
                return nil
            }
            let any = ImportedCondition.or(matched)
            return negate ? .negated(any) : any
        }
        guard let attributeName = clause["attribute"]?.string else {
            notes.append(ImportNote(.notImported, at: place, "a clause without an attribute; the rule is left out"))
            return nil
        }
        // (`/kind`, a reference where a context kind is given, names it too.)
        if attributeName == "kind" || (attributeName == "/kind" && !(clause["contextKind"]?.string ?? "").isEmpty) {
            // The context's kinds: the user's attributes are at the top, another kind's in an
            // object named by it, and every kind has a key. Which kinds a context has cannot be
            // listed, so a test other than `in` cannot be written.
            guard op == "in" else {
                notes.append(
                    ImportNote(
                        .notImported, at: place,
                        "'\(op)' on context kinds has no .flags form ('in' has: the kinds a context has cannot be listed); the rule is left out"
                    ))
                return nil
            }
            var kinds: [ImportedCondition] = []
            for kind in values.compactMap(\.string) where !kind.isEmpty && kind != "multi" {
                guard let key = reference("key", kind: kind) else { continue }
                kinds.append(.atom("has(\(key))"))
            }
            let any = ImportedCondition.or(kinds)
            return negate ? .negated(any) : any
        }
        guard let path = reference(attributeName, kind: clause["contextKind"]?.string) else {
            notes.append(
                ImportNote(.notImported, at: place, "'\(attributeName)' is no attribute a .flags rule can read; the rule is left out"))
            return nil
        }
        // (LaunchDarkly's `anonymous` is false unless a context says otherwise.)
        let anonymous =
            attributeName == "anonymous" || (attributeName == "/anonymous" && !(clause["contextKind"]?.string ?? "").isEmpty)
        let present: ImportedCondition = anonymous ? .always : .atom("has(\(path))")
        let attribute = anonymous ? "(\(path) ?? false)" : path
        var tests: [ImportedCondition] = []
        // A test of the attribute, or of each element of a list it holds (LaunchDarkly tries
        // the operator on each element; `anonymous` is a bool).
        func eachElement(_ test: String) -> ImportedCondition {
            // (`anonymous` is a bool: a string or number operator is false of it.)
            anonymous ? .never : .or([.atom("\(attribute) \(test)"), .atom("any(\(attribute)) \(test)")])
        }
        switch op {
        case "in":
            let strings = values.compactMap(\.string).map(StringEscaping.quoted)
            let numbers = values.compactMap { v -> String? in
                if case .string = v { return nil } else if case .bool = v { return nil } else { return ImportedSource.literal(v) }
            }
            let bools = values.compactMap { v -> String? in if case .bool(let b) = v { b ? "true" : "false" } else { nil } }
            // An attribute holding a list matches when an element does, as LaunchDarkly
            // iterates over it; a test of another type reads false.
            for group in [strings, numbers] where !group.isEmpty {
                let list = "[\(group.joined(separator: ", "))]"
                let scalar = group.count == 1 ? "\(attribute) == \(group[0])" : "\(attribute) in \(list)"
                tests.append(anonymous ? .atom(scalar) : .atom("(\(scalar) or \(attribute) contains any \(list)) ?? false"))
            }
            for b in Set(bools).sorted() {
                tests.append(
                    anonymous ? .atom("\(attribute) == \(b)") : .atom("(\(attribute) == \(b) or \(attribute) contains \(b)) ?? false"))
            }
        case "startsWith", "endsWith", "contains":
            let word = ["startsWith": "starts with", "endsWith": "ends with", "contains": "contains"][op]!
            tests = values.compactMap(\.string).map { eachElement("\(word) \(StringEscaping.quoted($0))") }
        case "matches":
            for pattern in values.compactMap(\.string) {
                guard LaunchDarklyImport.compiles(pattern) else {
                    notes.append(
                        ImportNote(
                            .notImported, at: place,
                            "the pattern \(StringEscaping.quoted(pattern)) is outside the .flags dialect; the rule is left out"))
                    return nil
                }
                tests.append(eachElement("matches \(StringEscaping.quoted(pattern))"))
            }
        case "lessThan", "lessThanOrEqual", "greaterThan", "greaterThanOrEqual":
            let symbol = ["lessThan": "<", "lessThanOrEqual": "<=", "greaterThan": ">", "greaterThanOrEqual": ">="][op]!
            tests = values.compactMap { v -> ImportedCondition? in
                switch v {
                case .int, .double: return ImportedSource.literal(v).map { eachElement("\(symbol) \($0)") }
                default: return nil
                }
            }
        case "before", "after":
            // A time is a number of milliseconds since 1970 or an RFC 3339 string, which has
            // a date, a time and an offset; a clause value that is neither never matches.
            let symbol = op == "before" ? "<" : ">"
            for value in values {
                let time: Date?
                switch value {
                case .int(let ms): time = Date(timeIntervalSince1970: Double(ms) / 1000)
                case .double(let ms): time = Date(timeIntervalSince1970: ms / 1000)
                case .string(let text): time = Self.isRFC3339(text) ? DateTime.parse(text) : nil
                default: time = nil
                }
                guard let time, time.timeIntervalSince1970.magnitude < 253_402_300_800 else { continue }
                let offset = StringEscaping.quoted(Self.offsetPattern)
                tests.append(
                    .atom(
                        "(datetime(\(attribute)) \(symbol) \(StringEscaping.quoted(DateTime.format(time)))"
                            + " and ((\(attribute) matches \(offset)) ?? true)) ?? false"))
            }
        case "semVerEqual", "semVerLessThan", "semVerGreaterThan":
            let symbol = ["semVerEqual": "==", "semVerLessThan": "<", "semVerGreaterThan": ">"][op]!
            for value in values.compactMap(\.string) {
                // A clause value that is no version matches nothing, as in LaunchDarkly's SDKs.
                guard let version = LaunchDarklyImport.version(value) else {
                    notes.append(
                        ImportNote(.remark, at: place, "'\(value)' is no semantic version: it matches nothing, as in LaunchDarkly"))
                    continue
                }
                tests.append(.atom("\(attribute) \(symbol) \(version)"))
            }
        default:
            // LaunchDarkly's SDKs match nothing with an operator they do not know (negated,
            // every present attribute).
            notes.append(ImportNote(.remark, at: place, "operator '\(op)' is unknown to LaunchDarkly: the clause matches nothing"))
        }
        let any = ImportedCondition.or(tests)
        // Negated, a clause holds for a present attribute that matches none of its values
        // (none at all, when it has none of the attribute's type, or is of another type or
        // no version or time: a test LaunchDarkly cannot make is false, so its negation holds).
        return negate ? .and([present, .negated(any.knownOrFalse)]) : any
    }

    /// The end of an RFC 3339 time: its offset. A context's string without one is no time
    /// in LaunchDarkly (a date alone, a time without an offset).
    static let offsetPattern = "([Zz]|[+-][0-9][0-9]:?[0-9][0-9])$"

    /// Whether `text` is an RFC 3339 time: a date, `T` and a time, with an offset.
    static func isRFC3339(_ text: String) -> Bool {
        guard text.utf8.count > 10, DateTime.parse(text) != nil else { return false }
        let separator = text.utf8[text.utf8.index(text.utf8.startIndex, offsetBy: 10)]
        return (separator == UInt8(ascii: "T") || separator == UInt8(ascii: "t"))
            && text.range(of: offsetPattern, options: .regularExpression) != nil
    }

    /// A version literal for LaunchDarkly's lenient semantic version (`2` and `2.3` are
    /// `2.0.0` and `2.3.0`).
    static func version(_ text: String) -> String? {
        let core = text.prefix { $0 != "-" && $0 != "+" }
        var parts = core.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard (1...3).contains(parts.count), parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) })
        else {
            return nil
        }
        while parts.count < 3 { parts.append("0") }
        let version = parts.joined(separator: ".") + text.dropFirst(core.count)
        return (try? RuleSet(source: "value v: bool = false { true when x == \(version) }")) != nil ? version : nil
    }

    /// Whether a pattern is one `matches` takes.
    static func compiles(_ pattern: String) -> Bool {
        (try? RuleSet(source: "flag f { enabled when x matches \(StringEscaping.quoted(pattern)) }")) != nil
    }

    /// Whether LaunchDarkly's SDKs refuse `clause` when they reach it: it names no
    /// attribute (or an empty one), or, with a context kind (without one a name is read literally), a
    /// malformed reference (empty; or a path with an empty component, or a `~` not followed
    /// by `0` or `1`). A segment's clause names none.
    static func isMalformed(clause: JSON) -> Bool {
        guard clause["op"]?.string != "segmentMatch" else { return false }
        guard let name = clause["attribute"]?.string, !name.isEmpty else { return true }
        guard !(clause["contextKind"]?.string ?? "").isEmpty else { return false }
        guard name.hasPrefix("/") else { return name.isEmpty }
        let components = name.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        for component in components {
            if component.isEmpty { return true }
            var rest = component[...]
            while let tilde = rest.firstIndex(of: "~") {
                let next = rest.index(after: tilde)
                guard next < rest.endIndex, rest[next] == "0" || rest[next] == "1" else { return true }
                rest = rest[rest.index(after: next)...]
            }
        }
        return false
    }

    /// Whether `pattern` is malformed in every regular-expression syntax (so that an engine
    /// refuses it, whatever it supports): parentheses that do not pair, a class not closed, a
    /// trailing backslash, or a repetition of nothing (first, or after `(` or `|`).
    static func isMalformed(_ pattern: String) -> Bool {
        var depth = 0
        var inClass = false
        var escaped = false
        // Whether something before (in this group or alternative) can be repeated.
        var repeatable = false
        var opened = false
        for c in pattern {
            if escaped {
                escaped = false
                repeatable = true
                continue
            }
            if c == "\\" {
                escaped = true
                continue
            }
            if inClass {
                if c == "]" {
                    inClass = false
                    repeatable = true
                }
                continue
            }
            defer {
                opened = c == "("
                repeatable = c != "(" && c != "|"
            }
            switch c {
            case "[": inClass = true
            case "(": depth += 1
            case ")":
                depth -= 1
                if depth < 0 { return true }
            case "?" where opened: break  // a group's flags or kind: (?i), (?:…)
            case "*", "+", "?":
                if !repeatable { return true }
            default: break
            }
        }
        return depth != 0 || inClass || escaped
    }

    // MARK: Segments

    /// Segment `key`'s name, the segment written the first time a rule reads it (after the
    /// segments it reads); nil, with a note, when it cannot be.
    mutating func segment(_ key: String) -> String? {
        if let name = segmentNames[key] { return name }
        guard let json = segments[key], !failedSegments.contains(key) else { return nil }
        let place = "segments.\(key)"
        guard !writingSegments.contains(key) else {
            notes.append(
                ImportNote(.notImported, at: place, "segment '\(key)' reads itself through its rules (LaunchDarkly answers an error)"))
            failedSegments.insert(key)
            return nil
        }
        if json["unbounded"] == .bool(true) {
            notes.append(ImportNote(.notImported, at: place, "a big segment's members live in LaunchDarkly's store, not in this file"))
            failedSegments.insert(key)
            return nil
        }
        writingSegments.insert(key)
        defer { writingSegments.remove(key) }
        guard let condition = segmentCondition(json, key: key, place: place) else {
            failedSegments.insert(key)
            return nil
        }
        let name = names.name(for: "segments." + key, base: key)
        if let note = names.renameNote(for: "segments." + key, key: key, at: place, what: "segment ") { notes.append(note) }
        segmentNames[key] = name
        // A segment matches or not (a missing attribute makes its clause false), so a rule
        // that negates it matches a context its clauses cannot read.
        writtenSegments.append((name, description(json), condition.knownOrFalse))
        return name
    }

    /// A segment: its included keys, or not its excluded ones and any of its rules; nil when
    /// a rule cannot be read.
    mutating func segmentCondition(_ json: JSON, key: String, place: String) -> ImportedCondition? {
        let salt = json["salt"]?.string ?? ""
        func keys(_ field: String, kind: String?) -> ImportedCondition {
            let values = (json[field]?.elements ?? []).compactMap(\.string)
            guard !values.isEmpty, let attribute = reference("key", kind: kind) else { return .never }
            // (A context of other kinds alone has no user key: in no list.)
            return .atom("(\(attribute) in [\(values.map(StringEscaping.quoted).joined(separator: ", "))]) ?? false")
        }
        func contexts(_ field: String) -> ImportedCondition {
            .or(
                (json[field]?.elements ?? []).map { t in
                    let values = (t["values"]?.elements ?? []).compactMap(\.string)
                    guard !values.isEmpty, let attribute = reference("key", kind: t["contextKind"]?.string) else { return .never }
                    // (A context without that kind is in no list: false, not unknown.)
                    return .atom("(\(attribute) in [\(values.map(StringEscaping.quoted).joined(separator: ", "))]) ?? false")
                })
        }
        let included = ImportedCondition.or([keys("included", kind: nil), contexts("includedContexts")])
        let excluded = ImportedCondition.or([keys("excluded", kind: nil), contexts("excludedContexts")])
        var rules: [ImportedCondition] = []
        for (i, rule) in (json["rules"]?.elements ?? []).enumerated() {
            let at = "\(place).rules[\(i)]"
            // (A rule that cannot be read leaves the segment out: it would match fewer.)
            guard var condition = clauses(rule["clauses"]?.elements ?? [], at: at) else { return nil }
            if let weight = rule["weight"]?.integer {
                let bucketBy = rule["bucketBy"]?.string.flatMap { $0.isEmpty ? nil : $0 } ?? "key"
                guard let unit = reference(bucketBy, kind: rule["rolloutContextKind"]?.string) else {
                    notes.append(
                        ImportNote(.notImported, at: at, "'\(bucketBy)' is no attribute a .flags rule can read; the segment is left out"))
                    return nil
                }
                let share = max(0, min(weight, 100_000))
                let call = ImportedCondition.atom(
                    "rollout(\(unit), \(StringEscaping.quoted("\(key).\(salt)")), launchdarkly) < \(ImportedSource.percent(thousandths: share))"
                )
                // Without the attribute (or with one of no string or int) the bucket is 0: in,
                // unless the weight is 0; without the rule's kind it is -1: in.
                var inRollout: ImportedCondition =
                    share == 0 ? .never : share >= 100_000 ? .always : .atom("(\(call.text)) ?? true")
                if let kind = rule["rolloutContextKind"]?.string, kind != "user", let object = ImportedSource.path([kind]) {
                    inRollout = .or([.not(.atom("has(\(object))")), inRollout])
                }
                condition = .and([condition, inRollout])
            }
            rules.append(condition)
        }
        let unlessExcluded: ImportedCondition = .and([.negated(excluded), .or(rules)])
        let condition = ImportedCondition.or([included, excluded == .never ? .or(rules) : unlessExcluded])
        return condition
    }
}
