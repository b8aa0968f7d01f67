import Foundation
import Testing

@testable import FlagRules
@testable import FlagRulesTooling

let targetingSchema = """
    groups: [string]; roles: [enum(admin, editor, viewer)]; ids: [int]; email: string; build: enum(debug, release)
    clientIP: ip; serverIP: ip; age: int
    """

/// Lists, case, networks and ramps: every operator over present, absent, empty and
/// mistyped values, with a schema and without; the prepared path, `isEnabled` and
/// `evaluate` must agree on each (`truth(of:in:schema:)`).
@Suite struct TargetingTests {
    static let typed: [(String, EvaluationContext, Truth)] = [
        // contains on a list: an element equal to the right side
        (#"groups contains "qa""#, ["groups": ["qa", "staff"]], .yes),
        (#"groups contains "qa""#, ["groups": ["staff"]], .no),
        (#"groups contains "qa""#, ["groups": .list([])], .no),
        (#"groups contains "qa""#, [:], .unknown),
        (#"groups contains "qa""#, ["groups": "qa"], .unknown),  // a string is not a [string]
        (#"groups contains "qa""#, ["groups": .list(["qa", 1])], .unknown),  // mistyped for the schema  // a wrong-typed element
        (#"groups contains "qa""#, ["groups": .list(["qa", .list([])])], .unknown),  // a null element
        (#"groups contains "beta""#, ["groups": ["beta-testers"]], .no),  // elements, not substrings
        ("roles contains admin", ["roles": ["admin"]], .yes),
        (#"roles contains "editor""#, ["roles": ["admin"]], .no),
        ("roles contains admin", ["roles": ["admin", "root"]], .unknown),  // not a case: mistyped
        ("ids contains 3", ["ids": [1, 2, 3]], .yes),
        ("ids contains 4", ["ids": [1, 2, 3]], .no),
        ("ids contains 3", ["ids": [1, 2.5]], .unknown),
        // contains any / contains all
        (#"groups contains any ["qa", "staff"]"#, ["groups": ["dev", "staff"]], .yes),
        (#"groups contains any ["qa", "staff"]"#, ["groups": ["dev"]], .no),
        (#"groups contains any ["qa", "staff"]"#, ["groups": .list([])], .no),
        (#"groups contains any ["qa", "staff"]"#, [:], .unknown),
        (#"groups contains any ["qa", "staff"]"#, ["groups": .list(["qa", true])], .unknown),
        ("groups contains any []", ["groups": ["qa"]], .no),
        ("groups contains any []", [:], .unknown),
        (#"groups contains all ["qa", "staff"]"#, ["groups": ["staff", "dev", "qa"]], .yes),
        (#"groups contains all ["qa", "staff"]"#, ["groups": ["qa", "qa"]], .no),
        (#"groups contains all ["qa", "qa"]"#, ["groups": ["qa"]], .yes),  // duplicates in the literal list
        (#"groups contains all ["qa", "staff"]"#, ["groups": .list([])], .no),
        ("groups contains all []", ["groups": .list([])], .yes),
        ("groups contains all []", [:], .unknown),
        ("roles contains any [admin, editor]", ["roles": ["viewer", "editor"]], .yes),
        ("roles contains all [admin, editor]", ["roles": ["editor"]], .no),
        ("roles contains any [admin]", ["roles": ["superuser"]], .unknown),
        ("ids contains any [1, 2]", ["ids": [5, 2]], .yes),
        ("ids contains all [1, 2]", ["ids": [2, 1, 7]], .yes),
        // count
        ("count(groups) == 2", ["groups": ["a", "a"]], .yes),  // duplicates count
        ("count(groups) == 0", ["groups": .list([])], .yes),
        ("count(groups) >= 1", [:], .unknown),
        ("count(groups) >= 1", ["groups": .list(["a", 2])], .unknown),
        ("count(ids) > 2", ["ids": [1, 2, 3]], .yes),
        // lower: of a list of strings, each element
        (#"lower(groups) contains any ["qa", "ops"]"#, ["groups": ["QA", "Dev"]], .yes),
        (#"lower(groups) contains all ["qa", "dev"]"#, ["groups": ["QA", "Dev"]], .yes),
        (#"lower(groups) contains "qa""#, ["groups": ["Ops"]], .no),
        (#"lower(groups) contains "qa""#, [:], .unknown),
        (#"lower(groups) contains "qa""#, ["groups": .list(["QA", 1])], .unknown),  // a wrong-typed element
        ("count(lower(groups)) == 2", ["groups": ["A", "B"]], .yes),
        (#"lower(email) ends with "@example.com""#, ["email": "Bob@Example.COM"], .yes),
        (#"lower(email) == "ελλάσ""#, ["email": "ΕΛΛΆΣ"], .yes),
        (#"lower(email) == "istanbul""#, ["email": "ISTANBUL"], .yes),
        (#"lower(email) == "x""#, [:], .unknown),
        (#"lower(email) == "x""#, ["email": 5], .unknown),
        (#"lower(email) in ["us", "ca"]"#, ["email": "CA"], .yes),
        // ip: blocks, bare addresses, IPv6, mapped addresses
        (#"clientIP in ["10.0.0.0/8", "192.168.1.7"]"#, ["clientIP": "10.255.0.1"], .yes),
        (#"clientIP in ["10.0.0.0/8", "192.168.1.7"]"#, ["clientIP": "11.0.0.0"], .no),
        (#"clientIP in ["10.0.0.0/8", "192.168.1.7"]"#, ["clientIP": "192.168.1.7"], .yes),
        (#"clientIP in ["10.0.0.0/8", "192.168.1.7"]"#, ["clientIP": "192.168.1.8"], .no),
        (#"clientIP in ["10.0.0.0/8"]"#, ["clientIP": "::ffff:10.1.2.3"], .yes),
        (#"clientIP in ["10.0.0.0/8"]"#, ["clientIP": "::FFFF:10.1.2.3"], .yes),
        (#"clientIP in ["::ffff:10.0.0.0/104"]"#, ["clientIP": "10.9.9.9"], .yes),
        (#"clientIP in ["2001:db8::/32"]"#, ["clientIP": "2001:db8:ffff::1"], .yes),
        (#"clientIP in ["2001:db8::/32"]"#, ["clientIP": "2001:db9::1"], .no),
        (#"clientIP in ["::/0"]"#, ["clientIP": "10.1.2.3"], .no),  // an IPv4 address lies in no IPv6 block
        (#"clientIP in ["0.0.0.0/0"]"#, ["clientIP": "2001:db8::1"], .no),
        (#"clientIP in ["0.0.0.0/0"]"#, ["clientIP": "255.255.255.255"], .yes),
        (#"clientIP in ["10.0.0.0/8"]"#, [:], .unknown),
        (#"clientIP in ["10.0.0.0/8"]"#, ["clientIP": "010.1.2.3"], .unknown),  // leading zero: mistyped
        (#"clientIP in ["10.0.0.0/8"]"#, ["clientIP": "fe80::1%en0"], .unknown),  // a zone: mistyped
        (#"clientIP in ["10.0.0.0/8"]"#, ["clientIP": " 10.1.2.3"], .unknown),
        (#"clientIP in ["10.0.0.0/8"]"#, ["clientIP": "10.0.0.0/8"], .unknown),  // a block is no address
        (#"clientIP in ["10.0.0.0/8"]"#, ["clientIP": 167_772_161], .unknown),
        (#"clientIP not in ["10.0.0.0/8"]"#, ["clientIP": "11.1.1.1"], .yes),
        (#"clientIP not in ["10.0.0.0/8"]"#, [:], .unknown),
        (#"clientIP in []"#, ["clientIP": "1.2.3.4"], .no),
        (#"clientIP == "::1""#, ["clientIP": "0:0:0:0:0:0:0:1"], .yes),
        (#"clientIP == "10.1.2.3""#, ["clientIP": "::ffff:10.1.2.3"], .yes),
        (#"clientIP != "10.1.2.3""#, ["clientIP": "10.1.2.4"], .yes),
        (#"clientIP == "2001:DB8::1""#, ["clientIP": "2001:db8:0::1"], .yes),
        ("clientIP == serverIP", ["clientIP": "::1", "serverIP": "0::1"], .yes),
        ("clientIP == serverIP", ["clientIP": "::1"], .unknown),
    ]

    @Test(arguments: typed)
    func withASchema(_ expression: String, _ context: EvaluationContext, _ expected: Truth) throws {
        #expect(try truth(of: expression, in: context, schema: targetingSchema) == expected, "\(expression) over \(context)")
    }

    static let untyped: [(String, EvaluationContext, Truth)] = [
        (#"groups contains "qa""#, ["groups": ["qa"]], .yes),
        (#"groups contains "qa""#, ["groups": "the qa team"], .yes),  // on a string, a substring
        // A list of scalars of several types: a match decides; with none, an element of
        // another type could have been it.
        (#"groups contains "qa""#, ["groups": .list(["qa", 1])], .yes),
        (#"groups contains "qa""#, ["groups": .list(["x", 1])], .unknown),
        (#"groups contains "qa""#, ["groups": .list(["x", "y"])], .no),
        (#"groups contains any ["qa"]"#, ["groups": .list([1, "qa"])], .yes),
        (#"groups contains any ["qa"]"#, ["groups": .list([1, "x"])], .unknown),
        (#"groups contains all ["qa", "x"]"#, ["groups": .list([1, "x", "qa"])], .yes),
        (#"groups contains all ["qa", "x"]"#, ["groups": .list([1, "x"])], .unknown),
        (#"groups contains all ["qa", "x"]"#, ["groups": .list(["y", "x"])], .no),
        (#"groups contains "qa""#, ["groups": .list(["qa", .list([])])], .unknown),  // a null element
        (#"groups contains "qa""#, ["groups": 5], .unknown),
        ("groups contains qa", ["groups": ["qa"]], .yes),  // a bare name is a symbol
        (#"groups contains any ["qa"]"#, ["groups": "qa"], .unknown),  // a string is no list
        (#"groups contains any ["qa"]"#, ["groups": ["x", "qa"]], .yes),
        (#"groups contains all ["qa", "x"]"#, ["groups": ["x", "qa"]], .yes),
        ("count(groups) == 1", ["groups": ["qa"]], .yes),
        ("count(groups) == 1", ["groups": "q"], .unknown),  // count of a non-list
        ("count(groups) == 1", ["groups": [1.5]], .yes),  // a list of numbers
        ("count(groups) == 2", ["groups": .list([1.5, .list([])])], .unknown),  // a nested element
        ("ids contains any [1, 2]", ["ids": [2]], .yes),
        (#"ids contains any [1, 2]"#, ["ids": ["2"]], .unknown),
        (#"lower(country) == "us""#, ["country": "US"], .yes),
        (#"lower(country) == "us""#, ["country": 1], .unknown),
        (#"lower(tags) contains any ["a", "b"]"#, ["tags": ["C", "B"]], .yes),
        (#"lower(tags) in ["a", "b"]"#, ["tags": "B"], .yes),
        (#"lower(tags) contains any ["a"]"#, ["tags": "A"], .unknown),  // a string is no list
        (#"lower(tags) contains any ["a"]"#, ["tags": [1]], .unknown),
        // A list holding a block compares as networks.
        (#"ip in ["10.0.0.0/8", "1.2.3.4"]"#, ["ip": "10.1.1.1"], .yes),
        (#"ip in ["10.0.0.0/8", "1.2.3.4"]"#, ["ip": "1.2.3.4"], .yes),
        (#"ip in ["10.0.0.0/8", "1.2.3.4"]"#, ["ip": "9.1.1.1"], .no),
        (#"ip in ["10.0.0.0/8"]"#, ["ip": "not an address"], .unknown),
        (#"ip in ["10.0.0.0/8"]"#, ["ip": 10], .unknown),
        // Without a block, a list of strings stays one.
        (#"path in ["/home", "/about"]"#, ["path": "/home"], .yes),
        (#"ip in ["10.1.2.3"]"#, ["ip": "10.1.2.3"], .yes),
        (#"ip in ["10.1.2.3"]"#, ["ip": "::ffff:10.1.2.3"], .no),  // strings, not addresses
        // "Without a schema, a context array is a list value: contains tests its elements",
        // whatever the element's type; a string there holds only strings.
        ("teams contains 7", ["teams": [1, 7]], .yes),
        ("teams contains 7", ["teams": [1, 2]], .no),
        ("teams contains 7", ["teams": "a7"], .unknown),
        ("teams contains 7", ["teams": ["7"]], .unknown),
        ("teams contains 7", [:], .unknown),
        ("flags contains true", ["flags": [false, true]], .yes),  // a list of bools
    ]

    @Test(arguments: untyped)
    func withoutASchema(_ expression: String, _ context: EvaluationContext, _ expected: Truth) throws {
        #expect(try truth(of: expression, in: context) == expected, "\(expression) over \(context)")
    }

    /// A ramp before, at, inside and after its window; up and down.
    static let ramps: [(String, String, Double)] = [
        ("ramp(\"2026-12-01\", \"2026-12-11\", 5%, 50%)", "2026-11-01", 5),
        ("ramp(\"2026-12-01\", \"2026-12-11\", 5%, 50%)", "2026-12-01", 5),
        ("ramp(\"2026-12-01\", \"2026-12-11\", 5%, 50%)", "2026-12-06", 27.5),
        ("ramp(\"2026-12-01\", \"2026-12-11\", 5%, 50%)", "2026-12-11", 50),
        ("ramp(\"2026-12-01\", \"2026-12-11\", 5%, 50%)", "2027-01-01", 50),
        ("ramp(\"2026-12-01\", \"2026-12-11\", 100, 0)", "2026-12-03T12:00:00Z", 75),
        ("ramp(\"2026-12-01T00:00:00+02:00\", \"2026-12-01T02:00:00+02:00\", 0, 1)", "2026-11-30T23:00:00Z", 0.5),
        ("ramp(\"2026-12-01\", \"2026-12-11\", 0.25, 0.75)", "2026-12-06", 0.5),
    ]

    @Test(arguments: ramps)
    func rampValues(_ ramp: String, _ now: String, _ expected: Double) throws {
        let rules = try RuleSet(source: "flag f { enabled when \(ramp) == \(Value.format(expected)) }")
        let context: EvaluationContext = ["now": .string(now)]
        #expect(rules.isEnabled("f", in: context), "\(ramp) at \(now)")
        // The explainer computes the same value.
        #expect(try rules.evaluate(expression: ramp, in: context).value == .double(expected))
    }

    @Test func aRampReadsTheClockWithoutNow() throws {
        let rules = try RuleSet(source: #"flag f { enabled when ramp("2000-01-01", "2001-01-01", 3, 9) == 9 }"#)
        #expect(rules.isEnabled("f", in: [:]))
        // `now` that is not a datetime: unknown, so the rule does not match.
        #expect(rules.evaluate("f", in: ["now": 5]).reason == .default)
        #expect(try rules.evaluate(expression: #"ramp("2000-01-01", "2001-01-01", 3, 9)"#, in: ["now": 5]).value == nil)
    }

    /// `--explain` shows each element test, the block an address lies in, and a ramp's
    /// value with how far through its window `now` is; a list written over several lines
    /// with comments is shown on one line.
    @Test func explanationsShowElementTestsNetworksAndRamps() throws {
        let rules = try RuleSet(
            source: """
                context { groups: [string]; clientIP: ip; userId: string }
                flag f {
                  enabled when groups contains all ["qa", "staff"]
                  enabled when clientIP in [
                    "10.0.0.0/8",  # offices
                    "2001:db8::/32"
                  ]
                  enabled when rollout(userId) < ramp("2026-12-01", "2026-12-11", 0%, 100%)
                }
                """)
        let explanation = try #require(
            rules.explain("f", in: ["groups": ["qa"], "clientIP": "192.0.2.1", "userId": "u-1", "now": "2026-12-06"]))
        let text = explanation.description
        #expect(text.contains(#"groups contains all ["qa", "staff"] → false  (missing "staff")"#), "\(text)")
        #expect(text.contains(#"clientIP in ["10.0.0.0/8", "2001:db8::/32"] → false  (192.0.2.1 lies in no listed block)"#), "\(text)")
        #expect(
            text.contains("→ 50.0  (now 2026-12-06T00:00:00Z: 50.0% of the way from 2026-12-01T00:00:00Z to 2026-12-11T00:00:00Z)"),
            "\(text)")
        #expect(!text.contains("# offices"))
    }

    @Test func aRolloutThatRampsGrowsWithTheWindow() throws {
        let rules = try RuleSet(
            source: """
                context { userId: string }
                flag f { enabled when rollout(userId) < ramp("2026-12-01", "2026-12-15", 5%, 50%) }
                """)
        func share(at now: String) -> Double {
            var on = 0
            for i in 0..<4000 where rules.isEnabled("f", in: ["userId": .string("u\(i)"), "now": .string(now)]) { on += 1 }
            return Double(on) / 40
        }
        #expect(abs(share(at: "2026-11-01") - 5) < 1.5)
        #expect(abs(share(at: "2026-12-08") - 27.5) < 2.5)
        #expect(abs(share(at: "2027-01-01") - 50) < 2.5)
        // A user in at 5% stays in as the ramp grows.
        let early = (0..<4000).filter { rules.isEnabled("f", in: ["userId": .string("u\($0)"), "now": "2026-12-01"]) }
        #expect(early.allSatisfy { rules.isEnabled("f", in: ["userId": .string("u\($0)"), "now": "2026-12-10"]) })
    }

    @Test func jsonArraysAreLists() throws {
        let context = try EvaluationContext(json: #"{"groups": ["qa", "staff"], "ids": [1, 2], "odd": ["qa", null], "nested": [[1]]}"#)
        #expect(context["groups"] == ["qa", "staff"])
        #expect(context["ids"] == [1, 2])
        #expect(context["odd"] == ["qa", .list([])])
        #expect(context["nested"] == .list([[1]]))
        #expect(try EvaluationContext(json: #"{"groups": {"a": 1}}"#)["groups"] == .object(["a": 1]))
        #expect(try EvaluationContext(json: #"{"list": [{"a": 1}]}"#)["list"] == .list([.list([])]))
        let rules = try RuleSet(
            source:
                "context { groups: [string]; odd: [string] }\nflag f { enabled when groups contains \"qa\" }\nflag g { enabled when odd contains \"qa\" }"
        )
        #expect(rules.isEnabled("f", in: context))
        #expect(!rules.isEnabled("g", in: context))
        #expect(rules.evaluate("g", in: context).reason == .default)
    }

    @Test func commandLineListsAreTypedByTheSchema() throws {
        let schema = try #require(try RuleSet(source: "context { \(targetingSchema) }").schema)
        #expect(try schema.value(for: "groups", text: #"["qa", "staff"]"#) == ["qa", "staff"])
        #expect(try schema.value(for: "roles", text: #"["admin"]"#) == ["admin"])
        #expect(try schema.value(for: "ids", text: "[1, 2]") == [1, 2])
        #expect(try schema.value(for: "clientIP", text: "10.1.2.3") == "10.1.2.3")
        #expect(
            throws: ContextError(message: "attribute 'roles' expects a list of admin, editor, viewer, got 'admn'; did you mean 'admin'?")
        ) {
            try schema.value(for: "roles", text: #"["admn"]"#)
        }
        #expect(
            throws: ContextError(
                message:
                    #"attribute 'groups' expects a list of strings, such as ["a", "b"], got 'qa'; write a JSON array, as in '["a", "b"]'"#)
        ) {
            try schema.value(for: "groups", text: "qa")
        }
        #expect(throws: ContextError(message: "attribute 'clientIP' expects an IPv4 or IPv6 address such as 10.1.2.3, got '10.1.2'")) {
            try schema.value(for: "clientIP", text: "10.1.2")
        }
        // Without a schema, a JSON array is a list.
        #expect(Value.inferred(from: #"["qa"]"#) == ["qa"])
        #expect(Value.inferred(from: "[qa") == "[qa")
    }

    /// A declaration lists the attributes it reads, through segments too, with their types
    /// (for `flags list --json` and debug screens).
    @Test func declarationsListTheAttributesTheyRead() throws {
        let rules = try RuleSet(contentsOf: packageRoot.appendingPathComponent("examples/targeting.flags"))
        let beta = try #require(rules.declarations.first { $0.name == "betaProgram" })
        #expect(
            beta.reads == [
                .init(name: "groups", type: .list(.string)),
                .init(name: "roles", type: .list(.enumeration(["admin", "editor", "viewer"]))),
                .init(name: "clientIP", type: .ip),
            ])
        let editor = try #require(rules.declarations.first { $0.name == "newEditor" })
        #expect(editor.reads.map(\.name) == ["email", "roles", "userId", "now"])
        let schemaless = try RuleSet(source: "flag f { enabled when has(a) and b contains any [1] }\nflag g { enabled when f }")
        #expect(schemaless.declarations[1].reads == [.init(name: "a", type: .dynamic), .init(name: "b", type: .dynamic)])
    }

    /// The declarations' metadata is worked out on first read: readers racing for it all
    /// get the same list, and later reads give it again.
    @Test func declarationsReadFirstFromManyTasksAgree() async throws {
        let rules = try RuleSet(contentsOf: packageRoot.appendingPathComponent("examples/targeting.flags"))
        let lists = await withTaskGroup(of: [DeclarationInfo].self) { group in
            for _ in 0..<8 { group.addTask { rules.declarations } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(lists.count == 8 && lists.allSatisfy { $0 == rules.declarations })
        #expect(rules.declarations.map(\.name) == ["onNetwork", "employee", "betaProgram", "newEditor", "workspaceLimit"])
    }

    /// (That the fastest path allocates nothing for lists and addresses is the
    /// `allocs/eval` column of the `flags-bench` targeting rows.)
    @Test func preparedContextsHoldListsAndAddresses() throws {
        let rules = try RuleSet(
            source: """
                context { groups: [string]; clientIP: ip }
                flag f { enabled when groups contains any ["qa", "staff"] and clientIP in ["10.0.0.0/8"] }
                """)
        let prepared = rules.prepare(["groups": ["dev", "qa"], "clientIP": "10.1.2.3"])
        let handle = rules.handle("f")
        #expect(rules.isEnabled(handle, in: prepared))
        #expect(!rules.isEnabled(handle, in: rules.prepare(["groups": ["dev"], "clientIP": "10.1.2.3"])))
        #expect(prepared["groups"] == ["dev", "qa"])
    }
}

/// The parsing of addresses and blocks, and the block list's search.
@Suite struct NetworkTests {
    @Test(arguments: [
        ("10.1.2.3", "10.1.2.3"), ("0.0.0.0", "0.0.0.0"), ("255.255.255.255", "255.255.255.255"),
        ("::", "::"), ("::1", "::1"), ("2001:DB8:0:0:0:0:0:1", "2001:db8::1"), ("1::", "1::"),
        ("::ffff:1.2.3.4", "1.2.3.4"), ("64:ff9b::1.2.3.4", "64:ff9b::102:304"), ("1:0:0:2:0:0:0:3", "1:0:0:2::3"),
    ])
    func addresses(_ text: String, _ canonical: String) throws {
        #expect(try #require(IPAddress(text)).text == canonical)
    }

    @Test(arguments: [
        "", "1.2.3", "1.2.3.4.5", "256.1.1.1", "01.1.1.1", "1.1.1.1 ", " 1.1.1.1", "1..1.1", "a.b.c.d", "1.2.3.-4",
        ":", ":::", "1:::2", "1::2::3", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7:8::", "12345::", "g::", "fe80::1%en0",
        "::1.2.3", "1:", ":1", "1.2.3.4::", "::ffff:01.2.3.4",
    ])
    func notAddresses(_ text: String) {
        #expect(IPAddress(text) == nil, "\(text)")
    }

    @Test func blocks() {
        #expect(IPBlock.parse("10.0.0.0/8") == .success(IPBlock(address: IPAddress(v4: 0x0A00_0000), prefix: 8)))
        #expect(IPBlock.parse("10.1.2.3/8") == .failure(.hostBits(meant: "10.0.0.0/8")))
        #expect(IPBlock.parse("2001:db8::1/32") == .failure(.hostBits(meant: "2001:db8::/32")))
        #expect(IPBlock.parse("10.0.0.0/33") == .failure(.prefixTooLong(33)))
        #expect(IPBlock.parse("::/129") == .failure(.prefixTooLong(129)))
        #expect(IPBlock.parse("10.0.0.0/255.0.0.0") == .failure(.netmask))
        #expect(IPBlock.parse("10.0.0.0/") == .failure(.notABlock))
        #expect(IPBlock.parse("10.0.0.0/08") == .failure(.notABlock))
        #expect(IPBlock.parse("/home") == .failure(.notABlock))
        #expect(IPBlock.parse("::ffff:10.1.0.0/112") == .success(IPBlock(address: IPAddress(v4: 0x0A01_0000), prefix: 16)))
        #expect(IPBlock.hasBlockShape("10.0.0.0/8"))
        #expect(!IPBlock.hasBlockShape("/home"))
        #expect(!IPBlock.hasBlockShape("10.0.0.0"))
    }

    /// The merged, searched ranges agree with testing every block, on random blocks and
    /// addresses.
    @Test func theSearchAgreesWithAScan() throws {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            var blocks: [IPBlock] = []
            for _ in 0..<Int.random(in: 0...40, using: &random) {
                if Bool.random(using: &random) {
                    let prefix = Int.random(in: 0...32, using: &random)
                    let bits = UInt32.random(in: 0...UInt32.max, using: &random)
                    blocks.append(IPBlock(address: IPAddress(v4: bits), prefix: prefix).masked)
                } else {
                    let prefix = Int.random(in: 0...128, using: &random)
                    let block = IPBlock(
                        address: IPAddress(v6: UInt64.random(in: 0...3, using: &random) << 62 | 1, .random(in: 0...UInt64.max)),
                        prefix: prefix)
                    if !block.address.isV4 { blocks.append(block.masked) }
                }
            }
            let set = NetworkSet(blocks)
            for _ in 0..<200 {
                let address: IPAddress
                if Bool.random(using: &random) {
                    // Near a block's edge, or anywhere.
                    if let b = blocks.randomElement(using: &random), b.address.isV4, Bool.random(using: &random) {
                        let edge = UInt32(truncatingIfNeeded: (Bool.random() ? b.first : b.last).low)
                        address = IPAddress(v4: edge &+ UInt32.random(in: 0...2) &- 1)
                    } else {
                        address = IPAddress(v4: .random(in: 0...UInt32.max, using: &random))
                    }
                } else {
                    address = IPAddress(v6: UInt64.random(in: 0...3, using: &random) << 62 | 1, .random(in: 0...UInt64.max))
                }
                let scanned = blocks.contains { $0.contains(address) }
                #expect(set.contains(address) == scanned, "\(address.text) in \(blocks.map { $0.address.text + "/\($0.prefix)" })")
            }
        }
    }

    /// Past 64 ranges the search starts from an index of the addresses' leading bits: it
    /// agrees with a scan for lists spread over the whole space, packed into one corner
    /// of it (every range under one index entry), and touching its first and last address.
    @Test(arguments: [64, 65, 700, 3_000])
    func theIndexedSearchAgreesWithAScan(_ count: Int) async {
        await offThePool(computing: true) {
            var random = SystemRandomNumberGenerator()
            let spreads: [(UInt32) -> UInt32] = [{ $0 }, { 0x0A0A_0000 | $0 & 0xFFFF }, { $0 | 0xFFFF_0000 }]
            for spread in spreads {
                var blocks = (0..<count).map { _ in
                    IPBlock(address: IPAddress(v4: spread(.random(in: 0...UInt32.max, using: &random))), prefix: .random(in: 24...32))
                        .masked
                }
                blocks += [IPBlock(address: IPAddress(v4: 0), prefix: 32), IPBlock(address: IPAddress(v4: .max), prefix: 32)]
                let set = NetworkSet(blocks)
                let edges = set.edgeAddresses
                var probes = edges.prefix(300) + edges.suffix(300)
                for _ in 0..<600 { probes.append(IPAddress(v4: spread(.random(in: 0...UInt32.max, using: &random)))) }
                for address in probes {
                    let scanned = blocks.contains { $0.contains(address) }
                    #expect(set.contains(address) == scanned, "\(address.text) among \(count) blocks")
                }
            }
        }
    }
}

extension IPBlock {
    /// The block with its host bits cleared.
    var masked: IPBlock { IPBlock(address: first, prefix: prefix) }

    /// Whether `a` lies in the block, by comparing with its first and last addresses.
    func contains(_ a: IPAddress) -> Bool {
        guard a.isV4 == address.isV4 else { return false }
        let (f, l) = (first, last)
        if a.isV4 { return a.low >= f.low && a.low <= l.low }
        return (a.high, a.low) >= (f.high, f.low) && (a.high, a.low) <= (l.high, l.low)
    }
}
