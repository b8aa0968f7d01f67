import Testing

@testable import FlagRules

/// The truth of an expression, observed through resolutions: `EXPR` and `not (EXPR)` are
/// both tried; a rule only matches on true, so unknown matches neither.
func truth(
    of expression: String, in context: EvaluationContext, schema: String? = nil,
    sourceLocation: SourceLocation_ = #_sourceLocation
) throws -> Truth {
    let header = schema.map { "context { \($0) }\n" } ?? ""
    let rules = try RuleSet(
        source: header + """
            flag yes { enabled when \(expression) }
            flag no { enabled when not (\(expression)) }
            """)
    // The slotted path (a prepared context, handles) must agree with the dictionary path.
    let prepared = rules.prepare(context)
    let slotted = (rules.isEnabled(rules.handle("yes"), in: prepared), rules.isEnabled(rules.handle("no"), in: prepared))
    let plain = (rules.isEnabled("yes", in: context), rules.isEnabled("no", in: context))
    if slotted != plain {
        Issue.record("prepared context gave \(slotted), dictionary \(plain)", sourceLocation: sourceLocation)
    }
    // isEnabled (the on/off chain) must agree with the full resolution.
    let resolved = (rules.evaluate("yes", in: context).value == .bool(true), rules.evaluate("no", in: context).value == .bool(true))
    if resolved != plain {
        Issue.record("evaluate gave \(resolved), isEnabled \(plain)", sourceLocation: sourceLocation)
    }
    switch plain {
    case (true, false): return .yes
    case (false, true): return .no
    case (false, false): return .unknown
    case (true, true):
        Issue.record("both EXPR and not EXPR matched", sourceLocation: sourceLocation)
        return .unknown
    }
}

typealias SourceLocation_ = Testing.SourceLocation

let schema = """
    build: enum(debug, alpha, beta, release); country: string; email: string; age: int; score: double
    beta: bool; appVersion: version; signup: datetime
    """

