import Foundation
import Testing

@testable import FlagRules
@testable import FlagRulesTooling

/// `flags import`: what each system's constructs become, what is named as not imported, and
/// files that are not what they claim to be. The vendors' SDKs check the meaning over
/// random files and thousands of contexts in `.ci/import`.
struct ImportTests {
    static let launchDarkly = """
        {
          "flags": {
            "new-checkout": {
              "key": "new-checkout", "on": true, "salt": "abc", "offVariation": 1, "variations": [true, false],
              "description": "The one-page checkout.",
              "targets": [{"values": ["user-1"], "variation": 0}],
              "rules": [
                {"clauses": [{"attribute": "country", "op": "in", "values": ["US", "CA"], "negate": false}], "variation": 0},
                {"clauses": [{"attribute": "email", "op": "endsWith", "values": ["@example.com"], "negate": true}],
                 "rollout": {"variations": [{"variation": 1, "weight": 60000}, {"variation": 0, "weight": 40000}]}}
              ],
              "fallthrough": {"variation": 1}
            },
            "theme": {
              "key": "theme", "on": true, "salt": "s1", "offVariation": 0, "variations": ["light", "dark"],
              "prerequisites": [{"key": "new-checkout", "variation": 0}],
              "rules": [{"clauses": [{"attribute": "plan", "contextKind": "organization", "op": "in", "values": ["pro"]}], "variation": 1},
                        {"clauses": [{"attribute": "", "op": "segmentMatch", "values": ["beta"], "negate": true}], "variation": 1}],
              "fallthrough": {"rollout": {"kind": "experiment", "seed": 61, "variations": [{"variation": 0, "weight": 50000}, {"variation": 1, "weight": 50000}]}}
            },
            "limit": {"key": "limit", "on": false, "offVariation": 0, "variations": [10, 20], "fallthrough": {"variation": 1}},
            "config": {"key": "config", "on": true, "variations": [{"a": 1}, {"a": 2}], "fallthrough": {"variation": 0}}
          },
          "segments": {
            "beta": {"key": "beta", "included": ["u-9"], "salt": "segsalt",
              "rules": [{"clauses": [{"attribute": "email", "op": "contains", "values": ["beta"]}], "weight": 50000}]}
          }
        }
        """

    static func imported(_ text: String, _ format: ImportFormat) throws -> FlagsImport.Result {
        try FlagsImport.run(Array(text.utf8), from: format, name: "vendor.json")
    }

    static func evaluate(_ result: FlagsImport.Result, _ name: String, _ context: EvaluationContext) throws -> Value? {
        try RuleSet(source: result.text).evaluate(name, in: context).value
    }

