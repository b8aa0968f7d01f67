import FlagRules

// GrowthBook's conditions: attribute tests, `$and`/`$or`/`$nor`/`$not`, and saved groups.
extension GrowthBookImport {
    /// A JSON number as a double; nil for anything else.
    static func number(_ json: JSON) -> Double? {
        switch json {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }

    /// A condition object: every member holds (attributes by path, `$and`, `$or`, `$nor`,
    /// `$not`). `negated`: under an odd number of negations, where a comparison with an
    /// absent attribute must read false, not unknown.
    mutating func condition(_ json: JSON, negated: Bool, at: String) -> ImportedCondition? {
        guard case .object(let members) = json else {
            notes.append(ImportNote(.notImported, at: at, "a condition is an object; the rule is left out"))
            return nil
        }
        var parts: [ImportedCondition] = []
        for (key, value) in members {
            switch key {
            case "$and", "$or", "$nor":
                guard let list = value.elements else {
                    notes.append(ImportNote(.notImported, at: "\(at).\(key)", "\(key) takes a list; the rule is left out"))
                    return nil
                }
                var inner: [ImportedCondition] = []
                for (i, c) in list.enumerated() {
                    guard let part = condition(c, negated: negated != (key == "$nor"), at: "\(at).\(key)[\(i)]") else { return nil }
                    inner.append(part)
                }
                switch key {
                case "$and": parts.append(.and(inner))
                case "$or": parts.append(list.isEmpty ? .always : .or(inner))
                default: parts.append(list.isEmpty ? .never : .negated(.or(inner)))
                }
            case "$not":
                guard let inner = condition(value, negated: !negated, at: "\(at).$not") else { return nil }
                parts.append(.negated(inner))
            case "$savedGroup":
                guard let group = savedGroup(value, negated: negated, at: "\(at).$savedGroup") else { return nil }
                parts.append(group)
            case "$savedGroups":
                // (A retired key; the SDK reads it as false.)
                parts.append(.never)
            default:
                // Any other key is an attribute's path, `$groups` too, as the SDK reads it.
                guard let path = ImportedSource.path(key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)) else {
                    notes.append(
                        ImportNote(
                            .notImported, at: "\(at).\(key)", "'\(key)' is no attribute a .flags rule can read; the rule is left out"))
                    return nil
                }
                guard let part = valueCondition(path, value, negated: negated, at: "\(at).\(key)") else { return nil }
                parts.append(part)
            }
        }
        return .and(parts)
    }

