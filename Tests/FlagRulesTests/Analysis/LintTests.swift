import Testing

@testable import FlagRules
@testable import FlagRulesTooling

/// Each lint on a minimal example that must warn, and a near miss that must not.
@Suite struct LintTests {
    static let schema = """
        context {
          build  : enum(debug, alpha, release)
          userId : string
          age    : int
          email  : string
        }

        """

    /// The codes the lints report on `body` under the schema (its attributes all read, so
    /// that only what the example is about warns).
    static func codes(_ body: String, schema: String = LintTests.schema) throws -> [String] {
        let reader = "\nflag readsAll { enabled when has(build) and has(userId) and has(age) and has(email) }\n"
        return try RuleSet(source: schema + body + reader).lint().map(\.code)
    }

    /// (code, warns, near miss)
    static let pairs: [(String, String, String)] = [
        (
            "FR101", "flag f { enabled when rollout(userId) < 100% }",
            "flag f { enabled when rollout(userId) < 99.999% }"
        ),
        ("FR101", "flag f { enabled when rollout(userId) >= 0% }", "flag f { enabled when rollout(userId) >= 0.001% }"),
        ("FR101", "flag f { enabled when rollout(userId) < 0% }", "flag f { enabled when rollout(userId) <= 0% }"),
        ("FR102", "flag f { enabled when rollout(userId) < 15 }", "flag f { enabled when rollout(userId) < 15% }"),
        (
            "FR103", "variant v [a, b] { split(userId) { a: 100%, b: 0% } }",
            "variant v [a, b] { split(userId) { a: 99.9%, b: 0.1% } }"
        ),
        ("FR104", "flag f { enabled when age in [] }", "flag f { enabled when age in [1] }"),
        ("FR104", "flag f { enabled when build in [debug, alpha, release] }", "flag f { enabled when build in [debug, alpha] }"),
        (
            "FR104", "flag f { enabled when build == debug and build == alpha }",
            "flag f { enabled when build == debug or build == alpha }"
        ),
        ("FR104", "flag f { enabled when age > 5 and age < 3 }", "flag f { enabled when age > 5 and age < 7 }"),
        ("FR104", "flag f { enabled when age >= 5 and age < 5 }", "flag f { enabled when age >= 5 and age <= 5 }"),
        ("FR104", #"flag f { enabled when lower(email) == "Bob" }"#, #"flag f { enabled when lower(email) == "bob" }"#),
        (
            "FR105", "flag f {\n  enabled when build == debug\n  disabled when build == debug and age > 3\n}",
            "flag f {\n  enabled when build == debug and age > 3\n  disabled when build == debug\n}"
        ),
        (
            "FR105", "variant v [a, b] {\n  a when age > 3\n  b when age > 3\n}",
            "variant v [a, b] {\n  split(userId) { a: 50%, b: 50% } when age > 3\n  b when age > 3\n}"
        ),
        ("FR106", "segment adults = age >= 18", "segment adults = age >= 18\nflag f { enabled when adults }"),
        ("FR108", "variant v [a, b, c] = a { b when age > 3 }", "variant v [a, b, c] = a { b when age > 3; c when age > 9 }"),
        ("FR110", "flag f { disabled when age > 3 }", "flag f { enabled when age > 3 }"),
        (
            "FR110", "variant v [a, b] = a {\n  a when age > 3\n  split(userId) { a: 100%, b: 0% }\n}",
            "variant v [a, b] = a {\n  a when age > 3\n  split(userId) { a: 99%, b: 1% }\n}"
        ),
        (
            "FR113", Self.tests(("age: 4", ["expect f", "expect f.reason == TARGETING_MATCH"]), ("age: 4", ["expect f"])),
            Self.tests(("age: 4", ["expect f", "expect f.reason == TARGETING_MATCH"]), ("age: 3", ["expect f"]))
        ),
        (
            "FR113", Self.tests(("age: 4", ["expect f"]), ("age: 4", ["expect f == true"])),
            Self.tests(("age: 4", ["expect f"]), ("age: 4", ["expect f", "expect f.rule == 1"]))
        ),
        ("FR113", Self.tests(("age: 4", ["expect f", "expect f"])), Self.tests(("age: 4", ["expect f", "expect not g"]))),
        (
            "FR114",
            "variant a [x, y] { split(userId, \"exp\") { x: 1, y: 1 } }\nvariant b [x, y] { split(userId, \"exp\") { x: 1, y: 1 } }",
            "variant a [x, y] { split(userId, \"exp-a\") { x: 1, y: 1 } }\nvariant b [x, y] { split(userId, \"exp-b\") { x: 1, y: 1 } }"
        ),
        (
            "FR114", "variant a [x, y] { split(userId) { x: 1, y: 1 } }\nvariant b [x, y] { split(userId, \"a\") { x: 1, y: 1 } }",
            "variant a [x, y] { split(userId) { x: 1, y: 1 } }\nvariant b [x, y] { split(userId) { x: 1, y: 1 } }"
        ),
    ]

    /// `flag f` and `flag g` and a test per (given, expectations).
    static func tests(_ tests: (String, [String])...) -> String {
        var out = "flag f { enabled when age > 3 }\nflag g { enabled when age > 9 }\n"
        for (i, t) in tests.enumerated() {
            out += "test \"t\(i)\" {\n  given { \(t.0) }\n" + t.1.map { "  " + $0 + "\n" }.joined() + "}\n"
        }
        return out
    }

    @Test func redundantTestsNameTheEarlierOne() throws {
        let rules = try RuleSet(source: Self.schema + Self.tests(("age: 4", ["expect f", "expect f"]), ("age: 4", ["expect f"])))
        let found = rules.lint().filter { $0.code == "FR113" }
        #expect(
            found.map(\.message) == [
                "this expectation repeats line 11 of the same test",
                "test \"t1\" asserts nothing that test \"t0\" (line 9) does not: the same context, and expectations it makes too",
            ])
        #expect(found.map(\.range.start.line) == [12, 14])
    }

