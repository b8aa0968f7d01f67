/// The outcome of evaluating one declaration: its value and why.
public struct Resolution: Sendable, Hashable {
    /// Why the value is what it is (OpenFeature's reason names).
    public enum Reason: String, Sendable, Hashable {
        /// The declaration has no rules.
        case `static` = "STATIC"
        /// A `when` rule (or an unconditional last rule) matched.
        case targetingMatch = "TARGETING_MATCH"
        /// A `split` chose the value.
        case split = "SPLIT"
        /// No rule matched: the default.
        case `default` = "DEFAULT"
        /// The declaration is `@disabled`: the default.
        case disabled = "DISABLED"
        /// Evaluation failed; `errorCode` says how, and the value is the caller's default.
        case error = "ERROR"
        /// An override set the value: a scope of `withFlagOverrides`, or a local override
        /// of a store (a debug screen's). OpenFeature lets a provider name its own reasons.
        case override = "OVERRIDE"
    }

    /// What went wrong, for `reason == .error` (OpenFeature's error codes).
    public enum ErrorCode: String, Sendable, Hashable {
        /// No declaration has that name.
        case flagNotFound = "FLAG_NOT_FOUND"
        /// The declaration's type is not the one asked for.
        case typeMismatch = "TYPE_MISMATCH"
        /// The rules could not be loaded.
        case parseError = "PARSE_ERROR"
        /// The context could not be read.
        case invalidContext = "INVALID_CONTEXT"
        /// Anything else.
        case general = "GENERAL"
    }

    // The stored properties are declared with `reason` first so that the synthesized
    // memberwise initialiser, `init(reason:value:variant:…)`, matches no call of the public
    // one. Resolutions are built through it: it builds in place, where an explicit
    // initialiser made the optimiser build a temporary, copy it whole and destroy it
    // (three string retains and releases an evaluation, through outlined value witnesses).

    /// Why.
    public var reason: Reason
    /// The resolved value.
    public var value: Value
    /// The variant name, for variant declarations.
    public var variant: String?
    /// The error, when `reason == .error`.
    public var errorCode: ErrorCode?
    /// A readable description of the error.
    public var errorMessage: String?
    /// The 1-based index of the rule that decided, when one did.
    public var rule: Int?
    /// The source line of that rule.
    public var line: Int?

    /// An error resolution carrying the caller's default.
    public static func error(_ code: ErrorCode, _ message: String, default value: Value) -> Resolution {
        Resolution(reason: .error, value: value, variant: nil, errorCode: code, errorMessage: message, rule: nil, line: nil)
    }
}

extension Resolution {
    /// A resolution.
    public init(
        value: Value, variant: String? = nil, reason: Reason, errorCode: ErrorCode? = nil,
        errorMessage: String? = nil, rule: Int? = nil, line: Int? = nil
    ) {
        self.init(
            reason: reason, value: value, variant: variant, errorCode: errorCode, errorMessage: errorMessage,
            rule: rule, line: line)
    }

    /// The resolution of a compiled declaration's outcome.
    @inline(__always)
    init(_ outcome: Outcome, isVariant: Bool) {
        let decided = outcome.rule > 0
        self.init(
            reason: outcome.reason, value: outcome.value, variant: isVariant ? outcome.value.stringValue : nil,
            errorCode: nil, errorMessage: nil, rule: decided ? Int(outcome.rule) : nil,
            line: decided ? Int(outcome.line) : nil)
    }
}

extension Resolution: CustomStringConvertible {
    /// The resolution as people read it: `true (TARGETING_MATCH, rule 2, line 14)`,
    /// `oneStep (SPLIT, rule 3, line 20)`, `false (ERROR, FLAG_NOT_FOUND: no declaration
    /// named 'x')`.
    public var description: String {
        var details = [reason.rawValue]
        if let rule { details.append("rule \(rule)") }
        if let line { details.append("line \(line)") }
        var text = details.joined(separator: ", ")
        if let errorCode { text += ", " + errorCode.rawValue }
        if let errorMessage { text += ": " + errorMessage }
        return "\(variant ?? value.description) (\(text))"
    }
}
