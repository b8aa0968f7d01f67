import Foundation
import Testing

@testable import FlagRules

/// "Missing and mistyped attributes — three-valued logic", sentence by sentence (the
/// language article's *Three-valued logic*).
@Suite struct SpecSentenceTests {
    static let sentences: [(String, String, EvaluationContext, String?, Truth)] = [
        ("a comparison that reads an absent attribute is unknown", #"country == "US""#, [:], nil, .unknown),
        ("…or a value of the wrong type", "age > 3", ["age": "old"], "age: int", .unknown),
        ("not unknown is unknown", #"not (country == "US")"#, [:], nil, .unknown),
        ("unknown and false is false", #"country == "US" and 1 == 2"#, [:], nil, .no),
        ("unknown or true is true", #"country == "US" or 1 == 1"#, [:], nil, .yes),
        ("country != \"US\" does not match a context without country", #"country != "US""#, [:], nil, .unknown),
        ("has(country) tests presence", "has(country)", [:], nil, .no),
        ("rollout(x) with an absent x is unknown", "rollout(userId) < 50%", [:], nil, .unknown),
        ("a unit may be a string", "rollout(userId) < 100%", ["userId": "u-1"], nil, .yes),
        ("…an int", "rollout(userId) < 100%", ["userId": 7], nil, .yes),
        ("…an enum value", "rollout(build) < 100%", ["build": "debug"], "build: enum(debug, release)", .yes),
        ("any other type is unknown without a schema", "rollout(price) < 100%", ["price": 2.5], nil, .unknown),
        ("has(x) is true for any present value, even a mistyped one", "has(age)", ["age": "old"], "age: int", .yes),
    ]

    @Test(arguments: 0..<sentences.count)
    func sentenceHolds(_ i: Int) throws {
        let (sentence, expression, context, schema, expected) = Self.sentences[i]
        #expect(try truth(of: expression, in: context, schema: schema) == expected, "\(sentence)")
    }

    @Test func anAbsentUnitGoesOnToTheNextRule() throws {
        let rules = try RuleSet(
            source: """
                variant v [a, b, c] = a {
                  split(userId) { a: 50%, b: 50% }
                  c when has(plan)
                }
                """)
        let r = rules.evaluate("v", in: ["plan": "pro"])
        #expect(r.variant == "c" && r.rule == 2 && r.reason == .targetingMatch)
        #expect(rules.evaluate("v", in: [:]).reason == .default)
    }

    @Test func aUnitOfAnotherTypeIsALoadErrorWithASchema() {
        #expect(throws: RuleSetError.self) {
            try RuleSet(source: "context { price: double }\nflag a { enabled when rollout(price) < 50% }\n")
        }
    }
}
