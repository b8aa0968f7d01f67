import Foundation
import Testing

@testable import FlagRules

let specExample = """
    context {
      build      : enum(debug, alpha, beta, release)
      userId     : string
      sessionId  : string
      country    : string
      email      : string
      appVersion : version
      age        : int
      score      : double
      beta       : bool
      signup     : datetime
    }

    segment staff = email ends with "@example.com" or build == alpha

    /// Dark mode on the settings screen.
    @owner("ios-core") @expires("2027-03-31")
    flag darkMode {
      enabled when build in [debug, alpha] and rollout(userId) < 20%
    }

    flag newMediaPicker = true {
      disabled when country == "FR"
      disabled when appVersion < "2.3.0"
    }

    @disabled
    flag raccoonImages { enabled when staff }

    variant checkout [control, oneStep, twoStep] = control {
      oneStep when staff
      split(userId) { control: 50%, oneStep: 25%, twoStep: 25% } when country in ["US", "CA"]
    }

    value cacheHours: int = 24 {
      48 when build == release and newMediaPicker
      12 when checkout == twoStep
    }

    value greeting: string = "Hello" { "Howdy" when country == "US" }
    value discount: double = 0.0 { 0.15 when has(email) and age >= 65 }
    """

@Suite struct EvaluationTests {
    let rules: RuleSet

    init() throws {
        rules = try RuleSet(source: specExample, name: "spec.flags")
    }