    @Test func launchDarklyFlagsSegmentsAndPrerequisites() throws {
        let result = try Self.imported(Self.launchDarkly, .launchdarkly)
        let text = result.text
        #expect(text.contains("/// The one-page checkout.\nflag newCheckout = false {"), "\(text)")
        #expect(text.contains(#"enabled when key == "user-1""#))
        #expect(text.contains(#"not (rollout(key, "new-checkout.abc", launchdarkly) < 60%)"#), "\(text)")
        #expect(text.contains(#"variant theme [light, dark] = light {"#))
        #expect(text.contains("light when not newCheckout"), "a failed prerequisite gives the off variation")
        #expect(
            text.contains(#"dark when (organization.plan == "pro" or organization.plan contains any ["pro"]) ?? false"#),
            "another context kind is an object; a list attribute matches by an element")
        #expect(text.contains(#"split(key, "61", launchdarkly) { light: 50000, dark: 50000 }"#), "an experiment hashes its seed")
        #expect(text.contains("@disabled\nvalue limit: int = 10 {\n  20\n}"), "an off flag: its off variation, its fallthrough kept")
        #expect(text.contains(#"segment beta = ((key in ["u-9"]) ?? false or"#), "\(text)")
        // Evaluations as LaunchDarkly's SDKs give them.
        #expect(try Self.evaluate(result, "newCheckout", ["key": "user-1"]) == .bool(true))
        #expect(try Self.evaluate(result, "newCheckout", ["key": "x", "country": "CA"]) == .bool(true))
        #expect(try Self.evaluate(result, "theme", ["key": "x"]) == .string("light"))
        // A missing attribute makes a segment's clause false: the negated segment matches.
        #expect(try Self.evaluate(result, "theme", ["key": "user-1"]) == .string("dark"))
        #expect(try Self.evaluate(result, "limit", ["key": "x"]) == .int(10))
        // What is not carried over is named, with its place; a rename is said.
        #expect(!result.isExact)
        #expect(
            result.notes.map(\.description).contains { $0.hasPrefix("flags.config.variations: not imported: variations of JSON objects") })
        #expect(
            result.notes.contains(
                ImportNote(
                    .renamed, at: "flags.new-checkout",
                    "'new-checkout' is newCheckout (a .flags name is letters, digits and '_')")))
    }

    /// What a review against launchdarkly-server-sdk 9.20.0 found, pinned with the SDK's
    /// values: `anonymous` is false unless given; a user context target stands for the
    /// user targets of its variation; a bucketing value of no string or int is bucket 0; a
    /// segment reads one listed after it; one value in two places of a rollout; an
    /// attribute reference is a path only with a context kind; a flag that is its own
    /// prerequisite is an error.
    @Test func launchDarklyEdgesAsItsSDKReadsThem() throws {
        let file = #"""
            {"flags": {
              "anon": {"key": "anon", "on": true, "salt": "s", "offVariation": 1, "variations": [true, false],
                       "rules": [{"clauses": [{"attribute": "anonymous", "op": "in", "values": [false]}], "variation": 0}], "fallthrough": {"variation": 1}},
              "targeted": {"key": "targeted", "on": true, "salt": "s", "variations": ["x", "y", "z"], "targets": [{"values": ["user-1"], "variation": 1}],
                           "contextTargets": [{"contextKind": "user", "values": ["3"], "variation": 1}], "fallthrough": {"variation": 2}},
              "odd": {"key": "odd", "on": true, "salt": "s", "variations": ["a", "b", "c"],
                      "rules": [{"clauses": [{"attribute": "country", "op": "in", "values": ["US"]}],
                                 "rollout": {"bucketBy": "email", "variations": [{"variation": 0, "weight": 50000}, {"variation": 1, "weight": 50000}]}}],
                      "fallthrough": {"variation": 2}},
              "inSegment": {"key": "inSegment", "on": true, "salt": "s", "offVariation": 1, "variations": [true, false],
                            "rules": [{"clauses": [{"attribute": "", "op": "segmentMatch", "values": ["a"]}], "variation": 0}], "fallthrough": {"variation": 1}},
              "twice": {"key": "twice", "on": true, "salt": "s", "variations": ["a", "b", "a"],
                        "fallthrough": {"rollout": {"variations": [{"variation": 0, "weight": 30000}, {"variation": 1, "weight": 40000}, {"variation": 2, "weight": 30000}]}}},
              "literal": {"key": "literal", "on": true, "salt": "s", "offVariation": 1, "variations": [true, false],
                          "rules": [{"clauses": [{"attribute": "/address/city", "op": "in", "values": ["Paris"]}], "variation": 0}], "fallthrough": {"variation": 1}},
              "itself": {"key": "itself", "on": true, "salt": "s", "offVariation": 1, "variations": [true, false],
                         "prerequisites": [{"key": "itself", "variation": 0}], "fallthrough": {"variation": 0}}
            },
            "segments": {"a": {"key": "a", "salt": "x", "rules": [{"clauses": [{"attribute": "", "op": "segmentMatch", "values": ["b"]}]}]},
                         "b": {"key": "b", "salt": "y", "included": ["u1"]}}}
            """#
        let result = try Self.imported(file, .launchdarkly)
        #expect(try Self.evaluate(result, "anon", ["key": "u1"]) == .bool(true))
        #expect(try Self.evaluate(result, "anon", ["key": "u1", "anonymous": true]) == .bool(false))
        #expect(try Self.evaluate(result, "targeted", ["key": "3"]) == .string("z"))
        #expect(try Self.evaluate(result, "targeted", ["key": "user-1"]) == .string("y"))
        for email: Value in [true, 30.5, .list([.string("a@x.org")])] {
            #expect(try Self.evaluate(result, "odd", ["key": "u5", "country": "US", "email": email]) == .string("a"), "\(email)")
        }
        #expect(try Self.evaluate(result, "inSegment", ["key": "u1"]) == .bool(true))
        let twice = (1...8).map { try? Self.evaluate(result, "twice", ["key": .string("user-\($0)")]) }
        #expect(twice == ["b", "a", "b", "a", "a", "a", "b", "a"].map { .string($0) })
        let notes = result.notes.map(\.description)
        // Without a context kind, LaunchDarkly reads an attribute reference as one name.
        #expect(result.text.contains(#"(`/address/city` == "Paris" or `/address/city` contains any ["Paris"]) ?? false"#), "\(notes)")
        #expect(try Self.evaluate(result, "literal", ["key": "u", "/address/city": "Paris"]) == .bool(true))
        #expect(
            notes.contains { $0.hasPrefix("flags.itself.prerequisites[0]: not imported: flag 'itself' is its own prerequisite") },
            "\(notes)")
    }

    @Test func growthBookForceRulesRolloutsExperimentsAndConditions() throws {
        let payload = """
            {"features": {
              "dark-mode": {"defaultValue": false, "rules": [
                {"condition": {"country": {"$ne": "US"}}, "force": true, "coverage": 0.2, "hashVersion": 2},
                {"condition": {"$or": [{"age": {"$gt": 30}}, {"version": {"$vgte": "2.0.0"}}]}, "force": true}
              ]},
              "button": {"defaultValue": "blue", "rules": [
                {"variations": ["blue", "green"], "weights": [0.25, 0.75], "key": "exp-1", "condition": {"email": {"$regex": "^a"}}}
              ]},
              "limit": {"defaultValue": 5, "rules": [
                {"force": 9, "parentConditions": [{"id": "dark-mode", "condition": {"value": true}}]},
                {"variations": [1, 2], "coverage": 0.5},
                {"variations": [3, 4], "namespace": ["ns", 0, 0.5], "filters": [{"seed": "s", "ranges": [[0, 0.3]]}], "fallbackAttribute": "deviceId"},
                {"variations": [8], "weights": [1]},
                {"force": 7, "filters": [{"seed": "s", "ranges": [[0.5, 1]], "attribute": "deviceId"}]}
              ]}
            }}
            """
        let result = try Self.imported(payload, .growthbook)
        let text = result.text
        #expect(
            text.contains(#"enabled when not (has(country) and country == "US") and rollout(id, "dark-mode", growthbook) < 20%"#), "\(text)"
        )
        #expect(text.contains(#"enabled when age > 30 or version(version) >= 2.0.0"#), "\(text)")
        #expect(text.contains(#"split(id, "exp-1", growthbookV1) { "blue": 2500, "green": 7500 } when email matches "^a""#), "\(text)")
        #expect(text.contains("9 when darkMode"), "\(text)")
        // Absent attributes read as GrowthBook reads them: $ne holds for an absent country.
        #expect(try Self.evaluate(result, "darkMode", ["age": 40]) == .bool(true))
        #expect(try Self.evaluate(result, "limit", ["age": 40]) == .int(9))
        #expect(try Self.evaluate(result, "limit", [:]) == .int(5))
        // An experiment's coverage below 1: a rule per variation over its range of the hash.
        #expect(text.contains(#"  1 when rollout(id, "limit", growthbookV1) < 25%"#), "\(text)")
        #expect(text.contains(#"  2 when not (rollout(id, "limit", growthbookV1) < 50%) and rollout(id, "limit", growthbookV1) < 75%"#))
        // A force rule's filters: the unit in one of the filter's ranges.
        #expect(
            text.contains(#"7 when not (rollout(deviceId, "s", growthbook) < 50%) and\#n      rollout(deviceId, "s", growthbook) < 100%"#),
            "\(text)")
        #expect(!text.contains("8"), "an experiment of one variation never runs")
        // An experiment's fallback attribute: read only with sticky bucketing, and said.
        let notes = result.notes.map(\.description)
        #expect(
            notes.contains {
                $0.hasPrefix("features.limit.rules[2].fallbackAttribute: note: GrowthBook reads an experiment's fallback attribute only")
            }, "\(notes)")
        #expect(result.isExact)
    }

    /// A prerequisite's condition read against its feature's value, of one known type:
    /// GrowthBook never finds values of two JSON types equal or ordered, so such a test is
    /// never true (or, `$vne` and `$notRegex`, always), not a comparison that does not load.
    @Test func growthBookPrerequisitesOfAnotherTypeNeverMatch() throws {
        let payload = """
            {"features": {
              "label": {"defaultValue": "on"},
              "count": {"defaultValue": 3},
              "gate": {"defaultValue": true},
              "a": {"defaultValue": 0, "rules": [
                {"force": 1, "parentConditions": [{"id": "label", "condition": {"value": true}}]},
                {"force": 2, "parentConditions": [{"id": "count", "condition": {"value": {"$in": ["3", 3, true]}}}]},
                {"force": 3, "parentConditions": [{"id": "gate", "condition": {"value": {"$gt": 0}}}]},
                {"force": 4, "parentConditions": [{"id": "count", "condition": {"value": {"$vne": "1.0.0", "$notRegex": "x"}}}]}
              ]},
              "b": {"defaultValue": 0, "rules": [
                {"force": 5, "parentConditions": [{"id": "count", "condition": {"value": {"$regex": "3"}}}]},
                {"force": 6, "parentConditions": [{"id": "label", "condition": {"value": {"$lte": "on", "$ne": 1}}}]}
              ]}
            }}
            """
        let result = try Self.imported(payload, .growthbook)
        #expect(result.isExact, "\(result.notes)")
        #expect(!result.text.contains("count == \"3\"") && !result.text.contains("label == true"), "\(result.text)")
        #expect(try Self.evaluate(result, "a", [:]) == .int(2))
        #expect(try Self.evaluate(result, "b", [:]) == .int(6))
        #expect(!result.text.contains("5 when"), "\(result.text)")
    }

    /// Saved groups (`$savedGroup`, `$inGroup`, a group reading itself), a force rule's
    /// fallback attribute, and a version test of a parent's value: the values are the
    /// GrowthBook 4.0.0 SDK's for the same payload and contexts.
    @Test func growthBookSavedGroupsFallbackAttributesAndParentVersions() throws {
        let payload = """
            {"features": {
              "release": {"defaultValue": "1.2.0", "rules": [{"condition": {"beta": true}, "force": "2.0.0-rc.1"}]},
              "offer": {"defaultValue": 0, "rules": [
                {"condition": {"$savedGroup": {"id": "staff"}}, "force": 1},
                {"condition": {"$not": {"$savedGroup": {"id": "eu"}}}, "force": 2},
                {"condition": {"email": {"$inGroup": "vip"}}, "force": 3},
                {"parentConditions": [{"id": "release", "condition": {"value": {"$vgte": "2.0.0-beta"}}}], "force": 4},
                {"force": 5, "coverage": 0.5, "hashAttribute": "userId", "fallbackAttribute": "deviceId", "hashVersion": 2}
              ]},
              "loop": {"defaultValue": false, "rules": [{"condition": {"$savedGroup": {"id": "a"}}, "force": true}]}
            },
            "savedGroups": {
              "staff": {"type": "list", "attributeKey": "userId", "values": ["u1", "u2"]},
              "vip": ["a@x.com", "b@x.com"],
              "eu": {"type": "condition", "condition": {"$or": [{"country": {"$in": ["FR", "DE"]}}, {"$savedGroup": {"id": "eu"}}]}},
              "a": {"type": "condition", "condition": {"$savedGroup": {"id": "b"}}},
              "b": {"type": "condition", "condition": {"$savedGroup": {"id": "a"}}}
            }}
            """
        let result = try Self.imported(payload, .growthbook)
        let text = result.text
        #expect(text.contains(#"segment eu = (country in ["FR", "DE"] or country contains any ["FR", "DE"]) ?? false"#), "\(text)")
        #expect(text.contains(#"segment staff = (userId in ["u1", "u2"] or userId contains any ["u1", "u2"]) ?? false"#), "\(text)")
        #expect(text.contains("2 when not eu\n"), "\(text)")
        #expect(text.contains(#"4 when release in ["2.0.0-rc.1"]"#), "\(text)")
        #expect(
            text.contains(#"5 when (rollout(userId, "offer", growthbook) < 50%) ?? (rollout(deviceId, "offer", growthbook) < 50%)"#),
            "\(text)")
        let expected: [(EvaluationContext, Int)] = [
            (["userId": "u1"], 1), (["country": "FR", "userId": "u9"], 0), (["country": "US", "userId": "u9"], 2),
            (["country": "FR", "email": "a@x.com", "userId": "x"], 3), (["country": "FR", "beta": true, "userId": "x"], 4),
            (["country": "FR", "userId": "u7"], 5), (["country": "FR", "userId": "u4"], 0), (["country": "FR", "deviceId": "d3"], 5),
            (["country": "FR", "deviceId": "d1"], 0), (["country": "FR", "userId": "", "deviceId": "d3"], 5),
        ]
        for (context, value) in expected { #expect(try Self.evaluate(result, "offer", context) == .int(value), "\(context)") }
        // Two groups that read each other mean one thing or another by where they are
        // entered: the rule is named, at its place.
        #expect(
            result.notes.map(\.description).contains(
                "features.loop.rules[0].condition.$savedGroup: not imported: saved group 'a' is not imported (see savedGroups.a); the rule is left out"
            ), "\(result.notes)")
        #expect(!result.isExact)
    }

    /// A big list group read by many attributes, each a segment of its own: what an import
    /// writes from what rules refer to is bounded, and each rule past the bound is named.
    @Test func growthBookListsWrittenFromGroupsAreBounded() throws {
        let values = (0..<500).map { "\"user-\($0)\"" }.joined(separator: ",")
        let rules = (0..<20).map { #"{"condition": {"a\#($0)": {"$inGroup": "big"}}, "force": \#($0 + 1)}"# }.joined(separator: ",")
        let payload = #"{"features": {"f": {"defaultValue": 0, "rules": [\#(rules)]}}, "savedGroups": {"big": [\#(values)]}}"#
        var importer = GrowthBookImport(expansionLimit: 10_000)
        let file = try importer.run(try JSON.parse(bytes: Array(payload.utf8)))
        #expect(file.segments.count == 2)
        let bounded = importer.notes.filter { $0.message.contains("the most an import writes") }
        #expect(bounded.count == 18 && bounded.first?.place == "features.f.rules[2].condition.a2.$inGroup", "\(importer.notes)")
        #expect(file.declarations.first?.rules.count == 2)
    }

    static let flagd = """
        {
          "flags": {
            "show-banner": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
              "targeting": {"if": [{"ends_with": [{"var": "email"}, "@example.com"]}, "on", {"!=": [{"var": "country"}, "US"]}, "on", null]}},
            "color": {"state": "ENABLED", "variants": {"red": "red", "blue": "blue"}, "defaultVariant": "red",
              "metadata": {"description": "The button's colour."},
              "targeting": {"if": [{"in": [{"var": "country"}, ["FR", "DE"]]}, {"fractional": [["red", 25], ["blue", 75]]}, {"<": [{"var": "age"}, 30]}, "blue"]}},
            "limit": {"state": "DISABLED", "variants": {"low": 10, "high": 50}, "defaultVariant": "low",
              "targeting": {"if": [{"sem_ver": [{"var": "version"}, ">=", "2.0"]}, "high", {"$ref": "staff"}, "high"]}},
            "config": {"state": "ENABLED", "variants": {"a": {"x": 1}}, "defaultVariant": "a"},
            "tiers": {"state": "ENABLED", "variants": {"a": "a", "b": "b"}, "defaultVariant": "a",
              "targeting": {"fractional": [{"cat": [{"var": "email"}, {"var": "country"}]}, ["a", 1], ["b", 1]]}},
            "cards": {"state": "ENABLED", "variants": {"a": "a", "b": "b"}, "defaultVariant": "a",
              "targeting": {"fractional": [{"cat": [{"var": "$flagd.flagKey"}, {"var": "email"}]}, ["a", 1], ["b", 1]]}}
          },
          "$evaluators": {"staff": {"starts_with": [{"var": "email"}, "admin"]}}
        }
        """

    @Test func flagdTargetingFractionalAndEvaluators() throws {
        let result = try Self.imported(Self.flagd, .flagd)
        let text = result.text
        #expect(text.contains("flag showBanner = false {\n  enabled when (email ends with \"@example.com\") ?? false"), "\(text)")
        #expect(text.contains(#"enabled when not (has(country) and country == "US")"#), "a missing attribute is != anything")
        #expect(text.contains("/// The button's colour.\nvariant color [red, blue] = red {"))
        #expect(text.contains(#"split(targetingKey, "color", flagd) { red: 25, blue: 75 } when country in ["FR", "DE"]"#), "\(text)")
        #expect(text.contains("blue when not (has(age)) or age < 30"), "a missing number compares as 0")
        #expect(text.contains("50 when (version(version) >= 2.0.0) ?? false") && text.contains("50 when staff"), "\(text)")
        #expect(text.contains(#"segment staff = (email starts with "admin") ?? false"#), "an evaluator read as a condition is a segment")
        #expect(try Self.evaluate(result, "showBanner", [:]) == .bool(true))
        #expect(try Self.evaluate(result, "showBanner", ["country": "US"]) == .bool(false))
        #expect(try Self.evaluate(result, "color", [:]) == .string("blue"))
        // The split gives what flagd-core 2.0.0 gives.
        #expect(try Self.evaluate(result, "color", ["country": "FR", "targetingKey": "user-1"]) == .string("red"))
        #expect(try Self.evaluate(result, "color", ["country": "FR", "targetingKey": "user-2"]) == .string("blue"))
        #expect(try Self.evaluate(result, "color", ["country": "FR"]) == .string("red"), "no key: the default variant")
        let notes = result.notes.map(\.description)
        // A disabled flag answers the caller's default in flagd, as an undeclared one does
        // here: written as a comment, a remark.
        #expect(notes.contains { $0.hasPrefix("flags.limit.state: note: a disabled flag gives the caller's default") }, "\(notes)")
        #expect(
            result.text.contains("# DISABLED in flagd: every evaluation gives the caller's default.\n#   value limit: int = 10"),
            "\(result.text)")
        #expect(try RuleSet(source: result.text).evaluate("limit", in: [:]).errorCode == .flagNotFound)
        #expect(notes.contains { $0.hasPrefix("flags.config.variants: not imported: variants of JSON objects") })
        #expect(
            notes.contains { $0.hasPrefix("flags.tiers.targeting.fractional[0]: not imported: a fractional bucketing by an expression") },
            "\(notes)")
        // A cat of the flag's key and an attribute: flagd-core 2.0.0 puts these in a and b.
        #expect(try Self.evaluate(result, "cards", ["email": "ann@example.com"]) == .string("a"))
        #expect(try Self.evaluate(result, "cards", ["email": "dee@example.com"]) == .string("b"))
        #expect(!notes.contains { $0.hasPrefix("flags.cards") }, "\(notes)")
    }

    static let unleash = """
        {"version": 2, "features": [
          {"name": "new-ui", "enabled": true, "description": "The new UI.",
           "strategies": [{"name": "flexibleRollout", "parameters": {"rollout": "30", "stickiness": "default", "groupId": "new-ui"},
                           "constraints": [{"contextName": "country", "operator": "NOT_IN", "values": ["US"]}], "segments": [1]},
                          {"name": "userWithId", "parameters": {"userIds": "u-1, u-2"}}],
           "variants": [{"name": "blue", "weight": 700, "stickiness": "default", "overrides": [{"contextName": "userId", "values": ["u-9"]}]},
                        {"name": "green", "weight": 300, "stickiness": "default", "payload": {"type": "string", "value": "#0f0"}}]},
          {"name": "beta", "enabled": false, "strategies": []},
          {"name": "checkout", "enabled": true, "dependencies": [{"feature": "new-ui"}],
           "strategies": [{"name": "default", "constraints": [
             {"contextName": "email", "operator": "STR_ENDS_WITH", "values": ["@Example.com"], "caseInsensitive": true, "inverted": true}]}]},
          {"name": "on-host", "enabled": true, "strategies": [{"name": "applicationHostname", "parameters": {"hostNames": "a"}}]},
          {"name": "later", "enabled": true, "strategies": [{"name": "default", "constraints": [{"contextName": "currentTime", "operator": "DATE_AFTER", "value": "2027-01-01T00:00:00Z"}]}]}
        ], "segments": [{"id": 1, "name": "adults", "constraints": [{"contextName": "age", "operator": "NUM_GTE", "value": "18"}]}]}
        """

    /// What a review against flagd-core 2.0.0 found: a `var` with a default, a `$ref` inside
    /// an evaluator to one listed before it (flagd-core fills them in in listed order and
    /// leaves it), a targeting that is no object, and an empty default variant each give
    /// flagd's caller default or another reading, and are named, with the flag.
    @Test func flagdEdgesAsFlagdCoreReadsThem() throws {
        let file = """
            {"flags": {
              "withDefault": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
                              "targeting": {"if": [{"==": [{"var": ["country", "US"]}, "US"]}, "on", "off"]}},
              "refOrder": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
                           "targeting": {"if": [{"$ref": "outer"}, "on", "off"]}},
              "text": {"state": "ENABLED", "variants": {"red": "red", "blue": "blue"}, "defaultVariant": "blue", "targeting": "red"},
              "noDefault": {"state": "ENABLED", "variants": {"": "x", "b": "y"}, "defaultVariant": ""},
              "boolDefault": {"state": "ENABLED", "variants": {"true": "t", "false": "f"}, "defaultVariant": true}
            },
            "$evaluators": {"inner": {"in": [{"var": "country"}, ["US"]]}, "outer": {"and": [{"$ref": "inner"}]}}}
            """
        let result = try Self.imported(file, .flagd)
        let places = Set(result.notes.filter { $0.kind == .notImported }.map(\.place))
        for place in [
            "flags.withDefault.targeting.if[0]", "flags.refOrder.targeting", "flags.text.targeting",
        ] {
            #expect(places.contains(place), "\(place): \(result.notes)")
        }
        #expect(!result.text.contains("withDefault") && !result.text.contains("refOrder"))
        // An empty default variant is none: the caller's default.
        #expect(try RuleSet(source: result.text).evaluate("noDefault", in: [:], default: "z").value == "z")
        #expect(try Self.evaluate(result, "boolDefault", [:]) == .string("t"))
    }

    @Test func unleashStrategiesConstraintsVariantsAndDependencies() throws {
        let result = try Self.imported(Self.unleash, .unleash)
        let text = result.text
        #expect(
            text.contains(#"rollout(userId ?? sessionId, "new-ui") < 30% and not (has(country) and country in ["US"]) and age >= 18.0"#),
            "\(text)")
        #expect(text.contains(#"userId in ["u-1", "u-2"]"#))
        #expect(text.contains("variant newUiVariant [disabled, blue, green] = disabled {"), "\(text)")
        #expect(text.contains(#"blue when newUi and userId in ["u-9"]"#))
        #expect(text.contains(#"split(userId ?? sessionId, "new-ui") { blue: 700, green: 300 } when newUi"#))
        #expect(text.contains("@disabled\nflag beta = false {\n  enabled\n}"), "\(text)")
        #expect(text.contains(#"enabled when newUi and not (has(email) and lower(email) ends with "@example.com")"#), "\(text)")
        // Unleash's meaning of a missing field: NOT_IN and an inverted constraint hold.
        #expect(try Self.evaluate(result, "newUi", ["userId": "u-1"]) == .bool(true))
        #expect(try Self.evaluate(result, "newUiVariant", ["userId": "u-9"]) == .string("disabled"), "off: disabled")
        #expect(try Self.evaluate(result, "checkout", ["userId": "u-1"]) == .bool(true))
        #expect(try Self.evaluate(result, "checkout", ["userId": "u-1", "email": "A@EXAMPLE.COM"]) == .bool(false))
        let notes = result.notes.map(\.description)
        #expect(notes.contains { $0.hasPrefix("features[3].strategies[0]: not imported: the 'applicationHostname' strategy") }, "\(notes)")
        #expect(!result.isExact)
        // A variant's payload is a value by the variant given; the current time is `now`.
        #expect(text.contains("value newUiPayload: string = \"\" {\n  \"#0f0\" when newUiVariant == green\n}"), "\(text)")
        #expect(text.contains(#"enabled when now > "2027-01-01T00:00:00Z""#), "\(text)")
        #expect(
            notes.contains { $0.hasPrefix("features[4].strategies[0].constraints[0]: note: Unleash's currentTime is `now`") }, "\(notes)")
        #expect(try Self.evaluate(result, "later", ["now": "2027-01-01T00:00:00.001Z"]) == .bool(true))
        #expect(try Self.evaluate(result, "later", ["now": "2027-01-01T00:00:00Z"]) == .bool(false))
    }

    /// The first strategy on decides the variant: its own variants (by the strategy's
    /// stickiness, their overrides unread), else the feature's. Payloads follow the rule that
    /// gave the variant where one name has two. The values are UnleashClient 6.9.1's.
    @Test func unleashStrategyVariantsAndPayloadsByTheRuleThatGaveThem() throws {
        let payload = #"""
            {"version": 2, "features": [
              {"name": "theme", "enabled": true,
               "strategies": [
                 {"name": "flexibleRollout", "parameters": {"rollout": "100", "stickiness": "sessionId", "groupId": "g"},
                  "constraints": [{"contextName": "country", "operator": "IN", "values": ["FR"]}],
                  "variants": [{"name": "red", "weight": 500, "stickiness": "default", "payload": {"type": "string", "value": "r-fr"}},
                               {"name": "blue", "weight": 500, "stickiness": "default"}]},
                 {"name": "userWithId", "parameters": {"userIds": "u-1, u-2, u-3, u-4"}}],
               "variants": [{"name": "red", "weight": 500, "stickiness": "default", "payload": {"type": "json", "value": "{\"all\": true}"}},
                            {"name": "green", "weight": 500, "stickiness": "default", "overrides": [{"contextName": "userId", "values": ["u-2"]}]}]}
            ]}
            """#
        let result = try Self.imported(payload, .unleash)
        #expect(result.isExact, "\(result.notes)")
        #expect(result.text.contains(#"split(sessionId, "g") { red: 500, blue: 500 } when theme and has(sessionId) and country in ["FR"]"#))
        let expected: [(EvaluationContext, String, String)] = [
            (["userId": "u-1", "sessionId": "s1", "country": "FR"], "red", "r-fr"),
            (["userId": "u-1", "sessionId": "s2", "country": "FR"], "blue", ""),
            (["userId": "u-1", "sessionId": "s1"], "green", ""), (["userId": "u-2", "sessionId": "s1"], "green", ""),
            (["userId": "u-3", "sessionId": "s1"], "red", #"{"all": true}"#), (["userId": "u-9", "sessionId": "s1"], "disabled", ""),
        ]
        for (context, variant, text) in expected {
            #expect(try Self.evaluate(result, "themeVariant", context) == .string(variant), "\(context)")
            #expect(try Self.evaluate(result, "themePayload", context) == .string(text), "\(context)")
        }
    }

    /// A key that is a `.flags` name keeps it, whatever comes before it; each rename says
    /// why; what of a flag was not imported is written above it as well as on stderr.
    @Test func namesKeysKeepAndNotesAboveWhatTheyConcern() throws {
        let payload = #"""
            {"features": {"new-ui": {"defaultValue": false}, "newUi": {"defaultValue": true},
              "country": {"defaultValue": "US", "rules": [{"condition": {"country": "CA"}, "force": "CA"}]}, "now": {"defaultValue": false},
              "gated": {"defaultValue": false, "rules": [{"condition": {"tags": {"$exotic": ["a"]}}, "force": true}]}}}
            """#
        let result = try Self.imported(payload, .growthbook)
        #expect(try Self.evaluate(result, "newUi", [:]) == .bool(true), "the key newUi keeps its name")
        #expect(try Self.evaluate(result, "newUi2", [:]) == .bool(false))
        let notes = result.notes.map(\.description)
        #expect(
            notes.contains(
                "features.new-ui: renamed: 'new-ui' is newUi2 (a .flags name is letters, digits and '_'; newUi is taken by 'newUi')"),
            "\(notes)")
        #expect(
            notes.contains(
                "features.country: renamed: 'country' is country2 (a context attribute is named 'country', and a declaration of that name would hide it)"
            ), "\(notes)")
        #expect(notes.contains("features.now: renamed: 'now' is fNow ('now' is a word of the language)"), "\(notes)")
        #expect(
            result.text.contains(
                "# not imported: features.gated.rules[0].condition.tags.$exotic: $exotic has no .flags form; the rule is left out\nflag gated = false\n"
            ),
            "\(result.text)")
    }

    @Test func filesThatAreNotWhatTheyClaimAreRefusedNamingWhy() async {
        await offThePool(computing: true) {
            func message(_ text: String, _ format: ImportFormat) -> String? {
                do throws(ImportError) {
                    _ = try FlagsImport.run(Array(text.utf8), from: format, name: "vendor.json")
                    return nil
                } catch {
                    return error.message
                }
            }
            #expect(message("{\n  \"flags\": {", .launchdarkly) == "vendor.json:2:13 is not JSON: expected a string key")
            #expect(message("\u{FEFF}{}", .launchdarkly) == nil, "a byte-order mark is no part of the JSON")
            #expect(message("[1]", .launchdarkly)?.contains("a LaunchDarkly file is a JSON object") == true)
            #expect(message(#"{"flags": 3}"#, .launchdarkly) == "vendor.json: \"flags\" is a number, not an object")
            #expect(message(#"{"status": 200}"#, .growthbook)?.contains("has \"features\"") == true)
            #expect(message(#"{"features": {}, "encryptedFeatures": "abc"}"#, .growthbook)?.contains("encrypted") == true)
            // A file of another system: its system is named.
            #expect(
                message(#"{"features": {}}"#, .unleash)
                    == "vendor.json: \"features\" is an object, not an array; it looks like GrowthBook's: try --from growthbook")
            #expect(message(#"{"flags": []}"#, .flagd) == "vendor.json: \"flags\" is an array, not an object")
            #expect(
                message(#"{"flags": {"f": {"on": true, "variations": [1]}}, "$evaluators": 1}"#, .flagd)?.hasSuffix(
                    "it looks like LaunchDarkly's: try --from launchdarkly") == true)
            // Rules past the size of a .flags file are said to be, with what to do.
            let ids = (0..<1_000_000).map { "\"user-\($0)-0123456789\"" }.joined(separator: ",")
            #expect(
                message(
                    #"{"flags": {"f": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off", "targeting": {"if": [{"in": [{"var": "u"}, [\#(ids)]]}, "on", "off"]}}}}"#,
                    .flagd)?.contains("past the 16777216 a .flags file may be: import the vendor file in parts") == true)
            #expect(
                message(String(repeating: " ", count: FlagsImport.maximumSize + 1), .growthbook)?.contains("the most 'flags import' reads")
                    == true)
        }
    }

    /// Files a review wrote to break the importers: each is refused or imported, never a
    /// trap or a file that does not load, and what they expand stays the size of the input.
    @Test func hostileFilesImportOrAreRefused() throws {
        var chained = (0..<40).map { i in
            #""f\#(i)": {"key": "f\#(i)", "on": true, "variations": [true, false], "fallthrough": {"variation": 0}, "offVariation": 1, "prerequisites": [{"key": "f\#(i + 1)", "variation": 0}]}"#
        }
        chained.append(#""f40": {"key": "f40", "on": true, "variations": [true, false], "fallthrough": {"variation": 0}}"#)
        var refs = (0..<12).map { i in
            #""e\#(i)": {"or": [\#(Array(repeating: #"{"$ref": "e\#(i + 1)"}"#, count: 6).joined(separator: ", "))]}"#
        }
        refs.append(#""e12": {"==": [{"var": "country"}, "US"]}"#)
        let files: [(ImportFormat, String)] = [
            (
                .flagd,
                #"{"flags": {"f": {"state": "ENABLED", "variants": {"a": "a", "b": "b"}, "defaultVariant": "a", "targeting": {"fractional": [["a", 9223372036854775807], ["b", 9223372036854775807]]}}}}"#
            ),
            (
                .growthbook,
                #"{"features": {"f": {"defaultValue": false, "rules": [{"force": true, "coverage": 1e300}, {"force": true, "range": [-1e300, 1e300]}]}}}"#
            ),
            (
                .flagd,
                #"{"flags": {"f": {"state": "ENABLED", "variants": {"a": "a", "b": "b"}, "defaultVariant": "a", "targeting": {"if": [{"$ref": "e0"}, "b"]}}}, "$evaluators": {\#(refs.joined(separator: ", "))}}"#
            ),
            (
                .launchdarkly,
                #"{"flags": {"beta": {"key": "beta", "on": true, "variations": [true, false], "fallthrough": {"variation": 0}, "rules": [{"clauses": [{"attribute": "", "op": "segmentMatch", "values": ["beta"]}], "variation": 1}]}}, "segments": {"beta": {"key": "beta", "included": ["u"]}}}"#
            ),
            (
                .unleash,
                #"{"features": [{"name": "foo", "enabled": true, "strategies": [], "variants": [{"name": "a", "weight": 1000}]}, {"name": "fooVariant", "enabled": true, "strategies": []}]}"#
            ),
            (
                .launchdarkly,
                #"{"flagValues": {"a": 1}, "flags": {"a": {"key": "a", "on": true, "variations": [1, 2], "fallthrough": {"variation": 1}}}}"#
            ),
            (
                .launchdarkly,
                #"{"flags": {"a": {"key": "a", "on": true, "variations": [true, false], "fallthrough": {"variation": 0}, "offVariation": 1, "prerequisites": [{"key": "b", "variation": 0}]}, "b": {"key": "b", "on": true, "variations": [true, false], "fallthrough": {"variation": 0}, "offVariation": 1, "prerequisites": [{"key": "a", "variation": 0}]}}}"#
            ),
            (.launchdarkly, "{\"flags\": {\(chained.joined(separator: ", "))}}"),
            (
                .unleash,
                #"{"features": [{"name": "f", "enabled": true, "strategies": [], "variants": [{"name": "a", "weight": 3000000000}, {"name": "b", "weight": 3000000000}]}]}"#
            ),
            (.growthbook, #"{"features": {"x": {"defaultValue": 1}, "x": {"defaultValue": 2}}}"#),
        ]
        for (format, text) in files {
            do throws(ImportError) {
                let result = try FlagsImport.run(Array(text.utf8), from: format, name: "hostile.json")
                #expect(
                    result.text.utf8.count < 40 * text.utf8.count + 2_000,
                    "\(format): \(result.text.utf8.count) bytes from \(text.utf8.count)")
            } catch {
                Issue.record("\(format): \(error.message)")
            }
        }
        // A flag and a segment of one key, a feature and another's variant: names of their own.
        let both = try FlagsImport.run(Array(files[3].1.utf8), from: .launchdarkly, name: "x")
        #expect(both.text.contains("segment beta2 =") && both.text.contains("when beta2"), "\(both.text)")
        // A cycle, and a chain deeper than 30, are left out and named.
        let cycle = try FlagsImport.run(Array(files[6].1.utf8), from: .launchdarkly, name: "x")
        #expect(cycle.notes.map(\.description).contains { $0.contains("go round in a cycle") }, "\(cycle.notes)")
        let chain = try FlagsImport.run(Array(files[7].1.utf8), from: .launchdarkly, name: "x")
        #expect(chain.notes.map(\.description).contains { $0.contains("more than 30 deep") }, "\(chain.notes)")
        #expect(chain.text.contains("flag f40 = true") && chain.text.contains("flag f20 = true"))
    }

    /// Fuzzed: every prefix of each example and thousands of random edits of it import or
    /// are refused with a message; an import always loads (the importer checks it).
    @Test func truncatedAndMutatedFilesNeverCrash() async throws {
        try await offThePool(computing: true) {
            let gb =
                #"{"features": {"f": {"defaultValue": 1, "rules": [{"condition": {"a": {"$in": [1, 2]}, "$not": {"b": "x"}}, "force": 2, "coverage": 0.5}, {"variations": [1, 2], "weights": [0.5, 0.5]}]}}}"#
            var g = SeededGenerator(seed: 52)
            for (text, format) in [
                (Self.launchDarkly, ImportFormat.launchdarkly), (gb, .growthbook), (Self.flagd, .flagd), (Self.unleash, .unleash),
            ] {
                let bytes = Array(text.utf8)
                var inputs = stride(from: 0, to: bytes.count, by: 7).map { Array(bytes[..<$0]) }
                // Every key of every object given twice (a JSON reader keeps the last).
                func doubled(_ json: JSON) -> JSON {
                    switch json {
                    case .object(let members): .object(members.flatMap { [($0.0, doubled($0.1)), ($0.0, doubled($0.1))] })
                    case .array(let elements): .array(elements.map(doubled))
                    default: json
                    }
                }
                inputs.append(Array(doubled(try JSON.parse(bytes: bytes)).serialized().utf8))
                let alphabet = Array(#"{}[]",:0123456789-.$truefalsn "#.utf8)
                for _ in 0..<1_500 {
                    var mutated = bytes
                    for _ in 0..<Int(g.next() % 4 + 1) {
                        let i = Int(g.next() % UInt64(mutated.count))
                        switch g.next() % 3 {
                        case 0: mutated[i] = alphabet[Int(g.next() % UInt64(alphabet.count))]
                        case 1: mutated.remove(at: i)
                        default: mutated.insert(alphabet[Int(g.next() % UInt64(alphabet.count))], at: i)
                        }
                    }
                    inputs.append(mutated)
                }
                for input in inputs {
                    do throws(ImportError) {
                        let result = try FlagsImport.run(input, from: format, name: "fuzz.json")
                        #expect((try? RuleSet(source: result.text)) != nil)
                    } catch {
                        #expect(!error.message.contains("does not load"), "\(error.message)\n\(String(decoding: input, as: UTF8.self))")
                    }
                }
            }
        }
    }
}
