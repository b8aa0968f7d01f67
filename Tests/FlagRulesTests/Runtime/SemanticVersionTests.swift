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

    /// App versions as apps write them: minor and patch may be left out of a version
    /// without a pre-release or build part.
    @Test(arguments: [("3.2", "3.2.0"), ("3", "3.0.0"), ("0.9", "0.9.0"), ("10.0", "10.0.0")])
    func shortVersionsFillInZeros(_ text: String, _ full: String) throws {
        let version = try #require(SemanticVersion(text))
        #expect(version == SemanticVersion(full) && version.description == full)
    }

    @Test(arguments: [
        "3.2-beta", "3-beta", "3.2+build", "03.2", "3.02", "3.", "3.2.", ".3", "v3", "01.0.0", "1.02.0", "1.0.0-", "1.0.0-01", "1.0.0+",
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
}
