import Foundation
import Testing

@testable import FlagRules

@Suite struct DateTimeTests {
    @Test(arguments: [
        ("1970-01-01", 0.0),
        ("2026-03-31", 1_774_915_200.0),
        ("2026-03-31T09:30", 1_774_949_400.0),
        ("2026-03-31T09:30:00Z", 1_774_949_400.0),
        ("2026-03-31T11:30:00+02:00", 1_774_949_400.0),
        ("2026-03-31T04:00:00-05:30", 1_774_949_400.0),
        ("2026-03-31T09:30:00.250Z", 1_774_949_400.25),
        ("2024-02-29T00:00:00Z", 1_709_164_800.0),
    ])
    func parsesISO8601(_ text: String, _ seconds: Double) throws {
        let d = try #require(DateTime.parse(text))
        #expect(d.timeIntervalSince1970 == seconds)
    }

    @Test(arguments: [
        "2026-13-01", "2026-02-30", "2025-02-29", "2026-03-31T24:00", "2026-03-31T09:60", "2026-3-1",
        "2026-03-31T09:30:00+25:00", "2026-03-31T", "tomorrow", "", "2026-03-31Z",
    ])
    func rejectsInvalidDatetimes(_ text: String) {
        #expect(DateTime.parse(text) == nil)
    }

    @Test func formatsInUTC() throws {
        #expect(DateTime.format(Date(timeIntervalSince1970: 1_774_949_400)) == "2026-03-31T09:30:00Z")
        #expect(DateTime.format(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
        #expect(DateTime.format(Date(timeIntervalSince1970: -62_167_219_200)) == "0000-01-01T00:00:00Z")
        #expect(DateTime.format(Date(timeIntervalSince1970: 1e300)) == "out-of-range date 1e+300")
        #expect(Value.datetime(Date(timeIntervalSince1970: .infinity)).description == "\"out-of-range date inf\"")
    }

    @Test func nowCanBeOverriddenByTheContext() throws {
        let rules = try RuleSet(source: #"flag launch { enabled when now >= "2026-12-01T09:00:00Z" }"#)
        #expect(!rules.isEnabled("launch", in: ["now": "2026-12-01T08:59:59Z"]))
        #expect(rules.isEnabled("launch", in: ["now": "2026-12-01T10:00:00+01:00"]))
        #expect(rules.isEnabled("launch", in: ["now": .datetime(Date(timeIntervalSince1970: 1_900_000_000))]))
        // A mistyped 'now' makes the comparison unknown.
        #expect(rules.evaluate("launch", in: ["now": 5]).reason == .default)
        // Without an override, the real clock is used: this date is long past.
        let past = try RuleSet(source: #"flag f { enabled when now > "2000-01-01" }"#)
        #expect(past.isEnabled("f", in: [:]))
    }

    @Test func datetimeAttributesCompareAsDatetimes() throws {
        let rules = try RuleSet(
            source: """
                context { signup: datetime }
                flag early { enabled when signup < "2026-01-01" }
                """)
        #expect(rules.isEnabled("early", in: ["signup": "2025-12-31T23:59:59Z"]))
        #expect(!rules.isEnabled("early", in: ["signup": "2026-01-01T00:30:00+01:00"]) == false)
        #expect(!rules.isEnabled("early", in: ["signup": "2026-01-01T00:00:00Z"]))
        #expect(rules.evaluate("early", in: ["signup": "soon"]).reason == .default)
    }
}