    /// A test of one attribute, or of the value of a parent feature whose values are of
    /// type `parent` (never absent, and never equal to or ordered with a value of
    /// another JSON type).
    mutating func valueCondition(
        _ path: String, _ test: JSON, negated: Bool, at: String, parent: String? = nil
    ) -> ImportedCondition? {
        let declaration = parent != nil
        func fits(_ value: JSON) -> Bool { parent.map { Self.isOfType(value, $0) } ?? true }
        // Under a negation a comparison is guarded by presence, so that it reads false (not
        // unknown) for an absent attribute, as GrowthBook's does.
        func compare(_ text: String) -> ImportedCondition {
            let atom = ImportedCondition.atom(text)
            return negated && !declaration ? .and([.atom("has(\(path))"), atom]) : atom
        }
        func equal(_ value: JSON) -> ImportedCondition? {
            if parent == "flag", case .bool(let b) = value { return b ? .atom(path) : .not(.atom(path)) }
            switch value {
            case .null: return declaration ? .never : .not(.atom("has(\(path))"))
            case .bool, .int, .double, .string: return fits(value) ? compare("\(path) == \(ImportedSource.literal(value)!)") : .never
            case .array(let elements) where elements.allSatisfy({ ImportedSource.literal($0) != nil }):
                // A list attribute equal element by element, in order; false for any other
                // value (a parent's value is never a list).
                if declaration { return .never }
                return .atom("(\(path) == [\(elements.map { ImportedSource.literal($0)! }.joined(separator: ", "))]) ?? false")
            default:
                notes.append(ImportNote(.notImported, at: at, "comparing with \(value.kindName) has no .flags form; the rule is left out"))
                return nil
            }
        }
        func member(_ list: JSON, _ op: String) -> ImportedCondition? {
            guard let listed = list.elements else {
                notes.append(ImportNote(.notImported, at: "\(at).\(op)", "\(op) takes a list; the rule is left out"))
                return nil
            }
            let values = listed.filter(fits)
            let strings = values.compactMap(\.string).map(StringEscaping.quoted)
            let numbers = values.compactMap { v -> String? in
                switch v {
                case .int, .double: ImportedSource.literal(v);
                default: nil
                }
            }
            let bools = values.filter { if case .bool = $0 { true } else { false } }
            let lists = [strings, numbers].filter { !$0.isEmpty }.map { "[\($0.joined(separator: ", "))]" }
            guard declaration else {
                // An attribute: a list attribute is in when it shares a value with the list
                // (GrowthBook's intersection); a test of another type than the attribute's
                // is unknown where GrowthBook's is false, so each reads false when unknown.
                let tests =
                    lists.map { "(\(path) in \($0) or \(path) contains any \($0)) ?? false" }
                    + bools.compactMap { ImportedSource.literal($0).map { "(\(path) == \($0) or \(path) contains \($0)) ?? false" } }
                return .or(tests.map(ImportedCondition.atom))
            }
            return .or(lists.map { compare("\(path) in \($0)") } + bools.map { equal($0) ?? .never })
        }
        // `$ini`: `$in` with strings compared without case (each element of a list
        // attribute, as `lower()` of a list lowers each).
        func memberIgnoringCase(_ list: JSON, _ op: String) -> ImportedCondition? {
            guard let listed = list.elements else { return member(list, op) }
            let strings = listed.compactMap(\.string)
            let others = listed.filter { $0.string == nil }
            var tests: [ImportedCondition] = []
            if !others.isEmpty || strings.isEmpty {
                guard let test = member(.array(others), op) else { return nil }
                tests.append(test)
            }
            if !strings.isEmpty, parent == nil || parent == "string" {
                let lowered = "[" + strings.map { StringEscaping.quoted(ListOperations.lower($0)) }.joined(separator: ", ") + "]"
                tests.append(
                    declaration
                        ? compare("lower(\(path)) in \(lowered)")
                        : .atom("(lower(\(path)) in \(lowered) or lower(\(path)) contains any \(lowered)) ?? false"))
            }
            return .or(tests)
        }
        guard case .object(let members) = test, members.contains(where: { $0.0.hasPrefix("$") }) else { return equal(test) }
        var parts: [ImportedCondition] = []
        for (op, value) in members {
            let part: ImportedCondition?
            switch op {
            case "$eq":
                // (GrowthBook's `$eq` is JavaScript's `===`: never true of an array or object.)
                switch value {
                case .array, .object: part = .never
                default: part = equal(value)
                }
            case "$ne":
                part = valueCondition(path, .object([("$eq", value)]), negated: !negated, at: at, parent: parent).map(
                    ImportedCondition.negated)
            case "$in" where value.elements == nil, "$nin" where value.elements == nil, "$ini" where value.elements == nil,
                "$nini" where value.elements == nil:
                // GrowthBook's `$in`, `$nin`, `$ini` and `$nini` of anything but a list are false.
                notes.append(ImportNote(.remark, at: "\(at).\(op)", "\(op) of \(value.kindName) is false in GrowthBook, as imported"))
                part = .never
            case "$in": part = member(value, op)
            case "$nin":
                part = valueCondition(
                    path, .object([("$in", value)]), negated: !negated, at: at, parent: parent
                ).map(ImportedCondition.negated)
            case "$ini": part = memberIgnoringCase(value, op)
            case "$nini":
                part = valueCondition(
                    path, .object([("$ini", value)]), negated: !negated, at: at, parent: parent
                ).map(ImportedCondition.negated)
            case "$lt", "$lte", "$gt", "$gte":
                let symbol = ["$lt": "<", "$lte": "<=", "$gt": ">", "$gte": ">="][op]!
                switch value {
                case .int, .double, .string:
                    part = !fits(value) || parent == "flag" ? .never : compare("\(path) \(symbol) \(ImportedSource.literal(value)!)")
                default: part = .never
                }
            case "$vlt", "$vlte", "$vgt", "$vgte", "$veq", "$vne":
                if parent != nil {
                    guard let held = versionTest(op, of: path, against: value, parent: parent!, at: at) else { return nil }
                    part = held
                    break
                }
                let symbol = ["$vlt": "<", "$vlte": "<=", "$vgt": ">", "$vgte": ">=", "$veq": "==", "$vne": "!="][op]!
                guard let text = value.string, let version = GrowthBookImport.version(text) else {
                    notes.append(
                        ImportNote(
                            .notImported, at: "\(at).\(op)",
                            "only versions of three numbers compare as .flags versions; the rule is left out"))
                    return nil
                }
                // ($vne holds for a missing attribute: its negation is of a guarded ==.
                // GrowthBook reads a leading `v`, as version() does.)
                let subject = "version(\(path))"
                let equal = ImportedCondition.atom("\(subject) == \(version)")
                part =
                    op == "$vne"
                    ? .negated(negated ? equal : .and([.atom("has(\(path))"), equal]))
                    : compare("\(subject) \(symbol) \(version)")
            case "$inGroup", "$notInGroup":
                // A legacy list, or a list group's values; a group the payload lacks is
                // empty; anything else the SDK reads as false, whichever the operator.
                if let id = value.string, savedGroups[id] == nil {
                    notes.append(
                        ImportNote(.remark, at: "\(at).\(op)", "the payload has no saved group '\(id)': GrowthBook reads it as empty"))
                }
                let group = value.string.map { savedGroups[$0] ?? .array([]) }
                let listed: JSON? =
                    switch group {
                    case .array?: group
                    case .object?: group?["type"]?.string == "list" && group?["values"]?.elements != nil ? group?["values"] : nil
                    default: nil
                    }
                if case .object? = group, let type = group?["type"]?.string, type != "list", type != "condition" {
                    notes.append(
                        ImportNote(
                            .notImported, at: "\(at).\(op)", "saved group of type \"\(type)\" has no .flags form; the rule is left out"))
                    return nil
                }
                guard let listed else {
                    part = .never
                    break
                }
                part = listGroup(value.string!, of: path, values: listed, parent: parent, at: "\(at).\(op)").map {
                    op == "$inGroup" ? $0 : .negated($0)
                }
            case "$exists":
                // (Any falsy value asks for absence, as the SDK reads it.)
                let exists = !(value == .bool(false) || value == .null || value == .int(0) || value == .double(0) || value == .string(""))
                part = declaration ? (exists ? .always : .never) : exists ? .atom("has(\(path))") : .not(.atom("has(\(path))"))
            case "$notRegex", "$notRegexi":
                let positive = op == "$notRegex" ? "$regex" : "$regexi"
                part = valueCondition(path, .object([(positive, value)]), negated: !negated, at: at, parent: parent).map(
                    ImportedCondition.negated)
            case "$regex", "$regexi":
                guard var pattern = value.string else {
                    part = .never
                    break
                }
                if op == "$regexi" { pattern = "(?i)" + pattern }
                if parent.map({ $0 != "string" }) ?? false {
                    part = .never
                    break
                }
                if LaunchDarklyImport.isMalformed(pattern) {
                    // (GrowthBook's `$regex` of a pattern that does not compile is false.)
                    notes.append(
                        ImportNote(
                            .remark, at: "\(at).\(op)",
                            "the pattern \(StringEscaping.quoted(pattern)) does not compile: GrowthBook's test is false, as imported"))
                    part = .never
                    break
                }
                guard LaunchDarklyImport.compiles(pattern) else {
                    notes.append(
                        ImportNote(
                            .notImported, at: "\(at).\(op)",
                            "the pattern \(StringEscaping.quoted(pattern)) is outside the .flags dialect; the rule is left out"))
                    return nil
                }
                part = compare("\(path) matches \(StringEscaping.quoted(pattern))")
            case "$not":
                part = valueCondition(path, value, negated: !negated, at: "\(at).$not", parent: parent).map(
                    ImportedCondition.negated)
            case "$size", "$all", "$alli", "$elemMatch", "$type":
                // (A parent feature's value is never a list; its type is its values'.)
                if let parent {
                    part = op == "$type" ? (Self.jsonType(of: parent) == value.string ? .always : .never) : .never
                    break
                }
                guard let list = listCondition(path, op, value, at: "\(at).\(op)") else { return nil }
                part = list
            default:
                notes.append(ImportNote(.notImported, at: "\(at).\(op)", "\(op) has no .flags form; the rule is left out"))
                return nil
            }
            guard let part else { return nil }
            parts.append(part)
        }
        return .and(parts)
    }

