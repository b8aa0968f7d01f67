import Foundation

/// Typing and validating context values that arrive as text or JSON (command lines,
/// REPLs, HTTP requests), against a schema when there is one.
extension ContextSchema {
    /// The value for `name` from command-line text, typed by the schema. Throws a
    /// `ContextError` for an undeclared attribute (with "did you mean") or for text
    /// that does not fit the attribute's type (naming the expected type).
    package func value(for name: String, text: String) throws(ContextError) -> Value {
        if name == "now" {
            guard DateTime.parse(text) != nil else {
                throw ContextError(message: "'now' expects an ISO 8601 datetime, got '\(text)'")
            }
            return .string(text)
        }
        guard let attribute = self[name] else { throw undeclared(name) }
        // A quoted value is a string without its quotes (and JSON's escapes).
        let quoted = Value.unquoted(text)
        let text = quoted ?? text
        func mismatch() -> ContextError {
            ContextError(message: "attribute '\(name)' expects \(ContextSchema.describe(attribute.type)), got '\(text)'")
        }
        switch attribute.type {
        case .string: return .string(text)
        case .int:
            guard quoted == nil, let i = Int(text) else { throw mismatch() }
            return .int(i)
        case .double:
            guard quoted == nil, let d = Double(text), d.isFinite,
                text.allSatisfy({ $0.isNumber || $0 == "." || $0 == "-" || $0 == "+" || $0 == "e" || $0 == "E" })
            else {
                throw mismatch()
            }
            return .double(d)
        case .bool:
            guard quoted == nil, text == "true" || text == "false" else { throw mismatch() }
            return .bool(text == "true")
        case .version:
            guard SemanticVersion(text) != nil else { throw mismatch() }
            return .string(text)
        case .datetime:
            guard DateTime.parse(text) != nil else { throw mismatch() }
            return .string(text)
        case .enumeration(let cases):
            guard cases.contains(text) else {
                let suggestion = Suggestions.closest(to: text, in: cases).map { "; did you mean '\($0)'?" } ?? ""
                throw ContextError(
                    message: "attribute '\(name)' expects one of \(cases.joined(separator: ", ")), got '\(text)'" + suggestion)
            }
            return .string(text)
        case .ip:
            guard IPAddress(text) != nil else { throw mismatch() }
            return .string(text)
        case .list(let element):
            guard quoted == nil, case .array(let items)? = try? JSON.parse(text) else {
                throw ContextError(
                    message:
                        "attribute '\(name)' expects \(ContextSchema.describe(attribute.type)), got '\(text)'; write a JSON array, as in '[\"a\", \"b\"]'"
                )
            }
            let value = Value.list(items.map { Value(jsonElement: $0) })
            guard Coercion(attribute.type).apply(value) != nil else {
                if case .enumeration(let cases) = element {
                    for case .string(let s) in items where !cases.contains(s) {
                        let suggestion = Suggestions.closest(to: s, in: cases).map { "; did you mean '\($0)'?" } ?? ""
                        throw ContextError(
                            message: "attribute '\(name)' expects a list of \(cases.joined(separator: ", ")), got '\(s)'" + suggestion)
                    }
                }
                throw mismatch()
            }
            return value
        case .object:
            guard quoted == nil, case .object(let members)? = try? JSON.parse(text) else {
                throw ContextError(
                    message:
                        "attribute '\(name)' expects an object, got '\(text)'; write a JSON object, as in '{\"plan\": \"team\"}', or give its fields one by one, as in \(name).field=value"
                )
            }
            let value = Value.object(json: members)
            try validate(name, value)
            return value
        case .variant, .symbol, .dynamic:
            return quoted.map(Value.string) ?? Value.inferred(from: text)
        }
    }

