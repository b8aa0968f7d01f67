import Testing

@testable import FlagRules

/// The checker is sound: with a schema and a context that fits it, no comparison is ever
/// unknown for a type reason; and a program with one ill-typed comparison is refused on
/// exactly that comparison's line. Both over seeded generated programs.
@Suite struct SoundnessTests {
    typealias Generator = DifferentialTests.Generator

    static let schema = """
        context {
          build      : enum(debug, alpha, beta, release)
          channel    : enum(debug, alpha, beta, release)
          platform   : enum(ios, android)
          country    : string
          userId     : string
          age        : int
          score      : double
          beta       : bool
          appVersion : version
          signup     : datetime
        }
        """
    static let builds = ["debug", "alpha", "beta", "release"]

    /// A well-typed comparison over the schema and the declarations before it.
    static func comparison(_ g: inout Generator, _ declared: Declared) -> String {
        func buildCase() -> String { g.chance(50) ? g.pick(builds) : "\"\(g.pick(builds))\"" }
        switch g.int(24) {
        case 0: return "build \(g.pick(["==", "!="])) \(buildCase())"
        case 1: return "\(g.pick(["build", "channel"])) \(g.pick(["in", "not in"])) [\(buildCase()), \(buildCase())]"
        case 2: return "build \(g.pick(["==", "!="])) channel"
        case 3: return "platform == \(g.chance(50) ? "ios" : "\"android\"")"
        case 4: return "country \(g.pick(["==", "!=", "<", ">="])) \"\(g.pick(["US", "FR", "M"]))\""
        case 5: return "country \(g.pick(["contains", "starts with", "ends with"])) \"\(g.pick(["U", "S", ""]))\""
        case 6: return "userId matches \"\(g.pick(["^u", "[0-9]$", "x"]))\""
        case 7: return "country \(g.pick(["in", "not in"])) [\"US\", \"CA\"]"
        case 8: return "age \(g.pick(["<", "<=", ">", ">=", "==", "!="])) \(g.pick(["18", "20.5", "65", "-1"]))"
        case 9: return "score \(g.pick(["<", ">="])) \(g.pick(["0.5", "2", "50%"]))"
        case 10: return "age \(g.pick(["<", "=="])) score"
        case 11: return g.pick(["beta", "not beta", "beta == true", "beta != false", "has(country)", "!has(age)"])
        case 12: return "appVersion \(g.pick(["<", ">=", "=="])) \(g.pick(["\"2.3.0\"", "2.10.1", "\"1.0.0-beta.1\""]))"
        case 13: return "signup \(g.pick(["<", ">="])) \"\(g.pick(["2026-01-01", "2025-06-30T12:00:00Z"]))\""
        case 14: return "now > \"2020-01-01\""
        case 15: return "rollout(\(g.pick(["userId", "build", "age", "userId ?? country"]))) < \(g.int(101))%"
        case 16: return "(age ?? \(g.int(40))) > 30"
        case 17: return "(build ?? \"\(g.pick(builds))\") == alpha"
        case 18 where !declared.bools.isEmpty: return (g.chance(30) ? "not " : "") + g.pick(declared.bools)
        case 19 where !declared.variants.isEmpty:
            return "\(g.pick(declared.variants)) \(g.pick(["==", "!="])) \(g.chance(50) ? "b" : "\"c\"")"
        case 20 where !declared.variants.isEmpty: return "\(g.pick(declared.variants)) in [a, \"c\"]"
        case 21 where !declared.ints.isEmpty: return "\(g.pick(declared.ints)) \(g.pick([">", "==", "<="])) \(g.int(50))"
        case 22 where !declared.strings.isEmpty: return "\(g.pick(declared.strings)) \(g.pick(["==", "starts with"])) \"h\""
        default: return "score > age"
        }
    }

    /// An ill-typed comparison (every one the checker must refuse).
    static func illTyped(_ g: inout Generator, _ declared: Declared) -> String {
        var choices = [
            "age == \"x\"", "country == build", "build == country", "build == platform", "build == \"ios\"",
            "build == \"alhpa\"", "platform in [\"ios\", \"web\"]", "build contains \"a\"", "build matches \"^a\"",
            "platform starts with \"i\"", "build < alpha", "beta > true", "appVersion == country", "score contains \"1\"",
            "(age ?? country) > 1", "signup > 5", "country == 5", "build in [debug, \"phone\"]", "beta == \"yes\"",
            "appVersion > \"banana\"", "(build ?? \"nightly\") == alpha", "rollout(score) < 10%", "age in [1, \"2\"]",
            "country < 3", "platform == beta",
        ]
        if let v = declared.variants.first { choices += ["\(v) == country", "\(v) == \"d\"", "\(v) == build", "\(v) in [a, \"z\"]"] }
        if let s = declared.strings.first { choices += ["\(s) == build", "build == \(s)"] }
        if let i = declared.ints.first { choices += ["\(i) == \"1\"", "\(i) contains \"1\""] }
        return g.pick(choices)
    }

    struct Declared {
        var bools: [String] = []
        var variants: [String] = []
        var ints: [String] = []
        var strings: [String] = []
    }

    static func condition(_ g: inout Generator, _ declared: Declared, depth: Int = 2) -> String {
        guard depth > 0, g.chance(40) else { return comparison(&g, declared) }
        let parts = (0..<(2 + g.int(3))).map { _ in condition(&g, declared, depth: depth - 1) }
        return "(" + parts.joined(separator: g.chance(50) ? " and " : " or ") + ")"
    }

    /// A well-typed file, one declaration a line; with `bad`, one rule on a line of its
    /// own carries an ill-typed comparison: the line is returned.
    static func program(_ g: inout Generator, bad: Bool) -> (String, Int?) {
        var lines = schema.split(separator: "\n").map(String.init)
        var declared = Declared()
        let count = 3 + g.int(6)
        let badAt = bad ? g.int(count) : -1
        var badLine: Int?
        for i in 0..<count {
            let name = "d\(i)"
            if i == badAt {
                let ill = illTyped(&g, declared)
                let text = g.chance(50) ? "\(comparison(&g, declared)) and \(ill)" : ill
                lines.append("flag \(name) { enabled when \(text) }")
                badLine = lines.count
                declared.bools.append(name)
                continue
            }
            switch g.int(5) {
            case 0:
                lines.append("segment \(name) = \(condition(&g, declared))")
                declared.bools.append(name)
            case 1:
                lines.append("flag \(name) { enabled when \(condition(&g, declared)); disabled when \(condition(&g, declared)) }")
                declared.bools.append(name)
            case 2:
                lines.append("variant \(name) [a, b, c] { b when \(condition(&g, declared)); split(userId) { a: 50%, c: 50% } }")
                declared.variants.append(name)
            case 3:
                lines.append("value \(name): int = 3 { 7 when \(condition(&g, declared)) }")
                declared.ints.append(name)
            default:
                lines.append("value \(name): string = \"hi\" { \"ho\" when \(condition(&g, declared)) }")
                declared.strings.append(name)
            }
        }
        return (lines.joined(separator: "\n"), badLine)
    }

    /// A context that fits the schema, every attribute present.
    static func fittingContext(_ g: inout Generator) -> EvaluationContext {
        [
            "build": .string(g.pick(builds)), "channel": .string(g.pick(builds)), "platform": .string(g.pick(["ios", "android"])),
            "country": .string(g.pick(["US", "FR", "CA", "MX"])), "userId": .string("u\(g.int(1000))"), "age": .int(g.int(90)),
            "score": g.chance(50) ? .double(Double(g.int(100)) / 10) : .int(g.int(5)), "beta": .bool(g.chance(50)),
            "appVersion": .string(g.pick(["2.3.0", "1.0.0-beta.1", "2.10.1"])),
            "signup": .string(g.pick(["2026-01-01", "2025-06-30T12:00:00Z"])),
        ]
    }

    static func unknowns(_ trace: ExpressionTrace) -> [String] {
        (trace.result == "unknown" ? ["\(trace.text): \(trace.note ?? "")"] : []) + trace.children.flatMap(unknowns)
    }

    @Test(arguments: 0..<4)
    func wellTypedProgramsAreNeverUnknownOnAFittingContext(_ batch: Int) async throws {
        try await offThePool(computing: true) {
            var g = Generator(state: 0x5EED_0000 &+ UInt64(batch))
            for _ in 0..<250 {
                let (source, _) = Self.program(&g, bad: false)
                let rules = try RuleSet(source: source)
                for _ in 0..<3 {
                    let context = Self.fittingContext(&g)
                    for d in rules.declarations {
                        let e = try #require(rules.explain(d.name, in: context))
                        let traces = e.rules.compactMap(\.condition) + [e.condition].compactMap { $0 }
                        let unknown = traces.flatMap(Self.unknowns)
                        #expect(unknown.isEmpty, "\(d.name): \(unknown)\n\(source)\n\(context)")
                        #expect(e.resolution.reason != .error)
                    }
                }
            }
        }
    }

    @Test(arguments: 0..<4)
    func oneIllTypedComparisonIsReportedOnItsLine(_ batch: Int) async throws {
        try await offThePool(computing: true) {
            var g = Generator(state: 0xBAD_0000 &+ UInt64(batch))
            for _ in 0..<250 {
                let (source, line) = Self.program(&g, bad: true)
                let badLine = try #require(line)
                do throws(RuleSetError) {
                    _ = try RuleSet(source: source)
                    Issue.record("accepted an ill-typed comparison on line \(badLine)\n\(source)")
                } catch {
                    let lines = Set(error.errors.map(\.range.start.line))
                    #expect(lines == [badLine], "errors on \(lines), expected \(badLine)\n\(error)")
                }
            }
        }
    }
}
