import Foundation

/// A Swift value that can be a context attribute, so that a context literal takes
/// variables as it takes literals:
///
/// ```swift
/// let context: EvaluationContext = [
///     "userId": user.id,            // a String
///     "unit": "u-\(index)",         // an interpolation
///     "groups": user.groups,        // a [String]
///     "age": user.age,              // an Int
///     "beta": settings.beta,        // a Bool
///     "build": .string(BuildConfiguration.current.name),
/// ]
/// ```
///
/// `String`, `Substring`, `Int`, `Double`, `Bool`, `Date` (a datetime), ``SemanticVersion``,
/// ``Value`` and arrays of them conform.
public protocol ContextValueConvertible: Sendable {
    /// The attribute's value.
    var contextValue: Value { get }
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
