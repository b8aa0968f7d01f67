import Testing

@testable import FlagRules
@testable import FlagRulesTooling

@Suite struct ExplainTests {
    /// The explainer interprets the checked program; it must always agree with the closures.
    @Test func explanationsAgreeWithEvaluationOnEveryOperatorRow() throws {
        for (expression, context, _) in OperatorTests.typed + OperatorTests.dynamic {
            let schemaLine = OperatorTests.typed.contains(where: { $0.0 == expression }) ? "context { \(schema) }\n" : ""
            let rules = try RuleSet(
                source: schemaLine + "flag f { enabled when \(expression) }\nflag g { disabled when not (\(expression)) }")
            for name in ["f", "g"] {
                #expect(rules.explain(name, in: context)?.resolution == rules.evaluate(name, in: context), "\(expression) in \(context)")
            }
        }
    }

    @Test func explanationsAgreeOnTheExamples() throws {
        for file in try exampleFiles() {
            let rules = try RuleSet(contentsOf: file)
            for test in rules.tests {
                for d in rules.declarations {
                    #expect(rules.explain(d.name, in: test.context)?.resolution == rules.evaluate(d.name, in: test.context))
                }
            }
        }
    }

    @Test func explainsWhy() throws {
        let rules = try RuleSet(
            source: """
                context { build: enum(debug, beta); userId: string; age: int }
                segment internal = build == debug
                flag darkMode {
                  enabled when internal
                  enabled when build == beta and rollout(userId) < 20%
                  enabled when age > 30
                }
                variant v [a, b] { split(userId) { a: 1, b: 1 } }
                @disabled flag off = true
                flag plain = true
                """)
        let e = try #require(rules.explain("darkMode", in: ["build": "beta", "userId": "user-1", "age": "old"]))
        #expect(
            e.text == """
                darkMode = false  (DEFAULT)
                  rule 1, line 4: enabled when internal  → no match
                    internal → false  (segment)
                      build == debug → false
                        build → "beta"
                  rule 2, line 5: enabled when build == beta and rollout(userId) < 20%  → no match
                    build == beta and rollout(userId) < 20% → false
                      build == beta → true
                        build → "beta"
                      rollout(userId) < 20% → false
                        rollout(userId) → 74.896%  (key "darkMode:user-1")
                          userId → "user-1"
                  rule 3, line 6: enabled when age > 30  → no match
                    age > 30 → unknown  (age is "old" (string), expected int)
                      age → unknown  (age is "old" (string), expected int)
                  no rule matched: the default

                """)
        let split = try #require(rules.explain("v", in: ["userId": "u"]))
        #expect(split.rules.first?.split?.key == "v:u")
        #expect(split.rules.first?.split?.total == 2)
        #expect(split.text.contains("split: key \"v:u\", target"))
        let noUnit = try #require(rules.explain("v", in: [:]))
        #expect(noUnit.rules.first?.split?.note == "no choice: userId is absent")
        #expect(rules.explain("off", in: [:])?.summary == "@disabled: off, whatever the default and the rules say")
        #expect(rules.explain("off", in: [:])?.resolution == Resolution(value: false, reason: .disabled))
        #expect(rules.explain("plain", in: [:])?.summary == "no rules: the default")
        #expect(rules.explain("nope", in: [:]) == nil)
        let json = e.json.serialized()
        #expect(json.contains(#""expression": "rollout(userId)", "result": "74.896%", "note": "key \"darkMode:user-1\"""#))
    }
}

@Suite struct TestDeclarationTests {
    @Test func testsRunAndReportFailures() throws {
        let rules = try RuleSet(
            source: """
                context { build: enum(debug, release); userId: string }
                flag darkMode { enabled when build == debug }
                variant v [a, b] = a { b when build == release }
                value n: int = 1 { 2 when build == release }
                test "release" {
                  given { build: release }
                  expect not darkMode
                  expect v == b
                  expect v.reason == TARGETING_MATCH
                  expect v.rule == 1
                  expect n == 2
                  expect n != 3
                }
                test "wrong" {
                  given {
                    build: debug,
                    userId: "u"
                  }
                  expect not darkMode
                  expect n == 2
                }
                """)
        let results = rules.runTests()
        #expect(results.map(\.passed) == [true, false])
        #expect(results[1].failures.map(\.expectation.text) == ["expect not darkMode", "expect n == 2"])
        #expect(results[1].failures.first?.actual == Resolution(value: true, reason: .targetingMatch, rule: 1, line: 2))
        #expect(results[1].test.context == ["build": "debug", "userId": "u"])
        #expect(results[1].test.line == 14)
        // Tests are not declarations.
        #expect(!rules.declarations.map(\.name).contains("release"))
    }

