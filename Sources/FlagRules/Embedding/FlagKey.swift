/// A Swift type a declaration's value is read as: `Bool`, `Int`, `Double`, `String`, and
/// the variant enums that `flags generate swift` writes (``FlagVariant``).
public protocol FlagValue: Sendable, Hashable {
    /// The value as rules hold it.
    var flagValue: Value { get }
    /// The Swift value of a rules value; nil when it is of another type (or, for a variant
    /// enum, a variant the enum lacks).
    init?(flagValue: Value)
}

extension Bool: FlagValue {
    /// `.bool(self)`.
    public var flagValue: Value { .bool(self) }
    /// A bool's value.
    public init?(flagValue: Value) {
        guard case .bool(let b) = flagValue else { return nil }
        self = b
    }
}

extension Int: FlagValue {
    /// `.int(self)`.
    public var flagValue: Value { .int(self) }
    /// An int's value.
    public init?(flagValue: Value) {
        guard case .int(let i) = flagValue else { return nil }
        self = i
    }
}

extension Double: FlagValue {
    /// `.double(self)`.
    public var flagValue: Value { .double(self) }
    /// A double's value, or an int's converted.
    public init?(flagValue: Value) {
        switch flagValue {
        case .double(let d): self = d
        case .int(let i): self = Double(i)
        default: return nil
        }
    }
}

extension String: FlagValue {
    /// `.string(self)`.
    public var flagValue: Value { .string(self) }
    /// A string's value.
    public init?(flagValue: Value) {
        guard case .string(let s) = flagValue else { return nil }
        self = s
    }
}

/// A variant declaration's variants as a Swift enum, one case per variant, named as in the
/// file (`flags generate swift` writes them).
///
/// ```swift
/// enum Checkout: String, FlagVariant { case control, oneStep, twoStep }
/// ```
public protocol FlagVariant: FlagValue, RawRepresentable, CaseIterable where RawValue == String {}

extension FlagVariant {
    /// The variant's name.
    public var flagValue: Value { .string(rawValue) }
    /// The case named by a variant's name; nil for a name the enum lacks.
    public init?(flagValue: Value) {
        guard case .string(let s) = flagValue else { return nil }
        self.init(rawValue: s)
    }
}

/// A declaration, typed: its name, kind, default and doc comment, as `flags generate swift`
/// writes them, so that code never spells a flag's name or repeats its default.
///
/// ```swift
/// let on = rules[AppFlags.darkMode, in: ["userId": "u-42"]]         // Bool
/// let checkout = store[AppFlags.checkout, in: context]              // AppFlags.Checkout
/// ```
public struct FlagKey<Wrapped: FlagValue>: Sendable, Hashable {
    /// The declaration's name in the rules.
    public let name: String
    /// flag, variant or value.
    public let kind: DeclarationKind
    /// The value when the rules cannot give one: not loaded, drifted, or an error.
    public let defaultValue: Wrapped
    /// The declaration's `///` doc comment, as it was when the key was generated.
    public let doc: String?

    /// A key of any kind (the initialisers by kind read better).
    public init(name: String, kind: DeclarationKind, default defaultValue: Wrapped, doc: String? = nil) {
        self.name = name
        self.kind = kind
        self.defaultValue = defaultValue
        self.doc = doc
    }

    /// A value declaration's key (`Int`, `Double`, `String` or `Bool`).
    public init(value name: String, default defaultValue: Wrapped, doc: String? = nil) {
        self.init(name: name, kind: .value, default: defaultValue, doc: doc)
    }

    /// The key without its type, for lists (`allKeys`) and validation.
    public var erased: AnyFlagKey {
        let type: String
        switch defaultValue.flagValue {
        case .bool: type = kind == .flag ? "flag" : "bool"
        case .int: type = "int"
        case .double: type = "double"
        case .string: type = kind == .variant ? "variant" : "string"
        default: type = "\(defaultValue.flagValue.typeName)"
        }
        let cases = (Wrapped.self as? any FlagVariant.Type).map { variantCases($0) } ?? []
        return AnyFlagKey(name: name, kind: kind, type: type, variants: cases, defaultValue: defaultValue.flagValue, doc: doc)
    }

    /// The value a resolution gives, typed; the key's default with reason `ERROR` and
    /// `TYPE_MISMATCH` when its value is not one of `Wrapped` (a variant the enum lacks).
    func typed(_ r: Resolution) -> TypedResolution<Wrapped> {
        if let value = Wrapped(flagValue: r.value) { return TypedResolution(value: value, resolution: r) }
        let message = "'\(name)' is \(r.value), which \(Wrapped.self) does not have"
        return TypedResolution(value: defaultValue, resolution: .error(.typeMismatch, message, default: defaultValue.flagValue))
    }
}