@Suite struct OperatorTests {
    /// (expression, context, expected truth) against the schema above.
    static let typed: [(String, EvaluationContext, Truth)] = [
        // == and != : present, absent, mistyped
        (#"country == "US""#, ["country": "US"], .yes),
        (#"country == "US""#, ["country": "FR"], .no),
        (#"country == "US""#, [:], .unknown),
        (#"country == "US""#, ["country": 5], .unknown),
        (#"country != "US""#, ["country": "FR"], .yes),
        (#"country != "US""#, ["country": "US"], .no),
        (#"country != "US""#, [:], .unknown),
        (#"country != "US""#, ["country": true], .unknown),
        (#"country == "\u{E9}""#, ["country": "e\u{301}"], .no),  // no normalisation
        ("age == 18.0", ["age": 18], .yes),
        ("build == beta", ["build": "beta", "beta": false], .yes),  // cases win over attributes
        ("build == alpha", ["build": "prod"], .unknown),  // outside the enum: mistyped
        // ordering
        ("age < 18", ["age": 17], .yes),
        ("age < 18", ["age": 18], .no),
        ("age < 18", [:], .unknown),
        ("age < 18", ["age": "17"], .unknown),
        ("age < 18", ["age": 17.0], .unknown),  // 17.0 does not fit an int
        ("age <= 18", ["age": 18], .yes),
        ("age <= 18", ["age": 19], .no),
        ("age > 18", ["age": 19], .yes),
        ("age > 18", ["age": 18], .no),
        ("age >= 18", ["age": 18], .yes),
        ("age >= 18", ["age": 17], .no),
        ("age >= 18", [:], .unknown),
        ("score > 0.5", ["score": 1], .yes),  // an int fits a double
        ("score > 0.5", ["score": 0.5], .no),
        ("score > 50%", ["score": 50.5], .yes),
        ("score > 0.5", ["score": "1"], .unknown),
        (#"country < "b""#, ["country": "a"], .yes),
        (#"country < "b""#, ["country": "B"], .yes),  // by scalar value: "B" < "b"
        (#"country < "b""#, ["country": "ba"], .no),
        (#"appVersion >= "2.3.0""#, ["appVersion": "2.3.0"], .yes),
        (#"appVersion >= "2.3.0""#, ["appVersion": "2.10.0"], .yes),
        (#"appVersion >= "2.3.0""#, ["appVersion": "2.2.9"], .no),
        (#"appVersion >= "2.3.0""#, ["appVersion": "2.3"], .yes),  // a short app version: 2.3.0
        (#"appVersion >= "2.3.0""#, ["appVersion": "2"], .no),
        (#"appVersion >= "2.3.0""#, ["appVersion": "2.3.beta"], .unknown),
        (#"appVersion >= "2.3.0""#, ["appVersion": "2.3-beta"], .no),
        (#"appVersion < "3.2""#, ["appVersion": "3.1.9"], .yes),
        (#"appVersion >= "2.3.0""#, [:], .unknown),
        (#"signup < "2026-01-01""#, ["signup": "2025-06-01T12:00:00Z"], .yes),
        (#"signup < "2026-01-01""#, ["signup": "2026-06-01"], .no),
        (#"signup < "2026-01-01""#, ["signup": "June"], .unknown),
        // in / not in
        ("build in [debug, alpha]", ["build": "alpha"], .yes),
        ("build in [debug, alpha]", ["build": "release"], .no),
        ("build in [debug, alpha]", [:], .unknown),
        ("build in [debug, alpha]", ["build": "prod"], .unknown),
        ("build in [debug, alpha]", ["build": 1], .unknown),
        ("build not in [debug, alpha]", ["build": "release"], .yes),
        ("build not in [debug, alpha]", ["build": "debug"], .no),
        ("build not in [debug, alpha]", [:], .unknown),
        (#"country in ["US", "CA"]"#, ["country": "CA"], .yes),
        (#"country in ["US", "CA"]"#, ["country": "ca"], .no),
        (#"country in ["US", "CA"]"#, ["country": 1], .unknown),
        (#"country in ["US", "CA"]"#, [:], .unknown),
        (#"country not in ["US", "CA"]"#, ["country": "FR"], .yes),
        (#"country not in ["US", "CA"]"#, ["country": "US"], .no),
        (#"country not in ["US", "CA"]"#, ["country": true], .unknown),
        (#"email in ["someone.long@example.com", "b@c"]"#, ["email": "someone.long@example.com"], .yes),
        (#"email in ["someone.long@example.com", "b@c"]"#, ["email": "someone.long@example.org"], .no),
        ("country in []", ["country": "US"], .no),
        ("country not in []", ["country": "US"], .yes),
        ("country in []", [:], .unknown),
        ("age in [1, 2.0, 3]", ["age": 2], .yes),
        ("age in [1, 2, 3]", ["age": 4], .no),
        ("age in [1, 2, 3]", ["age": "2"], .unknown),
        (#"appVersion in ["1.0.0", "2.0.0"]"#, ["appVersion": "2.0.0+build.7"], .yes),
        // string operators
        (#"email contains "@""#, ["email": "a@b"], .yes),
        (#"email contains "@""#, ["email": "ab"], .no),
        (#"email contains "@""#, [:], .unknown),
        (#"email contains "@""#, ["email": 1], .unknown),
        (#"email contains """#, ["email": "x"], .yes),
        (#"email starts with "qa""#, ["email": "qa@x"], .yes),
        (#"email starts with "qa""#, ["email": "dev@x"], .no),
        (#"email starts with "qa""#, [:], .unknown),
        (#"email ends with "@example.com""#, ["email": "a@example.com"], .yes),
        (#"email ends with "@example.com""#, ["email": "a@example.co"], .no),
        (#"email ends with "@example.com""#, ["email": false], .unknown),
        (#"email matches "^qa\+""#.replacingOccurrences(of: "\\+", with: "\\\\+"), ["email": "qa+1@x"], .yes),
        (#"email matches "^qa""#, ["email": "dev"], .no),
        (#"email matches "^qa""#, [:], .unknown),
        // has
        ("has(email)", ["email": "x"], .yes),
        ("has(email)", [:], .no),
        ("has(email)", ["email": 5], .yes),  // present even when mistyped
        // ??
        (#"(country ?? "US") == "US""#, [:], .yes),
        (#"(country ?? "US") == "US""#, ["country": "FR"], .no),
        (#"(country ?? "US") == "US""#, ["country": 5], .yes),  // mistyped is not known
        (#"(country ?? email) == "x""#, ["email": "x"], .yes),
        (#"(country ?? email) == "x""#, [:], .unknown),
        // bools and three-valued logic
        ("beta", ["beta": true], .yes),
        ("beta", ["beta": false], .no),
        ("beta", [:], .unknown),
        ("beta", ["beta": "yes"], .unknown),
        ("not beta", [:], .unknown),
        ("!beta", ["beta": false], .yes),
        ("beta and age > 1", ["beta": true], .unknown),
        ("beta and age > 1", ["beta": false], .no),  // unknown and false is false
        ("age > 1 and beta", ["beta": false], .no),
        ("beta && age > 1", ["beta": true, "age": 2], .yes),
        ("beta or age > 1", ["beta": true], .yes),  // unknown or true is true
        ("age > 1 or beta", ["beta": true], .yes),
        ("beta or age > 1", ["beta": false], .unknown),
        ("beta || age > 1", ["beta": false, "age": 0], .no),
        ("not (beta and age > 1)", ["beta": false], .yes),
        ("!beta == true", ["beta": true], .no),  // ! binds looser: !(beta == true)
        // rollout
        ("rollout(email) < 100%", ["email": "a"], .yes),
        ("rollout(email) < 0%", ["email": "a"], .no),
        ("rollout(email) < 100%", [:], .unknown),
        ("rollout(email ?? country) < 100%", ["country": "x"], .yes),
        ("rollout(age) < 100%", ["age": 3], .yes),
        ("rollout(build) < 100%", ["build": "alpha"], .yes),
        ("rollout(build) < 100%", ["build": "other"], .unknown),
        // constants fold
        ("true", [:], .yes),
        ("false or beta", ["beta": true], .yes),
        ("1 < 2", [:], .yes),
        (#""a" in ["a", "b"]"#, [:], .yes),
    ]

    @Test(arguments: typed)
    func withSchema(_ expression: String, _ context: EvaluationContext, _ expected: Truth) throws {
        #expect(try truth(of: expression, in: context, schema: schema) == expected)
    }

    /// Without a schema: attributes are dynamic, bare names on the right are symbols.
    static let dynamic: [(String, EvaluationContext, Truth)] = [
        ("build in [debug, alpha]", ["build": "alpha"], .yes),
        ("build in [debug, alpha]", ["build": "beta"], .no),
        ("build in [debug, alpha]", [:], .unknown),
        ("build in [debug, alpha]", ["build": 1], .unknown),
        ("build == alpha", ["build": "alpha"], .yes),
        ("build != alpha", ["build": "beta"], .yes),
        ("age > 18", ["age": 20], .yes),
        ("age > 18", ["age": 20.5], .yes),
        ("age > 18", ["age": "20"], .unknown),
        ("age > 18", [:], .unknown),
        ("age == 18", ["age": "18"], .unknown),
        ("age == 18", ["age": 18.0], .yes),
        (#"appVersion >= "2.10.0""#, ["appVersion": "2.9.0"], .no),
        (#"appVersion >= "2.10.0""#, ["appVersion": "2.10.1"], .yes),
        (#"appVersion >= "2.10.0""#, ["appVersion": "banana"], .unknown),
        (#"appVersion >= "2.10.0""#, ["appVersion": 3], .unknown),
        (#"signup >= "2026-01-01""#, ["signup": "2026-02-01"], .yes),
        (#"name < "b""#, ["name": "a"], .yes),
        (#"email ends with "@x.io""#, ["email": "a@x.io"], .yes),
        (#"email ends with "@x.io""#, ["email": 5], .unknown),
        ("beta", ["beta": true], .yes),
        ("beta", ["beta": 1], .unknown),
        ("has(beta)", ["beta": 1], .yes),
        ("mode == fast", ["mode": "fast"], .yes),
        ("rollout(userId) < 100%", ["userId": 1.5], .unknown),
        ("rollout(userId) < 100%", ["userId": true], .unknown),
        ("x in []", ["x": 1], .no),
        ("x not in []", ["x": 1], .yes),
    ]

    @Test(arguments: dynamic)
    func withoutSchema(_ expression: String, _ context: EvaluationContext, _ expected: Truth) throws {
        #expect(try truth(of: expression, in: context) == expected)
    }

    /// Constant folding's shapes: constant operands of `and`/`or` are dropped or decide the
    /// whole, pure comparisons become constants, and a condition with nothing to fold is
    /// left as it is (`folded` answers nil, so nothing is rebuilt).
    @Test(arguments: [
        ("true and beta", "beta"),
        ("beta and true", "beta"),
        ("false and beta", "false"),
        ("beta or (1 > 2) or age > 1", "(beta or age>1)"),
        ("beta or (1 < 2)", "true"),
        ("true and (false or true)", "true"),
        ("beta and (age > 1 or true)", "beta"),
        ("beta and age > 1", "unchanged"),
        ("not (1 > 2)", "true"),
    ])
    func folding(_ expression: String, _ expected: String) throws {
        let rules = try RuleSet(source: "context { beta: bool; age: int }\nsegment s = \(expression)\n")
        let condition = try #require(rules.checked.declarations[0].condition)
        let compiler = Compiler(checked: rules.checked, coercions: [])
        func shape(_ b: Bound) -> String {
            switch b.kind {
            case .constant(let v): return "\(v)"
            case .attribute(let name, _, _): return name
            case .and(let xs): return "(" + xs.map(shape).joined(separator: " and ") + ")"
            case .or(let xs): return "(" + xs.map(shape).joined(separator: " or ") + ")"
            case .compare(let op, let l, let r): return shape(l) + op.rawValue + shape(r)
            default: return "?"
            }
        }
        let folded = compiler.folded(condition)
        #expect(folded.map(shape) ?? "unchanged" == expected)
        #expect(shape(compiler.fold(condition)) == shape(folded ?? condition))
    }
}
