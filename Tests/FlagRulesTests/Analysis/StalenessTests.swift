import Foundation
import Testing

@testable import FlagRules
@testable import FlagRulesServer
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

    /// `flags serve`'s metrics, read back: what each declaration served and when last.
    @Test func servedValuesRoundTripThroughTheMetricsText() throws {
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        let metrics = ServeMetrics(since: start)
        metrics.evaluation("newCheckout", reason: .targetingMatch, value: .bool(true), at: start.addingTimeInterval(10))
        metrics.evaluation("newCheckout", reason: .default, value: .bool(false), at: start.addingTimeInterval(20))
        metrics.evaluation("limit", reason: .default, value: .int(5), at: start.addingTimeInterval(30))
        metrics.evaluation("odd\"name", reason: .default, value: .string("a \"quoted\"\\ line\nand more"), at: start)
        metrics.evaluation("broken", reason: .error)
        // A backslash followed by a combining mark is one Character, yet still a backslash.
        metrics.evaluation("mark", reason: .default, value: .string("\\\u{61A}"), at: start)
        let served = try ServedValues(metrics: metrics.text())
        #expect(served.since == start)
        #expect(
            served.lastServed == [
                "newCheckout": ["true": start.addingTimeInterval(10), "false": start.addingTimeInterval(20)],
                "limit": ["5": start.addingTimeInterval(30)],
                "odd\"name": [#""a \"quoted\"\\ line\nand more""#: start],
                "mark": ["\"\\\\\u{61A}\"": start],
            ])
        // One declaration's values are bounded, whatever they are.
        for k in 0..<100 { metrics.evaluation("many", reason: .default, value: .int(k)) }
        #expect(try ServedValues(metrics: metrics.text()).lastServed["many"]?.count == ServeMetrics.maxValues)
    }

    /// Evaluations are counted by reason, each reason in a place of its own, and written in
    /// the order of the reasons' names.
    @Test func evaluationsAreCountedByReason() {
        let reasons: [Resolution.Reason] = [.static, .targetingMatch, .split, .default, .disabled, .error, .override]
        #expect(ServeMetrics.reasons.map(\.rawValue) == reasons.map(\.rawValue).sorted())
        for (i, reason) in ServeMetrics.reasons.enumerated() { #expect(ServeMetrics.place(of: reason) == i) }
        let metrics = ServeMetrics()
        for (k, reason) in reasons.enumerated() {
            for _ in 0...k { metrics.evaluation("f", reason: reason, value: reason == .error ? nil : .bool(true)) }
        }
        let lines = metrics.text().split(separator: "\n").filter { $0.hasPrefix("flags_evaluations_total{") }.map(String.init)
        #expect(
            lines
                == reasons.enumerated().sorted { $0.1.rawValue < $1.1.rawValue }.map {
                    "flags_evaluations_total{flag=\"f\",reason=\"\($0.1.rawValue)\"} \($0.0 + 1)"
                })
    }

    @Test func metricsThatAreNotServesAreRefusedWithTheLine() throws {
        #expect(throws: ServedValues.Failure.self) { try ServedValues(metrics: "up 1\n") }
        do {
            _ = try ServedValues(
                metrics: "flags_counting_since_timestamp_seconds 1\nflags_value_last_served_timestamp_seconds{flag=\"x\" 3\n")
            Issue.record("a malformed sample was read")
        } catch {
            #expect(error.message.hasPrefix("line 2: not a sample of flags_value_last_served_timestamp_seconds"))
        }
        #expect(throws: ServedValues.Failure.self) { try ServedValues(metrics: "flags_counting_since_timestamp_seconds soon\n") }
        #expect(throws: ServedValues.Failure.self) { try ServedValues(metrics: "flags_counting_since_timestamp_seconds nan\n") }
        // A long line is shown cut.
        do {
            _ = try ServedValues(
                metrics: "flags_counting_since_timestamp_seconds 1\nflags_value_last_served_timestamp_seconds{"
                    + String(repeating: "x", count: 10_000))
            Issue.record("a malformed sample was read")
        } catch {
            #expect(error.message.count < 250 && error.message.hasSuffix("…"))
        }
        // Lines ending in CRLF, and a value that starts with a combining mark, read as written.
        let crlf = try ServedValues(
            metrics:
                "flags_counting_since_timestamp_seconds 1\r\nflags_value_last_served_timestamp_seconds{flag=\"f\",value=\"\u{301}x\"} 2\r\n"
        )
        #expect(crlf.since == Date(timeIntervalSince1970: 1) && crlf.lastServed == ["f": ["\u{301}x": Date(timeIntervalSince1970: 2)]])
    }

    /// Served one value to everyone, or nothing, for the whole window: done; judged only
    /// when the metrics have counted for the whole window.
    @Test func oneValueOrNothingServedForDaysIsDone() throws {
        let rules = try RuleSet(source: Self.rules)
        let day = 86_400.0
        let served = ServedValues(
            since: Self.today.addingTimeInterval(-40 * day),
            lastServed: [
                // One value in the window (the other served before it).
                "newCheckout": ["true": Self.today.addingTimeInterval(-2 * day), "false": Self.today.addingTimeInterval(-35 * day)],
                // Two values in the window: live.
                "limit": ["5": Self.today.addingTimeInterval(-1 * day), "50": Self.today.addingTimeInterval(-3 * day)],
                "layout": ["\"a\"": Self.today, "\"b\"": Self.today],
                "banner": ["\"none\"": Self.today, "\"old\"": Self.today],
                "unreadButLive": ["true": Self.today, "false": Self.today],
                // Last served before the window: not evaluated in it.
                "rampGoing": ["true": Self.today.addingTimeInterval(-31 * day)],
            ])
        func reasons(_ served: ServedValues?, days: Int = 30) -> [String: [String]] {
            let live: Set = ["newCheckout", "rampGoing", "limit", "layout", "banner", "unreadButLive"]
            return Dictionary(
                uniqueKeysWithValues: rules.staleDeclarations(today: Self.today, served: served, days: days)
                    .filter { live.contains($0.name) }.map { ($0.name, $0.reasons.map(\.code)) })
        }
        #expect(reasons(served) == ["newCheckout": ["one-value"], "rampGoing": ["unevaluated"]])
        let one = try #require(rules.staleDeclarations(today: Self.today, served: served).first { $0.name == "newCheckout" })
        #expect(one.value == .bool(true))
        #expect(one.reasons.first?.detail == "served true to everyone for 30 days (since 2026-10-28, by flags serve's metrics)")
        // A wider window than the metrics cover judges nothing; a narrower one sees less.
        #expect(reasons(served, days: 41) == [:])
        // (A value last served exactly at the window's start is in it.)
        #expect(reasons(served, days: 1) == ["newCheckout": ["unevaluated"], "rampGoing": ["unevaluated"], "limit": ["one-value"]])
        #expect(reasons(nil) == [:])
    }
}
