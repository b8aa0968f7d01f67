import Foundation
import Testing

@testable import FlagRules
@testable import FlagRulesTooling

/// What the vendors' own conformance suites found in `flags import`, each pinned by the
/// suite's case (its file and name) with the value the vendor's SDK gives. The whole
/// suites run in CI (`.ci/import_suites.py`).
struct SuiteFindingsTests {
    static func evaluate(_ file: String, _ format: ImportFormat, _ name: String, _ context: EvaluationContext) throws -> Value? {
        try ImportTests.evaluate(ImportTests.imported(file, format), name, context)
    }

    /// GrowthBook cases.json, evalCondition "$in - array pass 1" and "$nin - array fail 1":
    /// a list attribute is in a list when they share a value.
    @Test func growthBookInTestsAListAttributeForASharedValue() throws {
        let file = """
            {"features": {"f": {"defaultValue": false, "rules": [{"condition": {"tags": {"$in": ["a", "b"]}}, "force": true}]},
                          "g": {"defaultValue": false, "rules": [{"condition": {"tags": {"$nin": ["a", "b"]}}, "force": true}]}}}
            """
        for (tags, shared) in [(["d", "e", "a"], true), (["d", "e", "f"], false), ([], false)] as [([String], Bool)] {
            let context: EvaluationContext = ["tags": .list(tags.map { .string($0) })]
            #expect(try Self.evaluate(file, .growthbook, "f", context) == .bool(shared), "\(tags)")
            #expect(try Self.evaluate(file, .growthbook, "g", context) == .bool(!shared), "\(tags)")
        }
        #expect(try Self.evaluate(file, .growthbook, "f", ["tags": "a"]) == .bool(true))
        #expect(try Self.evaluate(file, .growthbook, "f", ["tags": "ab"]) == .bool(false))
        #expect(try Self.evaluate(file, .growthbook, "g", [:]) == .bool(true))
    }

    /// GrowthBook cases.json, evalCondition "$ini - array pass", "$nini - fail" and "$alli -
    /// pass" (and their like): `$in`, `$nin` and `$all` with strings compared without case,
    /// each element of a list attribute too.
    @Test func growthBookInAndAllWithoutCase() throws {
        let file = """
            {"features": {"ini": {"defaultValue": false, "rules": [{"condition": {"tags": {"$ini": ["A", "B", 3]}}, "force": true}]},
                          "nini": {"defaultValue": false, "rules": [{"condition": {"tags": {"$nini": ["A", "B"]}}, "force": true}]},
                          "alli": {"defaultValue": false, "rules": [{"condition": {"tags": {"$alli": ["A", "B"]}}, "force": true}]}}}
            """
        let cases: [(EvaluationContext, ini: Bool, alli: Bool)] = [
            (["tags": "a"], true, false),
            (["tags": "c"], false, false),
            (["tags": ["d", "a"]], true, false),
            (["tags": ["a", "b", "c"]], true, true),
            (["tags": ["A", "c"]], true, false),
            (["tags": .list([])], false, false),
            (["tags": 3], true, false),
            ([:], false, false),
        ]
        for (context, ini, alli) in cases {
            #expect(try Self.evaluate(file, .growthbook, "ini", context) == .bool(ini), "\(context)")
            let inWithoutNumbers = ini && context["tags"] != .int(3)
            #expect(try Self.evaluate(file, .growthbook, "nini", context) == .bool(!inWithoutNumbers), "\(context)")
            #expect(try Self.evaluate(file, .growthbook, "alli", context) == .bool(alli), "\(context)")
        }
    }

    /// Patterns every regular-expression engine refuses (each as Python's `re` does), and
    /// patterns only some refuse.
    @Test(arguments: [
        ("(regex", true), ("/???***[)", true), ("a)", true), ("*a", true), ("a|*b", true), ("(*a)", true), ("\\", true),
        ("[abc", true), ("(?i)abc", false), ("(?:a|b)+", false), ("a??", false), ("\\(*", false), ("[(]", false),
        ("a{2}", false), ("^(?=a)b$", false), ("^(a)\\1$", false), ("(?P<n>a)", false),
    ])
    func malformedPatterns(_ pattern: String, _ malformed: Bool) {
        #expect(LaunchDarklyImport.isMalformed(pattern) == malformed)
        #expect(UnleashImport.engineRefuses(pattern: pattern) == (malformed || pattern.contains("(?=") || pattern.contains("\\1")))
    }

