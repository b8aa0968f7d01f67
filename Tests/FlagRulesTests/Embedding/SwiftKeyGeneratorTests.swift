import FlagRulesKeys
import Testing

@testable import FlagRules
@testable import FlagRulesTooling

@Suite struct SwiftKeyGeneratorTests {
    @Test func namesAndLiterals() {
        #expect(SwiftKeyGenerator.namespace(forFile: "examples/app.flags") == "AppFlags")
        #expect(SwiftKeyGenerator.namespace(forFile: "my-service_v2.flags") == "MyServiceV2Flags")
        #expect(SwiftKeyGenerator.namespace(forFile: "2024.flags") == "Rules2024Flags")
        #expect(SwiftKeyGenerator.identifier("default") == "`default`" && SwiftKeyGenerator.identifier("oneStep") == "`oneStep`")
        #expect(SwiftKeyGenerator.typeName("type") == "Type" && SwiftKeyGenerator.typeName("swift") == "SwiftVariant")
        #expect(SwiftKeyGenerator.typeName("flagRules") == "FlagRulesVariant")
        #expect(SwiftKeyGenerator.literal("a \"b\" \\ c\n\u{1}") == #""a \"b\" \\ c\n\u{1}""#)
    }

    @Test func docCommentsSurviveQuotesBackslashesAndLongLines() throws {
        let long = String(repeating: "word ", count: 40).trimmingCharacters(in: .whitespaces)
        let doc = "Says \"\"\" and C:\\path.\n\n" + long
        let literal = SwiftKeyGenerator.multilineLiteral(doc, indent: "")
        #expect(literal.split(separator: "\n").allSatisfy { $0.count <= 100 })
        #expect(literal.contains(#"Says \"""#) && literal.contains(#"C:\\path."#))
        #expect(literal.contains("\\\n"))  // a long line wrapped with a continuation
        let rules = try RuleSet(source: "/// \(doc.replacingOccurrences(of: "\n", with: "\n/// "))\nflag f = true\n")
        let swift = try SwiftKeyGenerator(namespace: "K").generate(keys(rules), fileName: "k.flags")
        #expect(swift.contains("public static let `f` = FlagRules.FlagKey<Swift.Bool>("))
    }

    @Test func swiftsOwnNamesAreQualifiedAndEscaped() throws {
        let rules = try RuleSet(source: "variant string [a, b] = a\nvariant type [self, Type] = self\n@disabled flag bool = true\n")
        let swift = try SwiftKeyGenerator(namespace: "K").generate(keys(rules), fileName: "k.flags")
        #expect(swift.contains("enum `String`: Swift.String, FlagRules.FlagVariant, Swift.CaseIterable, Swift.Sendable"))
        #expect(swift.contains("static let `type` = FlagRules.FlagKey<Self.`Type`>("))
        #expect(swift.contains("case `self`") && swift.contains("case `Type`"))
        #expect(swift.contains("flag: \"bool\", default: false"))  // a kill switch is off
        #expect(swift.contains("Self.`string`.erased"))
    }

    @Test func collidingNamesAreRefused() throws {
        let rules = try RuleSet(source: "flag allKeys = true\n")
        #expect(throws: SwiftKeyGenerator.GenerationError.self) {
            try SwiftKeyGenerator(namespace: "K").generate(keys(rules), fileName: "k.flags")
        }
        // Two spellings with one Swift name, as variants or as declarations.
        for source in ["variant v [`variant-a`, variantA] = variantA", "flag `dark-mode`\nflag darkMode"] {
            let clash = try RuleSet(source: source)
            #expect(throws: SwiftKeyGenerator.GenerationError.self) {
                try SwiftKeyGenerator(namespace: "K").generate(keys(clash), fileName: "k.flags")
            }
        }
        let twoSpellings = try RuleSet(source: "variant v [`variant-a`, variantA] = variantA")
        let error = #expect(throws: SwiftKeyGenerator.GenerationError.self) {
            try SwiftKeyGenerator(namespace: "K").generate(keys(twoSpellings), fileName: "k.flags")
        }
        #expect(
            error?.message
                == "the variants 'variant-a' and 'variantA' of 'v' (line 1) would both be generated as 'variantA'; rename one of them")
    }

    /// Names of any spelling: lower camel case, after `_` before a digit.
    @Test(arguments: [
        ("variant-a", "variantA"), ("child.variant", "childVariant"), ("flag-rule-should-match", "flagRuleShouldMatch"),
        ("attr/a", "attrA"), ("2-col", "_2Col"), ("---", "_"), ("oneStep", "oneStep"), ("self", "self"), ("and", "and"),
    ])
    func swiftNamesOfQuotedNames(_ name: String, _ swift: String) {
        #expect(SwiftKeyGenerator.swiftName(name) == swift)
    }
}

/// The keys of a checked rule set, as `flags generate swift` writes them.
func keys(_ rules: RuleSet) -> [KeyDeclaration] { rules.declarations.compactMap(KeyDeclaration.init) }