    /// `$size`, `$all`, `$elemMatch` and `$type` of an attribute, each false (never unknown)
    /// where the attribute is absent or, but for `$type`, no list, as in GrowthBook.
    mutating func listCondition(_ path: String, _ op: String, _ value: JSON, at: String) -> ImportedCondition? {
        func fail(_ why: String) -> ImportedCondition? {
            notes.append(ImportNote(.notImported, at: at, why + "; the rule is left out"))
            return nil
        }
        /// A `.flags` list of the values, all strings or all ints; nil for other values.
        func literalList(_ values: [JSON]) -> String? {
            let strings = values.compactMap(\.string)
            if strings.count == values.count { return "[" + strings.map(StringEscaping.quoted).joined(separator: ", ") + "]" }
            let ints = values.compactMap { v -> Int? in if case .int(let i) = v { i } else { nil } }
            if ints.count == values.count { return "[" + ints.map(String.init).joined(separator: ", ") + "]" }
            return nil
        }
        let isList = ImportedCondition.atom("(count(\(path)) >= 0) ?? false")
        switch op {
        case "$size":
            switch value {
            case .int, .double: return .atom("(count(\(path)) == \(ImportedSource.literal(value)!)) ?? false")
            case .object:
                // A condition on the length, as on an int value that is never absent.
                guard let length = valueCondition("count(\(path))", value, negated: false, at: at, parent: "int") else { return nil }
                return .and([isList, length.knownOrFalse])
            default: return .never
            }
        case "$all":
            guard let values = value.elements else { return .never }
            guard let list = literalList(values) else {
                return fail("$all of values other than strings or whole numbers has no .flags form")
            }
            return .atom("(\(path) contains all \(list)) ?? false")
        case "$alli":
            // `$all` with strings compared without case.
            guard let values = value.elements else { return .never }
            let strings = values.compactMap(\.string)
            guard !values.isEmpty, strings.count == values.count else {
                return listCondition(path, "$all", value, at: at)
            }
            let lowered = "[" + strings.map { StringEscaping.quoted(ListOperations.lower($0)) }.joined(separator: ", ") + "]"
            return .atom("(lower(\(path)) contains all \(lowered)) ?? false")
        case "$elemMatch":
            // A test of the elements themselves by one operator; one of their fields
            // (elements that are objects) has no per-element form.
            guard case .object(let members) = value, members.count == 1 else {
                return fail("$elemMatch of other than one $eq, $in, $gt, $gte, $lt, $lte or $regex (an object's fields) has no .flags form")
            }
            switch members[0] {
            case ("$eq", let element):
                guard let literal = literalList([element]) else {
                    return fail("$elemMatch's $eq of \(element.kindName) has no .flags form")
                }
                // (`contains any`: a list's test alone; `contains` of a string is a substring.)
                return .atom("(\(path) contains any \(literal)) ?? false")
            case ("$in", let elements):
                guard let list = elements.elements.flatMap(literalList) else {
                    return fail("$elemMatch's $in of values other than strings or whole numbers has no .flags form")
                }
                return .atom("(\(path) contains any \(list)) ?? false")
            case (let order, let bound) where ["$gt", "$gte", "$lt", "$lte"].contains(order):
                // Some element ordered so (one of another type than the bound is false there).
                let symbol = ["$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="][order]!
                switch bound {
                case .int, .double, .string: return .atom("(any(\(path)) \(symbol) \(ImportedSource.literal(bound)!)) ?? false")
                default: return .never
                }
            case ("$regex", .string(let pattern)):
                if LaunchDarklyImport.isMalformed(pattern) { return .never }
                guard LaunchDarklyImport.compiles(pattern) else {
                    return fail("the pattern \(StringEscaping.quoted(pattern)) is outside the .flags dialect")
                }
                return .atom("(any(\(path)) matches \(StringEscaping.quoted(pattern))) ?? false")
            default:
                return fail("$elemMatch of other than one $eq, $in, $gt, $gte, $lt, $lte or $regex (an object's fields) has no .flags form")
            }
        default:
            // A value's type, read from which tests it can be known by: a string's `starts
            // with ""`, a number's order, a bool's equality, a list's count (a list of strings
            // or of ints: a `.flags` list holds those). An object cannot be told from a list of
            // other elements, and a context holds no null (a null member is absent).
            let string = ImportedCondition.atom("(\(path) starts with \"\") ?? false")
            let number = ImportedCondition.atom("(\(path) >= 0 or \(path) < 0) ?? false")
            let boolean = ImportedCondition.atom("(\(path) == true or \(path) == false) ?? false")
            switch value.string {
            case "string": return string
            case "number": return number
            case "boolean": return boolean
            case "array": return isList
            case "object":
                return fail("$type 'object' has no .flags form (an object cannot be told from a list of bools, doubles or objects)")
            default: return fail("$type \(value.string.map { "'\($0)'" } ?? value.kindName) has no .flags form (a context holds no null)")
            }
        }
    }