private func variantCases<T: FlagVariant>(_ type: T.Type) -> [String] { T.allCases.map(\.rawValue) }

extension FlagKey where Wrapped == Bool {
    /// A flag's key.
    public init(flag name: String, default defaultValue: Bool = false, doc: String? = nil) {
        self.init(name: name, kind: .flag, default: defaultValue, doc: doc)
    }
}

extension FlagKey where Wrapped: FlagVariant {
    /// A variant declaration's key, its variants the enum's cases.
    public init(variant name: String, default defaultValue: Wrapped, doc: String? = nil) {
        self.init(name: name, kind: .variant, default: defaultValue, doc: doc)
    }
}

/// A ``FlagKey`` without its Swift type: what the app was compiled against, for
/// ``RuleSet/validate(_:)`` and debug screens.
public struct AnyFlagKey: Sendable, Hashable, CustomStringConvertible {
    /// The declaration's name.
    public let name: String
    /// flag, variant or value.
    public let kind: DeclarationKind
    /// `flag`, `variant`, or a value's type: `bool`, `int`, `double`, `string`.
    public let type: String
    /// A variant enum's cases, in order (empty for other kinds).
    public let variants: [String]
    /// The compiled default.
    public let defaultValue: Value
    /// The doc comment it was generated with.
    public let doc: String?

    /// `name: type`.
    public var description: String { "\(name): \(type)" }
}

/// A typed value with the resolution it came from (its reason, variant, rule, error).
public struct TypedResolution<Wrapped: FlagValue>: Sendable {
    /// The value: the rules', an override's, or the key's default on an error.
    public let value: Wrapped
    /// Why.
    public let resolution: Resolution
}

/// A difference between the keys an app was compiled with and the rules it runs with.
public struct FlagDrift: Sendable, Hashable, CustomStringConvertible {
    /// What differs.
    public enum Problem: Sendable, Hashable {
        /// The rules have no declaration of that name: reading it gives the default with
        /// `FLAG_NOT_FOUND`.
        case missing
        /// The declaration is of another kind (a value where a flag was): `TYPE_MISMATCH`.
        case kindChanged(expected: DeclarationKind, found: DeclarationKind)
        /// The value's type changed (a string where an int was): `TYPE_MISMATCH`.
        case typeChanged(expected: String, found: String)
        /// The rules have a variant the enum lacks: a user given it reads the default with
        /// `TYPE_MISMATCH`.
        case variantNotInEnum(String)
    }

    /// The declaration's name.
    public let name: String
    /// What differs.
    public let problem: Problem

    /// One line: `'checkout': the rules have variant 'threeStep', which the app's enum lacks`.
    public var description: String {
        switch problem {
        case .missing: return "'\(name)': no declaration in the rules"
        case .kindChanged(let expected, let found): return "'\(name)': the app reads a \(expected), the rules declare a \(found)"
        case .typeChanged(let expected, let found): return "'\(name)': the app reads \(expected), the rules give \(found)"
        case .variantNotInEnum(let variant): return "'\(name)': the rules have variant '\(variant)', which the app's enum lacks"
        }
    }
}

extension RuleSet {
    /// Where these rules differ from the keys an app was compiled with (`AppFlags.allKeys`):
    /// a missing declaration, another kind or type, a variant the enum lacks. Reading a
    /// drifted key gives its default with reason `ERROR`, never a crash.
    public func validate(_ keys: [AnyFlagKey]) -> [FlagDrift] {
        var drift: [FlagDrift] = []
        for key in keys {
            guard let i = program.names.index(of: key.name) else {
                drift.append(FlagDrift(name: key.name, problem: .missing))
                continue
            }
            let d = declarations[i]
            guard d.kind == key.kind else {
                drift.append(FlagDrift(name: key.name, problem: .kindChanged(expected: key.kind, found: d.kind)))
                continue
            }
            switch d.kind {
            case .variant:
                for variant in d.variants where !key.variants.contains(variant) {
                    drift.append(FlagDrift(name: key.name, problem: .variantNotInEnum(variant)))
                }
            case .value:
                // An int where a double is read converts.
                if d.type != key.type && !(d.type == "int" && key.type == "double") {
                    drift.append(FlagDrift(name: key.name, problem: .typeChanged(expected: key.type, found: d.type)))
                }
            case .flag, .segment:
                break
            }
        }
        return drift
    }

}