    /// Checks a value (from JSON or Swift) against the schema; throws for an undeclared
    /// attribute or a value of the wrong type.
    package func validate(_ name: String, _ value: Value) throws(ContextError) {
        if name == "now" {
            switch value {
            case .datetime: return
            case .string(let s) where DateTime.parse(s) != nil: return
            default: throw ContextError(message: "'now' expects an ISO 8601 datetime, got \(value)")
            }
        }
        guard let attribute = self[name] else { throw undeclared(name) }
        // An attribute whose type was not understood (reported where it is declared) takes any value.
        if attribute.type == .dynamic { return }
        let fits: Bool
        switch (attribute.type, value) {
        case (.string, .string), (.int, .int), (.double, .int), (.double, .double), (.bool, .bool),
            (.version, .version), (.datetime, .datetime):
            fits = true
        case (.version, .string(let s)): fits = SemanticVersion(s) != nil
        case (.datetime, .string(let s)): fits = DateTime.parse(s) != nil
        case (.enumeration(let cases), .string(let s)): fits = cases.contains(s)
        case (.ip, .string(let s)): fits = IPAddress(s) != nil
        case (.list, .list): fits = Coercion(attribute.type).apply(value) != nil
        case (.object, .object(let fields)):
            // Each field against its own declaration, by its path.
            for (field, v) in fields.sorted(by: { $0.key < $1.key }) { try validate(name + "." + field, v) }
            fits = true
        default: fits = false
        }
        if !fits {
            var suggestion = ""
            if case (.enumeration(let cases), .string(let s)) = (attribute.type, value) {
                suggestion = Suggestions.closest(to: s, in: cases).map { "; did you mean '\($0)'?" } ?? ""
            }
            throw ContextError(message: "attribute '\(name)' expects \(ContextSchema.describe(attribute.type)), got \(value)" + suggestion)
        }
    }

    /// The error for an attribute or field path the schema does not declare.
    package func undeclared(_ name: String) -> ContextError {
        let suggestion = Suggestions.closest(to: name, in: attributes.map(\.name)).map { "; did you mean '\($0)'?" } ?? ""
        if let dot = name.lastIndex(of: "."), let object = self[String(name[..<dot])] {
            let field = name[name.index(after: dot)...]
            guard object.type.fields != nil else {
                return ContextError(message: "'\(object.name)' is \(object.type), not an object: it has no field '\(field)'")
            }
            let names = object.type.fields?.map { $0.name } ?? []
            let closest = Suggestions.closest(to: String(field), in: names).map { "; did you mean '\($0)'?" } ?? ""
            return ContextError(message: "'\(object.name)' declares no field '\(field)'" + closest)
        }
        return ContextError(message: "the context declares no attribute '\(name)'" + suggestion)
    }

    package static func describe(_ type: FlagType) -> String {
        switch type {
        case .int: return "an int"
        case .double: return "a double"
        case .bool: return "a bool (true or false)"
        case .string: return "a string"
        case .version: return "a semantic version such as 2.3.0"
        case .datetime: return "an ISO 8601 datetime such as 2026-03-31T09:00:00Z"
        case .enumeration(let cases): return "one of " + cases.joined(separator: ", ")
        case .ip: return "an IPv4 or IPv6 address such as 10.1.2.3"
        case .list(.enumeration(let cases)): return "a list of " + cases.joined(separator: ", ")
        case .list(let element): return "a list of \(element)s, such as [" + (element == .int ? "1, 2" : "\"a\", \"b\"") + "]"
        case .object(let names, _): return "an object (with fields " + names.joined(separator: ", ") + ")"
        default: return type.description
        }
    }
}

