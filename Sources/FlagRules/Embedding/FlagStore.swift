import Foundation

/// Holds the current rules and replaces them atomically; a broken update never replaces
/// good rules.
///
/// Readers take the current `RuleSet` (an immutable value) under a short lock and
/// evaluate outside it, so updates never block evaluations for longer than a pointer copy.
/// Until good rules have loaded, evaluations resolve to the caller's default with reason
/// `ERROR` and code `PARSE_ERROR` (the source had errors) or `GENERAL` (it could not be read).
public final class FlagStore: @unchecked Sendable {
    // Invariant: `current` and `lastFailure` are only touched with `lock` held.
    private let lock = NSLock()
    private var current: RuleSet?
    private var lastFailure: RuleSetError?

    /// An empty store: every evaluation is an error until `update` succeeds.
    public init() {}

    /// A store holding `rules`.
    public init(_ rules: RuleSet) { current = rules }

    /// The rules in force, if any have loaded.
    public var rules: RuleSet? { lock.withLock { current } }

    /// Why the latest update failed, if it did (cleared by a successful update).
    public var lastError: RuleSetError? { lock.withLock { lastFailure } }

    /// Compiles `source` and, only if it has no errors, makes it the rules in force.
    /// On failure the previous rules stay and the error is thrown and kept in `lastError`.
    @discardableResult
    public func update(source: String, name: String = "<input>") throws(RuleSetError) -> RuleSet {
        try install { () throws(RuleSetError) in try RuleSet(source: source, name: name) }
    }

    /// Loads a file and, only if it reads and compiles, makes it the rules in force.
    @discardableResult
    public func update(contentsOf url: URL) throws(RuleSetError) -> RuleSet {
        try install { () throws(RuleSetError) in try RuleSet(contentsOf: url) }
    }

    private func install(_ load: () throws(RuleSetError) -> RuleSet) throws(RuleSetError) -> RuleSet {
        do {
            let rules = try load()
            lock.withLock {
                current = rules
                lastFailure = nil
            }
            return rules
        } catch {
            lock.withLock { lastFailure = error }
            throw error
        }
    }

    /// Resolves a declaration with the rules in force. `fallback` (else `false`) is the
    /// value, with reason `ERROR`, when no rules have loaded or the name is unknown, and a
    /// given `fallback` also when the declaration's value is of another type
    /// (`RuleSet.evaluate(_:in:default:)`).
    public func evaluate(_ name: String, in context: EvaluationContext, default fallback: Value? = nil) -> Resolution {
        let (rules, failure) = lock.withLock { (current, lastFailure) }
        guard let rules else {
            switch failure {
            case .invalid?:
                return .error(
                    .parseError, "the rules have errors: " + (failure?.errors.first?.message ?? "unknown"),
                    default: fallback ?? .bool(false))
            case .unreadable?:
                return .error(.general, failure?.description ?? "", default: fallback ?? .bool(false))
            case nil:
                return .error(.general, "no rules have been loaded", default: fallback ?? .bool(false))
            }
        }
        return rules.evaluate(name, in: context, default: fallback)
    }
}

extension RuleSet {
    /// Resolves a declaration against a context given as a JSON object; malformed JSON
    /// resolves to `fallback` (else `false`) with reason `ERROR` and code `INVALID_CONTEXT`.
    public func evaluate(_ name: String, jsonContext: String, default fallback: Value? = nil) -> Resolution {
        do {
            return evaluate(name, in: try EvaluationContext(json: jsonContext), default: fallback)
        } catch {
            return .error(.invalidContext, error.message, default: fallback ?? .bool(false))
        }
    }
}
