import FlagRules
import FlagRulesLanguageServer
import FlagRulesServer
import FlagRulesTooling
import Foundation
import Testing

// Every Swift example of the README and the DocC catalog, compiled: each function holds
// one example as the documentation shows it (`DocumentationTests` checks that every
// example appears here, line for line), its free names as parameters. Not run: the
// examples fetch from example.com and read files that are not here.

/// README.md: the store.
func readmeStore(cachesURL: URL, enableDarkMode: () -> Void, showCheckout: (String) -> Void) async {
    let store = FlagStore(
        source: .url(URL(string: "https://cdn.example.com/app.flags")!),  // or .file(url), watched
        cacheDirectory: cachesURL,  // the last good rules, for a start offline
        baseContext: ["build": .string(BuildConfiguration.current.name), "appVersion": "2.4.0"])
    store.onEvent = { event in print("flags: \(event)") }  // loaded, rejected, fetch failed, …
    store.start()  // looks again every minute (ETag, back-off after failures)
    _ = try? await store.ready(timeout: .seconds(2))  // the bundle's, else the cache's or the source's

    if store.isEnabled("darkMode", in: ["userId": "u-42"]) { enableDarkMode() }
    let checkout = store.variant("checkout", in: ["userId": "u-42"], default: "control")
    showCheckout(checkout)
}

/// README.md: observing a resolution.
func readmeChanges(store: FlagStore, showCheckout: (String) -> Void) async {
    for await resolution in store.changes(of: "checkout", in: ["userId": "u-42"]) {
        showCheckout(resolution.variant ?? "control")
    }
}

/// README.md: exposures and Observation.
func readmeExposures(store: FlagStore) -> Bool {
    store.onEvaluation = { e in
        let user = e["userId"]?.description ?? "anyone"
        print("exposure: \(e.name) = \(e.resolution.value) (\(e.resolution.reason.rawValue)) for \(user)")
    }
    let newCheckout = store.observed.isEnabled("newCheckout", in: ["userId": "u-42"])
    return newCheckout
}

/// README.md: a rule set.
func readmeRuleSet() throws {
    let rules = try RuleSet(contentsOf: URL(fileURLWithPath: "app.flags"))  // throws every diagnostic
    let context: EvaluationContext = ["build": "beta", "userId": "42", "appVersion": "2.4"]
    let darkMode = rules.isEnabled("darkMode", in: context)  // Bool
    let variant = rules.variant("checkout", in: context, default: "control")  // a variant's name
    let cacheHours = rules.value("cacheHours", in: context, default: 24)  // Int, Double, String, Bool
    print(rules.evaluate("darkMode", in: context))  // true (TARGETING_MATCH, rule 2, line 26)
    print(rules.problems(in: ["userid": "42"]))  // [unknown attribute 'userid'; did you mean 'userId'?]
    _ = (darkMode, variant, cacheHours)
}

/// README.md: hot paths.
func readmeHotPath(rules: RuleSet, context: EvaluationContext, users: [EvaluationContext]) {
    let handle = rules.handle("darkMode")
    let user = rules.prepare(context)
    let on = rules.isEnabled(handle, in: user)  // no allocation, no lookup by name
    let reach = rules.isEnabled(handle, in: users.map(rules.prepare))  // one answer a user
    _ = (on, reach)
}

/// Embedding in apps and services: the store.
func articleStore(cachesURL: URL, enableDarkMode: () -> Void) async throws {
    let store = FlagStore(
        source: .url(URL(string: "https://cdn.example.com/app.flags")!),
        refresh: .seconds(60),
        cacheDirectory: cachesURL,
        apply: .immediately,
        baseContext: ["build": .string(BuildConfiguration.current.name), "appVersion": "2.4.0"])
    store.onEvent = { event in print("flags: \(event)") }
    store.start()
    do {
        let rules = try await store.ready(timeout: .seconds(2))
        print("\(rules.declarations.count) declarations in force")
    } catch {
        print("starting on the defaults: \(error)")
    }

    if store.isEnabled("darkMode", in: ["userId": "u-42"]) { enableDarkMode() }
    let checkout = store.variant("checkout", in: ["userId": "u-42"], default: "control")
    let pageSize = store.value("pageSize", in: ["userId": "u-42"], default: 30)
    _ = (checkout, pageSize)
}

