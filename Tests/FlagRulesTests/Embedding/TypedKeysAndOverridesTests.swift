import Foundation
import Testing

@testable import FlagRules

/// Keys as `flags generate swift` writes them, by hand (the generated ones are compiled
/// and read in GeneratedKeysTests).
enum ShopFlags {
    enum Checkout: String, FlagVariant { case control, oneStep, twoStep }
    static let darkMode = FlagKey(flag: "darkMode", default: false, doc: "Dark mode.")
    static let checkout = FlagKey(variant: "checkout", default: Checkout.control)
    static let pageSize = FlagKey(value: "pageSize", default: 30)
    static let ratio = FlagKey(value: "ratio", default: 0.5)
    static let title = FlagKey(value: "title", default: "Shop")
    static let beta = FlagKey(value: "beta", default: false)
    static let allKeys = [darkMode.erased, checkout.erased, pageSize.erased, ratio.erased, title.erased, beta.erased]
}

let shopRules = """
    context { userId: string; plan: enum(free, pro) }
    /// Dark mode.
    flag darkMode { enabled when plan == pro }
    variant checkout [control, oneStep, twoStep] = control { twoStep when plan == pro }
    value pageSize: int = 30 { 60 when plan == pro }
    value ratio: double = 1 { 2 when plan == pro }
    value title: string = "Shop"
    value beta: bool = false
    """

@Suite struct TypedKeyTests {
    @Test func typedKeysReadEveryKind() throws {
        let rules = try RuleSet(source: shopRules)
        let pro: EvaluationContext = ["plan": "pro"]
        #expect(rules[ShopFlags.darkMode, in: pro])
        #expect(!rules[ShopFlags.darkMode])
        #expect(rules[ShopFlags.checkout, in: pro] == .twoStep)
        #expect(rules[ShopFlags.pageSize, in: pro] == 60)
        #expect(rules[ShopFlags.ratio] == 1.0)  // an int default read as a double
        #expect(rules[ShopFlags.title] == "Shop")
        #expect(rules[ShopFlags.beta] == false)
        #expect(rules.evaluate(ShopFlags.checkout, in: pro).resolution.reason == .targetingMatch)
        let store = FlagStore(rules)
        #expect(store[ShopFlags.checkout, in: pro] == .twoStep)
        #expect(FlagStore()[ShopFlags.pageSize] == 30)
        #expect(FlagStore().evaluate(ShopFlags.pageSize).resolution.reason == .error)
        #expect(
            ShopFlags.darkMode.erased
                == AnyFlagKey(name: "darkMode", kind: .flag, type: "flag", variants: [], defaultValue: false, doc: "Dark mode."))
        #expect(ShopFlags.checkout.erased.variants == ["control", "oneStep", "twoStep"])
        #expect(rules.validate(ShopFlags.allKeys).isEmpty)
    }

    @Test func driftIsReportedAndReadsTheDefault() throws {
        let drifted = try RuleSet(
            source: """
                value darkMode: bool = true
                variant checkout [control, oneStep, threeStep] = threeStep
                value pageSize: string = "many"
                value ratio: int = 3
                """)
        let drift = drifted.validate(ShopFlags.allKeys)
        #expect(
            drift == [
                FlagDrift(name: "darkMode", problem: .kindChanged(expected: .flag, found: .value)),
                FlagDrift(name: "checkout", problem: .variantNotInEnum("threeStep")),
                FlagDrift(name: "pageSize", problem: .typeChanged(expected: "int", found: "string")),
                FlagDrift(name: "title", problem: .missing),
                FlagDrift(name: "beta", problem: .missing),
            ])
        #expect(drift[1].description == "'checkout': the rules have variant 'threeStep', which the app's enum lacks")
        let checkout = drifted.evaluate(ShopFlags.checkout)
        #expect(checkout.value == .control && checkout.resolution.errorCode == .typeMismatch)
        #expect(drifted.evaluate(ShopFlags.darkMode).resolution.errorCode == .typeMismatch)
        #expect(drifted.evaluate(ShopFlags.pageSize).value == 30)
        #expect(drifted.evaluate(ShopFlags.title).resolution.errorCode == .flagNotFound)
        #expect(drifted[ShopFlags.ratio] == 3.0)  // an int where a double is read converts
    }

    @Test func theStoreReportsDriftOnEveryUpdate() throws {
        let store = FlagStore()
        store.expectedKeys = ShopFlags.allKeys
        let log = EventLog()
        store.onEvent = log.record
        try store.update(source: shopRules)
        store.allowsRemovingExpectedKeys = true
        try store.update(source: "flag darkMode = true")
        let drifted = log.all.compactMap { if case .keysDrifted(let d) = $0 { return d } else { return nil } }
        #expect(drifted.count == 1)
        #expect(drifted.first?.count == 5)
        #expect(store.drift.map(\.name) == ["checkout", "pageSize", "ratio", "title", "beta"])
    }
}