    /// The JSON type (`$type`'s name) of the values of a parent feature of `type`.
    static func jsonType(of type: String) -> String {
        switch type {
        case "flag", "bool": "boolean"
        case "string": "string"
        default: "number"
        }
    }

    /// Whether `value` is of the JSON type of values of `type`: a bool for a flag's or a
    /// bool's, a string for a string's, a number for an int's or a double's.
    static func isOfType(_ value: JSON, _ type: String) -> Bool {
        switch (value, type) {
        case (.bool, "flag"), (.bool, "bool"), (.string, "string"), (.int, "int"), (.int, "double"), (.double, "int"), (.double, "double"):
            true
        default: false
        }
    }

    /// A version literal for `text` when it is three numbers and an optional pre-release.
    static func version(_ text: String) -> String? {
        var text = text
        if text.hasPrefix("v") { text.removeFirst() }
        let core = text.prefix { $0 != "-" && $0 != "+" }
        guard core.split(separator: ".", omittingEmptySubsequences: false).count == 3 else { return nil }
        return LaunchDarklyImport.version(text)
    }

    /// A version test (`$veq`…`$vgte`) of a parent feature's value, decided for each value
    /// the feature can give, as GrowthBook compares them (`paddedVersionString`): the
    /// values that pass, as an `in` list. Values of another JSON type than a string never
    /// compare (`$vne` holds).
    mutating func versionTest(_ op: String, of name: String, against value: JSON, parent: String, at: String) -> ImportedCondition? {
        guard parent == "string", let text = value.string else { return op == "$vne" ? .always : .never }
        let possible = Array(Set((declaredValues[name] ?? []).compactMap(\.string))).sorted()
        let padded = possible.compactMap(Self.paddedVersion)
        guard let expected = Self.paddedVersion(text), padded.count == possible.count else {
            notes.append(
                ImportNote(
                    .notImported, at: "\(at).\(op)",
                    "versions outside printable ASCII are not compared by this import; the rule is left out"))
            return nil
        }
        let holding = zip(possible, padded).filter { _, actual in
            switch op {
            case "$veq": actual == expected
            case "$vne": actual != expected
            case "$vlt": actual.lexicographicallyPrecedes(expected)
            case "$vlte": !expected.lexicographicallyPrecedes(actual)
            case "$vgt": expected.lexicographicallyPrecedes(actual)
            default: !actual.lexicographicallyPrecedes(expected)
            }
        }
        guard spend(holding.reduce(0) { $0 + $1.0.utf8.count + 4 }, at: at) else { return nil }
        if holding.isEmpty { return .never }
        if holding.count == possible.count { return .always }
        return .atom("\(name) in [\(holding.map { StringEscaping.quoted($0.0) }.joined(separator: ", "))]")
    }

