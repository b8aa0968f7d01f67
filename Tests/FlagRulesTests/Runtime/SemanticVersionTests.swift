import Testing

@testable import FlagRules

@Suite struct SemanticVersionTests {
    @Test func precedenceFollowsSemver2() throws {
        let ordered = [
            "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",
            "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.1.0", "2.0.0", "10.0.0",
        ]
        let versions = try ordered.map { try #require(SemanticVersion($0), "\($0)") }
        for i in versions.indices {
            for j in versions.indices {
                #expect((versions[i] < versions[j]) == (i < j), "\(ordered[i]) < \(ordered[j])")
            }
        }
    }

    @Test func buildMetadataIsIgnored() throws {
        let a = try #require(SemanticVersion("1.0.0-beta.2+build.5"))
        let b = try #require(SemanticVersion("1.0.0-beta.2"))
        #expect(a == b)
        #expect(!(a < b) && !(b < a))
        #expect(a.description == "1.0.0-beta.2+build.5")
        #expect(a.build == "build.5")
    }

    /// App versions as apps write them: minor and patch may be left out, before a
    /// pre-release or build part too (as LaunchDarkly's SDKs read `2.0-rc`).
    @Test(arguments: [
        ("3.2", "3.2.0"), ("3", "3.0.0"), ("0.9", "0.9.0"), ("10.0", "10.0.0"), ("3.2-beta", "3.2.0-beta"), ("2-rc.1", "2.0.0-rc.1"),
        ("3.2+build", "3.2.0+build"),
    ])
    func shortVersionsFillInZeros(_ text: String, _ full: String) throws {
        let version = try #require(SemanticVersion(text))
        #expect(version == SemanticVersion(full) && version.description == full)
    }

    @Test(arguments: [
        "3.2-", "3-beta..1", "3.2+", "03.2", "3.02", "3.", "3.2.", ".3", "v3", "01.0.0", "1.02.0", "1.0.0-", "1.0.0-01", "1.0.0+",
        "v1.0.0", "1.0.0-a..b",
        "1.0.0 ", "99999999999999999999.0.0", "1.0.0+a..b", "",
    ])
    func invalidVersionsAreRejected(_ text: String) {
        #expect(SemanticVersion(text) == nil)
    }

    @Test func hugeNumericPrereleaseIdentifiersCompareNumerically() throws {
        let a = try #require(SemanticVersion("1.0.0-99999999999999999999"))
        let b = try #require(SemanticVersion("1.0.0-100000000000000000000"))
        #expect(a < b)
    }

    @Test func versionComparisonsInRules() throws {
        let rules = try RuleSet(
            source: """
                context { appVersion: version }
                flag new { enabled when appVersion >= "2.10.0" }
                flag pre { enabled when appVersion < 2.10.0 }
                """)
        #expect(rules.isEnabled("new", in: ["appVersion": "2.10.0"]))
        #expect(!rules.isEnabled("new", in: ["appVersion": "2.9.0"]))  // not a string comparison
        #expect(!rules.isEnabled("new", in: ["appVersion": "2.10.0-beta.1"]))
        #expect(rules.isEnabled("pre", in: ["appVersion": "2.10.0-rc.1"]))
        #expect(!rules.isEnabled("new", in: ["appVersion": "garbage"]))
        #expect(!rules.isEnabled("pre", in: ["appVersion": "garbage"]))
    }

    @Test func schemalessOrderingWithAVersionLiteralComparesVersions() throws {
        let rules = try RuleSet(source: #"flag new { enabled when appVersion >= "2.10.0" }"#)
        #expect(rules.isEnabled("new", in: ["appVersion": "2.10.0"]))
        #expect(!rules.isEnabled("new", in: ["appVersion": "2.9.0"]))
        #expect(rules.evaluate("new", in: ["appVersion": "two"]).reason == .default)
    }

    /// `version(s)`: a leading `v` read as GrowthBook and flagd read it, where a plain
    /// comparison reads it as LaunchDarkly and Unleash do (no version: unknown). The
    /// example is TheFlagsLanguage's.
    @Test func versionCallReadsALeadingV() throws {
        let rules = try RuleSet(
            source: """
                flag lenient { enabled when version(appVersion) >= 2.3.0 }
                flag plain { enabled when appVersion >= 2.3.0 }
                """)
        for text in ["v2.3", "2.3.0", "V2.4.0-rc.1", "v3"] {
            #expect(rules.isEnabled("lenient", in: ["appVersion": .string(text)]), "\(text)")
        }
        for text in ["v2.2.9", "vv2.3.0", "v", "version 2.3.0", ""] {
            #expect(!rules.isEnabled("lenient", in: ["appVersion": .string(text)]), "\(text)")
        }
        #expect(!rules.isEnabled("plain", in: ["appVersion": "v2.3"]))
        #expect(rules.evaluate("plain", in: ["appVersion": "v2.3"]).reason == .default)
        // A number is its decimal text.
        #expect(rules.isEnabled("lenient", in: ["appVersion": 2.5]))
        #expect(rules.isEnabled("lenient", in: ["appVersion": 3]))
        #expect(!rules.isEnabled("lenient", in: ["appVersion": 2.2]))
        #expect(!rules.isEnabled("lenient", in: ["appVersion": true]))
        // A version attribute is itself; a bool, an enum or a list is an error.
        let typed = try RuleSet(source: "context { v: version }\nflag f { enabled when version(v) > 1.0.0 }")
        #expect(typed.isEnabled("f", in: ["v": "1.0.1"]))
        #expect(throws: (any Error).self) { try RuleSet(source: "context { b: bool }\nflag f { enabled when version(b) > 1.0.0 }") }
        #expect(throws: (any Error).self) { try RuleSet(source: "flag f { enabled when version(a, b) > 1.0.0 }") }
    }

    /// `datetime(x)`: ISO 8601 text, or milliseconds since 1970 (TheFlagsLanguage's example).
    @Test func datetimeCallReadsTextAndMilliseconds() throws {
        let rules = try RuleSet(source: #"flag renewed { enabled when datetime(renewedAt) >= "2026-01-01T00:00:00Z" }"#)
        for value: Value in ["2026-03-01T09:30:00+02:00", "2026-01-01", 1_767_225_600_000, 1.7672256e12] {
            #expect(rules.isEnabled("renewed", in: ["renewedAt": value]), "\(value)")
        }
        for value: Value in ["2025-12-31T23:59:59Z", 1_767_225_599_999, "soon", true] {
            #expect(!rules.isEnabled("renewed", in: ["renewedAt": value]), "\(value)")
        }
        let mistyped = "context { b: bool }\nflag f { enabled when datetime(b) > \"2026-01-01\" }"
        #expect(throws: (any Error).self) { try RuleSet(source: mistyped) }
    }
}