/// Embedding in apps and services: the base context and the build.
func articleBuild(store: FlagStore, rulesURL: URL, userID: String) {
    BuildConfiguration.current = .beta
    let internalStore = FlagStore(source: .file(rulesURL), baseContext: BuildConfiguration.context)
    store.baseContext = ["build": .string(BuildConfiguration.current.name), "userId": .string(userID)]
    _ = internalStore
}

/// Embedding in apps and services: observing.
func articleObserving(store: FlagStore, showCheckout: @escaping (String) -> Void) async {
    Task {
        for await rules in store.updates {
            print("rules updated: \(rules.declarations.count) declarations")
        }
    }
    for await resolution in store.changes(of: "checkout", in: ["userId": "u-42"]) {
        showCheckout(resolution.variant ?? "control")
    }
}

/// Embedding in apps and services: Observation.
func articleObserved(store: FlagStore) -> Bool {
    let newCheckout = store.observed.isEnabled("newCheckout", in: ["userId": "u-42"])
    return newCheckout
}

/// Embedding in apps and services: events.
func articleEvents(store: FlagStore) {
    store.onEvent = { event in
        if case .updateRejected(_, let error) = event {
            print(error)  // every diagnostic, rendered with its source line
        }
    }
    store.onEvaluation = { e in
        let user = e["userId"]?.description ?? "anyone"
        print("exposure: \(e.name) = \(e.resolution.value) (\(e.resolution.reason.rawValue)) for \(user)")
    }
}

/// Embedding in apps and services: in a service.
func articleService(tenantID: String) {
    let flags = FlagStore(
        source: .file(URL(fileURLWithPath: "/etc/search/service.flags")),
        refresh: .seconds(5),
        baseContext: ["region": "eu-west-1"])
    flags.start()
    let backend = flags.value("searchBackend", in: ["tenant": .string(tenantID)], default: "elastic")
    _ = backend
}

/// Embedding in apps and services: a rule set on its own.
func articleRuleSet() throws {
    let rules = try RuleSet(contentsOf: URL(fileURLWithPath: "app.flags"))
    let context: EvaluationContext = ["build": "alpha", "userId": "u-42", "appVersion": "3.2"]

    let darkMode = rules.isEnabled("darkMode", in: context)  // Bool
    let variant = rules.variant("checkout", in: context, default: "control")  // a variant's name
    let cacheHours = rules.value("cacheHours", in: context, default: 24)  // Int (Double, String, Bool)
    let resolution = rules.evaluate("checkout", in: context)  // value, variant, reason, rule, line
    let everything = rules.evaluateAll(in: context)  // [String: Resolution]
    _ = (darkMode, variant, cacheHours, resolution, everything)
}

/// Embedding in apps and services: strict contexts.
func articleStrict(rules: RuleSet) {
    var strict = rules
    strict.checksContextsStrictly = true
    print(strict.evaluate("darkMode", in: ["build": "beta", "userId": 42]))
    // false (ERROR, INVALID_CONTEXT: attribute 'userId' expects a string)
}

/// Embedding in apps and services: a key is a name.
func articleDottedKey(rules: RuleSet) {
    print(rules.problems(in: ["org.plan": "team"]))
    // [unknown attribute 'org.plan': a key is a name, not a path; give the field inside its object, as {"org": {"plan": …}}]
}

/// Embedding in apps and services: hot paths.
func articleHotPath(rules: RuleSet, users: [EvaluationContext]) {
    let darkMode = rules.handle("darkMode")
    var user = rules.makeContext()
    user["build"] = "alpha"
    user["userId"] = "u-42"
    let on = rules.isEnabled(darkMode, in: user)  // no allocation, no name lookup
    let reach = rules.isEnabled(darkMode, in: users.map(rules.prepare))  // one answer a user, in order
    _ = (on, reach)
}

/// Embedding in apps and services: a store's hot paths.
func articleStoreHotPath(store: FlagStore, userID: String, offerExpressPay: () -> Void) {
    let expressPay = store.handle("expressPay")
    let request = store.prepare(["userId": .string(userID), "plan": "pro"])
    if store.isEnabled(expressPay, in: request) { offerExpressPay() }
}

/// The catalog's landing page.
func landing(enableDarkMode: () -> Void) {
    let store = FlagStore(source: .file(URL(fileURLWithPath: "app.flags")), baseContext: BuildConfiguration.context)
    store.start()
    if store.isEnabled("darkMode", in: ["userId": "u-42"]) { enableDarkMode() }
}

