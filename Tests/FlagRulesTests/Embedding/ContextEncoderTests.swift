import Foundation
import Testing

@testable import FlagRules

/// `EvaluationContext(encoding:)` for each kind of scalar `Codable` hands over, through a
/// keyed container (a property), an unkeyed one (an array's element) and a single-value one
/// (a wrapper encoding itself as its one value), and for keys given twice.
@Suite struct ContextEncoderTests {
    /// A value that encodes as the one value it wraps.
    struct Wrapped<T: Encodable>: Encodable {
        let value: T
        func encode(to encoder: any Encoder) throws {
            var single = encoder.singleValueContainer()
            try single.encode(value)
        }
    }

    /// A struct with `value` as a property, in an array, and wrapped.
    struct Holder<T: Encodable>: Encodable {
        let property: T
        let list: [T]
        let wrapped: Wrapped<T>
        init(_ value: T) {
            property = value
            list = [value]
            wrapped = Wrapped(value: value)
        }
    }

    /// The value each container kind gives `value` (nil: absent; a list's absent element
    /// is an empty list, as JSON's `null` is).
    func read<T: Encodable>(_ value: T) throws -> (Value?, Value?, Value?) {
        let context = try EvaluationContext(encoding: Holder(value))
        return (context["property"], context["list"]?.listValue?.first, context["wrapped"])
    }

    func expectEverywhere<T: Encodable>(_ value: T, _ expected: Value?, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (property, element, wrapped) = try read(value)
        #expect(property == expected, "property", sourceLocation: sourceLocation)
        #expect(element == (expected ?? .list([])), "element", sourceLocation: sourceLocation)
        #expect(wrapped == expected, "wrapped", sourceLocation: sourceLocation)
    }

    @Test func scalarsOfEveryKind() throws {
        try expectEverywhere("é\"x", .string("é\"x"))
        try expectEverywhere(-7, .int(-7))
        try expectEverywhere(true, .bool(true))
        try expectEverywhere(2.5, .double(2.5))
        try expectEverywhere(Float(0.5), .double(0.5))
        try expectEverywhere(Int8(-8), .int(-8))
        try expectEverywhere(Int16(16), .int(16))
        try expectEverywhere(Int32(-32), .int(-32))
        try expectEverywhere(Int64.min, .int(Int.min))
        try expectEverywhere(UInt(42), .int(42))
        try expectEverywhere(UInt8(255), .int(255))
        try expectEverywhere(UInt16(16), .int(16))
        try expectEverywhere(UInt32.max, .int(Int(UInt32.max)))
        // An integer no Int holds is its digits.
        try expectEverywhere(UInt64.max, .string("18446744073709551615"))
        try expectEverywhere(UInt.max, .string(String(UInt.max)))
        try expectEverywhere(UInt128.max, .string("340282366920938463463374607431768211455"))
        try expectEverywhere(Int128(-5), .int(-5))
        let date = Date(timeIntervalSince1970: 1_700_000_000.25)
        try expectEverywhere(date, .datetime(date))
        try expectEverywhere(URL(string: "https://example.com/a?b=1")!, .string("https://example.com/a?b=1"))
        try expectEverywhere(BuildConfiguration.beta, .string("beta"))
    }

    /// A double or float that is not finite is absent, wherever it is.
    @Test func numbersThatAreNotFiniteAreAbsent() throws {
        for d in [Double.nan, .infinity, -.infinity] { try expectEverywhere(d, nil) }
        for f in [Float.nan, .infinity] { try expectEverywhere(f, nil) }
    }

    /// Hand-written encodings: a key given again takes the later value (nil removes it),
    /// and a nested container asked for twice by one key fills one object, in a small
    /// object and in one of many fields.
    struct HandWritten: Encodable {
        let fields: Int
        enum Key: CodingKey {
            case plan, org, seats, field(Int)
            var stringValue: String {
                switch self {
                case .plan: "plan"
                case .org: "org"
                case .seats: "seats"
                case .field(let i): "f\(i)"
                }
            }
            var intValue: Int? { nil }
            init?(stringValue: String) { nil }
            init?(intValue: Int) { nil }
        }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Key.self)
            for i in 0..<fields { try c.encode(i, forKey: .field(i)) }
            try c.encode("free", forKey: .plan)
            try c.encode("team", forKey: .plan)
            try c.encode(3, forKey: .seats)
            try c.encodeNil(forKey: .seats)
            var first = c.nestedContainer(keyedBy: Key.self, forKey: .org)
            try first.encode("acme", forKey: .plan)
            var second = c.nestedContainer(keyedBy: Key.self, forKey: .org)
            try second.encode(7, forKey: .seats)
            for i in 0..<fields { try c.encode(i + 1, forKey: .field(i)) }
        }
    }

    @Test(arguments: [0, 40])
    func keysGivenTwice(fields: Int) throws {
        let context = try EvaluationContext(encoding: HandWritten(fields: fields))
        #expect(context["plan"] == "team")
        #expect(context["seats"] == nil)
        #expect(context["org"] == .object(["plan": "acme", "seats": 7]))
        #expect(context.count == 2 + fields)
        for i in 0..<fields { #expect(context["f\(i)"] == .int(i + 1)) }
    }

    /// A struct or a list encoded twice for one key fills one object or list, as a nested
    /// container asked for twice does.
    struct Twice: Encodable {
        struct Org: Encodable { let id: String }
        struct Seats: Encodable { let seats: Int }
        enum Key: String, CodingKey { case org, tags }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Key.self)
            try c.encode(Org(id: "acme"), forKey: .org)
            try c.encode(Seats(seats: 3), forKey: .org)
            try c.encode(["a", "b"], forKey: .tags)
            try c.encode(["c"], forKey: .tags)
        }
    }

    @Test func valuesEncodedTwiceForOneKeyFillOneObject() throws {
        let context = try EvaluationContext(encoding: Twice())
        #expect(context["org"] == .object(["id": "acme", "seats": 3]))
        #expect(context["tags"] == ["a", "b", "c"])
    }

    /// A value nested deeper than a context's deepest path is refused with the path,
    /// whatever the type of the value at the end of it.
    @Test func nestingTooDeepIsRefused() {
        enum Plan: String, Encodable { case team }
        final class Chain<Leaf: Encodable>: Encodable {
            let next: Chain?
            let leaf: Leaf?
            init(_ depth: Int, _ leaf: Leaf) {
                next = depth == 0 ? nil : Chain(depth - 1, leaf)
                self.leaf = depth == 0 ? leaf : nil
            }
        }
        // The leaf's path holds `depth` names `next`, then `leaf`.
        let deepest = Path.maxNames - 2
        #expect((try? EvaluationContext(encoding: Chain(deepest, "x"))) != nil)
        #expect((try? EvaluationContext(encoding: Chain(deepest, Plan.team))) != nil)
        #expect((try? EvaluationContext(encoding: Chain(deepest, [1]))) == nil)
        for leaf in [Chain(deepest + 1, "x") as any Encodable, Chain(deepest + 1, Plan.team), Chain(deepest + 1, 7)] {
            #expect(throws: ContextError.self) { try EvaluationContext(encoding: leaf) }
        }
        #expect(throws: ContextError.self) { try EvaluationContext(encoding: Chain(Path.maxNames + 2, "x")) }
    }
}
