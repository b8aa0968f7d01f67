import FlagRules
import Foundation
import Testing

/// The keys the build plugin generated from keys.flags (`KeysFlags`), compiled and read:
/// every kind, a variant enum with every case (keywords too), doc comments and defaults.
@Suite struct GeneratedKeysTests {
    static let rules: RuleSet = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("keys.flags")
        do {
            return try RuleSet(contentsOf: url)
        } catch {
            preconditionFailure("keys.flags loads: \(error)")
        }
    }()

    @Test func everyKindIsTyped() {
        let rules = Self.rules
        let darkMode: Bool = rules[KeysFlags.darkMode, in: ["plan": "pro"]]
        let checkout: KeysFlags.Checkout = rules[KeysFlags.checkout, in: ["plan": "team"]]
        let pageSize: Int = rules[KeysFlags.pageSize, in: ["plan": "pro"]]
        let discount: Double = rules[KeysFlags.discount, in: ["plan": "free"]]
        let api: String = rules[KeysFlags.apiBaseURL]
        let banner: Bool = rules[KeysFlags.betaBanner, in: ["plan": "team"]]
        #expect(darkMode && checkout == .twoStep && pageSize == 60 && discount == 0.25 && banner)
        #expect(api == "https://api.example.com")
        #expect(rules[KeysFlags.uploads])
        #expect(rules[KeysFlags.layout, in: ["plan": "team"]] == .default)
        #expect(rules[KeysFlags.layout, in: ["plan": "free"]] == .compact)
        // A key whose rules read lists and an address, given Swift arrays.
        #expect(rules[KeysFlags.staffTools, in: ["roles": ["admin"]]])
        #expect(rules[KeysFlags.staffTools, in: ["groups": ["staff"], "clientIP": "10.2.3.4"]])
        #expect(!rules[KeysFlags.staffTools, in: ["groups": ["staff"], "clientIP": "11.2.3.4"]])
    }

    @Test func variantEnumsHaveEveryCaseAndKeysTheirDefaultsAndDocs() {
        #expect(KeysFlags.Checkout.allCases == [.control, .oneStep, .twoStep])
        #expect(KeysFlags.Layout.allCases.map(\.rawValue) == ["default", "compact", "class"])
        #expect(KeysFlags.checkout.defaultValue == .control && KeysFlags.layout.defaultValue == .default)
        #expect(KeysFlags.pageSize.defaultValue == 30 && KeysFlags.discount.defaultValue == 0.5)
        #expect(KeysFlags.uploads.defaultValue && !KeysFlags.darkMode.defaultValue)
        #expect(KeysFlags.darkMode.doc == "Dark mode, for \"pro\" users first.")
        #expect(KeysFlags.pageSize.doc == "Photos a page; a path with a backslash: C:\\photos.")
        #expect(KeysFlags.discount.doc == nil)
        #expect(
            KeysFlags.apiBaseURL.doc
                == "Where the API is: three quotes (\"\"\") in a doc comment, and a line long enough to be wrapped in the generated multi-line string literal."
        )
        #expect(
            KeysFlags.allKeys.map(\.name) == [
                "darkMode", "uploads", "checkout", "layout", "pageSize", "discount", "apiBaseURL", "betaBanner", "staffTools", "type",
                "string", "swift", "flagRules", "bool", "_", "self", "new-checkout", "applePay",
            ])
        #expect(Self.rules.validate(KeysFlags.allKeys).isEmpty)
    }

    @Test func aStoreReadsThemAndReportsDrift() throws {
        let store = FlagStore(Self.rules)
        store.expectedKeys = KeysFlags.allKeys
        #expect(store[KeysFlags.checkout, in: ["plan": "team"]] == .twoStep)
        let dropping = "flag darkMode = true\nvariant checkout [control, oneStep, twoStep, fourStep] = fourStep"
        // Rules that drop declarations the app reads are refused, unless the app allows it.
        #expect(throws: RuleSetError.self) { try store.update(source: dropping) }
        #expect(store[KeysFlags.checkout, in: ["plan": "team"]] == .twoStep)
        store.allowsRemovingExpectedKeys = true
        try store.update(source: dropping)
        #expect(store.drift.count == KeysFlags.allKeys.count - 2 + 1)
        #expect(store.evaluate(KeysFlags.checkout).resolution.errorCode == .typeMismatch)
        #expect(store[KeysFlags.checkout] == .control)
    }

    @Test func namesThatAreSwiftsOwnCompileAndRead() {
        let rules = Self.rules
        let type: KeysFlags.`Type` = rules[KeysFlags.type]
        let string: KeysFlags.String = rules[KeysFlags.string]
        let swift: KeysFlags.SwiftVariant = rules[KeysFlags.swift]
        let flagRules: KeysFlags.FlagRulesVariant = rules[KeysFlags.flagRules]
        #expect(type == .`self` && KeysFlags.allKeys.first { $0.name == "type" }?.variants == ["self", "Type", "init"])
        #expect(string == .b && swift == .x && flagRules == .on)
        #expect(rules[KeysFlags.bool] && rules[KeysFlags.`_`] == 1 && rules[KeysFlags.`self`] == "me")
        // `String` here is still Swift's: the generated enum hides nothing outside its namespace.
        let text: String = KeysFlags.apiBaseURL.defaultValue
        #expect(text.hasPrefix("https://"))
    }

    /// `variant `new-checkout` [`variant-a`, `child.variant`, `2-col`]`: Swift names in
    /// lower camel case, the rules' names as the key's name and the raw values.
    @Test func quotedNamesHaveSwiftNames() {
        let checkout: KeysFlags.NewCheckout = Self.rules[KeysFlags.newCheckout, in: ["plan": "team"]]
        #expect(checkout == .childVariant && checkout.rawValue == "child.variant")
        #expect(KeysFlags.newCheckout.name == "new-checkout" && KeysFlags.newCheckout.defaultValue == .variantA)
        #expect(KeysFlags.NewCheckout.allCases.map(\.rawValue) == ["variant-a", "child.variant", "2-col"])
        #expect(KeysFlags.NewCheckout._2Col.rawValue == "2-col")
    }

    @Test func aKillSwitchsKeyDefaultsToOff() {
        // `@disabled flag applePay = true`: off before rules load, as the rules answer.
        #expect(KeysFlags.applePay.defaultValue == false)
        #expect(FlagStore()[KeysFlags.applePay] == false)
        #expect(Self.rules[KeysFlags.applePay] == false)
    }
}
