import Testing

@testable import FlagRules

/// The explainer is an evaluator of its own: on seeded random programs (every operator,
/// `??`, literal lists, list attributes, `lower`, `version`, networks, ramps, segments and declarations read as operands, splits, disabled declarations,
/// paths into an object attribute) and random contexts (absent and mistyped values among
/// them; objects absent, partial, mistyped or not objects at all), its resolutions must equal
/// the compiled closures', by name on a dictionary context and by handle on a prepared one.
@Suite struct DifferentialTests {
    struct Generator {
        var state: UInt64

        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }

        mutating func int(_ n: Int) -> Int { Int(next() % UInt64(n)) }
        mutating func pick<T>(_ xs: [T]) -> T { xs[int(xs.count)] }
        mutating func chance(_ percent: Int) -> Bool { int(100) < percent }
    }

    static let schema = """
        context {
          build   : enum(debug, alpha, beta, release)
          userId  : string
          country : string
          age     : int
          score   : double
          beta    : bool
          appVersion : version
          groups  : [string]
          roles   : [enum(admin, editor, viewer)]
          ids     : [int]
          clientIP : ip
          org     : { id : string, plan : enum(free, team, enterprise), seats : int, billing : { country : string } }
        }
        """
    static let countries = ["US", "CA", "FR", "DE", "JP"]

    /// A random condition over the schema and the declarations before `index` (bools:
    /// flags and segments), `depth` levels deep at most.
    static func condition(_ g: inout Generator, depth: Int, bools: [String], ints: [String] = [], variants: [String] = [], salt: String)
        -> String
    {
        if depth > 0, g.chance(45) {
            let n = 2 + g.int(g.chance(10) ? 12 : 3)
            let op = g.pick(["and", "or", "&&", "||"])
            let parts = (0..<n).map { _ in condition(&g, depth: depth - 1, bools: bools, ints: ints, variants: variants, salt: salt) }
            let joined = parts.joined(separator: " \(op) ")
            return g.chance(30) ? "not (\(joined))" : "(\(joined))"
        }
        switch g.int(24) {
        case 23:
            return g.pick([
                "org.plan \(g.pick(["in", "not in"])) [\(g.pick(["free", "team", "enterprise"])), \(g.pick(["team", "enterprise"]))]",
                "org.seats \(g.pick(["<", ">=", "=="])) \(g.int(12))", "has(org.plan)", "has(org)", "!has(org.billing.country)",
                "org.billing.country \(g.pick(["==", "!="])) \"\(g.pick(countries))\"", "rollout(org.id) < \(g.int(101))%",
                "(org.seats ?? \(g.int(10))) > \(g.int(10))", "org.billing.country == country", "lower(org.billing.country) == \"fr\"",
            ])
        case 16:
            let list = (0..<g.int(4)).map { _ in "\"\(g.pick(["qa", "staff", "dev", "ops"]))\"" }
            return "groups \(g.pick(["contains any", "contains all"])) [\(list.joined(separator: ", "))]"
        case 17: return "groups contains \"\(g.pick(["qa", "staff", "x"]))\""
        case 18:
            let list = (0..<(1 + g.int(3))).map { _ in g.pick(["admin", "editor", "viewer"]) }
            return "roles \(g.pick(["contains any", "contains all"])) [\(list.joined(separator: ", "))]"
        case 19: return "count(\(g.pick(["groups", "ids", "roles"]))) \(g.pick(["<", ">=", "=="])) \(g.int(4))"
        case 20:
            let blocks = (0..<(1 + g.int(4))).map { _ in
                g.pick(["\"10.0.0.0/8\"", "\"10.1.2.3\"", "\"2001:db8::/32\"", "\"192.168.0.0/16\"", "\"::1\""])
            }
            return "clientIP \(g.pick(["in", "not in"])) [\(blocks.joined(separator: ", "))]"
        case 21: return "lower(country) \(g.pick(["==", "starts with"])) \"\(g.pick(["us", "fr", "u"]))\""
        case 22:
            return "rollout(userId) < ramp(\"2026-12-01\", \"2026-12-15\", \(g.int(50))%, \(g.int(101))%) or ids contains \(g.int(5))"
                + " or clientIP == \"\(g.pick(["10.1.2.3", "::ffff:10.1.2.3", "::1"]))\""
        case 14 where !ints.isEmpty: return "\(g.pick(ints)) \(g.pick(["<", ">=", "=="])) \(g.int(60))"
        case 15 where !variants.isEmpty: return "\(g.pick(variants)) \(g.pick(["==", "!="])) \(g.pick(["a", "b", "c"]))"
        case 0: return "build \(g.pick(["==", "!="])) \(g.pick(["debug", "alpha", "beta", "release"]))"
        case 1:
            let cases = (0..<(1 + g.int(3))).map { _ in g.pick(["debug", "alpha", "beta", "release"]) }
            return "build \(g.pick(["in", "not in"])) [\(cases.joined(separator: ", "))]"
        case 2:
            let size = g.chance(20) ? 20 + g.int(40) : 1 + g.int(4)
            let list = (0..<size).map { _ in "\"\(g.chance(70) ? g.pick(countries) : "X\(g.int(30))")\"" }
            return "country \(g.pick(["in", "not in"])) [\(list.joined(separator: ", "))]"
        case 3: return "age \(g.pick(["<", "<=", ">", ">=", "==", "!="])) \(g.int(80))"
        case 4: return "score \(g.pick(["<", ">="])) \(g.pick(["0.5", "2", "50%", "-1.5"]))"
        case 5: return g.pick(["beta", "not beta", "beta == true", "has(country)", "has(age)", "!has(userId)"])
        case 6: return "rollout(\(g.pick(["userId", "userId ?? country", "age", "build"]))) \(g.pick(["<", ">=", "<="])) \(g.int(101))%"
        case 7: return "rollout(userId, \"\(salt)x\") < \(g.int(100))%"
        case 8:
            let subject = g.pick(["appVersion", "appVersion", "version(appVersion)", "version(country)"])
            return "\(subject) \(g.pick(["<", ">=", "==", ">"])) \"\(g.int(3)).\(g.int(12)).\(g.int(3))\""
        case 9: return "country \(g.pick(["starts with", "ends with", "contains"])) \"\(g.pick(["U", "S", "A", "", "FR"]))\""
        case 10: return "country matches \"\(g.pick(["^[A-D]", "S$", "J.", "^(US|CA)$"]))\""
        case 11: return "(age ?? \(g.int(50))) > \(g.int(50))"
        case 12: return bools.isEmpty ? "true" : (g.chance(30) ? "not " : "") + g.pick(bools)
        default: return g.pick(["true", "false", "age > 5 or true", "false and beta"])
        }
    }

    /// A random file of a few declarations, each reading only those before it.
    static func program(_ g: inout Generator) -> String {
        var lines = [schema]
        var bools: [String] = []
        var values: [String] = []
        var variantNames: [String] = []
        for i in 0..<(2 + g.int(6)) {
            let name = "d\(i)"
            let disabled = g.chance(10) ? "@disabled " : ""
            func rules(_ outcome: (inout Generator) -> String) -> String {
                (0..<g.int(4)).map { _ in
                    "  \(outcome(&g)) when \(condition(&g, depth: 3, bools: bools, ints: values, variants: variantNames, salt: name))"
                }.joined(separator: "\n")
            }
            switch g.int(5) {
            case 0:
                lines.append("segment \(name) = \(condition(&g, depth: 3, bools: bools, ints: values, variants: variantNames, salt: name))")
                bools.append(name)
            case 1:
                let body = rules { g in g.pick(["enabled", "disabled"]) }
                lines.append("\(disabled)flag \(name)\(g.chance(30) ? " = true" : "") {\n\(body)\n}")
                bools.append(name)
            case 2:
                var body = rules { g in g.pick(["a", "b", "c"]) }
                if g.chance(50) {
                    let a = g.int(101), b = g.int(101 - a)
                    body +=
                        "\n  split(\(g.pick(["userId", "age", "country", "org.id"]))) { a: \(a)%, b: \(b)%, c: \(100 - a - b)% }"
                        + (g.chance(50)
                            ? " when \(condition(&g, depth: 2, bools: bools, ints: values, variants: variantNames, salt: name))" : "")
                }
                lines.append("\(disabled)variant \(name) [a, b, c] = \(g.pick(["a", "b", "c"])) {\n\(body)\n}")
                variantNames.append(name)
            default:
                let body = rules { g in String(g.int(100)) }
                lines.append("\(disabled)value \(name): int = \(g.int(10)) {\n\(body)\n}")
                values.append(name)
            }
        }
        return lines.joined(separator: "\n")
    }

    static func context(_ g: inout Generator) -> EvaluationContext {
        var c = EvaluationContext()
        if g.chance(85) { c["build"] = g.chance(90) ? .string(g.pick(["debug", "alpha", "beta", "release"])) : "nightly" }
        if g.chance(85) { c["userId"] = g.chance(90) ? .string("user-\(g.int(1000))") : .int(g.int(100)) }
        if g.chance(80) { c["country"] = g.chance(90) ? .string(g.pick(countries + ["X3", "GB"])) : .bool(true) }
        if g.chance(80) { c["age"] = g.chance(90) ? .int(g.int(90)) : "old" }
        if g.chance(70) { c["score"] = g.chance(50) ? .double(Double(g.int(100)) / 10) : .int(g.int(3)) }
        if g.chance(70) { c["beta"] = g.chance(90) ? .bool(g.chance(50)) : "yes" }
        if g.chance(70) { c["appVersion"] = g.chance(90) ? .string("\(g.int(3)).\(g.int(12)).\(g.int(3))") : "banana" }
        if g.chance(75) {
            let groups = (0..<g.int(4)).map { _ in Value.string(g.pick(["qa", "staff", "dev", "ops", "QA"])) }
            c["groups"] = g.chance(90) ? .list(groups) : g.pick([.list(groups + [1]), "qa", .list(groups + [.list([])])])
        }
        if g.chance(75) {
            let roles = (0..<g.int(3)).map { _ in Value.string(g.pick(["admin", "editor", "viewer"])) }
            c["roles"] = g.chance(90) ? .list(roles) : .list(roles + ["root"])
        }
        if g.chance(60) { c["ids"] = .list((0..<g.int(4)).map { _ in .int(g.int(6)) }) }
        if g.chance(75) {
            c["clientIP"] = .string(
                g.pick(["10.1.2.3", "10.200.0.1", "192.168.4.4", "2001:db8::7", "::1", "::ffff:10.9.9.9", "8.8.8.8", "010.1.1.1", "nope"]))
        }
        if g.chance(50) { c["now"] = .string(g.pick(["2026-11-01", "2026-12-05T06:00:00Z", "2027-01-01"])) }
        if g.chance(80) {
            var org: [String: Value] = [:]
            if g.chance(80) { org["id"] = g.chance(90) ? .string("org-\(g.int(500))") : .int(g.int(50)) }
            if g.chance(75) { org["plan"] = g.chance(90) ? .string(g.pick(["free", "team", "enterprise"])) : "gold" }
            if g.chance(75) { org["seats"] = g.chance(90) ? .int(g.int(15)) : "many" }
            if g.chance(70) {
                org["billing"] = g.pick([
                    .object(["country": .string(g.pick(countries + ["fr"]))]), .object([:]), "FR", .object(["country": 3]),
                ])
            }
            c["org"] = g.chance(90) ? .object(org) : g.pick(["acme", 7, .list(["a"])])
        }
        return c
    }

    @Test(arguments: 0..<8)
    func explainerAndClosuresAgreeOnRandomPrograms(_ batch: Int) async throws {
        await offThePool(computing: true) {
            var g = Generator(state: UInt64(batch) &* 1_000_003)
            var programs = 0
            for _ in 0..<50 {
                let source = Self.program(&g)
                let rules: RuleSet
                do {
                    rules = try RuleSet(source: source)
                } catch {
                    Issue.record("generated program does not load: \(error)\n\(source)")
                    continue
                }
                programs += 1
                for _ in 0..<12 {
                    let context = Self.context(&g)
                    let prepared = rules.prepare(context)
                    for d in rules.declarations {
                        let compiled = rules.evaluate(d.name, in: context)
                        let explained = rules.explain(d.name, in: context)?.resolution
                        #expect(explained == compiled, "\(d.name) in \(context)\n\(source)")
                        #expect(rules.evaluate(rules.handle(d.name), in: prepared) == compiled, "\(d.name) prepared")
                    }
                }
            }
            #expect(programs == 50)
        }
    }
}