extension Value {
    /// A value typed from text without a schema, as JSON would read it: `true`/`false`
    /// are bools, a JSON number is an int (no fraction or exponent, in range) or a double,
    /// a quoted string (`"123"`) is that string without its quotes, and anything else is a
    /// string as written: `00123`, `+1`, `.5`, `nan` and `1e999` stay strings, so an id
    /// buckets as the app that sends it as a string.
    package static func inferred(from text: String) -> Value {
        if let unquoted = unquoted(text) { return .string(unquoted) }
        if text == "true" { return .bool(true) }
        if text == "false" { return .bool(false) }
        if text.hasPrefix("["), case .array(let items)? = try? JSON.parse(text) {
            return .list(items.map { Value(jsonElement: $0) })
        }
        if text.hasPrefix("{"), case .object(let members)? = try? JSON.parse(text) { return .object(json: members) }
        guard isJSONNumber(text) else { return .string(text) }
        if !text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }), let i = Int(text) { return .int(i) }
        if let d = Double(text), d.isFinite { return .double(d) }
        return .string(text)
    }

    /// The string a quoted text (`"a@b.com"`) stands for, JSON escapes read; nil when the
    /// text is not quoted.
    package static func unquoted(_ text: String) -> String? {
        guard text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") else { return nil }
        if case .string(let s)? = try? JSON.parse(text) { return s }
        return String(text.dropFirst().dropLast())
    }

    /// Whether `text` is a number in JSON's grammar: `-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`.
    static func isJSONNumber(_ text: String) -> Bool {
        var bytes = Substring(text).utf8[...]
        func digits() -> Int {
            let n = bytes.prefix(while: { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }).count
            bytes = bytes.dropFirst(n)
            return n
        }
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        if bytes.first == UInt8(ascii: "0") {
            bytes = bytes.dropFirst()
        } else if digits() == 0 {
            return false
        }
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            guard digits() > 0 else { return false }
        }
        if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if bytes.first == UInt8(ascii: "+") || bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
            guard digits() > 0 else { return false }
        }
        return bytes.isEmpty
    }

    /// The value as JSON: bools, numbers and strings as such; versions and datetimes as strings.
    package var json: JSON {
        switch self {
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        case .version(let v): return .string(v.description)
        case .datetime(let d): return .string(DateTime.format(d))
        case .list(let elements): return .array(elements.map(\.json))
        case .object(let fields): return .object(fields.sorted { $0.key < $1.key }.map { ($0.key, $0.value.json) })
        }
    }

    /// A JSON value as a context value: nil for `null`; an object's `null` fields are
    /// absent; an array is a list (`init(jsonElement:)`).
    package init?(json j: JSON) {
        switch j {
        case .null: return nil
        case .object(let members): self = .object(json: members)
        case .double(let d) where !d.isFinite: return nil
        default: self = Value(jsonElement: j)
        }
    }

    /// A JSON object's members as an object value (a member given twice keeps its last
    /// value, as everywhere JSON is read here).
    package static func object(json members: [(String, JSON)]) -> Value {
        var fields: [String: Value] = [:]
        for (key, member) in members { fields[key] = Value(json: member) }
        return .object(fields)
    }

    /// An element of a JSON array as a list element: a scalar as itself, a nested array as
    /// a nested list, and `null`, an object or a non-finite number as an empty list, which
    /// no element type accepts (the list is then mistyped).
    package init(jsonElement j: JSON) {
        switch j {
        case .bool(let b): self = .bool(b)
        case .int(let i): self = .int(i)
        case .double(let d): self = d.isFinite ? .double(d) : .list([])
        case .string(let s): self = .string(s)
        case .array(let items): self = .list(items.map { Value(jsonElement: $0) })
        case .null, .object: self = .list([])
        }
    }
}

extension Resolution {
    /// `{"value": …, "variant": …, "reason": …, "exposure": true, "errorCode": …, "rule": …,
    /// "line": …}`, with only the members that apply (`exposure` for a split's decision,
    /// which a store records as an ``Exposure``).
    /// A `fallback` rule's resolution has `"fallback": true` and no value (the caller's
    /// default), as OFREP's code default has none.
    package var json: JSON {
        var members: [(String, JSON)] = isFallback ? [("fallback", .bool(true))] : [("value", value.json)]
        if let variant { members.append(("variant", .string(variant))) }
        members.append(("reason", .string(reason.rawValue)))
        if reason == .split { members.append(("exposure", .bool(true))) }
        if let errorCode { members.append(("errorCode", .string(errorCode.rawValue))) }
        if let errorMessage { members.append(("errorMessage", .string(errorMessage))) }
        if let rule { members.append(("rule", .int(rule))) }
        if let line { members.append(("line", .int(line))) }
        return .object(members)
    }

    /// One line for terminals: `darkMode = true  (TARGETING_MATCH, rule 1, line 14)`.
    package func summary(name: String) -> String {
        let shown: String
        if isFallback { shown = "fallback" } else if let variant { shown = variant } else { shown = value.description }
        var details = [reason.rawValue]
        if let errorCode { details.append(errorCode.rawValue) }
        if let rule { details.append("rule \(rule)") }
        if let line { details.append("line \(line)") }
        var text = "\(name) = \(shown)  (" + details.joined(separator: ", ") + ")"
        if let errorMessage { text += ": " + errorMessage }
        return text
    }
}
