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

    // The stored properties are laid out to keep a resolution small (64 bytes): the value,
    // then the one-byte fields in its tail padding, the rule and line as 32-bit numbers (0
    // for none), then the strings. Resolutions are built through the synthesized memberwise
    // initialiser, `init(value:reason:errorCode:ruleNumber:lineNumber:variant:errorMessage:)`,
    // which matches no call of the public one: it builds in place, where an explicit
    // initialiser made the optimiser build a temporary, copy it whole and destroy it.

    /// The resolved value.
    public var value: Value
    /// Why.
    public var reason: Reason
    /// Whether a `fallback` rule decided: the value is the caller's default (OpenFeature's
    /// code default; reason `DEFAULT`), or the declaration's where the caller gives none.
    public var isFallback = false
    /// The error, when `reason == .error`.
    public var errorCode: ErrorCode?
    /// `rule`, 0 for none.
    var ruleNumber: Int32
    /// `line`, 0 for none.
    var lineNumber: Int32
    /// The variant name, for variant declarations.
    public var variant: String?
    /// A readable description of the error.
    public var errorMessage: String?

    /// The 1-based index of the rule that decided, when one did. (Kept in 32 bits: a number
    /// outside them is clamped, and 0 reads as nil.)
    public var rule: Int? {
        get { ruleNumber == 0 ? nil : Int(ruleNumber) }
        set { ruleNumber = newValue.map { Int32(clamping: $0) } ?? 0 }
    }

    /// The source line of that rule (1-based; kept in 32 bits like `rule`).
    public var line: Int? {
        get { lineNumber == 0 ? nil : Int(lineNumber) }
        set { lineNumber = newValue.map { Int32(clamping: $0) } ?? 0 }
    }

    /// An error resolution carrying the caller's default.
    public static func error(_ code: ErrorCode, _ message: String, default value: Value) -> Resolution {
        Resolution(
            value: value, reason: .error, errorCode: code, ruleNumber: 0, lineNumber: 0, variant: nil,
            errorMessage: message)
    }
}

extension Resolution {
    /// A resolution.
    public init(
        value: Value, variant: String? = nil, reason: Reason, errorCode: ErrorCode? = nil,
        errorMessage: String? = nil, rule: Int? = nil, line: Int? = nil, isFallback: Bool = false
    ) {
        self.init(
            value: value, reason: reason, isFallback: isFallback, errorCode: errorCode, ruleNumber: rule.map { Int32(clamping: $0) } ?? 0,
            lineNumber: line.map { Int32(clamping: $0) } ?? 0, variant: variant, errorMessage: errorMessage)
    }

    /// The resolution of a compiled declaration's outcome.
    @inline(__always)
    init(_ outcome: Outcome, isVariant: Bool) {
        let decided = outcome.rule > 0
        self.init(
            value: outcome.value, reason: outcome.reason, isFallback: outcome.isFallback, errorCode: nil,
            ruleNumber: decided ? outcome.rule : 0, lineNumber: decided ? outcome.line : 0,
            variant: isVariant ? outcome.value.stringValue : nil, errorMessage: nil)
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
        // (A fallback's value is the caller's default, or the declaration's where none was given.)
        return "\(isFallback ? "\(value) by fallback" : variant ?? value.description) (\(text))"
    }
}