    /// GrowthBook cases.json, evalCondition "$regex invalid - pass": a pattern that does not
    /// compile is false (`$notRegex` of it true).
    @Test func growthBookPatternsThatDoNotCompile() throws {
        let file = #"""
            {"features": {"f": {"defaultValue": false, "rules": [{"condition": {"name": {"$regex": "/???***[)"}}, "force": true}]},
                          "g": {"defaultValue": false, "rules": [{"condition": {"name": {"$notRegex": "(a"}}, "force": true}]}}}
            """#
        for context: EvaluationContext in [["name": "hello"], [:]] {
            #expect(try Self.evaluate(file, .growthbook, "f", context) == .bool(false))
            #expect(try Self.evaluate(file, .growthbook, "g", context) == .bool(true))
        }
        #expect(try ImportTests.imported(file, .growthbook).notes.allSatisfy { $0.kind == .remark })
    }

    /// Unleash specification 13 "F7.invalid-operator should always return false", 15
    /// "F9.withMissingSegment should force evaluation to false" and 21 "Invalid regex should
    /// result in toggle being disabled": an unknown operator or a missing segment turns the
    /// whole feature off (UnleashClient 6.9.1's engine refuses it), a pattern it cannot
    /// compile is a false constraint (true inverted), and a version it cannot read one false
    /// even inverted (found by .ci/import_check against UnleashClient 6.9.1).
    @Test func unleashWhatItsEngineRefuses() throws {
        func feature(_ name: String, _ strategy: String) -> String {
            #"{"name": "\#(name)", "enabled": true, "strategies": [\#(strategy), {"name": "default", "parameters": {}}]}"#
        }
        func constraint(_ op: String, _ value: String, inverted: Bool = false) -> String {
            #"{"name": "default", "parameters": {}, "constraints": [{"contextName": "userId", "operator": "\#(op)", "value": "\#(value)", "inverted": \#(inverted)}]}"#
        }
        let file = """
            {"version": 2, "segments": [], "features": [
              \(feature("badOperator", constraint("NOT_A_VALID_OPERATOR", "x"))),
              \(feature("missingSegment", #"{"name": "default", "parameters": {}, "segments": [404]}"#)),
              {"name": "badPattern", "enabled": true, "strategies": [\(constraint("REGEX", "(regex"))]},
              {"name": "badPatternInverted", "enabled": true, "strategies": [\(constraint("REGEX", "^(a)\\\\1$", inverted: true))]},
              \(feature("badPatternThenDefault", constraint("REGEX", "^(?=a)b$"))),
              {"name": "badVersionInverted", "enabled": true, "strategies": [\(constraint("SEMVER_EQ", "v2.1.5", inverted: true))]}
            ]}
            """
        let result = try ImportTests.imported(file, .unleash)
        #expect(result.notes.allSatisfy { $0.kind == .remark }, "\(result.notes)")
        for context: EvaluationContext in [["userId": "ab"], [:]] {
            #expect(try ImportTests.evaluate(result, "badOperator", context) == .bool(false))
            #expect(try ImportTests.evaluate(result, "missingSegment", context) == .bool(false))
            #expect(try ImportTests.evaluate(result, "badPattern", context) == .bool(false))
            #expect(try ImportTests.evaluate(result, "badPatternInverted", context) == .bool(true))
            #expect(try ImportTests.evaluate(result, "badPatternThenDefault", context) == .bool(true))
            // A version Unleash cannot read makes the constraint false, inverted too.
            #expect(try ImportTests.evaluate(result, "badVersionInverted", context) == .bool(false))
        }
    }

    /// GrowthBook cases.json, evalCondition "version v0.0.0 > 0.0.0-foo" (and its like):
    /// GrowthBook reads a leading `v`.
    @Test func growthBookVersionsTakeALeadingV() throws {
        let file = #"{"features": {"f": {"defaultValue": false, "rules": [{"condition": {"version": {"$vgt": "1.2.3"}}, "force": true}]}}}"#
        #expect(try Self.evaluate(file, .growthbook, "f", ["version": "v2.0.0"]) == .bool(true))
        #expect(try Self.evaluate(file, .growthbook, "f", ["version": "v1.0.0"]) == .bool(false))
        #expect(try Self.evaluate(file, .growthbook, "f", ["version": "2.0.0"]) == .bool(true))
    }

    /// LaunchDarkly's operators-semver-equal.yml, "2.0-rc semVerEqual 2.0.0-rc passes":
    /// a short version may carry a pre-release.
    @Test func launchDarklyShortVersionsWithAPrerelease() throws {
        let file = """
            {"flags": {"f": {"key": "f", "on": true, "salt": "s", "offVariation": 1, "variations": [true, false], "fallthrough": {"variation": 1},
              "rules": [{"clauses": [{"attribute": "v", "op": "semVerEqual", "values": ["2.0.0-rc"]}], "variation": 0}]}}}
            """
        for (text, equal) in [("2.0-rc", true), ("2-rc", true), ("2.0.0-rc", true), ("2.0-rc.1", false), ("v2.0.0-rc", false)] {
            #expect(try Self.evaluate(file, .launchdarkly, "f", ["key": "u", "v": .string(text)]) == .bool(equal), "\(text)")
        }
    }

    /// LaunchDarkly's operators-equality.yml, "user with multiple values matches clause with
    /// single value": an `in` clause matches a list attribute by an element, negated too.
    @Test func launchDarklyInMatchesAnElementOfAList() throws {
        let file = """
            {"flags": {"f": {"key": "f", "on": true, "salt": "s", "offVariation": 1, "variations": [true, false], "fallthrough": {"variation": 1},
              "rules": [{"clauses": [{"attribute": "groups", "op": "in", "values": ["qa"]}], "variation": 0}]},
              "g": {"key": "g", "on": true, "salt": "s", "offVariation": 1, "variations": [true, false], "fallthrough": {"variation": 1},
              "rules": [{"clauses": [{"attribute": "groups", "op": "in", "values": ["qa", "ops"], "negate": true}], "variation": 0}]}}}
            """
        #expect(try Self.evaluate(file, .launchdarkly, "f", ["key": "u", "groups": ["dev", "qa"]]) == .bool(true))
        #expect(try Self.evaluate(file, .launchdarkly, "f", ["key": "u", "groups": "qa"]) == .bool(true))
        #expect(try Self.evaluate(file, .launchdarkly, "f", ["key": "u", "groups": "qax"]) == .bool(false))
        #expect(try Self.evaluate(file, .launchdarkly, "g", ["key": "u", "groups": ["dev"]]) == .bool(true))
        #expect(try Self.evaluate(file, .launchdarkly, "g", ["key": "u", "groups": ["dev", "ops"]]) == .bool(false))
        #expect(try Self.evaluate(file, .launchdarkly, "g", ["key": "u"]) == .bool(false), "a missing attribute never matches")
    }

    /// An off LaunchDarkly flag serving true is imported exactly: a remark, not a loss.
    @Test func anOffLaunchDarklyFlagServingTrueIsExact() throws {
        let file = """
            {"flags": {"f": {"key": "f", "on": false, "salt": "s", "offVariation": 0, "variations": [true, false], "fallthrough": {"variation": 1},
              "rules": [{"clauses": [{"attribute": "country", "op": "in", "values": ["US"]}], "variation": 1}]}}}
            """
        let result = try ImportTests.imported(file, .launchdarkly)
        #expect(result.isExact)
        #expect(result.notes.contains { $0.kind == .remark && $0.message.contains("off and serves true") }, "\(result.notes)")
        #expect(try ImportTests.evaluate(result, "f", ["key": "u", "country": "US"]) == .bool(true))
    }

    /// Unleash's specifications 14 (SEMVER_GTE, SEMVER_LTE), 16 ("should return variant on
    /// enabled toggle": one variant, no user or session id), 21 (REGEX) and 22 (IN_CIDR).
    @Test func unleashOperatorsAndASingleVariant() throws {
        func feature(_ name: String, _ constraint: String) -> String {
            #"{"name": "\#(name)", "enabled": true, "strategies": [{"name": "default", "constraints": [\#(constraint)]}]}"#
        }
        let file = """
            {"version": 2, "features": [
              \(feature("gte", #"{"contextName": "version", "operator": "SEMVER_GTE", "value": "1.2.2"}"#)),
              \(feature("lte", #"{"contextName": "version", "operator": "SEMVER_LTE", "value": "1.2.2"}"#)),
              \(feature("regex", #"{"contextName": "userId", "operator": "REGEX", "value": "^user\\d{3}$"}"#)),
              \(feature("regexi", #"{"contextName": "userId", "operator": "REGEX", "value": "^abc$", "caseInsensitive": true, "inverted": true}"#)),
              \(feature("cidr", #"{"contextName": "remoteAddress", "operator": "IN_CIDR", "values": ["127.invalid", "192.168.1.0/24"]}"#)),
              {"name": "one", "enabled": true, "strategies": [{"name": "flexibleRollout",
                "parameters": {"rollout": "100", "stickiness": "default", "groupId": "a"}, "variants": [{"name": "only", "weight": 1}]}]}
            ]}
            """
        let result = try ImportTests.imported(file, .unleash)
        #expect(result.isExact, "\(result.notes)")
        func value(_ name: String, _ context: EvaluationContext) throws -> Value? { try ImportTests.evaluate(result, name, context) }
        #expect(try value("gte", ["version": "1.2.2"]) == .bool(true))
        #expect(try value("gte", ["version": "1.2.1"]) == .bool(false))
        #expect(try value("lte", ["version": "1.2.2"]) == .bool(true))
        #expect(try value("lte", ["version": "1.2.3"]) == .bool(false))
        #expect(try value("regex", ["userId": "user123"]) == .bool(true))
        #expect(try value("regex", ["userId": "user12"]) == .bool(false))
        #expect(try value("regexi", ["userId": "AbC"]) == .bool(false))
        #expect(try value("regexi", ["userId": "xyz"]) == .bool(true))
        #expect(try value("cidr", ["remoteAddress": "192.168.1.42"]) == .bool(true))
        #expect(try value("cidr", ["remoteAddress": "192.168.2.1"]) == .bool(false))
        #expect(try value("oneVariant", [:]) == .string("only"))
    }

    /// LaunchDarkly's operators-date-*.yml: `before` and `after` take a number of
    /// milliseconds since 1970 or an RFC 3339 time with an offset, in the clause and in the
    /// context; anything else never matches (so a negated clause holds).
    @Test func launchDarklyDatesAsItsSDKReadsThem() throws {
        func flag(_ key: String, _ op: String, _ value: String, negate: Bool = false) -> String {
            #""\#(key)": {"key": "\#(key)", "on": true, "salt": "s", "offVariation": 1, "variations": [true, false], "fallthrough": {"variation": 1}, "rules": [{"clauses": [{"attribute": "t", "op": "\#(op)", "values": [\#(value)], "negate": \#(negate)}], "variation": 0}]}"#
        }
        let file = """
            {"flags": {\(flag("before", "before", #""2017-12-06T00:00:00.000-07:00""#)), \(flag("after", "after", "1512543600000")),
                       \(flag("notAfter", "after", "1512543600000", negate: true)), \(flag("bad", "before", #""2017-12-06""#))}}
            """
        let result = try ImportTests.imported(file, .launchdarkly)
        let before = #"(datetime(t) < "2017-12-06T07:00:00Z" and ((t matches "([Zz]|[+-][0-9][0-9]:?[0-9][0-9])$") ?? true)) ?? false"#
        #expect(result.text.contains(before), "MovingFromAnotherSystem's example: \(result.text)")
        func value(_ name: String, _ t: Value?) throws -> Value? {
            var context: EvaluationContext = ["key": "u"]
            if let t { context["t"] = t }
            return try ImportTests.evaluate(result, name, context)
        }
        #expect(try value("before", "2017-12-06T06:59:59.999Z") == .bool(true))
        #expect(try value("before", "2017-12-06T07:00:00Z") == .bool(false))
        #expect(try value("before", 1_512_543_599_999) == .bool(true), "a number is milliseconds")
        #expect(try value("after", "2017-12-06T00:00:00.001-07:00") == .bool(true))
        for bad: Value in ["2017-12-06T08:00:00", "2017-12-07", "badstring", "1512543600001", true] {
            #expect(try value("after", bad) == .bool(false), "\(bad)")
            #expect(try value("notAfter", bad) == .bool(true), "\(bad)")
        }
        #expect(try value("notAfter", nil) == .bool(false), "a missing attribute never matches")
        #expect(try value("bad", "2017-12-05T00:00:00Z") == .bool(false), "a clause value of no time never matches")
    }

    /// flagd-testbed's semver.feature ("Semantic comparison (minor/major range)") and
    /// custom-ops.json's starts-ends-flag: `^` and `~` compare the major (and minor); an
    /// operand flagd cannot read gives null, false, and what it leads to is never given.
    @Test func flagdVersionRangesAndUnreadableOperands() throws {
        let file = """
            {"flags": {
              "range": {"state": "ENABLED", "variants": {"major": "major", "minor": "minor", "none": "none"}, "defaultVariant": "none",
                "targeting": {"if": [{"sem_ver": [{"var": "version"}, "~", "1.2.0"]}, "minor", {"sem_ver": [{"var": "version"}, "^", "1.2.0"]}, "major", "none"]}},
              "odd": {"state": "ENABLED", "variants": {"prefix": "prefix", "none": "none"}, "defaultVariant": "none",
                "targeting": {"if": [{"ends_with": [{"var": "id"}, 3]}, "fail", {"sem_ver": [{"var": "id"}, "=", "2.0.0.0"]}, "fail", {"starts_with": [{"var": "id"}, "abc"]}, "prefix", "none"]}}
            }}
            """
        let result = try ImportTests.imported(file, .flagd)
        #expect(result.isExact, "\(result.notes)")
        #expect(result.text.contains("version(version) >= 1.0.0-0 and version(version) < 2.0.0-0"), "MovingFromAnotherSystem's example")
        let expected = [
            ("1.2.9", "minor"), ("1.2.0-rc.1", "minor"), ("1.3.0", "major"), ("1.0.0", "major"), ("2.0.0", "none"), ("v1.2.3", "minor"),
        ]
        for (version, expected) in expected {
            #expect(try ImportTests.evaluate(result, "range", ["version": .string(version)]) == .string(expected), "\(version)")
        }
        #expect(try ImportTests.evaluate(result, "odd", ["id": "abc3"]) == .string("prefix"))
        #expect(try ImportTests.evaluate(result, "odd", ["id": "x"]) == .string("none"))
    }

    /// A negated LaunchDarkly clause on a value it cannot compare (another JSON type, no
    /// version) holds, as in LaunchDarkly (found by `.ci/import`'s random files with
    /// `v2.1.5`); MovingFromAnotherSystem's example.
    @Test func launchDarklyNegatedClausesOnValuesItCannotCompareHold() throws {
        let file = """
            {"flags": {
              "young": {"key": "young", "on": true, "salt": "s", "offVariation": 1, "variations": [true, false], "fallthrough": {"variation": 1},
                "rules": [{"clauses": [{"attribute": "age", "op": "lessThan", "values": [30], "negate": true}], "variation": 0}]},
              "old": {"key": "old", "on": true, "salt": "s", "offVariation": 1, "variations": [true, false], "fallthrough": {"variation": 1},
                "rules": [{"clauses": [{"attribute": "v", "op": "semVerLessThan", "values": ["2.0.0"], "negate": true}], "variation": 0}]}
            }}
            """
        let result = try ImportTests.imported(file, .launchdarkly)
        #expect(result.text.contains("not ((age < 30 or any(age) < 30) ?? false)"), "\(result.text)")
        #expect(try ImportTests.evaluate(result, "young", ["key": "u", "age": "30"]) == .bool(true))
        #expect(try ImportTests.evaluate(result, "young", ["key": "u", "age": 29]) == .bool(false))
        #expect(try ImportTests.evaluate(result, "young", ["key": "u"]) == .bool(false), "a missing attribute never matches")
        #expect(try ImportTests.evaluate(result, "old", ["key": "u", "v": "v2.1.5"]) == .bool(true))
        #expect(try ImportTests.evaluate(result, "old", ["key": "u", "v": "1.0.0"]) == .bool(false))
    }

    /// flagd-testbed's semver.feature and string.feature ("… returns null … and falls back to
    /// default variant"): a targeting that is itself `sem_ver`, `starts_with` or `ends_with`
    /// names the variant `true` or `false`, and its null (an operand it cannot read, or
    /// arguments of another form) gives the default variant.
    @Test func flagdTargetingByATestNamesTrueOrFalseAndItsNullTheDefault() throws {
        func flag(_ targeting: String) -> String {
            #"{"state": "ENABLED", "variants": {"true": "yes", "false": "no", "fallback": "fallback"}, "defaultVariant": "fallback", "targeting": "#
                + targeting + "}"
        }
        let file = """
            {"flags": {
              "semver": \(flag(#"{"sem_ver": [{"var": "version"}, ">=", "1.2.0"]}"#)),
              "caret": \(flag(#"{"sem_ver": [{"var": "version"}, "^", "1.2.0"]}"#)),
              "prefix": \(flag(#"{"starts_with": [{"var": "id"}, "abc"]}"#)),
              "wrongArgs": \(flag(#"{"ends_with": ["xyz"]}"#)),
              "badVersion": \(flag(#"{"sem_ver": [{"var": "version"}, "=", "1.0.0.0"]}"#)),
              "badOperator": \(flag(#"{"sem_ver": [{"var": "version"}, "=~", "1.0.0"]}"#)),
              "nonString": \(flag(#"{"starts_with": [{"var": "id"}, 3]}"#))
            }}
            """
        let result = try ImportTests.imported(file, .flagd)
        #expect(result.isExact, "\(result.notes)")
        func value(_ name: String, _ context: EvaluationContext) throws -> Value? { try ImportTests.evaluate(result, name, context) }
        #expect(try value("semver", ["version": "1.3.0"]) == .string("yes"))
        #expect(try value("semver", ["version": "1.1.9"]) == .string("no"))
        #expect(try value("semver", ["version": "not-a-version"]) == .string("fallback"))
        #expect(try value("semver", [:]) == .string("fallback"))
        #expect(try value("caret", ["version": "1.9.0"]) == .string("yes"))
        #expect(try value("caret", ["version": "2.0.0"]) == .string("no"))
        #expect(try value("prefix", ["id": "abcd"]) == .string("yes"))
        #expect(try value("prefix", ["id": "xabc"]) == .string("no"))
        #expect(try value("prefix", ["id": 123]) == .string("fallback"), "flagd's starts_with of a number is null")
        for name in ["wrongArgs", "badVersion", "badOperator", "nonString"] {
            #expect(try value(name, ["version": "1.0.0", "id": "abc"]) == .string("fallback"), "\(name)")
        }
        // A flag without the variant its test names answers an error in flagd: left out.
        let lacking =
            #"{"flags": {"f": {"state": "ENABLED", "variants": {"on": 1, "off": 0}, "defaultVariant": "off", "targeting": {"starts_with": [{"var": "id"}, "a"]}}}}"#
        let refused = try ImportTests.imported(lacking, .flagd)
        #expect(
            refused.notes.contains { $0.message.contains("names the variant 'true' or 'false', which the flag lacks") }, "\(refused.notes)")
    }

    /// LaunchDarkly's clause-kind-matching.yml: `kind in [...]` tests the context's kinds (the
    /// user's attributes at the top, another kind's in an object named by it, each with a
    /// key); another operator on kinds is not imported, for a context's kinds cannot be listed.
    @Test func launchDarklyClausesOnKindTestTheKindsAContextHas() throws {
        func flag(_ key: String, _ op: String, _ values: String, negate: Bool = false) -> String {
            #""\#(key)": {"key": "\#(key)", "on": true, "salt": "s", "offVariation": 1, "variations": [true, false], "fallthrough": {"variation": 1}, "rules": [{"clauses": [{"attribute": "kind", "op": "\#(op)", "values": \#(values), "negate": \#(negate)}], "variation": 0}]}"#
        }
        let file = """
            {"flags": {\(flag("user", "in", #"["user"]"#)), \(flag("orgOrDog", "in", #"["org", "dog"]"#)),
              \(flag("notUser", "in", #"["user"]"#, negate: true)), \(flag("pattern", "matches", #"["^[uo]"]"#))}}
            """
        let result = try ImportTests.imported(file, .launchdarkly)
        func value(_ name: String, _ context: EvaluationContext) throws -> Value? { try ImportTests.evaluate(result, name, context) }
        let user: EvaluationContext = ["key": "a"]
        let org: EvaluationContext = ["org": ["key": "o"]]
        let both: EvaluationContext = ["key": "a", "dog": ["key": "d"]]
        #expect(try value("user", user) == .bool(true) && value("user", org) == .bool(false) && value("user", both) == .bool(true))
        #expect(
            try value("orgOrDog", user) == .bool(false) && value("orgOrDog", org) == .bool(true) && value("orgOrDog", both) == .bool(true))
        #expect(try value("notUser", user) == .bool(false) && value("notUser", org) == .bool(true))
        #expect(result.notes.contains { $0.message.contains("'matches' on context kinds has no .flags form") }, "\(result.notes)")
        #expect(try value("pattern", user) == .bool(false), "the rule is left out: the fallthrough")
    }

    /// flagd-testbed's fractional.feature ("fractional with all-zero bucket weights falls back
    /// to default variant"): a `fractional` with no weight, or weights past 2^31, is null in
    /// flagd, so the default variant; one value in two entries has no split form.
    @Test func flagdFractionalsWithNoWeightGiveTheDefaultVariant() throws {
        func flag(_ entries: String) -> String {
            #"{"state": "ENABLED", "variants": {"a": "a", "b": "b", "c": "c"}, "defaultVariant": "c", "targeting": {"fractional": [{"var": "id"}, \#(entries)]}}"#
        }
        let file = """
            {"flags": {"zero": \(flag(#"["a", 0], ["b", 0]"#)), "huge": \(flag(#"["a", 2147483647], ["b", 1]"#)),
              "twice": \(flag(#"["a", 1], ["b", 1], ["a", 1]"#))}}
            """
        let result = try ImportTests.imported(file, .flagd)
        for id in ["u1", "u2", "u3"] {
            #expect(try ImportTests.evaluate(result, "zero", ["id": .string(id)]) == .string("c"))
            #expect(try ImportTests.evaluate(result, "huge", ["id": .string(id)]) == .string("c"))
        }
        #expect(result.notes.map(\.message) == ["a fractional with one value in two entries has no split form; flag 'twice' left out"])
    }

    /// What a review against the SDKs found in the bridges above: a JsonLogic test whose
    /// flagd answer is null reads false, so its `!` true; a version computed by an expression
    /// is not imported; GrowthBook's `$elemMatch` tests a list's elements, never a string's
    /// text, and `$type: "object"` is not imported; LaunchDarkly's `/kind` with a context
    /// kind is a kind clause.
    @Test func reviewedEdgesOfTheBridges() throws {
        let flagd = """
            {"flags": {
              "notNew": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
                "targeting": {"if": [{"!": {"sem_ver": [{"var": "v"}, ">=", "2.0.0"]}}, "on", "off"]}},
              "notPrefixed": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
                "targeting": {"if": [{"!": {"starts_with": [{"var": "id"}, "a"]}}, "on", "off"]}},
              "wrongArity": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
                "targeting": {"if": [{"!": {"ends_with": ["xyz"]}}, "on", "off"]}},
              "computed": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
                "targeting": {"if": [{"sem_ver": [{"var": "v"}, ">=", {"var": "minimum"}]}, "on", "off"]}}
            }}
            """
        let imported = try ImportTests.imported(flagd, .flagd)
        #expect(imported.text.contains("(version(v) >= 2.0.0) ?? false"), "MovingFromAnotherSystem's example")
        func flagdValue(_ name: String, _ context: EvaluationContext) throws -> Value? { try ImportTests.evaluate(imported, name, context) }
        #expect(try flagdValue("notNew", ["v": "latest"]) == .bool(true), "flagd's sem_ver of no version is null: ! of it is true")
        #expect(try flagdValue("notNew", [:]) == .bool(true))
        #expect(try flagdValue("notNew", ["v": "2.1.0"]) == .bool(false))
        #expect(try flagdValue("notPrefixed", ["id": 7]) == .bool(true), "flagd's starts_with of a number is null")
        #expect(try flagdValue("notPrefixed", ["id": "abc"]) == .bool(false))
        #expect(try flagdValue("wrongArity", ["id": "abc"]) == .bool(true), "ends_with of one argument is null: ! of it is true")
        #expect(imported.notes.contains { $0.place.contains("computed") && $0.kind == .notImported }, "\(imported.notes)")

        let growthbook = """
            {"features": {"bar": {"defaultValue": false, "rules": [{"condition": {"tags": {"$elemMatch": {"$eq": "bar"}}}, "force": true}]},
              "object": {"defaultValue": false, "rules": [{"condition": {"a": {"$type": "object"}}, "force": true}]}}}
            """
        let gb = try ImportTests.imported(growthbook, .growthbook)
        #expect(try ImportTests.evaluate(gb, "bar", ["tags": ["foo", "bar"]]) == .bool(true))
        #expect(try ImportTests.evaluate(gb, "bar", ["tags": "foobar"]) == .bool(false), "a string is no list of elements")
        #expect(gb.notes.contains { $0.message.hasPrefix("$type 'object' has no .flags form") }, "\(gb.notes)")

        let launchDarkly = """
            {"flags": {"kinded": {"key": "kinded", "on": true, "salt": "s", "offVariation": 1, "variations": [true, false], "fallthrough": {"variation": 1},
              "rules": [{"clauses": [{"contextKind": "org", "attribute": "/kind", "op": "in", "values": ["org"]}], "variation": 0}]}}}
            """
        let ld = try ImportTests.imported(launchDarkly, .launchdarkly)
        #expect(try ImportTests.evaluate(ld, "kinded", ["org": ["key": "o"]]) == .bool(true))
        #expect(try ImportTests.evaluate(ld, "kinded", ["key": "u"]) == .bool(false))
    }

    /// LaunchDarkly's operators-semver-bad-syntax.yml ("2.0.0 semVerEqual v2.0.0 fails"),
    /// rule-match.yml ("unknown operator is treated as a non-match, can still match another
    /// rule") and segment-match.yml ("unknown segment is non-match, not an error"): a clause
    /// value that is no version, an operator the SDKs do not know and a segment the file does
    /// not hold match nothing (negated, a present attribute, and everyone), and the import
    /// says so as remarks, exit 0.
    @Test func launchDarklyClausesThatMatchNothing() throws {
        func flag(_ key: String, _ clause: String) -> String {
            """
            "\(key)": {"key": "\(key)", "on": true, "salt": "s", "offVariation": 1, "variations": [true, false],
              "fallthrough": {"variation": 1}, "rules": [{"clauses": [\(clause)], "variation": 0}]}
            """
        }
        let file = """
            {"flags": {
            \(flag("bad", #"{"attribute": "v", "op": "semVerEqual", "values": ["v2.0.0", "02.0.0", "2.0.0.0"]}"#)),
            \(flag("someBad", #"{"attribute": "v", "op": "semVerEqual", "values": ["v2.0.0", "2.0.0"]}"#)),
            \(flag("unknownOp", #"{"attribute": "v", "op": "unsupportedOperator", "values": ["2.0.0"]}"#)),
            \(flag("unknownOpNegated", #"{"attribute": "v", "op": "unsupportedOperator", "values": ["2.0.0"], "negate": true}"#)),
            \(flag("noSegment", #"{"attribute": "", "op": "segmentMatch", "values": ["gone"]}"#)),
            \(flag("noSegmentNegated", #"{"attribute": "", "op": "segmentMatch", "values": ["gone"], "negate": true}"#))
            }, "segments": {}}
            """
        let result = try ImportTests.imported(file, .launchdarkly)
        #expect(result.notes.allSatisfy { $0.kind == .remark }, "\(result.notes)")
        let version: EvaluationContext = ["key": "u", "v": "2.0.0"]
        #expect(try ImportTests.evaluate(result, "bad", version) == .bool(false))
        #expect(try ImportTests.evaluate(result, "someBad", version) == .bool(true))
        #expect(try ImportTests.evaluate(result, "unknownOp", version) == .bool(false))
        #expect(try ImportTests.evaluate(result, "unknownOpNegated", version) == .bool(true))
        #expect(try ImportTests.evaluate(result, "unknownOpNegated", ["key": "u"]) == .bool(false))
        #expect(try ImportTests.evaluate(result, "noSegment", version) == .bool(false))
        #expect(try ImportTests.evaluate(result, "noSegmentNegated", ["key": "u"]) == .bool(true))
    }

    /// LaunchDarkly's errors.yml, "flag is off but has no off variation" and "off variation
    /// too high": every evaluation gives the caller's default, as a flag the file does not
    /// declare does here, so the flag is written as a comment (a remark, exit 0); one that
    /// another flag reads as a prerequisite stays declared.
    @Test func anOffLaunchDarklyFlagWithoutAnOffVariationIsAComment() throws {
        let file = """
            {"flags": {
              "none": {"key": "none", "on": false, "variations": [3]},
              "high": {"key": "high", "on": false, "offVariation": 1, "variations": ["x"]},
              "read": {"key": "read", "on": false, "variations": [true, false]},
              "reader": {"key": "reader", "on": true, "variations": [true, false], "fallthrough": {"variation": 0}, "offVariation": 1,
                         "prerequisites": [{"key": "read", "variation": 0}]}
            }}
            """
        let result = try ImportTests.imported(file, .launchdarkly)
        let rules = try RuleSet(source: result.text)
        #expect(rules.evaluate("none", in: ["key": "u"]).errorCode == .flagNotFound)
        #expect(rules.evaluate("high", in: ["key": "u"]).errorCode == .flagNotFound)
        #expect(result.text.contains("#   value none: int = 3"), "\(result.text)")
        #expect(rules.evaluate("read", in: ["key": "u"]).errorCode == nil)
        let kinds = Dictionary(grouping: result.notes, by: { $0.place.split(separator: ".").dropFirst().first.map(String.init) ?? "" })
        #expect(kinds["none"]?.allSatisfy { $0.kind == .remark } == true && kinds["high"]?.allSatisfy { $0.kind == .remark } == true)
        #expect(kinds["read"]?.contains { $0.kind == .notImported } == true, "\(result.notes)")
    }

    /// GrowthBook cases.json, evalCondition "$in - not array" and "$nin - not array": both
    /// are false whatever the attribute; Unleash's 17-dependent-features.json test 14: a
    /// child of a parent not in the file is off. Exact, said as remarks.
    @Test func growthBookInOfAScalarAndUnleashMissingParents() throws {
        let growthBook = """
            {"features": {"f": {"defaultValue": false, "rules": [{"condition": {"tags": {"$in": "a"}}, "force": true}]},
                          "g": {"defaultValue": false, "rules": [{"condition": {"tags": {"$nin": "a"}}, "force": true}]}}}
            """
        let imported = try ImportTests.imported(growthBook, .growthbook)
        #expect(imported.notes.allSatisfy { $0.kind == .remark }, "\(imported.notes)")
        for context: EvaluationContext in [["tags": "a"], ["tags": "b"], [:]] {
            #expect(try ImportTests.evaluate(imported, "f", context) == .bool(false))
            #expect(try ImportTests.evaluate(imported, "g", context) == .bool(false))
        }
        let unleash = """
            {"version": 1, "features": [{"name": "child", "enabled": true, "dependencies": [{"feature": "gone"}],
              "strategies": [{"name": "default", "parameters": {}}]}]}
            """
        let child = try ImportTests.imported(unleash, .unleash)
        #expect(child.notes.allSatisfy { $0.kind == .remark }, "\(child.notes)")
        #expect(try ImportTests.evaluate(child, "child", ["userId": "u"]) == .bool(false))
    }

    /// flagd's evaluator fractional.feature, "Fractional operator with nested if expression
    /// as variant name" and "… as weight": the fractional under each branch of the `if`, with
    /// that branch's value in the entry (adjacent entries of one variant merged). The values
    /// are openfeature-flagd-core 2.0.0's.
    @Test func flagdFractionalEntriesChosenByAnIf() throws {
        let file = """
            {"flags": {
              "nestedIf": {"state": "ENABLED", "variants": {"premium": "premium", "standard": "standard"}, "defaultVariant": "standard",
                "targeting": {"fractional": [{"var": "targetingKey"},
                  [{"if": [{"==": [{"var": "tier"}, "premium"]}, "premium", "standard"]}, 50], ["standard", 50]]}},
              "nestedWeight": {"state": "ENABLED", "variants": {"red": "red", "blue": "blue", "green": "green"}, "defaultVariant": "green",
                "targeting": {"fractional": [{"var": "targetingKey"},
                  ["red", {"if": [{"==": [{"var": "tier"}, "premium"]}, 100, 0]}], ["blue", 10]]}}
            }}
            """
        let result = try ImportTests.imported(file, .flagd)
        #expect(result.notes.isEmpty, "\(result.notes)")
        let expected: [(String, String, String, String)] = [
            ("nestedIf", "jon@company.com", "premium", "premium"), ("nestedIf", "jane@company.com", "premium", "standard"),
            ("nestedIf", "user-1", "premium", "premium"), ("nestedIf", "user-3", "premium", "standard"),
            ("nestedIf", "jon@company.com", "basic", "standard"), ("nestedWeight", "jon@company.com", "premium", "red"),
            ("nestedWeight", "user-3", "premium", "red"), ("nestedWeight", "jane@company.com", "basic", "blue"),
        ]
        for (flag, key, tier, variant) in expected {
            let context: EvaluationContext = ["targetingKey": .string(key), "tier": .string(tier)]
            #expect(try ImportTests.evaluate(result, flag, context) == .string(variant), "\(flag) \(key) \(tier)")
        }
    }

    /// flagd's fractional.feature, "Fractional as condition" and "… evaluates false path":
    /// the entries' truthiness chooses between the if's two variants, and a fractional that
    /// gives null (no unit) takes the else.
    @Test func flagdFractionalAsTheConditionOfAnIf() throws {
        let file = """
            {"flags": {
              "big": {"state": "ENABLED", "variants": {"big": "hundreds", "small": "ones", "fallback": "zero"}, "defaultVariant": "fallback",
                "targeting": {"if": [{"fractional": [[false, 0], [true, 100]]}, "big", "small"]}},
              "small": {"state": "ENABLED", "variants": {"big": "hundreds", "small": "ones", "fallback": "zero"}, "defaultVariant": "fallback",
                "targeting": {"if": [{"fractional": [[false, 100], [true, 0]]}, "big", "small"]}}
            }}
            """
        let result = try ImportTests.imported(file, .flagd)
        #expect(result.notes.isEmpty, "\(result.notes)")
        #expect(try ImportTests.evaluate(result, "big", ["targetingKey": "some-targeting-key"]) == .string("hundreds"))
        #expect(try ImportTests.evaluate(result, "small", ["targetingKey": "some-targeting-key"]) == .string("ones"))
        #expect(try ImportTests.evaluate(result, "big", [:]) == .string("ones"), "no unit: null, the else")
    }
}