    @Test func specExampleResolvesAsDocumented() {
        let alpha: EvaluationContext = ["build": "alpha", "userId": "darkMode-in", "country": "US", "appVersion": "2.4.0"]
        // staff (build == alpha) → oneStep by rule 1
        #expect(
            rules.evaluate("checkout", in: alpha)
                == Resolution(value: "oneStep", variant: "oneStep", reason: .targetingMatch, rule: 1, line: 31))
        // user-3 in the US at release → split rule 2 → twoStep (bucketing vector)
        let us: EvaluationContext = ["build": "release", "userId": "user-3", "country": "US", "appVersion": "2.4.0"]
        #expect(rules.evaluate("checkout", in: us) == Resolution(value: "twoStep", variant: "twoStep", reason: .split, rule: 2, line: 32))
        #expect(rules.evaluate("cacheHours", in: us) == Resolution(value: 48, reason: .targetingMatch, rule: 1, line: 36))
        // outside US/CA nobody is split: default variant
        let fr: EvaluationContext = ["build": "release", "userId": "user-3", "country": "FR"]
        #expect(rules.evaluate("checkout", in: fr) == Resolution(value: "control", variant: "control", reason: .default))
        #expect(
            rules.evaluate("newMediaPicker", in: fr)
                == Resolution(value: true, reason: .targetingMatch, rule: 1, line: 23).with(value: false))
        #expect(rules.evaluate("greeting", in: us).value == "Howdy")
        #expect(rules.evaluate("greeting", in: fr) == Resolution(value: "Hello", reason: .default))
        #expect(rules.evaluate("discount", in: ["email": "a@b", "age": 70]).value == .double(0.15))
        #expect(rules.evaluate("discount", in: ["age": 70]).value == .double(0.0))
    }

    @Test func darkModeFollowsTheBucketingVectors() {
        // darkMode:user-1 → 74.896, darkMode:42 → 14.357
        #expect(!rules.isEnabled("darkMode", in: ["build": "alpha", "userId": "user-1"]))
        #expect(rules.isEnabled("darkMode", in: ["build": "alpha", "userId": "42"]))
        #expect(!rules.isEnabled("darkMode", in: ["build": "release", "userId": "42"]))
        #expect(
            rules.evaluate("darkMode", in: ["build": "debug", "userId": "42"])
                == Resolution(value: true, reason: .targetingMatch, rule: 1, line: 19))
    }

    @Test func disabledWinsOverEverything() {
        #expect(rules.evaluate("raccoonImages", in: ["build": "alpha"]) == Resolution(value: false, reason: .disabled))
    }

    @Test func absentAttributesNeverMatchNegativeRules() {
        // country != "FR" style: newMediaPicker's 'disabled when country == "FR"' does not match without country
        #expect(rules.evaluate("newMediaPicker", in: [:]) == Resolution(value: true, reason: .default))
    }

    @Test func everyReason() throws {
        let r = try RuleSet(
            source: """
                flag staticFlag = true
                @disabled flag killed = true
                @disabled flag killedWithRules { enabled when x }
                flag matched { enabled when x == 1 }
                flag fallthrough { enabled }
                variant v [a, b] { split(id) { a: 1, b: 0 } }
                """)
        #expect(r.evaluate("staticFlag", in: [:]) == Resolution(value: true, reason: .static))
        #expect(r.evaluate("killed", in: [:]) == Resolution(value: false, reason: .disabled))  // a kill switch: off
        #expect(r.evaluate("killedWithRules", in: ["x": true]) == Resolution(value: false, reason: .disabled))
        #expect(r.evaluate("matched", in: ["x": 1]) == Resolution(value: true, reason: .targetingMatch, rule: 1, line: 4))
        #expect(r.evaluate("matched", in: ["x": 2]) == Resolution(value: false, reason: .default))
        #expect(r.evaluate("fallthrough", in: [:]) == Resolution(value: true, reason: .targetingMatch, rule: 1, line: 5))
        #expect(r.evaluate("v", in: ["id": "u"]) == Resolution(value: "a", variant: "a", reason: .split, rule: 1, line: 6))
        #expect(r.evaluate("v", in: [:]) == Resolution(value: "a", variant: "a", reason: .default))
    }

    /// A resolution's rule and line are kept in 32 bits: set and read back as given, nil
    /// for none (and for 0, which no rule or line is), a number beyond 32 bits clamped.
    @Test func ruleAndLineReadBackAsSet() {
        var r = Resolution(value: true, reason: .targetingMatch, rule: 3, line: 140)
        #expect(r.rule == 3 && r.line == 140 && r.description == "true (TARGETING_MATCH, rule 3, line 140)")
        r.rule = nil
        r.line = 0
        #expect(r.rule == nil && r.line == nil && r == Resolution(value: true, reason: .targetingMatch))
        r.line = Int(Int32.max) + 10
        #expect(r.line == Int(Int32.max))
        #expect(MemoryLayout<Resolution>.stride <= 64)
    }

    @Test func everyErrorCode() throws {
        let r = try RuleSet(source: "flag f { enabled when x }\nvariant v [a, b]\nvalue n: string = \"s\"")
        #expect(r.evaluate("nope", in: [:]) == .error(.flagNotFound, "no declaration named 'nope'", default: false))
        #expect(
            r.evaluate("v", in: [:], expecting: .flag, default: false)
                == .error(.typeMismatch, "'v' is a variant, not a flag", default: false))
        #expect(r.evaluate("n", in: [:], expecting: .value, default: 1) == .error(.typeMismatch, "'n' is string, not int", default: 1))
        #expect(r.evaluate("f", jsonContext: "{").errorCode == .invalidContext)
        #expect(r.evaluate("f", jsonContext: #"{"x": true}"#).value == true)
        let store = FlagStore()
        #expect(store.evaluate("f", in: [:]) == .error(.general, "no rules have been loaded", default: false))
        #expect(throws: RuleSetError.self) { try store.update(source: "flag {") }
        #expect(store.evaluate("f", in: [:]).errorCode == .parseError)
        #expect(throws: RuleSetError.self) { try store.update(contentsOf: URL(fileURLWithPath: "/nonexistent/x.flags")) }
        #expect(store.evaluate("f", in: [:]).errorCode == .general)
    }

    @Test func aBrokenUpdateNeverReplacesGoodRules() throws {
        let store = FlagStore()
        try store.update(source: "flag f = true")
        #expect(throws: RuleSetError.self) { try store.update(source: "flag f = maybe") }
        #expect(store.evaluate("f", in: [:]) == Resolution(value: true, reason: .static))
        #expect(store.lastError?.errors.first?.message == "a flag's default must be 'true' or 'false', found 'maybe'")
        try store.update(source: "flag f = false")
        #expect(store.evaluate("f", in: [:]).value == false)
        #expect(store.lastError == nil)
    }

    @Test func typedAccessorsFallBackOnErrors() throws {
        let r = try RuleSet(
            source: """
                flag f = true
                variant v [a, b] = b
                value i: int = 3
                value d: double = 2.5
                value s: string = "x"
                value b: bool = true
                """)
        #expect(r.isEnabled("f", in: [:]))
        #expect(r.isEnabled("v", in: [:], default: true))  // not a flag
        #expect(r.variant("v", in: [:]) == "b")
        #expect(r.variant("f", in: [:], default: "z") == "z")
        #expect(r.value("i", in: [:], default: 0) == 3)
        #expect(r.value("i", in: [:], default: 0.0) == 3.0)  // an int value reads as a double
        #expect(r.value("d", in: [:], default: 0.0) == 2.5)
        #expect(r.value("d", in: [:], default: 7) == 7)
        #expect(r.value("s", in: [:], default: "") == "x")
        #expect(r.value("b", in: [:], default: false))
        #expect(r.value("missing", in: [:], default: "dflt") == "dflt")
    }

    @Test func rulesAreTriedTopToBottom() throws {
        let r = try RuleSet(
            source: """
                value tier: string = "none" {
                  "gold" when points >= 1000
                  "silver" when points >= 100
                  "bronze"
                }
                """)
        #expect(r.evaluate("tier", in: ["points": 5000]) == Resolution(value: "gold", reason: .targetingMatch, rule: 1, line: 2))
        #expect(r.evaluate("tier", in: ["points": 500]) == Resolution(value: "silver", reason: .targetingMatch, rule: 2, line: 3))
        #expect(r.evaluate("tier", in: ["points": 5]) == Resolution(value: "bronze", reason: .targetingMatch, rule: 3, line: 4))
        #expect(r.evaluate("tier", in: [:]) == Resolution(value: "bronze", reason: .targetingMatch, rule: 3, line: 4))
    }

    @Test func aSplitWithAnAbsentUnitFallsThrough() throws {
        let r = try RuleSet(
            source: """
                variant v [a, b, c] = c {
                  split(userId) { a: 1, b: 1 }
                  b when has(sessionId)
                }
                """)
        #expect(r.evaluate("v", in: ["sessionId": "s"]) == Resolution(value: "b", variant: "b", reason: .targetingMatch, rule: 2, line: 3))
        #expect(r.evaluate("v", in: [:]).reason == .default)
        #expect(r.evaluate("v", in: ["userId": "u"]).reason == .split)
    }

    /// `isEnabled` answers from a chain of its own (no resolution built), which for a last
    /// conditional rule opposite to what follows it is the condition alone, with no branch
    /// on it. For every shape of rules, over every mix of true, false, absent and mistyped
    /// operands, it answers as `evaluate` does, by name and by handle on a prepared context.
    @Test func isEnabledAnswersAsEvaluateForEveryShapeOfRules() throws {
        let r = try RuleSet(
            source: """
                context { x: bool, y: bool, n: int }
                flag onWhen { enabled when x }
                flag offWhen = true { disabled when x }
                flag onWhenOnAnyway = true { enabled when x }
                flag offWhenOffAnyway { disabled when x }
                flag onThenOff { enabled when x; disabled when y }
                flag offThenOnThenOff = true { disabled when x; enabled when y; disabled when n > 3 }
                flag onWhenUnknown { enabled when n > 3 }
                flag offWhenUnknown = true { disabled when n > 3 }
                flag offThenAlwaysOn { disabled when x; enabled }
                flag onWhenNot { enabled when not y }
                flag offWhenEither = true { disabled when x or y }
                """)
        let truths: [Value?] = [true, false, nil, "mistyped"]
        let numbers: [Value?] = [1, 5, nil, "five"]
        var checked = 0
        for x in truths {
            for y in truths {
                for n in numbers {
                    var context: EvaluationContext = [:]
                    context["x"] = x
                    context["y"] = y
                    context["n"] = n
                    let prepared = r.prepare(context)
                    for d in r.declarations {
                        let expected = r.evaluate(d.name, in: context).value == .bool(true)
                        #expect(r.isEnabled(d.name, in: context) == expected, "\(d.name) in \(context)")
                        #expect(r.isEnabled(r.handle(d.name), in: prepared) == expected, "\(d.name) in \(context)")
                        checked += 1
                    }
                }
            }
        }
        #expect(checked == 64 * 11)
        // Some of each answer: a test whose flags never change answer would pin nothing.
        #expect(r.isEnabled("onWhen", in: ["x": true]) && !r.isEnabled("onWhen", in: ["x": false]))
        #expect(!r.isEnabled("offWhen", in: ["x": true]) && r.isEnabled("offWhen", in: [:]))
        #expect(r.isEnabled("offWhenUnknown", in: ["n": "five"]) && !r.isEnabled("onWhenUnknown", in: ["n": "five"]))
    }

    @Test func prerequisitesReadResolvedValues() throws {
        let r = try RuleSet(
            source: """
                flag base { enabled when on }
                @disabled flag off = false { enabled }
                flag child { enabled when base and not off }
                variant v [x, y] = x { y when child }
                value n: int = 1 { 2 when v == y }
                flag bigN { enabled when n > 1 }
                """)
        #expect(r.isEnabled("bigN", in: ["on": true]))
        #expect(!r.isEnabled("bigN", in: ["on": false]))
        #expect(r.evaluate("n", in: ["on": true]) == Resolution(value: 2, reason: .targetingMatch, rule: 1, line: 5))
    }

    @Test func defaults() throws {
        let r = try RuleSet(
            source: """
                flag f { enabled when x }
                flag t = true { disabled when x }
                variant first [a, b] { b when x }
                variant chosen [a, b] = b { a when x }
                value i: int = -3 { 4 when x }
                value d: double = 1 { 2.5 when x }
                """)
        let none: EvaluationContext = [:]
        #expect(r.evaluate("f", in: none) == Resolution(value: false, reason: .default))
        #expect(r.evaluate("t", in: none) == Resolution(value: true, reason: .default))
        #expect(r.evaluate("first", in: none) == Resolution(value: "a", variant: "a", reason: .default))
        #expect(r.evaluate("chosen", in: none) == Resolution(value: "b", variant: "b", reason: .default))
        #expect(r.evaluate("i", in: none) == Resolution(value: -3, reason: .default))
        #expect(r.evaluate("d", in: none) == Resolution(value: .double(1), reason: .default))
    }

    @Test func evaluateAllCoversFlagsVariantsAndValuesNotSegments() {
        let all = rules.evaluateAll(in: ["build": "alpha"])
        #expect(Set(all.keys) == ["darkMode", "newMediaPicker", "raccoonImages", "checkout", "cacheHours", "greeting", "discount"])
        #expect(rules.evaluate("staff", in: ["build": "alpha"]) == Resolution(value: true, reason: .targetingMatch))
    }

    @Test func declarationsCarryTheirMetadata() throws {
        let darkMode = try #require(rules.declarations.first { $0.name == "darkMode" })
        #expect(darkMode.kind == .flag)
        #expect(darkMode.doc == "Dark mode on the settings screen.")
        #expect(darkMode.owner == "ios-core")
        #expect(darkMode.expires == DateTime.parse("2027-03-31"))
        #expect(darkMode.line == 17)  // where its attributes start
        let checkout = try #require(rules.declarations.first { $0.name == "checkout" })
        #expect(checkout.variants == ["control", "oneStep", "twoStep"])
        #expect(checkout.defaultValue == "control")
        #expect(rules.declarations.first { $0.name == "raccoonImages" }?.isDisabled == true)
        #expect(
            rules.declarations.map(\.name) == [
                "staff", "darkMode", "newMediaPicker", "raccoonImages", "checkout", "cacheHours", "greeting", "discount",
            ])
    }

    @Test func expiredDatesWarnButLoad() throws {
        let source = SourceText(#"@expires("2020-01-01") flag old = true"#, name: "x.flags")
        let r = try RuleSet(source: source, today: DateTime.parse("2026-11-22")!)
        #expect(r.warnings.map(\.message) == ["'old' expired on 2020-01-01"])
        let fresh = try RuleSet(source: source, today: DateTime.parse("2019-11-22")!)
        #expect(fresh.warnings.isEmpty)
    }

    @Test func aRuleSetIsSafeToShareAcrossThreads() async throws {
        let rules = self.rules
        let results = await withTaskGroup(of: Int.self) { group in
            for t in 0..<8 {
                group.addTask {
                    var on = 0
                    for i in 0..<5_000 where rules.isEnabled("darkMode", in: ["build": "alpha", "userId": .string("u\(t)-\(i)")]) {
                        on += 1
                    }
                    return on
                }
            }
            var all: [Int] = []
            for await r in group { all.append(r) }
            return all
        }
        for on in results { #expect(on > 600 && on < 1_400) }
    }
}

extension Resolution {
    func with(value: Value) -> Resolution {
        var copy = self
        copy.value = value
        return copy
    }
}

@Suite(slowTests) struct FlagStoreConcurrencyTests {
    /// Readers never see anything but one of the good rule sets while updates (good and
    /// broken) land concurrently.
    @Test func readersOnlyEverSeeGoodRules() async throws {
        let store = FlagStore()
        try store.update(source: "value n: int = 0")
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for i in 1...200 {
                    _ = try? store.update(source: i % 3 == 0 ? "value n: int = oops" : "value n: int = \(i)")
                }
            }
            for _ in 0..<4 {
                group.addTask {
                    for _ in 0..<2_000 {
                        let r = store.evaluate("n", in: [:])
                        #expect(r.reason == .static)
                        #expect((r.value.intValue ?? -1) >= 0)
                    }
                }
            }
        }
        #expect(store.evaluate("n", in: [:]).value == 200)
        #expect(store.lastError == nil)
    }
}