/// Getting started: read it from Swift.
func gettingStarted(enableDarkMode: () -> Void) throws {
    let rules = try RuleSet(contentsOf: URL(fileURLWithPath: "app.flags"))
    let context: EvaluationContext = ["build": "beta", "userId": "user-5", "appVersion": "3.2"]

    if rules.isEnabled("darkMode", in: context) { enableDarkMode() }
    let checkout = rules.variant("checkout", in: context, default: "control")  // "control" or "oneStep"
    print(rules.evaluate("darkMode", in: context))  // true (TARGETING_MATCH, rule 2, line 10)
    _ = checkout
}

/// README.md: typed keys.
func readmeTypedKeys(store: FlagStore) {
    let checkout: AppFlags.Checkout = store[AppFlags.checkout, in: ["userId": "u-42"]]
    store.expectedKeys = AppFlags.allKeys  // fetched rules that drift from the app are reported
    @Flag(AppFlags.darkMode) var darkMode  // reads FlagStore.shared with its base context
    _ = (checkout, darkMode)
}

/// README.md: overrides in a test.
func readmeOverrides(store: FlagStore) {
    withFlagOverrides([AppFlags.checkout.overridden(to: .oneStep), AppFlags.darkMode.overridden(to: true)]) {
        #expect(store[AppFlags.checkout] == .oneStep)
    }
}

/// README.md: the debug model.
func readmeDebugModel(store: FlagStore) throws {
    let debug = FlagDebugModel(store: store, storage: UserDefaultsOverrideStorage())
    try debug.setOverride(AppFlags.checkout, to: .twoStep)
    for entry in debug.entries() { print(entry.name, entry.resolution, entry.allowedValues) }
}

/// Embedding in apps and services: typed keys.
func articleTypedKeys(store: FlagStore) {
    let checkout: AppFlags.Checkout = store[AppFlags.checkout, in: ["plan": "pro"]]
    let pageSize = store.evaluate(AppFlags.pageSize, in: ["plan": "pro"])
    print(pageSize.value, pageSize.resolution.reason)

    final class CheckoutScreen {
        @Flag(AppFlags.checkout) var variant: AppFlags.Checkout  // FlagStore.shared, its base context
        @Flag var darkMode: Bool

        init(store: FlagStore) {
            _darkMode = Flag(AppFlags.darkMode, store: store, in: ["plan": "pro"])
        }
    }
    let screen = CheckoutScreen(store: store)
    _ = (checkout, screen.variant, screen.darkMode)
}

/// Embedding in apps and services: drift.
func articleDrift(store: FlagStore, rules: RuleSet) {
    store.expectedKeys = AppFlags.allKeys
    for drift in rules.validate(AppFlags.allKeys) {
        print(drift)  // 'checkout': the rules have variant 'threeStep', which the app's enum lacks
    }
}

/// The rules the documentation's test example loads: app.flags, here.
let rulesURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("app.flags")

/// Embedding in apps and services: overrides in tests (run, as a test).
@Test func proUsersGetTwoStepCheckout() throws {
    let store = FlagStore(try RuleSet(contentsOf: rulesURL))
    withFlagOverrides(["checkout": "twoStep"]) {
        #expect(store[AppFlags.checkout] == .twoStep)
        withFlagOverrides([AppFlags.darkMode.overridden(to: true)]) {
            #expect(store[AppFlags.darkMode] && store[AppFlags.checkout] == .twoStep)
        }
    }
}

/// Embedding in apps and services: a debug screen.
func articleDebugScreen(store: FlagStore, overridesURL: URL) throws {
    let debug = FlagDebugModel(store: store, storage: FileOverrideStorage(url: overridesURL))
    for entry in debug.entries(in: ["userId": "u-42"]) {
        print(entry.name, entry.declaration.owner ?? "-", entry.resolution, entry.allowedValues)
    }
    try debug.setOverride(AppFlags.checkout, to: .oneStep)
    try debug.clearOverride("checkout")
}

/// A stand-in for an app's analytics client.
struct DocumentedAnalytics {
    func track(_ event: String, _ properties: [String: String]) {}
}