    /// FR109 on a ramp that ended before the day the lints run, and not on one still going.
    @Test func rampsThatHaveEnded() throws {
        let rules = try RuleSet(
            source: """
                context { userId: string }
                flag f { enabled when rollout(userId) < ramp("2026-01-01", "2026-02-01", 5%, 50%) }
                flag g { enabled when rollout(userId) < ramp("2026-01-01", "2027-02-01", 5%, 50%) }
                """)
        let found = rules.lint(today: try #require(DateTime.parse("2026-11-25")))
        #expect(found.map(\.code) == ["FR109"])
        #expect(found.first?.message == "this ramp ended on 2026-02-01: it is 50.0 from then on")
        #expect(found.first?.help == "write 50.0% (or 50.0, if it is not a percentage)")
        #expect(found.first?.range.start.line == 2)
    }

    /// FR111 warns of an expiry within the days asked for, not of one later or passed, and
    /// only when asked; FR112 of a declaration without an owner, only when asked.
    @Test func expiriesAndOwnersWhenAsked() throws {
        let today = try #require(DateTime.parse("2026-11-25"))
        let rules = try RuleSet(
            source: SourceText(
                """
                @owner("growth") @expires("2026-12-01")
                flag soon = true
                @expires("2027-06-01")
                flag later = true
                @owner("core")
                variant v [a]
                segment s = true
                @owner("core")
                flag readsS { enabled when s }
                """, name: "x.flags"), today: today)
        #expect(rules.lint(today: today).isEmpty)
        let expiring = rules.lint(today: today, LintOptions(expiringWithinDays: 14))
        #expect(expiring.map { $0.code } == ["FR111"])
        #expect(expiring.first?.message == "'soon' expires on 2026-12-01, in 6 days")
        #expect(expiring.first?.help == "remind growth: remove it, or move its expiry date")
        #expect(rules.lint(today: today, LintOptions(expiringWithinDays: 5)).isEmpty)
        let owners = rules.lint(today: today, LintOptions(requiresOwners: true))
        #expect(owners.map { $0.message } == ["flag 'later' has no @owner"])
        // The file can ask for owners itself.
        let asking = try RuleSet(source: SourceText("# flags:require-owners\nflag f = true\n", name: "y.flags"), today: today)
        #expect(asking.lint(today: today).map(\.code) == ["FR112"])
        let notQuite = try RuleSet(source: SourceText("# flags:require-owners please\nflag f = true\n", name: "y.flags"), today: today)
        #expect(notQuite.lint(today: today).isEmpty)
    }

    @Test(arguments: pairs)
    func warnsAndNearMissDoesNot(_ code: String, _ warns: String, _ nearMiss: String) throws {
        #expect(try Self.codes(warns).contains(code), "\(code) on \(warns)")
        #expect(try !Self.codes(nearMiss).contains(code), "\(code) on \(nearMiss)")
    }

    @Test func unusedAttributes() throws {
        let rules = try RuleSet(source: "context { a: string; b: int; c: bool }\nflag f { enabled when a == \"x\" or has(c) }")
        let found = rules.lint()
        #expect(found.map(\.code) == ["FR107"])
        #expect(found.first?.message == "context attribute 'b' is read by no rule")
        #expect(found.first?.range.start.line == 1)
    }

    @Test func messagesNameTheFix() throws {
        let rules = try RuleSet(source: "context { userId: string }\nflag f { enabled when rollout(userId) < 0.5 }")
        let d = try #require(rules.lint().first)
        #expect(d.code == "FR102")
        #expect(d.message == "rollout(…) compared with the bare number 0.5, read as 0.5%")
        #expect(d.help == "write '0.5%', or '50.0%' if you meant a fraction")
        #expect(d.severity == .warning)
    }

    /// `# flags:ignore CODE` silences a lint on its line, or alone on a line on the next;
    /// `# flags:ignore-file CODE` in the whole file; a bare `flags:ignore` every code.
    @Test func commentsSilenceLints() throws {
        let body = "flag f { enabled when rollout(userId) < 15 }"
        #expect(try Self.codes(body) == ["FR102"])
        #expect(try Self.codes(body + "  # flags:ignore FR102") == [])
        #expect(try Self.codes(body + "  # flags:ignore FR101") == ["FR102"])
        #expect(try Self.codes(body + "  # flags:ignore") == [])
        #expect(try Self.codes("# flags:ignore FR101, FR102\n" + body) == [])
        #expect(try Self.codes("# flags:ignore-file FR102\n\n\n" + body) == [])
        #expect(try Self.codes("# flags:ignoreFR102\n" + body) == ["FR102"])
        // A trailing comment speaks for its own line, not the next.
        #expect(try Self.codes("flag g = true  # flags:ignore FR102\n" + body) == ["FR102"])
    }

    /// The examples are lint-clean (`flags check --strict examples/` in CI), and every lint
    /// has a code of its own.
    @Test func examplesAreCleanAndCodesAreDistinct() throws {
        for file in try exampleFiles() {
            let rules = try RuleSet(contentsOf: file)
            #expect(rules.lint().isEmpty, "\(file.lastPathComponent): \(rules.lint().map(\.message))")
        }
        #expect(Set(Lint.all.map(\.code)).count == Lint.all.count)
        #expect(Lint.all.allSatisfy { $0.code.hasPrefix("FR1") && $0.code.count == 5 })
        #expect(Set(Self.pairs.map(\.0)).union(["FR107", "FR109", "FR111", "FR112"]) == Set(Lint.all.map(\.code)))
    }
}
