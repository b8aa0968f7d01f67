import Foundation
import Testing

@testable import FlagRules
@testable import FlagRulesTooling

/// flagd's `fractional` bucketing by `{"cat": ["shared-seed", {"var": "hashing_input"}]}`,
/// written `split(hashing_input, "shared-seed", flagdCat)`: the text JSON Logic's `cat`
/// makes, hashed as flagd hashes a text. The expected buckets are those
/// openfeature-flagd-core 2.0.0 gives for the same flag (25 equal buckets) and values.
struct FlagdCatTests {
    static let rules: RuleSet = {
        let names = (1...25).map { "bucket\($0)" }
        let entries = names.map { "\($0): 4" }.joined(separator: ", ")
        let source = """
            variant v [\(names.joined(separator: ", ")), fallback] = fallback {
              split(hashing_input, "shared-seed", flagdCat) { \(entries) }
            }
            """
        return try! RuleSet(source: source)
    }()

    @Test(arguments: [
        (#""user1""#, "bucket16"), (#""""#, "bucket16"), (#""null""#, "bucket20"), ("123", "bucket16"), ("-7", "bucket12"),
        ("1.5", "bucket12"), ("2.0", "bucket23"), ("1e20", "bucket4"), ("0.1", "bucket25"),
        // A bool is a Python int to json-logic's to_string: `True`, `False`.
        ("true", "bucket11"), ("false", "bucket21"),
        // A list is its elements' texts joined by commas; an object `[object Object]`.
        (#"["a", "b"]"#, "bucket5"), ("[1, 2, 3]", "bucket16"), ("[]", "bucket16"), (#"{"a": 1}"#, "bucket14"),
        // A JSON null is no value in a context: missing, as `cat` writes it (`null`).
        ("null", "bucket20"),
    ])
    func bucketsAsFlagdCore(_ json: String, _ expected: String) throws {
        let context = try EvaluationContext(json: #"{"hashing_input": \#(json)}"#)
        #expect(Self.rules.evaluate("v", in: context).variant == expected, "\(json)")
    }

    /// A missing unit is bucketed (as the text `null`), not left out as other splits leave it.
    @Test func aMissingUnitIsBucketedAsNull() throws {
        #expect(Self.rules.evaluate("v", in: EvaluationContext()).variant == "bucket20")
        let explained = try #require(Self.rules.explain("v", in: EvaluationContext()))
        #expect(explained.resolution.variant == "bucket20")
        #expect(explained.description.contains(#"murmur3 of CBOR "shared-seednull""#), "\(explained.description)")
    }

    /// Like flagd's, the scheme buckets splits only.
    @Test func aRolloutByFlagdCatIsRefused() {
        #expect(throws: (any Error).self) { try RuleSet(source: #"flag f { enabled when rollout(userId, "s", flagdCat) < 10% }"#) }
    }

    /// `cat`'s literals before the attribute are the salt; the flag's key stands for
    /// `{"var": "$flagd.flagKey"}`; another expression is not imported.
    @Test func catBucketingIsImported() throws {
        let json = try JSON.parse(#"{"cat": [{"var": "$flagd.flagKey"}, "-", 7, true, {"var": "user.name"}]}"#)
        let read = FlagdImport.catBucketing(json, key: "my-flag")
        #expect(read?.path == "user.name" && read?.prefix == "my-flag-7True")
        for other in [
            #"{"cat": ["a", {"var": "x"}, "b"]}"#, #"{"cat": [{"var": "x"}, {"var": "y"}]}"#, #"{"cat": ["a"]}"#, #"{"sub": ["a"]}"#,
        ] {
            #expect(FlagdImport.catBucketing(try JSON.parse(other), key: "k") == nil, "\(other)")
        }
    }
}
