import Testing

@testable import FlagRules
@testable import FlagRulesTooling

/// `flags test --coverage`: which rules the tests made decide, tried, or never reached.
@Suite struct CoverageTests {
    static let file = """
        context {
          build  : enum(debug, beta, release)
          userId : string
        }
        flag a {
          enabled when build == debug
          enabled when build == beta
          enabled when userId == "x"
        }
        flag reader {
          enabled when a and userId == "vip"
        }
        @disabled flag off { enabled when build == debug }
        flag untested { enabled when build == release }
        flag plain = true
        segment s = build == beta

        test "debug" {
          given { build: debug }
          expect reader == false
        }
        test "release" {
          given { build: release, userId: "y" }
          expect a == false
        }

        """

    static func states(_ coverage: TestCoverage, _ name: String) -> [TestCoverage.State]? {
        coverage.declarations.first { $0.name == name }?.rules.map(\.state)
    }

    @Test func eachRuleIsMatchedTriedOrUnreached() throws {
        let coverage = try RuleSet(source: Self.file).testCoverage()
        // `a` is read through `reader` in the first test (rule 1 decides) and directly in
        // the second, which tries every rule.
        #expect(Self.states(coverage, "a") == [.matched, .tried, .tried])
        #expect(Self.states(coverage, "reader") == [.tried])
        #expect(Self.states(coverage, "untested") == [.unreached])
        // No rules, or a segment: nothing to cover.
        #expect(coverage.declarations.map(\.name) == ["a", "reader", "off", "untested"])
        let off = try #require(coverage.declarations.first { $0.name == "off" })
        #expect(off.isDisabled && off.counted == 0 && off.matched == 0)
        #expect(coverage.matched == 1 && coverage.counted == 5)
        #expect(TestCoverage.format(coverage.percent) == "20.0 %")
        #expect(coverage.summary == "coverage: 1 of 5 rules matched (20.0 %)")
        #expect(
            coverage.text == """
                  a         1/3 rules  rule 2, line 7: tried, never matched; rule 3, line 8: tried, never matched
                  reader    0/1 rule  rule 1, line 11: tried, never matched
                  off       @disabled: not counted
                  untested  0/1 rule  rule 1, line 14: never reached

                """)
    }

    @Test func aTestThatMakesEveryRuleDecideCoversTheFile() throws {
        let coverage = try RuleSet(
            source: """
                flag f {
                  enabled when x == 1
                  enabled when x == 2
                }
                test "one" {
                  given { x: 1 }
                  expect f
                }
                test "two" {
                  given { x: 2 }
                  expect f
                }
                """
        ).testCoverage()
        #expect(coverage.percent == 100 && coverage.counted == 2)
        #expect(TestCoverage().percent == 100 && TestCoverage().summary == "coverage: 0 of 0 rules matched (100.0 %)")
    }

    @Test func theJSONListsRulesWithTheirRows() throws {
        let coverage = try RuleSet(source: Self.file).testCoverage()
        let json = coverage.json
        guard case .object(let members) = json else {
            Issue.record("\(json)")
            return
        }
        #expect(members.map(\.0) == ["covered", "not_covered", "covered_rules", "not_covered_rules", "disabled", "coverage"])
        #expect(
            members[0].1
                == .array([
                    .object([
                        ("declaration", .string("a")), ("rule", .int(1)), ("start", .object([("row", .int(6))])),
                        ("end", .object([("row", .int(6))])),
                    ])
                ]))
        guard case .array(let notCovered) = members[1].1 else { return }
        #expect(notCovered.count == 4)
        #expect(
            notCovered.last
                == .object([
                    ("declaration", .string("untested")), ("rule", .int(1)), ("start", .object([("row", .int(14))])),
                    ("end", .object([("row", .int(14))])), ("reached", .bool(false)),
                ]))
        #expect(members[2].1 == .int(1) && members[3].1 == .int(4) && members[4].1 == .array([.string("off")]))
        #expect(members[5].1 == .double(20))
    }

    @Test func percentagesRoundToOneDecimal() {
        #expect(TestCoverage.format(80.55) == "80.6 %")
        #expect(TestCoverage.format(0) == "0.0 %")
        #expect(TestCoverage.format(100) == "100.0 %")
        #expect(TestCoverage.format(0.04) == "0.0 %")
    }
}
