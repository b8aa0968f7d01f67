import Foundation

/// The attributes an evaluation reads: build configuration, user id, country, ….
///
/// A context is a plain value; build it from a dictionary literal, a dictionary, or JSON.
/// A missing key and JSON `null` both mean the attribute is absent. The key `now`
/// (a datetime or an ISO 8601 string) overrides the evaluation time.
public struct EvaluationContext: Sendable, Hashable, ExpressibleByDictionaryLiteral {
    /// The attributes by name.
    public var values: [String: Value]

    /// A context holding `values`.
    public init(_ values: [String: Value] = [:]) { self.values = values }

    /// A context from a literal: `["build": "alpha", "age": 31]`.
    public init(dictionaryLiteral elements: (String, Value)...) {
        var values: [String: Value] = [:]
        for (k, v) in elements { values[k] = v }
        self.values = values
    }

    /// A context from a JSON object whose values are strings, numbers, booleans or null.
    /// Throws a `ContextError` naming the offending key for nested objects, arrays, or
    /// malformed JSON.
    public init(json: String) throws(ContextError) {
        let parsed: JSON
        do {
            parsed = try JSON.parse(json)
        } catch {
            throw ContextError(message: "invalid JSON: \(error.description)")
        }
        guard case .object(let members) = parsed else {
            throw ContextError(message: "the context must be a JSON object, as in {\"userId\": \"u-1\"}")
        }
        var values: [String: Value] = [:]
        for (key, value) in members {
            switch value {
            case .null: continue
            case .bool(let b): values[key] = .bool(b)
            case .int(let i): values[key] = .int(i)
            case .double(let d): values[key] = .double(d)
            case .string(let s): values[key] = .string(s)
            case .array, .object:
                throw ContextError(message: "attribute '\(key)' must be a string, number or boolean, not \(value.kindName)")
            }
        }
        self.values = values
    }

    /// The attribute called `key`; setting nil removes it.
    public subscript(key: String) -> Value? {
        get { values[key] }
        set { values[key] = newValue }
    }
}

/// A context that cannot be built (malformed JSON, a nested value).
public struct ContextError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong.
    public let message: String
    public var description: String { message }
}