    /// GrowthBook's text for ordering versions (its `paddedVersionString`) as bytes: a
    /// leading `v` and build metadata dropped, split at `.` and `-`, `~` added after a
    /// version of three parts, each part of digits padded to five with spaces; nil for text
    /// outside printable ASCII.
    static func paddedVersion(_ text: String) -> [UInt8]? {
        guard text.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else { return nil }
        var core = Substring(text.isEmpty ? "0" : text)
        if core.hasPrefix("v") { core = core.dropFirst() }
        if let plus = core.firstIndex(of: "+") { core = core[..<plus] }
        var parts = core.split(omittingEmptySubsequences: false) { $0 == "." || $0 == "-" }.map(String.init)
        if parts.count == 3 { parts.append("~") }
        let padded = parts.map { part in
            !part.isEmpty && part.utf8.allSatisfy { (0x30...0x39).contains($0) }
                ? String(repeating: " ", count: max(0, 5 - part.count)) + part : part
        }
        return Array(padded.joined(separator: "-").utf8)
    }

    /// A list group's test of `path` (an attribute, or a `parent` feature's value): a
    /// segment written once for each group and path, true or false as GrowthBook's test is.
    mutating func listGroup(_ id: String, of path: String, values: JSON, parent: String?, at: String) -> ImportedCondition? {
        let key = "savedGroups.\(id) \(path)"
        if let name = groupSegments[key] { return .atom(name) }
        guard spend(values.elements?.reduce(0) { $0 + ($1.string?.utf8.count ?? 24) } ?? 0, at: at) else { return nil }
        guard let test = valueCondition(path, .object([("$in", values)]), negated: false, at: at, parent: parent) else { return nil }
        switch test {
        case .always, .never: return test
        default: break
        }
        let name = names.name(for: key, base: id)
        groupSegments[key] = name
        segments.append((name, ["GrowthBook's saved group '\(id)', of \(path)."], test.knownOrFalse))
        return .atom(name)
    }

