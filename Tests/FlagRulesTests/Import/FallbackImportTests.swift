import Foundation
import Testing

@testable import FlagRules
@testable import FlagRulesTooling

/// What the vendors answer with the caller's default, imported as `fallback` rules, each
/// pinned by the suite case that found it, with the value the vendor's SDK gives.
struct FallbackImportTests {
    /// The resolution of `name` with `callersDefault`, in the import of `file`.
    static func resolve(_ file: String, _ format: ImportFormat, _ name: String, _ context: EvaluationContext, _ callersDefault: Value)
        throws -> Resolution
    {
        let result = try ImportTests.imported(file, format)
        #expect(!result.notes.contains { $0.kind == .notImported }, "\(result.notes)")
        return try RuleSet(source: result.text).evaluate(name, in: context, default: callersDefault)
    }

    /// GrowthBook cases.json, feature "Prerequisite flag off, block dependent flag" and
    /// "Prerequisite flag on, evaluate dependent flag": a failing gate prerequisite ends the
    /// evaluation with no value; a rule of neither force nor variations is skipped.
    @Test func growthBookGatePrerequisites() throws {
        let file = """
            {"features": {
              "parent": {"defaultValue": true, "rules": [{"condition": {"id": "off"}, "force": false}]},
              "child": {"defaultValue": "success", "rules": [
                {"parentConditions": [{"id": "parent", "condition": {"value": true}, "gate": true}]},
                {"force": "forced"}]},
              "softChild": {"defaultValue": "success", "rules": [
                {"parentConditions": [{"id": "parent", "condition": {"value": true}}], "force": "forced"}]}}}
            """
        let blocked = try Self.resolve(file, .growthbook, "child", ["id": "off"], "caller's")
        #expect(blocked.isFallback && blocked.value == "caller's")
        #expect(try Self.resolve(file, .growthbook, "child", ["id": "on"], "caller's").value == "forced")
        // A prerequisite that is no gate skips its rule.
        #expect(try Self.resolve(file, .growthbook, "softChild", ["id": "off"], "caller's").value == "success")
        #expect(try Self.resolve(file, .growthbook, "softChild", ["id": "on"], "caller's").value == "forced")
    }

    /// GrowthBook cases.json, feature "defaults when empty" and "empty experiment rule - c":
    /// a feature with no default value gives null (`get_feature_value` then the caller's
    /// fallback) where no rule gives a value; a null force is no force, and its rule is
    /// skipped; a rule reading a parent that may give null takes GrowthBook's test of null.
    @Test func growthBookFeaturesWithNoDefaultValue() throws {
        let file = """
            {"features": {
              "empty": {},
              "feature": {"rules": [{"variations": ["a", "b", "c"]}]},
              "forcedNull": {"defaultValue": 3, "rules": [{"force": null}]}}}
            """
        let empty = try Self.resolve(file, .growthbook, "empty", [:], .bool(true))
        #expect(empty.isFallback && empty.value == .bool(true))
        #expect(try Self.resolve(file, .growthbook, "feature", ["id": "123"], "x").value == "c")
        #expect(try Self.resolve(file, .growthbook, "feature", ["id": "456"], "x").value == "a")
        // No id: not in the experiment, so no value.
        #expect(try Self.resolve(file, .growthbook, "feature", [:], "x").isFallback)
        #expect(try Self.resolve(file, .growthbook, "forcedNull", [:], 9).value == 3)
        let child = """
            {"features": {"parent": {}, "child": {"defaultValue": 1, "rules": [
              {"parentConditions": [{"id": "parent", "condition": {"value": {"$exists": false}}}], "force": 2}]}}}
            """
        // (Where the parent gives no value, the test of null GrowthBook makes.)
        #expect(try Self.resolve(child, .growthbook, "child", [:], 9).value == 2)
    }

    /// flagd evaluator fractional.feature "Fractional operator with nested var expression as
    /// variant name": an entry's variant read from an attribute is the variant it names;
    /// missing, the default variant; naming none (flagd's error), the caller's default.
    @Test func flagdFractionalEntriesNamedByAnAttribute() throws {
        let file = """
            {"flags": {"fractional-nested-var-flag": {"state": "ENABLED",
              "variants": {"red": "red", "green": "green", "blue": "blue", "fallback": "fallback"}, "defaultVariant": "fallback",
              "targeting": {"fractional": [{"var": "targetingKey"}, [{"var": "color"}, 50], ["blue", 50]]}}}}
            """
        func resolve(_ key: String, _ color: Value?) throws -> Resolution {
            var context: EvaluationContext = ["targetingKey": .string(key)]
            if let color { context["color"] = color }
            return try Self.resolve(file, .flagd, "fractionalNestedVarFlag", context, "caller's")
        }
        #expect(try resolve("jon@company.com", "red").value == "red")
        #expect(try resolve("jon@company.com", "green").value == "green")
        #expect(try resolve("user1", "red").value == "blue")
        let yellow = try resolve("jon@company.com", "yellow")
        #expect(yellow.isFallback && yellow.value == "caller's")
        #expect(try resolve("jon@company.com", "").isFallback)
        #expect(try resolve("jon@company.com", .int(3)).isFallback)
        // Missing: flagd's null variant, the default one (here named fallback).
        let missing = try resolve("jon@company.com", nil)
        #expect(!missing.isFallback && missing.variant == "fallback")
        #expect(try resolve("jon@company.com", "fallback").variant == "fallback")
    }

