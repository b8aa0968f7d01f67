import Foundation

// What the public values print (in `print`, string interpolation, a debugger's summary and
// a failed test's message): what they hold, in the rules' own notation, not their storage.

extension EvaluationContext: CustomStringConvertible, CustomDebugStringConvertible {
    /// The attributes, sorted by name: `["build": "alpha", "org": { plan: "team" }]`.
    public var description: String {
        guard count > 0 else { return "[:]" }
        return "[" + entries.sorted { $0.name < $1.name }.map { "\(StringEscaping.quoted($0.name)): \($0.value)" }.joined(separator: ", ")
            + "]"
    }
    /// As `description`.
    public var debugDescription: String { "EvaluationContext(\(description))" }
}

extension PreparedContext: CustomStringConvertible {
    /// The attributes it holds, as a dictionary context prints them.
    public var description: String { "PreparedContext(\(dictionary))" }
}

extension TypedResolution: CustomStringConvertible {
    /// The value and why: `true (TARGETING_MATCH, rule 1, line 9)` (the resolution holds
    /// the typed value, or the key's default with the error that chose it).
    public var description: String { resolution.description }
}

extension FlagKey: CustomStringConvertible {
    /// `flag darkMode = false`, `variant checkout = control`, `value pageSize = 20`.
    public var description: String {
        let shown =
            kind == .variant
            ? (defaultValue.flagValue.stringValue ?? defaultValue.flagValue.description) : defaultValue.flagValue.description
        return "\(kind.rawValue) \(name) = \(shown)"
    }
}

extension DeclarationHandle: CustomStringConvertible {
    /// `DeclarationHandle(darkMode)`, or `DeclarationHandle(darkMode, not in these rules)`.
    public var description: String { index < 0 ? "DeclarationHandle(\(name), not in these rules)" : "DeclarationHandle(\(name))" }
}

extension ContextSchema: CustomStringConvertible {
    /// The schema as a `context { … }` block declares it.
    public var description: String {
        "context { " + topLevel.map { "\($0.name) : \($0.type)" }.joined(separator: ", ") + " }"
    }
}

extension ContextSchema.Attribute: CustomStringConvertible {
    /// `org.plan : enum(free, team)`.
    public var description: String { "\(name) : \(type)" }
}

extension DeclarationInfo: CustomStringConvertible {
    /// `variant checkout [control, oneStep] = control`, `value pageSize: int = 20`.
    public var description: String {
        switch kind {
        case .variant:
            return "variant \(name) [\(variants.joined(separator: ", "))] = \(defaultValue.stringValue ?? defaultValue.description)"
        case .value: return "value \(name): \(type) = \(defaultValue)"
        default: return "\(kind.rawValue) \(name) = \(defaultValue)"
        }
    }
}

extension RuleSet: CustomStringConvertible {
    /// `RuleSet(3 declarations: darkMode, checkout, pageSize)`.
    public var description: String {
        let names = declarations.map(\.name)
        let shown = names.count > 8 ? names.prefix(8).joined(separator: ", ") + ", …" : names.joined(separator: ", ")
        return "RuleSet(\(names.count) declaration\(names.count == 1 ? "" : "s")\(names.isEmpty ? "" : ": " + shown))"
    }
}

extension FlagOverrides: CustomStringConvertible {
    /// `["darkMode": true, "pageSize": 60]`, sorted by name.
    public var description: String {
        guard !values.isEmpty else { return "[:]" }
        return "[" + values.sorted { $0.key < $1.key }.map { "\(StringEscaping.quoted($0.key)): \($0.value)" }.joined(separator: ", ") + "]"
    }
}

extension FlagEvaluation: CustomStringConvertible {
    /// `darkMode = true (TARGETING_MATCH, rule 1, line 9)`.
    public var description: String { "\(name) = \(resolution)" }
}

extension ContextAttribute: CustomStringConvertible {
    /// The value as the rules write it.
    public var description: String { contextValue.description }
}

extension Diagnostic: CustomStringConvertible {
    /// `3:14: error: unknown name 'contry' [unknown-name]`.
    public var description: String { "\(range.start): \(severity): \(message) [\(code)]" }
}
