import Foundation
import Testing

@testable import FlagRules
@testable import FlagRulesTooling

/// A split entry written `fallback`: the caller's default for the units in its share, by
/// every path that evaluates, explains, formats, checks or lints it.
@Suite struct SplitFallbackTests {
    static let source = """
        context { userId: string }
        variant color [red, fallback] = red {
          split(userId, "colors") { red: 50%, fallback: 30%, `fallback`: 20% }
        }
        value size: int = 1 {
          split(userId, "sizes", flagd) { 10: 1, fallback: 1 }
        }

        """

    static let rules = try! RuleSet(source: source)

    /// Each unit's entry, as the bucketing places it (Unleash's for `color`, flagd's for
    /// `size`), read from the split's shares: evaluation, the explanation and `isFallback`
    /// agree on every unit.
    @Test func eachUnitGetsItsEntry() throws {
        var fellColor = 0, fellSize = 0, named = 0
        for n in 0..<400 {
            let context: EvaluationContext = ["userId": .string("user-\(n)")]
            let color = Self.rules.evaluate("color", in: context, default: "blue")
            let size = Self.rules.evaluate("size", in: context, default: 99)
            if color.isFallback {
                fellColor += 1
                #expect(color.value == "blue" && color.variant == nil && color.reason == .split && color.rule == 1)
            } else {
                #expect(color.reason == .split && (color.variant == "red" || color.variant == "fallback"))
                if color.variant == "fallback" { named += 1 }
            }
            if size.isFallback {
                fellSize += 1
                #expect(size.value == 99)
            } else {
                #expect(size.value == 10 && size.reason == .split)
            }
            for name in ["color", "size"] {
                #expect(Self.rules.explain(name, in: context)?.resolution == Self.rules.evaluate(name, in: context), "\(name) \(n)")
            }
            // Without a caller's default: the declaration's.
            let bare = Self.rules.evaluate("color", in: context)
            #expect(bare.isFallback == color.isFallback && (!bare.isFallback || bare.value == "red"))
        }
        // 30% and 50% of 400 units, within what chance allows.
        #expect((80...160).contains(fellColor) && (40...120).contains(named), "\(fellColor) \(named)")
        #expect((150...250).contains(fellSize), "\(fellSize)")
        // No unit: the split chooses nothing, and the default is given.
        #expect(!Self.rules.evaluate("color", in: [:], default: "blue").isFallback)
    }

    /// The explanation names the entry `fallback`; the declaration's shares mark it.
    @Test func theToolsShowIt() throws {
        let unit = try #require(
            (0..<200).map { "user-\($0)" }.first { Self.rules.evaluate("size", in: ["userId": .string($0)]).isFallback })
        let text = try #require(Self.rules.explain("size", in: ["userId": .string(unit)])).text
        #expect(text.contains("→ fallback"), "\(text)")
        let info = try #require(Self.rules.declarations.first { $0.name == "size" })
        let shares = info.json["splits"]?.elements?.first?["shares"]?.elements ?? []
        #expect(shares.count == 2 && shares[1]["fallback"] == .bool(true) && shares[1]["outcome"] == nil)
        #expect(shares[0]["outcome"] == .int(10))
    }

    /// `flags fmt` writes the entry back bare and the variant of that name in backticks.
    @Test func formattingKeepsTheMeaning() throws {
        let formatted = try FlagsFormatter.format(Self.source)
        #expect(formatted.contains("{ red: 50%, fallback: 30%, `fallback`: 20% }"), "\(formatted)")
        #expect(try FlagsFormatter.format(formatted) == formatted)
        let again = try RuleSet(source: formatted)
        for n in 0..<50 {
            let context: EvaluationContext = ["userId": .string("u\(n)")]
            let a = again.evaluate("color", in: context, default: "x"), b = Self.rules.evaluate("color", in: context, default: "x")
            #expect(a.value == b.value && a.variant == b.variant && a.isFallback == b.isFallback)
        }
    }

    /// Errors and warnings: `fallback` twice, a bare `fallback` beside a variant of that
    /// name, and a zero weight named as `fallback`.
    @Test func checksAndLints() throws {
        let twice = #expect(throws: RuleSetError.self) {
            try RuleSet(source: "value v: int = 1 { split(u) { fallback: 50%, fallback: 50% } }")
        }
        #expect(twice?.errors.map(\.message) == ["fallback appears twice in the split"])
        #expect(
            Self.rules.warnings.map(\.message) == ["'fallback' here gives the caller's default, not the variant 'fallback'"])
        let lints = try RuleSet(source: "context { u: string }\nvalue v: int = 1 { split(u) { 2: 1, fallback: 0 } }\n").lint()
        #expect(lints.contains { $0.code == "FR103" && $0.message.hasPrefix("'fallback' has weight 0") }, "\(lints)")
    }
}
