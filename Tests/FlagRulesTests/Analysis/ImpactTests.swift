import Foundation
import Testing

@testable import FlagRules
@testable import FlagRulesTooling

/// `flags diff`'s measurement: generated contexts and the shares of changed resolutions.
@Suite struct ImpactTests {
    static let schema = """
        context {
          build      : enum(debug, alpha, beta, release)
          userId     : string
          country    : string
          appVersion : version
        }

        """

    static func measure(_ old: String, _ new: String, count: Int = 10_000, seed: UInt64 = 0) throws -> ImpactReport {
        let a = try RuleSet(source: old, name: "old.flags")
        let b = try RuleSet(source: new, name: "new.flags")
        return Impact.measure(from: a, to: b, contexts: ContextSampler([a, b]).contexts(count: count, seed: seed))
    }

    static func change(_ report: ImpactReport, _ name: String) throws -> ImpactReport.Change {
        try #require(report.declarations.first { $0.name == name })
    }

    @Test func aRolloutFrom20To30PercentMovesATenthAndNothingElse() async throws {
        try await offThePool(computing: true) {
            let report = try Self.measure(
                Self.schema + "flag f { enabled when rollout(userId) < 20% }\nflag same { enabled when rollout(userId) < 50% }",
                Self.schema + "flag f { enabled when rollout(userId) < 30% }\nflag same { enabled when rollout(userId) < 50% }")
            let f = try Self.change(report, "f")
            #expect(report.contexts == 10_000)
            #expect((0.09...0.11).contains(report.share(f)), "\(report.share(f))")
            #expect(f.transitions.map { "\($0.from) → \($0.to)" } == ["false → true"])
            #expect(f.transitions.map(\.count).reduce(0, +) == f.changed)
            let same = try Self.change(report, "same")
            #expect(same.changed == 0 && same.transitions.isEmpty)
            #expect(report.exceeding(percent: 12).isEmpty)
            #expect(report.exceeding(percent: 5).map(\.name) == ["f"])
            #expect(report.text.hasPrefix("f: "))
            #expect(report.text.contains("1 declaration unchanged over 10,000 contexts"))
        }
    }

    @Test func anUnchangedFileChangesNothingExactly() throws {
        let text = try String(contentsOf: packageRoot.appendingPathComponent("examples/targeting.flags"), encoding: .utf8)
        let report = try Self.measure(text, text, count: 2_000)
        #expect(!report.declarations.isEmpty)
        #expect(report.declarations.allSatisfy { $0.changed == 0 })
        #expect(report.added.isEmpty && report.removed.isEmpty && report.schema.isEmpty)
    }

    @Test func aSplitChangeMovesOnlyTheShiftedWeight() async throws {
        try await offThePool(computing: true) {
            let old =
                Self.schema
                + "variant c [control, oneStep, twoStep] = control { split(userId) { control: 50%, oneStep: 25%, twoStep: 25% } }"
            let new =
                Self.schema
                + "variant c [control, oneStep, twoStep] = control { split(userId) { control: 40%, oneStep: 35%, twoStep: 25% } }"
            let report = try Self.measure(old, new)
            let c = try Self.change(report, "c")
            #expect((0.09...0.11).contains(report.share(c)), "\(report.share(c))")
            #expect(c.transitions.map { "\($0.from) → \($0.to)" } == ["control → oneStep"])
        }
    }