    /// GrowthBook cases.json, feature "Support passthrough variations", "Prerequisite flag
    /// missing, block dependent flag" and "Multiple nested prerequisite flags on, evaluate
    /// dependent flag": a passthrough variation's users go on to the next rule; a feature
    /// the payload lacks is null; a parent that gives no value is tested as null.
    @Test func growthBookPassthroughAndNullPrerequisites() throws {
        let file = """
            {"features": {
              "feature": {"defaultValue": 0, "rules": [
                {"key": "holdout", "variations": [1, 2], "hashVersion": 2, "ranges": [[0, 0.01], [0.01, 1.0]], "meta": [{}, {"passthrough": true}]},
                {"key": "experiment", "variations": [3, 4], "hashVersion": 2, "ranges": [[0, 0.5], [0.5, 1.0]]}]},
              "blocked": {"defaultValue": "default", "rules": [
                {"parentConditions": [{"id": "parentFlag", "condition": {"value": "green"}, "gate": true}]},
                {"condition": {"memberType": "basic"}, "force": "success"}]},
              "parentFlag1": {"defaultValue": "silver", "rules": [
                {"parentConditions": [{"id": "parentFlag2", "condition": {"value": {"$gt": 1}}, "gate": true}]},
                {"condition": {"country": "Canada"}, "force": "red"}, {"condition": {"country": {"$in": ["USA", "Mexico"]}}, "force": "green"}]},
              "parentFlag2": {"defaultValue": 0, "rules": [{"condition": {"id": "123"}, "force": 2}]},
              "childFlag": {"defaultValue": "default", "rules": [
                {"parentConditions": [{"id": "parentFlag1", "condition": {"value": "green"}, "gate": true}]},
                {"condition": {"memberType": "basic"}, "force": "success"}]}}}
            """
        #expect(try Self.resolve(file, .growthbook, "feature", ["id": "1"], -1).value == 3)
        let blocked = try Self.resolve(file, .growthbook, "blocked", ["id": "123", "memberType": "basic"], "caller's")
        #expect(blocked.isFallback && blocked.value == "caller's")
        let user: EvaluationContext = ["id": "123", "memberType": "basic", "country": "USA"]
        #expect(try Self.resolve(file, .growthbook, "childFlag", user, "caller's").value == "success")
        // parentFlag2 is not above 1 for another id: parentFlag1 gives no value, childFlag's gate fails.
        #expect(try Self.resolve(file, .growthbook, "childFlag", ["id": "9", "memberType": "basic", "country": "USA"], "x").isFallback)
    }

    /// flagd's `$flagd.timestamp` (whole seconds) against a number: a test of `now` from the
    /// instant it starts to hold (flagd testbed "Time-based operations", with a literal).
    @Test(arguments: [
        (">", "2023-11-14T22:13:21Z"), (">=", "2023-11-14T22:13:20Z"), ("<", "2023-11-14T22:13:20Z"), ("<=", "2023-11-14T22:13:21Z"),
    ])
    func flagdTimestampAgainstANumber(_ op: String, _ from: String) throws {
        let file = """
            {"flags": {"timed": {"state": "ENABLED", "variants": {"yes": 1, "no": 0}, "defaultVariant": "no",
              "targeting": {"if": [{"\(op)": [{"var": "$flagd.timestamp"}, 1700000000]}, "yes", "no"]}}}}
            """
        let result = try ImportTests.imported(file, .flagd)
        #expect(result.text.contains("now \(op.hasPrefix(">") ? ">=" : "<") \"\(from)\""), "\(result.text)")
        // flagd: floor(now) compared with the number.
        for (instant, seconds) in [
            ("2023-11-14T22:13:19.5Z", 1_699_999_999), ("2023-11-14T22:13:20.5Z", 1_700_000_000), ("2023-11-14T22:13:21Z", 1_700_000_001),
        ] {
            let holds = [
                "<": seconds < 1_700_000_000, "<=": seconds <= 1_700_000_000, ">": seconds > 1_700_000_000, ">=": seconds >= 1_700_000_000,
            ][op]!
            #expect(try Self.resolve(file, .flagd, "timed", ["now": .string(instant)], -1).value == .int(holds ? 1 : 0), "\(op) \(instant)")
        }
    }