/// RunningExperiments.md: recording exposures.
func articleExposures(store: FlagStore, analytics: DocumentedAnalytics) {
    let log = store.recordExposures(window: 10_000, buffer: 1_000)
    Task {
        for await exposure in log.exposures {
            analytics.track(
                "experiment_exposure",
                [
                    "experiment": exposure.declaration, "variant": exposure.variant,
                    "unit": exposure.unit, "rules": exposure.rulesVersion,
                ])
        }
    }
}

/// RunningExperiments.md: sticky assignments.
func articleSticky(store: FlagStore, supportDirectory: URL) {
    store.assignments = FileAssignments(
        url: supportDirectory.appendingPathComponent("assignments.json"),
        onProblem: { problem in print("flags: \(problem)") })
}

/// EmbeddingInAppsAndServices.md: rules shipped with the app.
func articleBundled(rulesURL: URL, cachesURL: URL) {
    let store = FlagStore(
        source: .url(rulesURL), cacheDirectory: cachesURL,
        bundled: BundledRules(contentsOf: Bundle.main.url(forResource: "app", withExtension: "flags")!))
    store.start()
}

/// EmbeddingInAppsAndServices.md: overrides across awaits.
@Test func darkModeReadsItsOverrideAcrossAwaits() async throws {
    let rules = try RuleSet(contentsOf: rulesURL)
    let r = await withFlagOverrides(["darkMode": true]) {
        await Task.yield()  // the screen's async work
        return rules.evaluate("darkMode", in: [:])
    }
    #expect(r.value == .bool(true) && r.reason == .override)
}

/// A user, for the contexts article.
struct DocumentedUser {
    let groups: [String]
    let age: Int
    let email: String?
}

/// EmbeddingInAppsAndServices.md: a context from variables.
func articleContext(userID: String, index: Int, user: DocumentedUser) -> EvaluationContext {
    let context: EvaluationContext = [
        "userId": userID, "unit": "u-\(index)", "groups": user.groups, "age": user.age,
        "email": user.email,  // a String?: nil leaves it out
        "build": BuildConfiguration.current,  // its name
    ]
    return context
}

/// EmbeddingInAppsAndServices.md: a context from an Encodable value.
func articleEncodedContext() throws {
    struct Billing: Encodable { let country: String }
    struct Org: Encodable { let id: String; let plan: String; let seats: Int; let billing: Billing? }
    struct Account: Encodable { let userId: String; let email: String?; let org: Org }

    let rules = try RuleSet(contentsOf: URL(fileURLWithPath: "examples/accounts.flags"))
    let account = Account(
        userId: "u-42", email: nil,
        org: Org(id: "acme", plan: "team", seats: 12, billing: Billing(country: "FR")))
    let context = try EvaluationContext(encoding: account)
    print(context)
    // ["org": { billing: { country: "FR" }, id: "acme", plan: "team", seats: 12 }, "userId": "u-42"]
    print(rules.evaluate("teamFeatures", in: context))
    // true (TARGETING_MATCH, rule 1, line 20)
}

/// FlagRulesTooling: the rules' tests and lints in an app's `swift test`.
@Test func toolingInAnAppsTests() throws {
    let rules = try RuleSet(contentsOf: rulesURL)
    for result in rules.runTests() where !result.passed { Issue.record("\(result)") }
    #expect(!rules.lint().contains { $0.code == "FR105" })  // no unreachable rule
}

/// FlagRulesServer: serving a store over OFREP.
func serverFromAProcess(rulesURL: URL) throws {
    let store = FlagStore(source: .file(rulesURL))
    let server = try FlagServer(files: [("app.flags", store)], options: .init(port: 8016))
    server.run()  // returns after drain(), once requests in flight are answered
}

/// FlagRulesLanguageServer: the language server on standard input and output.
func languageServerInAProcess() {
    let status = FlagsLanguageServer.run()  // standard input and output, until `exit`
    print(status)
}

/// A span, as a tracing library gives one (the embedding article's OpenTelemetry example).
protocol DocumentedSpan {
    func addEvent(_ name: String, attributes: [String: String])
}

/// EmbeddingInAppsAndServices.md: evaluations as OpenTelemetry events on the current span.
func articleOpenTelemetry(store: FlagStore, currentSpan: @escaping @Sendable () -> (any DocumentedSpan)?) {
    store.onEvaluation = { e in
        let event = e.openTelemetryEvent
        guard let span = currentSpan() else { return }
        span.addEvent(event.name, attributes: event.attributes.mapValues { $0.stringValue ?? $0.description })
    }
}