@Suite struct OverrideTests {
    @Test func everyEntryPointSeesAScope() throws {
        let rules = try RuleSet(source: shopRules)
        let store = FlagStore(rules)
        let handle = rules.handle("darkMode")
        withFlagOverrides(["darkMode": true, "checkout": "oneStep", "pageSize": 99]) {
            #expect(rules.isEnabled("darkMode", in: [:]))
            #expect(rules.evaluate("darkMode", in: [:]).reason == .override)
            #expect(rules.variant("checkout", in: [:]) == "oneStep")
            #expect(rules.evaluate("checkout", in: [:]).variant == "oneStep")
            #expect(rules.value("pageSize", in: [:], default: 0) == 99)
            #expect(rules.evaluateAll(in: [:])["pageSize"]?.reason == .override)
            #expect(rules.isEnabled(handle, in: rules.makeContext()))
            #expect(rules.evaluate(handle, in: rules.makeContext()).reason == .override)
            #expect(rules.evaluate("darkMode", in: rules.makeContext()).reason == .override)
            #expect(rules.isEnabled(handle, in: [rules.makeContext(), rules.makeContext()]) == [true, true])
            #expect(store.isEnabled("darkMode"))
            #expect(store.isEnabled(store.handle("darkMode"), in: store.makeContext()))
            #expect(store[ShopFlags.checkout] == .oneStep)
            #expect(rules[ShopFlags.pageSize] == 99)
            #expect(FlagStore().isEnabled("darkMode"))  // a store with no rules yet
            #expect(String(describing: rules.evaluate("darkMode", in: [:])) == "true (OVERRIDE)")
            let explanation = rules.explain("darkMode", in: [:])
            #expect(explanation?.resolution == rules.evaluate("darkMode", in: [:]))
            #expect(explanation?.summary == "overridden by a withFlagOverrides scope" && explanation?.rules.isEmpty == true)
        }
        #expect(!rules.isEnabled("darkMode", in: [:]))
        #expect(rules.evaluate("darkMode", in: [:]).reason == .default)
    }

    @Test func anOverrideThatDoesNotFitIsATypeMismatch() throws {
        let rules = try RuleSet(source: shopRules)
        withFlagOverrides(["darkMode": "yes", "checkout": "fourStep", "ratio": 2]) {
            #expect(rules.evaluate("darkMode", in: [:]).errorCode == .typeMismatch)
            #expect(!rules.isEnabled("darkMode", in: [:], default: false))
            #expect(rules[ShopFlags.checkout] == .control)
            #expect(rules.evaluate("checkout", in: [:]).errorCode == .typeMismatch)
            #expect(rules[ShopFlags.ratio] == 2.0)  // an int for a double converts
        }
    }

    @Test func scopesNestInnerWinning() async throws {
        let rules = try RuleSet(source: shopRules)
        withFlagOverrides([ShopFlags.darkMode.overridden(to: true), ShopFlags.pageSize.overridden(to: 10)]) {
            withFlagOverrides(FlagOverrides().setting(ShopFlags.pageSize, to: 20)) {
                #expect(rules[ShopFlags.pageSize] == 20)
                #expect(rules[ShopFlags.darkMode])  // falls through to the outer scope
                #expect(rules[ShopFlags.checkout] == .control)  // and to the rules
                #expect(FlagOverrides.current.values.count == 2)
            }
            #expect(rules[ShopFlags.pageSize] == 10)
        }
        await withFlagOverrides(["title": "Async"]) {
            await Task.yield()
            #expect(rules[ShopFlags.title] == "Async")
            async let child = rules[ShopFlags.title]  // child tasks inherit the scope
            #expect(await child == "Async")
        }
        #expect(rules[ShopFlags.title] == "Shop")
    }