    /// flagd evaluator no-default-variant.feature "Resolve flag with no default variant":
    /// without a default variant, the caller's default where the default would be.
    @Test func flagdFlagsWithNoDefaultVariant() throws {
        let file = """
            {"flags": {
              "no-default-flag-null-targeting-variant": {"state": "ENABLED", "variants": {"normal": "CFO", "special": "CEO"},
                "targeting": {"if": [{"==": ["jobs@orange.com", {"var": ["email"]}]}, "special", null]}},
              "null-default-flag": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": null}}}
            """
        let special = try Self.resolve(file, .flagd, "noDefaultFlagNullTargetingVariant", ["email": "jobs@orange.com"], "Inventor")
        #expect(special.value == "CEO" && !special.isFallback)
        let other = try Self.resolve(file, .flagd, "noDefaultFlagNullTargetingVariant", ["email": "wozniak@orange.com"], "Inventor")
        #expect(other.value == "Inventor" && other.isFallback && other.reason == .default)
        #expect(try Self.resolve(file, .flagd, "nullDefaultFlag", [:], .bool(true)).value == .bool(true))
        #expect(try Self.resolve(file, .flagd, "nullDefaultFlag", [:], .bool(false)).value == .bool(false))
    }

    /// LaunchDarkly errors-bad-attribute-reference.yml and rollout-or-experiment.yml "error for
    /// empty variations list in rollout": a malformed clause, once reached, and a rule of
    /// neither a variation nor a rollout are errors (MALFORMED_FLAG): the caller's default.
    @Test(arguments: [#"{"op": "in", "values": [""]}"#, #"{"contextKind": "user", "attribute": "/a~b", "op": "in", "values": [true]}"#])
    func launchDarklyMalformedRules(_ clause: String) throws {
        let file = """
            {"flags": {
              "test-flag": {"key": "test-flag", "on": true, "offVariation": 0, "fallthrough": {"variation": 1},
                "variations": ["off", "fallthrough", "malformed matched", "next rule"], "rules": [
                  {"id": "a", "variation": 2, "clauses": [{"attribute": "country", "op": "in", "values": ["FR"]}, \(clause)]},
                  {"id": "b", "variation": 3, "clauses": [{"attribute": "key", "op": "in", "values": [""], "negate": true}]}]},
              "empty-rollout": {"key": "empty-rollout", "on": true, "offVariation": 0, "fallthrough": {"rollout": {"variations": []}},
                "variations": [true, false]}}}
            """
        let reached = try Self.resolve(file, .launchdarkly, "testFlag", ["key": "user-key", "country": "FR"], "default")
        #expect(reached.isFallback && reached.value == "default")
        // Not reached: the clause before it does not match.
        #expect(try Self.resolve(file, .launchdarkly, "testFlag", ["key": "user-key", "country": "DE"], "default").value == "next rule")
        #expect(try Self.resolve(file, .launchdarkly, "emptyRollout", ["key": "user-key"], .bool(true)).isFallback)
        // An on flag with no fallthrough at all.
        let noFallthrough = #"{"flags": {"f": {"key": "f", "on": true, "offVariation": 0, "variations": ["a", "b"]}}}"#
        #expect(try Self.resolve(noFallthrough, .launchdarkly, "f", ["key": "user-key"], "caller's").value == "caller's")
    }

    @Test(arguments: [
        ("name", false), ("/name", false), ("/a/b", false), ("/a~1b", false), ("/a~0", false), ("///", true),
        ("/", true), ("/a~", true), ("/a~b", true), ("/a//b", true),
    ])
    func launchDarklyAttributeReferences(_ name: String, _ malformed: Bool) {
        let clause = JSON.object([("attribute", .string(name)), ("op", .string("in")), ("contextKind", .string("user"))])
        #expect(LaunchDarklyImport.isMalformed(clause: clause) == malformed)
        // Without a context kind, a name is read literally.
        #expect(!LaunchDarklyImport.isMalformed(clause: .object([("attribute", .string(name)), ("op", .string("in"))])))
        #expect(LaunchDarklyImport.isMalformed(clause: .object([("op", .string("in"))])))
        #expect(LaunchDarklyImport.isMalformed(clause: .object([("attribute", .string("")), ("op", .string("in"))])))
    }
}
