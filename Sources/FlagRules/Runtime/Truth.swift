/// The three truth values of a condition (three-valued logic): a comparison that reads an
/// absent or mistyped attribute is unknown, and a rule matches only on `yes`. Both the
/// compiled closures and the explainer combine truths through these functions.
enum Truth: UInt8, Sendable {
    case no, yes, unknown

    @inline(__always) init(_ b: Bool) { self = b ? .yes : .no }

    /// `not`: unknown stays unknown.
    @inline(__always) var negated: Truth {
        switch self {
        case .no: return .yes
        case .yes: return .no
        case .unknown: return .unknown
        }
    }

    /// Kleene `and` of two known operands' truths: false wins over unknown.
    @inline(__always)
    static func and(_ a: Truth, _ b: Truth) -> Truth {
        if a == .no || b == .no { return .no }
        return a == .yes && b == .yes ? .yes : .unknown
    }

    /// Kleene `or`: true wins over unknown.
    @inline(__always)
    static func or(_ a: Truth, _ b: Truth) -> Truth {
        if a == .yes || b == .yes { return .yes }
        return a == .no && b == .no ? .no : .unknown
    }

    /// Whether a comparison holds, given the order of its operands (-1, 0 or 1).
    @inline(__always)
    static func comparison(_ op: ComparisonOperator, order: Int) -> Truth {
        switch op {
        case .equal: return Truth(order == 0)
        case .notEqual: return Truth(order != 0)
        case .less: return Truth(order < 0)
        case .lessEqual: return Truth(order <= 0)
        case .greater: return Truth(order > 0)
        default: return Truth(order >= 0)
        }
    }
}