    /// Counts `bytes` more written from what a rule refers to (a group's list, a parent's
    /// values) against `expansionLimit`; false, with a note, past it.
    mutating func spend(_ bytes: Int, at: String) -> Bool {
        expansion += bytes
        guard expansion > expansionLimit else { return true }
        notes.append(
            ImportNote(
                .notImported, at: at,
                "the lists written for saved groups and parents' values pass \(expansionLimit) bytes, the most an import writes; the rule is left out"
            ))
        return false
    }

    /// A `$savedGroup` reference to one of the payload's saved groups: a list group is its
    /// attribute `$in` its values; a condition group is a segment written once, true or
    /// false as GrowthBook's test is (never unknown), so that it reads the same under a
    /// negation. What the SDK reads as false (a missing or malformed group) is false.
    mutating func savedGroup(_ reference: JSON, negated: Bool, at: String) -> ImportedCondition? {
        guard case .object = reference, let id = reference["id"]?.string else { return .never }
        if let key = reference["attributeKey"], key.string == nil { return .never }
        guard let group = savedGroups[id], case .object = group else {
            if savedGroups[id] == nil {
                notes.append(ImportNote(.remark, at: at, "the payload has no saved group '\(id)': GrowthBook reads it as false"))
            }
            return .never
        }
        let place = "savedGroups.\(id)"
        switch group["type"]?.string {
        case "list":
            guard let key = (reference["attributeKey"] ?? group["attributeKey"])?.string, let values = group["values"],
                values.elements != nil
            else { return .never }
            guard let path = ImportedSource.path(key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)) else {
                notes.append(
                    ImportNote(
                        .notImported, at: at,
                        "saved group '\(id)' reads '\(key)', no attribute a .flags rule can read; the rule is left out"))
                return nil
            }
            return listGroup(id, of: path, values: values, parent: nil, at: at)
        case "condition":
            guard let json = group["condition"], case .object = json else { return .never }
            if let segment = groupSegments[id] { return .atom(segment) }
            guard !failedGroups.contains(id) else {
                notes.append(ImportNote(.notImported, at: at, "saved group '\(id)' is not imported (see \(place)); the rule is left out"))
                return nil
            }
            // A group read again inside itself is false to the SDK; a cycle through other
            // groups means one thing or another by where it is entered, and is not imported.
            if writingGroups.last == id { return .never }
            guard !writingGroups.contains(id) else {
                notes.append(
                    ImportNote(
                        .notImported, at: at, "saved groups '\(id)' and '\(writingGroups.last!)' refer to each other; the rule is left out")
                )
                return nil
            }
            writingGroups.append(id)
            defer { writingGroups.removeLast() }
            guard let inner = condition(json, negated: false, at: place + ".condition") else {
                failedGroups.insert(id)
                notes.append(ImportNote(.notImported, at: at, "saved group '\(id)' is not imported (see \(place)); the rule is left out"))
                return nil
            }
            let name = names.name(for: "savedGroups." + id, base: id)
            groupSegments[id] = name
            segments.append((name, ["GrowthBook's saved group '\(id)'."], inner.knownOrFalse))
            return .atom(name)
        default:
            notes.append(
                ImportNote(.notImported, at: place + ".type", "a saved group is of type \"list\" or \"condition\"; the rule is left out"))
            return nil
        }
    }
}
