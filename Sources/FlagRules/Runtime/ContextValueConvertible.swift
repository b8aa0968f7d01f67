import Foundation

/// A Swift value that can be a context attribute, so that a context literal takes
/// variables as it takes literals:
///
/// ```swift
/// let context: EvaluationContext = [
///     "userId": user.id,                     // a String
///     "unit": "u-\(index)",                  // an interpolation
///     "groups": user.groups,                 // a [String] or a Set<String>
///     "age": user.age,                       // an Int
///     "email": user.email,                   // a String?: nil leaves it out
///     "build": BuildConfiguration.current,   // its name
///     "org": ["id": org.id, "plan": org.plan] as [String: String],  // an object
/// ]
/// ```
///
/// `String`, `Substring`, `Int`, `Double`, `Bool`, `Date` (a datetime), `SemanticVersion`,
/// ``BuildConfiguration``, ``Value``, and arrays, sets, optionals and string-keyed
/// dictionaries (objects) of them conform.
public protocol ContextValueConvertible: Sendable {
    /// The attribute's value.
    var contextValue: Value { get }
    /// The attribute's value, or nil when it is absent (a nil optional): a context literal
    /// or an object leaves that key out.
    var contextValueIfPresent: Value? { get }
}

extension ContextValueConvertible {
    /// The value: present.
    public var contextValueIfPresent: Value? { contextValue }
}

/// A ``Value`` written with its case in a context literal (`"build": .string(name)`).
public struct ContextAttribute: ContextValueConvertible {
    /// The attribute's value.
    public let contextValue: Value
}

extension ContextValueConvertible where Self == ContextAttribute {
    /// A string attribute.
    public static func string(_ value: String) -> ContextAttribute { ContextAttribute(contextValue: .string(value)) }
    /// An int attribute.
    public static func int(_ value: Int) -> ContextAttribute { ContextAttribute(contextValue: .int(value)) }
    /// A double attribute.
    public static func double(_ value: Double) -> ContextAttribute { ContextAttribute(contextValue: .double(value)) }
    /// A bool attribute.
    public static func bool(_ value: Bool) -> ContextAttribute { ContextAttribute(contextValue: .bool(value)) }
    /// A list attribute.
    public static func list(_ elements: [Value]) -> ContextAttribute { ContextAttribute(contextValue: .list(elements)) }
    /// A version attribute.
    public static func version(_ value: SemanticVersion) -> ContextAttribute { ContextAttribute(contextValue: .version(value)) }
    /// A datetime attribute.
    public static func datetime(_ value: Date) -> ContextAttribute { ContextAttribute(contextValue: .datetime(value)) }
    /// An object attribute, whose fields rules read as `org.plan`.
    public static func object(_ fields: [String: Value]) -> ContextAttribute { ContextAttribute(contextValue: .object(fields)) }
}

extension Value: ContextValueConvertible {
    /// The value itself.
    public var contextValue: Value { self }
}

extension String: ContextValueConvertible {
    /// `.string(self)`.
    public var contextValue: Value { .string(self) }
}

extension Substring: ContextValueConvertible {
    /// `.string(String(self))`.
    public var contextValue: Value { .string(String(self)) }
}

extension Int: ContextValueConvertible {
    /// `.int(self)`.
    public var contextValue: Value { .int(self) }
}

extension Double: ContextValueConvertible {
    /// `.double(self)` (NaN and infinities make the attribute absent, as in any context).
    public var contextValue: Value { .double(self) }
}

extension Bool: ContextValueConvertible {
    /// `.bool(self)`.
    public var contextValue: Value { .bool(self) }
}

extension Date: ContextValueConvertible {
    /// `.datetime(self)`.
    public var contextValue: Value { .datetime(self) }
}

extension SemanticVersion: ContextValueConvertible {
    /// `.version(self)`.
    public var contextValue: Value { .version(self) }
}

extension Array: ContextValueConvertible where Element: ContextValueConvertible {
    /// `.list` of the elements' values.
    public var contextValue: Value { .list(map(\.contextValue)) }
}

extension Set: ContextValueConvertible where Element: ContextValueConvertible {
    /// `.list` of the elements' values, in the order of their descriptions (a set has none
    /// of its own, and a context compares and hashes alike whatever the order it was made in).
    public var contextValue: Value { .list(map(\.contextValue).sorted { $0.description < $1.description }) }
}

extension Optional: ContextValueConvertible where Wrapped: ContextValueConvertible {
    /// The wrapped value's; for nil, an empty list, which no attribute type accepts (a
    /// context literal and an object leave a nil out: see `contextValueIfPresent`; in a
    /// list, a nil element makes the list mistyped, as JSON's `null` does).
    public var contextValue: Value { self?.contextValue ?? .list([]) }
    /// The wrapped value's, or nil.
    public var contextValueIfPresent: Value? { self?.contextValueIfPresent }
}

extension Dictionary: ContextValueConvertible where Key == String, Value: ContextValueConvertible {
    /// `.object` of the values, nil ones left out: an object whose fields rules read as
    /// `org.plan`.
    public var contextValue: FlagRules.Value { .object(compactMapValues(\.contextValueIfPresent)) }
}

extension BuildConfiguration: ContextValueConvertible {
    /// `.string(name)`: `debug`, `alpha`, `beta` or `release`.
    public var contextValue: Value { .string(name) }
}
