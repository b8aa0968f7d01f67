import Testing
@testable import FlagRules

@Suite struct PreparedContextTests {
    let rules: RuleSet

    init() throws {
        rules = try RuleSet(source: specExample, name: "spec.flags")
    }

    @Test func everyDeclarationAgreesWithDictionaryContexts() {
        let contexts: [EvaluationContext] = [
            [:],
            ["build": "alpha", "userId": "42", "country": "US", "appVersion": "2.4.0"],
            ["build": "release", "userId": "user-3", "country": "US", "appVersion": "2.2.0", "email": "a@example.com", "age": 70],
            ["build": "prod", "userId": 5, "country": "FR", "appVersion": "x", "age": 70.5, "now": "2030-01-01"],
        ]
        for context in contexts {
            let prepared = rules.prepare(context)
            for d in rules.declarations {
                #expect(rules.evaluate(d.name, in: prepared) == rules.evaluate(d.name, in: context), "\(d.name) in \(context)")
                #expect(rules.evaluate(rules.handle(d.name)!, in: prepared) == rules.evaluate(d.name, in: context))
            }
        }
    }

    @Test func valuesAreCheckedOnceAndReadBack() {
        var c = rules.makeContext()
        c["appVersion"] = "2.4.0"
        c["age"] = 30.5  // mistyped: present, but reads as absent
        c["undeclared"] = "ignored"
        c["now"] = "2026-01-01"
        #expect(c["appVersion"] == "2.4.0")
        #expect(c["age"] == .double(30.5))
        #expect(c["undeclared"] == nil)
        #expect(c.dictionary == ["appVersion": "2.4.0", "age": .double(30.5), "now": "2026-01-01"])
        c["appVersion"] = nil
        #expect(c["appVersion"] == nil)
        #expect(rules.evaluate("newMediaPicker", in: c) == Resolution(value: true, reason: .default))
    }

    @Test func handlesFromAnotherRuleSetAreResolvedByName() throws {
        let other = try RuleSet(source: "flag zzz = true\nflag darkMode = true")
        let foreign = try #require(other.handle("darkMode"))
        let missing = try #require(other.handle("zzz"))
        let context = rules.prepare(["build": "alpha", "userId": "42"])
        #expect(rules.isEnabled(foreign, in: context))
        #expect(rules.evaluate(missing, in: context).errorCode == .flagNotFound)
        #expect(!rules.isEnabled(missing, in: context))
        // A prepared context from another rule set is read by name.
        let otherContext = other.prepare(["build": "alpha", "userId": "42"])
        #expect(rules.isEnabled(rules.handle("darkMode")!, in: otherContext))
        #expect(rules.handle("nope") == nil)
        #expect(!rules.isEnabled(rules.handle("checkout")!, in: context))  // not a flag
    }

    @Test func schemalessRuleSetsKeepEveryAttribute() throws {
        let r = try RuleSet(source: "flag f { enabled when anything == 1 and has(other) }")
        var c = r.makeContext()
        c["anything"] = 1
        c["other"] = "x"
        #expect(r.isEnabled(r.handle("f")!, in: c))
    }
}