    @Test(arguments: [
        (#"test "t" { given { age: 1.5 }; expect f }"#, "attribute 'age' expects an int, got 1.5"),
        (#"test "t" { given { build: prod }; expect f }"#, "'prod' is not a case of enum(debug, release)"),
        (#"test "t" { given { userid: "u" }; expect f }"#, "the context declares no attribute 'userid'; did you mean 'userId'?"),
        (#"test "t" { given { age: 1, age: 2 }; expect f }"#, "'age' is given twice"),
        (#"test "t" { given { build: debug } }"#, "test \"t\" expects nothing"),
        (#"test "t" { expect g }"#, "unknown declaration 'g'"),
        (#"test "t" { expect n }"#, "'n' is int, not a bool; write 'expect n == …'"),
        (#"test "t" { expect n == "x" }"#, "expected an int, found string \"x\""),
        (#"test "t" { expect f.reason == DEFAUT }"#, "'DEFAUT' is not a reason; did you mean 'DEFAULT'?"),
        (#"test "t" { expect f.rule == 3 }"#, "'f' has 1 rule"),
        (#"test "t" { expect f.variant == a }"#, "'f' is a flag, not a variant"),
        (#"test "t" { expect f.colour == 1 }"#, "unknown property 'colour'"),
        (#"test "t" { expect f }"# + "\n" + #"test "t" { expect f }"#, "test \"t\" is declared twice"),
        (#"test t { expect f }"#, "expected the test's name as a string, found 't'"),
        (#"test "t" { expext f }"#, "expected 'given' or 'expect' in a test, found 'expext'; did you mean 'expect'?"),
        (#"test "t" { expect f.reason }"#, "expected '==' after 'f.reason', found '}'"),
        (#"test "t" { given { build: debug } expect f }"#, "expected a new line or ';' after 'given { … }', found 'expect'"),
    ])
    func mistakesInTests(_ test: String, _ message: String) {
        let source = """
            context { build: enum(debug, release); userId: string; age: int }
            flag f { enabled when build == debug }
            value n: int = 1
            \(test)
            """
        do {
            _ = try RuleSet(source: source)
            Issue.record("loaded: \(test)")
        } catch {
            #expect(error.errors.map(\.message) == [message])
        }
    }

    /// Names are looked up in the checker's name table: a name declared three times is
    /// reported twice, each time pointing at the first; a name that is also an attribute,
    /// and a misspelt declaration in a test are each reported.
    @Test func namesDeclaredTwiceOrClashing() {
        let source = """
            context { build: enum(debug, release); f: string }
            flag f { enabled when build == debug }
            flag beta { enabled when has(g) }
            flag f { enabled when build == release }
            value f: int = 3
            segment g = build == debug
            test "t" { expect betta }
            """
        do {
            _ = try RuleSet(source: source)
            Issue.record("loaded")
        } catch {
            let errors = error.errors
            #expect(
                errors.map(\.message) == [
                    "'f' is declared twice", "'f' is declared twice",
                    "'f' is both a context attribute and a declaration",
                    "unknown context attribute 'g'",
                    "unknown declaration 'betta'; did you mean 'beta'?",
                ])
            #expect(errors.prefix(2).map { $0.range.start.line } == [4, 5])
            #expect(errors.prefix(3).allSatisfy { $0.notes.first?.range?.start.line == 2 })
        }
    }

    /// A split that lists an outcome again is an error at each repeat, whose note points at
    /// the first listing: in a short split (searched in order) and in a long one (a table).
    @Test(arguments: [3, 40])
    func repeatedSplitEntriesPointAtTheFirst(_ count: Int) throws {
        let entries = (0..<count).map { "\($0): 1" } + ["1: 1", "1: 1"]
        let source = "value v: int = 0 {\n  split(userId) {\n" + entries.map { "    " + $0 }.joined(separator: ",\n") + "\n  }\n}\n"
        do {
            _ = try RuleSet(source: source)
            Issue.record("loaded")
        } catch {
            let errors = error.errors
            #expect(errors.map(\.message) == ["1 appears twice in the split", "1 appears twice in the split"])
            #expect(errors.map { $0.range.start.line } == [count + 3, count + 4])
            #expect(errors.allSatisfy { $0.notes.first?.range?.start.line == 4 })
        }
    }

}