    @Test func addedRemovedAndRetypedAreListed() throws {
        let old = Self.schema + "flag gone { enabled when build == beta }\nsegment s = build == debug\nflag kept { enabled when s }"
        let new = """
            context {
              build      : enum(debug, alpha, beta, release)
              userId     : int
              country    : string
              plan       : enum(free, pro)
            }
            flag fresh { enabled when plan == pro }
            segment s = build == debug
            variant kept [on, off] = off { on when s }
            """
        let report = try Self.measure(old, new, count: 1_000)
        #expect(report.added == [.init(name: "fresh", kind: .flag)])
        #expect(report.removed == [.init(name: "gone", kind: .flag)])
        #expect(
            report.schema == [
                .init(name: "userId", from: .string, to: .int), .init(name: "plan", from: nil, to: .enumeration(["free", "pro"])),
                .init(name: "appVersion", from: .version, to: nil),
            ])
        let kept = try Self.change(report, "kept")
        #expect(kept.oldKind == .flag && kept.kind == .variant && kept.changed == 1_000)
        #expect(!report.declarations.contains { $0.name == "s" })
        let text = report.text
        for line in [
            "kept: 100.0 % of 1,000 contexts change (was a flag, now a variant)", "added: flag fresh", "removed: flag gone",
            "schema: userId: string → int", "schema: added plan: enum(free, pro)", "schema: removed appVersion: version",
        ] {
            #expect(text.contains(line), "\(line)\n\(text)")
        }
        guard case .object(let members) = report.json, case .array(let changes)? = members.first(where: { $0.0 == "declarations" })?.1,
            case .object(let kept)? = changes.first
        else {
            Issue.record("no declarations in \(report.json)")
            return
        }
        #expect(kept.map(\.0) == ["name", "kind", "oldKind", "changed", "share", "transitions"])
        #expect(kept[2].1 == .string("flag") && kept[4].1 == .double(1))
    }

    @Test func aVersionBoundaryChangeIsFoundByTheLiteralsNeighbours() async throws {
        try await offThePool(computing: true) {
            let report = try Self.measure(
                Self.schema + "flag f { enabled when appVersion >= \"2.3.0\" }",
                Self.schema + "flag f { enabled when appVersion > \"2.3.0\" }")
            let f = try Self.change(report, "f")
            #expect(f.changed > 0 && f.transitions.map(\.from) == ["true"])
        }
    }

    @Test func generatedContextsStraddleEveryLiteral() async throws {
        try await offThePool(computing: true) {
            let rules = try RuleSet(
                source: """
                    context {
                      age     : int
                      score   : double
                      email   : string
                      name    : string
                      v       : version
                      at      : datetime
                      ip      : ip
                      groups  : [string]
                      userId  : int
                      plan    : enum(free, pro)
                    }
                    flag a { enabled when age > 17 and score <= 2.5 and email ends with "@x.com" and lower(name) == "ann" }
                    flag b { enabled when v < "2.0.0" and at < "2027-01-01T00:00:00Z" and ip in ["10.0.0.0/8"] }
                    flag c { enabled when groups contains any ["qa", "staff"] and rollout(userId) < 5% and plan == pro }
                    """)
            let sampler = ContextSampler([rules])
            func candidates(_ name: String) throws -> ContextSampler.Candidates {
                try #require(sampler.attributes.first { $0.name == name }?.candidates)
            }
            #expect(try candidates("age").values == [0, 16, 17, 18].map(Value.int))
            #expect(try candidates("score").values.compactMap(\.doubleValue).map { ($0 * 100).rounded() } == [0, 249, 250, 251])
            #expect(try candidates("email").values.compactMap(\.stringValue) == ["unnamed", "@x.com", "x-@x.com"])
            #expect(try candidates("name").values.compactMap(\.stringValue) == ["unnamed", "ann", "ANN", "Ann"])
            #expect(try candidates("v").values.compactMap(\.stringValue) == ["1.0.0", "2.0.0", "2.0.1"])
            #expect(
                try candidates("at").values.compactMap(\.stringValue) == [
                    "2026-12-31T23:59:59Z", "2027-01-01T00:00:00Z", "2027-01-01T00:00:01Z",
                ])
            #expect(
                try candidates("ip").values.compactMap(\.stringValue) == [
                    "192.0.2.1", "9.255.255.255", "10.0.0.0", "10.255.255.255", "11.0.0.0",
                ])
            let groups = try candidates("groups")
            #expect(groups.isList && groups.elements == ["qa", "staff"])
            let userId = try candidates("userId")
            #expect(userId.isUnit && userId.unitIsInt)
            #expect(try candidates("plan").values == ["free", "pro"])

            let contexts = sampler.contexts(count: 2_000, seed: 9)
            #expect(contexts == sampler.contexts(count: 2_000, seed: 9))
            #expect(contexts != sampler.contexts(count: 2_000, seed: 10))
            // Units are always present and almost never repeat; other attributes are sometimes absent.
            #expect(Set(contexts.compactMap { $0["userId"] }).count > 1_990)
            let absent = contexts.filter { $0["age"] == nil }.count
            #expect((40...180).contains(absent), "\(absent)")
            // Every generated context is one the file's schema accepts.
            for context in contexts.prefix(200) {
                #expect(rules.problems(in: context).isEmpty, "\(context)")
            }
        }
    }

    @Test func schemalessFilesTakeTheirLiteralsAndAnUnnamedValue() throws {
        let rules = try RuleSet(source: "flag f { enabled when tier in [\"gold\", \"silver\"] and build == beta }")
        let sampler = ContextSampler([rules])
        let tier = try #require(sampler.attributes.first { $0.name == "tier" }?.candidates)
        #expect(tier.values == ["gold", "silver", "unnamed"])
        let report = Impact.measure(from: rules, to: rules, contexts: sampler.contexts(count: 500, seed: 1))
        #expect(report.declarations.map(\.changed) == [0])
    }

    @Test func givenContextsAreCountedExactly() throws {
        let old = try RuleSet(source: "flag f { enabled when country == \"US\" }")
        let new = try RuleSet(source: "flag f { enabled when country in [\"US\", \"CA\"] }")
        let contexts: [EvaluationContext] = [["country": "US"], ["country": "CA"], ["country": "CA"], ["country": "DE"]]
        let report = Impact.measure(from: old, to: new, contexts: contexts)
        let f = try Self.change(report, "f")
        #expect(f.changed == 2 && report.share(f) == 0.5)
        #expect(report.text == "f: 50.0 % of 4 contexts change\n  false → true  50.0 %\n")
    }

    @Test func sharesAreShownWithoutRoundingToZeroOrAHundred() {
        #expect(ImpactReport.percent(0) == "0.0 %")
        #expect(ImpactReport.percent(0.0001) == "<0.1 %")
        #expect(ImpactReport.percent(0.124) == "12.4 %")
        #expect(ImpactReport.percent(0.9999) == ">99.9 %")
        #expect(ImpactReport.percent(1) == "100.0 %")
        #expect(Int.grouped(1_234_567) == "1,234,567" && Int.grouped(999) == "999")
    }
}
