import Foundation
import Testing

@testable import FlagRules
@testable import FlagRulesTooling

/// Lists of any scalars in a context, and prerequisites imported whole: what the vendors'
/// suites and the random SDK check found, each pinned with the value the vendor's SDK gives.
struct ListFindingsTests {
    /// LaunchDarkly operators-equality.yml, "user with multiple values matches clause with
    /// single value" of bools, doubles and mixed types: an element that matches is enough.
    @Test(arguments: [
        (#"[true]"#, #"[false, true]"#, #"[false]"#),
        (#"[1.5]"#, #"[2.5, 1.5]"#, #"[2.5]"#),
        (#"[3]"#, #"["b", 3]"#, #"["b", false]"#),
    ])
    func launchDarklyListsOfAnyScalars(_ values: String, _ matching: String, _ other: String) throws {
        let file = """
            {"flags": {"f": {"key": "f", "on": true, "variations": [false, true], "fallthrough": {"variation": 0}, "offVariation": 0,
              "rules": [{"id": "r", "variation": 1, "clauses": [{"attribute": "attrname", "op": "in", "values": \(values)}]}]}}}
            """
        func evaluate(_ attribute: String) throws -> Value? {
            let value = try #require(Value(json: JSON.parse(bytes: Array(attribute.utf8))))
            return try SuiteFindingsTests.evaluate(file, .launchdarkly, "f", ["key": "user-key", "attrname": value])
        }
        #expect(try evaluate(matching) == .bool(true))
        #expect(try evaluate(other) == .bool(false))
    }

    /// The language: a list of bools, numbers or mixed scalars is a list; an element of
    /// another type than the literal is unknown there, so a match elsewhere decides; a nested
    /// element makes the list unknown. The explanation agrees on each.
    @Test func listsOfAnyScalars() throws {
        let rules = try RuleSet(
            source: """
                flag anyB { enabled when (xs contains any ["b"]) ?? false }
                flag anyTrue { enabled when (xs contains any [true]) ?? false }
                flag has3 { enabled when (xs contains 3) ?? false }
                flag counted { enabled when (count(xs) >= 0) ?? false }
                flag two { enabled when (count(xs) == 2) ?? false }

                """)
        let cases: [(String, [String: Bool], Int)] = [
            (#"["b", 3]"#, ["anyB": true, "anyTrue": false, "has3": true], 2),
            (#"[3, "b", false]"#, ["anyB": true, "anyTrue": false, "has3": true], 3),
            (#"[false, true]"#, ["anyB": false, "anyTrue": true, "has3": false], 2),
            (#"[2.5, 3]"#, ["anyB": false, "anyTrue": false, "has3": true], 2),
            (#"["a", ["b"]]"#, ["anyB": false, "anyTrue": false, "has3": false], -1),
        ]
        for (list, expected, count) in cases {
            let value = try #require(Value(json: JSON.parse(bytes: Array(list.utf8))))
            let context: EvaluationContext = ["xs": value]
            for (name, on) in expected {
                #expect(rules.evaluate(name, in: context).value == .bool(on), "\(name) \(list)")
                #expect(rules.explain(name, in: context)?.resolution == rules.evaluate(name, in: context), "\(name) \(list)")
            }
            #expect(rules.evaluate("counted", in: context).value == .bool(count >= 0), "\(list)")
            #expect(rules.evaluate("two", in: context).value == .bool(count == 2), "\(list)")
        }
    }

    /// GrowthBook cases.json, evalCondition "equals array - pass", "- fail order", "- fail
    /// missing item", "- fail extra item" and "- fail type mismatch": an array as the value is
    /// the same elements in the same order, false for anything else.
    @Test(arguments: [
        (#"["hello", "world"]"#, true), (#"["world", "hello"]"#, false), (#"["hello"]"#, false),
        (#"["hello", "world", "foo"]"#, false), (#""hello world""#, false), ("null", false),
    ])
    func growthBookEqualsArray(_ tags: String, _ equal: Bool) throws {
        let file = """
            {"features": {"f": {"defaultValue": false, "rules": [{"condition": {"tags": ["hello", "world"]}, "force": true}]},
                          "g": {"defaultValue": false, "rules": [{"condition": {"tags": {"$not": ["hello", "world"]}}, "force": true}]}}}
            """
        var context: EvaluationContext = [:]
        if let value = Value(json: try JSON.parse(bytes: Array(tags.utf8))) { context["tags"] = value }
        #expect(try SuiteFindingsTests.evaluate(file, .growthbook, "f", context) == .bool(equal))
        #expect(try SuiteFindingsTests.evaluate(file, .growthbook, "g", context) == .bool(!equal))
    }

    /// The language: `== [...]` compares a list element by element, in order; with a schema
    /// its literals are checked against the element type; a list with anything else, or a
    /// scalar with a list literal, is an error naming the form to use.
    @Test func listEquality() throws {
        let rules = try RuleSet(
            source: """
                flag same { enabled when xs == ["a", 1] }
                flag other { enabled when xs != [true] }

                """)
        let cases: [(String, Truth, Truth)] = [
            // (No pair differs and one does not compare: unknown.)
            (#"["a", 1]"#, .yes, .yes), (#"[1, "a"]"#, .unknown, .yes), (#"["a"]"#, .no, .unknown),
            (#"["a", 1.0]"#, .yes, .yes), (#"["a", "1"]"#, .unknown, .yes), (#""a""#, .unknown, .unknown),
            (#"[false]"#, .no, .yes), (#"[true]"#, .no, .no), (#"["a", [1]]"#, .unknown, .unknown),
        ]
        for (list, same, other) in cases {
            let value = try #require(Value(json: JSON.parse(bytes: Array(list.utf8))))
            let context: EvaluationContext = ["xs": value]
            for (name, truth) in [("same", same), ("other", other)] {
                #expect(rules.evaluate(name, in: context).value == .bool(truth == .yes), "\(name) \(list)")
                let explained = try #require(rules.explain(name, in: context))
                #expect(explained.resolution == rules.evaluate(name, in: context), "\(name) \(list)")
            }
        }
        let typed = try RuleSet(source: "context { roles: [enum(admin, viewer)] }\nflag f { enabled when roles == [admin, \"viewer\"] }\n")
        #expect(typed.evaluate("f", in: ["roles": ["admin", "viewer"]]).value == .bool(true))
        let errors = [
            "context { roles: [enum(admin, viewer)] }\nflag f { enabled when roles == [admni] }\n",
            "context { name: string }\nflag f { enabled when name == [\"a\"] }\n",
            "context { tags: [string] }\nflag f { enabled when tags == \"a\" }\n",
        ].map { source in
            (#expect(throws: RuleSetError.self) { try RuleSet(source: source) })?.errors.first?.message ?? ""
        }
        #expect(errors[0].contains("did you mean 'admin'"), "\(errors)")
        #expect(errors[1] == "'==' with a list literal compares a list, found string")
        #expect(errors[2] == "'==' compares a list only with a list literal")
    }

    /// LaunchDarkly operators-string.yml, "[prefix] startsWith prefix" and its like: on a
    /// list, each string operator is tried on each element.
    @Test(arguments: [
        ("startsWith", "prefix", #"["prefixabc"]"#, #"["abcprefix"]"#), ("endsWith", "suffix", #"["abcsuffix"]"#, #"["suffixabc"]"#),
        ("contains", "substring", #"["abcsubstringxyz"]"#, #"["abc"]"#), ("matches", "^[A-Za-z]+", #"["matchThisName"]"#, #"["_"]"#),
        ("lessThan", "#10", "[3, 30]", "[30]"),
    ])
    func launchDarklyOperatorsOnEachElement(_ op: String, _ value: String, _ matching: String, _ other: String) throws {
        let literal = value.hasPrefix("#") ? String(value.dropFirst()) : StringEscaping.quoted(value)
        let file = """
            {"flags": {"f": {"key": "f", "on": true, "variations": [false, true], "fallthrough": {"variation": 0}, "offVariation": 0,
              "rules": [{"id": "r", "variation": 1, "clauses": [{"attribute": "attr", "op": "\(op)", "values": [\(literal)]}]}]},
              "g": {"key": "g", "on": true, "variations": [false, true], "fallthrough": {"variation": 0}, "offVariation": 0,
              "rules": [{"id": "r", "variation": 1, "clauses": [{"attribute": "attr", "op": "\(op)", "values": [\(literal)], "negate": true}]}]}}}
            """
        for (attribute, matches) in [(matching, true), (other, false)] {
            let value = try #require(Value(json: JSON.parse(bytes: Array(attribute.utf8))))
            #expect(
                try SuiteFindingsTests.evaluate(file, .launchdarkly, "f", ["key": "k", "attr": value]) == .bool(matches), "\(attribute)")
            #expect(
                try SuiteFindingsTests.evaluate(file, .launchdarkly, "g", ["key": "k", "attr": value]) == .bool(!matches), "\(attribute)")
        }
    }

    /// GrowthBook cases.json, evalCondition "$elemMatch - pass - flat arrays" and "- fail":
    /// an operator tried on each element; and `$ne` of an array, which is JavaScript's
    /// `!==` (always true of a container), unlike an array as the value (equal elements).
    @Test func growthBookElemMatchAndNotEqualArrays() throws {
        let file = """
            {"features": {"f": {"defaultValue": false, "rules": [{"condition": {"nums": {"$elemMatch": {"$gt": 10}}}, "force": true}]},
                          "g": {"defaultValue": false, "rules": [{"condition": {"nums": {"$ne": [1, 2]}}, "force": true}]},
                          "h": {"defaultValue": false, "rules": [{"condition": {"nums": {"$elemMatch": {"$regex": "^a"}}}, "force": true}]}}}
            """
        func evaluate(_ name: String, _ nums: String) throws -> Value? {
            let value = try #require(Value(json: JSON.parse(bytes: Array(nums.utf8))))
            return try SuiteFindingsTests.evaluate(file, .growthbook, name, ["nums": value])
        }
        #expect(try evaluate("f", "[0, 5, -20, 15]") == .bool(true))
        #expect(try evaluate("f", "[0, 5, -20, 8]") == .bool(false))
        #expect(try evaluate("f", "[\"a\", 11]") == .bool(true))
        #expect(try evaluate("f", "12") == .bool(false))
        #expect(try evaluate("g", "[1, 2]") == .bool(true))
        #expect(try evaluate("h", "[1, \"ab\"]") == .bool(true))
        #expect(try evaluate("h", "[\"b\"]") == .bool(false))
    }

    /// Found by a review: GrowthBook's `$ini` of a list holding other scalars lowers its
    /// strings alone (`lower()` keeps the rest), as `$in` matches the same list; a
    /// LaunchDarkly string operator on `anonymous` (a bool) is false, and the import loads.
    @Test func caseAndAnonymousEdges() throws {
        let file = """
            {"features": {"f": {"defaultValue": false, "rules": [{"condition": {"tags": {"$ini": ["a"]}}, "force": true}]}}}
            """
        #expect(try SuiteFindingsTests.evaluate(file, .growthbook, "f", ["tags": .list(["A", 1])]) == .bool(true))
        #expect(try SuiteFindingsTests.evaluate(file, .growthbook, "f", ["tags": .list(["B", 1])]) == .bool(false))
        let ld = """
            {"flags": {"f": {"key": "f", "on": true, "variations": [false, true], "fallthrough": {"variation": 0}, "offVariation": 0,
              "rules": [{"id": "r", "variation": 1, "clauses": [{"attribute": "anonymous", "op": "startsWith", "values": ["t"], "negate": true}]}]}}}
            """
        #expect(try SuiteFindingsTests.evaluate(ld, .launchdarkly, "f", ["key": "k", "anonymous": true]) == .bool(true))
    }

    /// Found by the random GrowthBook check: a feature reading a prerequisite that has a
    /// rule left out (its value may differ) is left out, down a chain.
    @Test func growthBookPrerequisitesImportedWhole() throws {
        let file = """
            {"features": {
              "root": {"defaultValue": true},
              "parent": {"defaultValue": true, "rules": [{"condition": {"a": {"$type": "object"}}, "force": false}]},
              "child": {"defaultValue": 1, "rules": [{"parentConditions": [{"id": "parent", "condition": {"value": false}}], "force": 2}]},
              "grandchild": {"defaultValue": 1, "rules": [{"parentConditions": [{"id": "child", "condition": {"value": 2}}], "force": 3}]}}}
            """
        let result = try ImportTests.imported(file, .growthbook)
        let leftOut = result.notes.filter { $0.kind == .notImported }.map(\.place)
        #expect(leftOut.contains("features.child") && leftOut.contains("features.grandchild"), "\(result.notes)")
        let rules = try RuleSet(source: result.text)
        #expect(rules.declarations.map(\.name).sorted() == ["parent", "root"])
    }
}
