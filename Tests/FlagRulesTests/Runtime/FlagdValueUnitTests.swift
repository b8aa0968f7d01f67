import Foundation
import Testing

@testable import FlagRules

/// flagd's `fractional` over a unit of any JSON type: flagd-core 2.0 hashes the value's
/// canonical CBOR, so a bool, a double, a list or an object buckets as flagd buckets it.
/// The expected buckets are flagd-testbed's (v3.9.0, `targeting.feature`, the flag
/// `fractional-basic-flag`: 25 equal buckets).
struct FlagdValueUnitTests {
    static let rules: RuleSet = {
        let names = (1...25).map { "bucket\($0)" }
        let entries = names.map { "\($0): 4" }.joined(separator: ", ")
        let source = """
            variant v [\(names.joined(separator: ", ")), fallback] = fallback {
              split(hashing_input, "", flagd) { \(entries) }
            }
            """
        return try! RuleSet(source: source)
    }()

    static func bucket(_ json: String) throws -> String? {
        let context = try EvaluationContext(json: #"{"hashing_input": \#(json)}"#)
        return rules.evaluate("v", in: context).variant
    }

    @Test(arguments: [
        ("true", "bucket5"), ("false", "bucket1"), (#""user1""#, "bucket22"), ("123", "bucket20"), ("1.23", "bucket14"),
        ("4.56", "bucket18"), (#""true""#, "bucket24"), ("0", "bucket8"),
        // A double with no fraction is the integer; -0.0 is 0.
        ("1.0", "bucket23"), ("1", "bucket23"), ("-2.0", "bucket12"), ("9007199254740992.0", "bucket10"), ("0.0", "bucket8"),
        ("-0.0", "bucket8"),
        // The shortest float that holds the value: half, single, double.
        ("1e20", "bucket19"), ("65504.0", "bucket16"), ("-65504.0", "bucket9"), ("0.00006103515625", "bucket22"),
        ("0.000000059604644775390625", "bucket23"), ("65505.0", "bucket17"), ("3.4028234663852886e+38", "bucket10"),
        ("1.1754943508222875e-38", "bucket24"), ("3.5e+38", "bucket1"), ("1.7976931348623157e+308", "bucket17"),
        ("4.9406564584124654e-324", "bucket2"),
        // Objects: members sorted by their keys' encodings, shorter first.
        (#"{"a": 1, "b": 2}"#, "bucket23"), (#"{"b": 2, "a": 1}"#, "bucket23"), (#"{"z": 1, "aa": 2}"#, "bucket21"),
        (#"{"aa": 2, "z": 1}"#, "bucket21"), (#"{"a": {"b": 1}, "b": 2}"#, "bucket9"),
        (#"{"a": true, "bbb": 1, "c": "text", "dddd": 2.5}"#, "bucket25"), ("{}", "bucket3"), (#"{"a": []}"#, "bucket12"),
        (#"{"c": 0.0, "b": -0.0, "a": {"b": []}}"#, "bucket9"), (#"{"a": [[[[[]]]]]}"#, "bucket15"),
    ])
    func unitsOfAnyTypeBucketAsFlagd(_ json: String, _ expected: String) throws {
        #expect(try Self.bucket(json) == expected, "\(json)")
    }

    /// Other schemes keep leaving such a unit out: the split chooses nothing.
    @Test func otherSchemesLeaveABoolOrAnObjectOut() throws {
        let rules = try RuleSet(source: #"variant v [a, b] = a { split(u, "s", growthbook) { a: 50%, b: 50% } }"#)
        for value: Value in [true, 1.5, .object(["a": 1])] {
            #expect(rules.evaluate("v", in: ["u": value]).reason == .default, "\(value)")
        }
    }

    /// The half-precision test agrees with the standard library's `Float16`, where it is.
    @Test func halfBitsAgreeWithFloat16() {
        #if !(os(macOS) && arch(x86_64))
            var generator = SystemRandomNumberGenerator()
            var samples: [Float] = [0, -0, 1, -1, 65504, -65504, 65505, 0x1p-14, 0x1p-24, 0x1p-25, 0x1.8p-24, 1.5, 0.1, .infinity]
            for _ in 0..<20_000 {
                samples.append(Float(bitPattern: UInt32.random(in: 0...UInt32.max, using: &generator)))
                samples.append(Float(Float16(bitPattern: UInt16.random(in: 0...UInt16.max, using: &generator))))
            }
            for f in samples where !f.isNaN {
                let half = Float16(f)
                let exact = Float(half) == f && !(half.isInfinite && f.isFinite)
                #expect(CBOR.halfBits(f) == (exact ? half.bitPattern : nil), "\(f)")
            }
        #endif
    }
}