    @Test(slowTests) func parallelTasksNeverSeeEachOthersOverrides() async throws {
        let rules = try RuleSet(source: shopRules)
        let store = FlagStore(rules)
        let mixed = await withTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    await withFlagOverrides(["pageSize": .int(task)]) {
                        var wrong = 0
                        for _ in 0..<2_000 {
                            if rules[ShopFlags.pageSize] != task { wrong += 1 }
                            if store.value("pageSize", default: -1) != task { wrong += 1 }
                            await Task.yield()
                        }
                        return wrong
                    }
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mixed == 0)
    }

    @Test func aPropertyWrapperKeepsTheScopeItWasMadeIn() throws {
        final class Screen {
            @Flag(ShopFlags.checkout, store: store) var checkout
            @Flag(ShopFlags.darkMode, store: store, in: ["plan": "pro"]) var darkMode
            static let store = FlagStore(try? RuleSet(source: shopRules))
            init() {}
        }
        let screen = withFlagOverrides([ShopFlags.checkout.overridden(to: .oneStep)]) { Screen() }
        #expect(screen.checkout == .oneStep)  // after the scope has returned
        #expect(screen.$checkout.resolution.reason == .override)
        #expect(screen.darkMode)  // its context over the store's
        let plain = Screen()
        #expect(plain.checkout == .control)
        withFlagOverrides([ShopFlags.checkout.overridden(to: .twoStep)]) {
            #expect(screen.checkout == .twoStep)  // a scope in force when read wins
        }
        // With no store given, the shared one (an empty store until the app sets one).
        @Flag(ShopFlags.pageSize) var pageSize
        #expect(pageSize == 30)
    }
}

@Suite struct DebugModelTests {
    @Test func overridesAreListedPersistedAndReloaded() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("overrides.json")
        let store = FlagStore(try RuleSet(source: shopRules))
        let debug = FlagDebugModel(store: store, storage: FileOverrideStorage(url: file))
        #expect(debug.loadProblem == nil)
        let entries = debug.entries(in: ["plan": "pro"])
        #expect(entries.map(\.name) == ["darkMode", "checkout", "pageSize", "ratio", "title", "beta"])
        #expect(entries[0].declaration.doc == "Dark mode." && entries[0].allowedValues == [false, true])
        #expect(entries[1].allowedValues == ["control", "oneStep", "twoStep"] && entries[1].resolution.variant == "twoStep")
        #expect(entries[2].allowedValues.isEmpty && entries[5].allowedValues == [false, true])

        var changes = store.changes(of: "checkout").makeAsyncIterator()
        #expect(await changes.next()?.variant == "control")
        try debug.setOverride(ShopFlags.checkout, to: .oneStep)
        #expect(await changes.next()?.reason == .override)  // the change shows in store.changes
        try debug.setOverride("pageSize", to: 5)
        #expect(store[ShopFlags.checkout] == .oneStep && store.value("pageSize", default: 0) == 5)
        #expect(debug.entries().first { $0.name == "checkout" }?.override == "oneStep")
        #expect(throws: FlagOverrideError.self) { try debug.setOverride("pageSize", to: "five") }
        #expect(throws: FlagOverrideError.self) { try debug.setOverride("nothing", to: true) }
        // Scoped overrides win over local ones.
        withFlagOverrides(["checkout": "twoStep"]) { #expect(store[ShopFlags.checkout] == .twoStep) }

        // Reloaded by the next launch's model.
        let next = FlagStore(try RuleSet(source: shopRules))
        _ = FlagDebugModel(store: next, storage: FileOverrideStorage(url: file))
        #expect(next[ShopFlags.checkout] == .oneStep && next.value("pageSize", default: 0) == 5)
        try debug.clearOverride("checkout")
        #expect(store[ShopFlags.checkout] == .control)
        try debug.clearAllOverrides()
        #expect(try FileOverrideStorage(url: file).load().isEmpty)
    }

    @Test func aCorruptStorageIsReportedNotFatal() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("overrides.json")
        try Data("[1, 2".utf8).write(to: file)
        let debug = FlagDebugModel(store: FlagStore(try RuleSet(source: shopRules)), storage: FileOverrideStorage(url: file))
        #expect(debug.loadProblem?.contains("does not hold overrides") == true)
        #expect(debug.store.localOverrides.isEmpty)
    }

    @Test func userDefaultsStorageRoundTrips() throws {
        let suite = "FlagRulesTests-\(UUID().uuidString)"
        let storage = UserDefaultsOverrideStorage(suiteName: suite)
        defer { UserDefaults(suiteName: suite)?.removePersistentDomain(forName: suite) }
        #expect(try storage.load().isEmpty)
        try storage.save(["darkMode": true, "pageSize": 7, "title": "x"])
        #expect(try storage.load() == ["darkMode": true, "pageSize": 7, "title": "x"])
    }
}
