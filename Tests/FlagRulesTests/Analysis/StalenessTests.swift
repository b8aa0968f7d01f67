import Foundation
import Testing

@testable import FlagRules
@testable import FlagRulesTooling

/// `flags stale`'s analysis: a file whose done declarations are known lists exactly them,
/// each with its reasons, its lines and its readers.
@Suite struct StalenessTests {
    static let today = DateTime.parseDate("2026-11-27")!

    static let rules = """
        context { userId: string; plan: enum(free, pro); country: string }

        /// Done: expired.
        @owner("web")
        @expires("2026-10-01")
        flag oldBanner { enabled when plan == pro }

        @disabled
        flag killedFeature { enabled when country == "US" }

        flag neverOn

        value pageSize: int = 20 { 20 when plan == pro }

        flag fullyRolled { enabled when rollout(userId) < 100% }

        flag notStarted { enabled when rollout(userId) < 0% }

        flag rampDone { enabled when rollout(userId) < ramp("2026-09-01T00:00:00Z", "2026-10-01T00:00:00Z", 0%, 100%) }

        # Live declarations.
        flag newCheckout { enabled when plan == pro and rollout(userId) < 30% }
        flag rampGoing { enabled when rollout(userId) < ramp("2026-11-01T00:00:00Z", "2026-12-31T00:00:00Z", 0%, 100%) }
        value limit: int = 5 { 50 when plan == pro }
        variant layout [a, b] { split(userId) { a: 50%, b: 50% } }
        value banner: string = "none" { "old" when oldBanner }
        flag unreadButLive { enabled when country == "DE" }

        """

    @Test func listsExactlyTheDoneDeclarations() throws {
        let rules = try RuleSet(source: Self.rules)
        let stale = rules.staleDeclarations(today: Self.today)
        #expect(stale.map(\.name) == ["oldBanner", "killedFeature", "neverOn", "pageSize", "fullyRolled", "notStarted", "rampDone"])
        let byName = Dictionary(uniqueKeysWithValues: stale.map { ($0.name, $0) })
        #expect(byName["oldBanner"]?.reasons.map(\.code) == ["expired"])
        #expect(byName["oldBanner"].map { ($0.startLine, $0.endLine) } ?? (0, 0) == (3, 6))
        #expect(byName["oldBanner"]?.readers == [.init(kind: "rules", place: "banner", line: 26)])
        #expect(byName["oldBanner"]?.value == nil)
        #expect(byName["killedFeature"]?.reasons.map(\.code) == ["disabled"])
        #expect(byName["killedFeature"]?.value == .bool(false))
        #expect(byName["neverOn"]?.reasons.map(\.code) == ["constant"])
        #expect(byName["pageSize"]?.reasons.first?.detail == "every rule gives the default: 20 for everyone")
        #expect(byName["fullyRolled"]?.reasons.first?.detail == "line 15: rollout(userId) at 100%: write has(userId)")
        #expect(byName["notStarted"]?.reasons.map(\.code) == ["rollout-zero"])
        #expect(byName["rampDone"]?.reasons.first?.detail == "line 19: the ramp ended on 2026-10-01 at 100%")
        #expect(
            byName["oldBanner"]?.fix
                == "remove lines 3–6 ('flag oldBanner'); replace its reads with the value it should keep: banner:26")
        #expect(byName["killedFeature"]?.fix == "remove lines 8–9 ('flag killedFeature')")
    }

    /// With the code's reads: a declaration neither code nor another declaration reads is
    /// done; one read by code, or only by another declaration, is not.
    @Test func unreadByCodeAndRules() throws {
        let rules = try RuleSet(source: Self.rules)
        let code = CodeScanner.scan(
            """
            if store.isEnabled("newCheckout") { }
            let n = store[AppFlags.limit, in: [:]]
            let v = store.variant("layout", in: [:])
            print(store.value("banner", in: [:], default: ""))
            let r = store.isEnabled("rampGoing")
            """, file: "App.swift", names: Set(rules.declarations.map(\.name)))
        let stale = rules.staleDeclarations(today: Self.today, code: code)
        let unread = stale.filter { $0.reasons.contains { $0.code == "unread" } }.map(\.name)
        #expect(unread == ["killedFeature", "neverOn", "pageSize", "fullyRolled", "notStarted", "rampDone", "unreadButLive"])
        #expect(!stale.contains { $0.name == "newCheckout" || $0.name == "oldBanner" && $0.reasons.contains { $0.code == "unread" } })
        #expect(stale.first { $0.name == "oldBanner" }?.readers.map(\.kind) == ["rules"])
    }
}
