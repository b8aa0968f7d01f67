import Testing
@testable import FlagRules

@Suite struct StringTableTests {
    @Test(arguments: [0, 1, 3, 8, 9, 100, 5_000])
    func findsEveryStringAndNothingElse(_ count: Int) {
        let strings = (0..<count).map { "s\($0)-é" }
        let table = StringTable(strings)
        for (i, s) in strings.enumerated() { #expect(table.index(of: s) == i) }
        #expect(table.index(of: "missing") == nil)
        #expect(table.index(of: "") == nil)
        #expect(table.count == count)
    }

    @Test func duplicatesKeepTheFirstPositionAndNormalisationIsNotApplied() {
        let table = StringTable(["a", "b", "c", "d", "e", "f", "g", "h", "i", "a", "\u{E9}"])
        #expect(table.index(of: "a") == 0)
        #expect(table.index(of: "\u{E9}") == 10)
        #expect(table.index(of: "e\u{301}") == nil)
        #expect(table.index(of: "") == nil)
    }

    @Test func longListsInRules() throws {
        let list = (0..<1_000).map { "\"c\($0)\"" }.joined(separator: ", ")
        let rules = try RuleSet(source: "context { country: string }\nflag f { enabled when country in [\(list)] }\nflag g { enabled when country not in [\(list)] }")
        #expect(rules.isEnabled("f", in: ["country": "c999"]))
        #expect(!rules.isEnabled("f", in: ["country": "c1000"]))
        #expect(rules.isEnabled("g", in: ["country": "c1000"]))
        #expect(rules.evaluate("f", in: [:]).reason == .default)
        let prepared = rules.prepare(["country": "c500"])
        #expect(rules.isEnabled(rules.handle("f")!, in: prepared))
        let untyped = try RuleSet(source: "flag f { enabled when country in [\(list)] }")
        #expect(untyped.isEnabled("f", in: ["country": "c7"]))
        #expect(untyped.evaluate("f", in: ["country": 7]).reason == .default)
    }
}
