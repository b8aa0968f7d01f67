import FlagRules
import Foundation

// The rules ship with the app (a resource); a live store watches them, as it would watch a
// downloaded file or poll a URL. `ShopFlags` is generated from shop.flags by the plugin.
guard let rulesURL = Bundle.module.url(forResource: "shop", withExtension: "flags") else {
    fatalError("shop.flags is a resource of this target")
}
let store = FlagStore(
    source: .file(rulesURL), refresh: .seconds(1),
    baseContext: ["build": .string(BuildConfiguration.current.name), "userId": "u-42"])
store.expectedKeys = ShopFlags.allKeys
store.onEvent = { event in print("event: \(event)") }
store.start()
let rules = try await store.ready(timeout: .seconds(5))
print("drift: \(rules.validate(ShopFlags.allKeys).isEmpty ? "none" : "\(rules.validate(ShopFlags.allKeys))")")

// Typed reads: no string names, no defaults repeated.
let checkout: ShopFlags.Checkout = store[ShopFlags.checkout, in: ["plan": "pro"]]
print("checkout for a pro user: \(checkout)")
print("page size for a free user: \(store[ShopFlags.pageSize, in: ["plan": "free"]])")

// A property that reads the shared store, made inside an override scope: it keeps the
// scope's value after the scope has returned.
FlagStore.shared = store
final class CheckoutScreen {
    @Flag(ShopFlags.checkout, in: ["plan": "free"]) var variant
}
let preview = withFlagOverrides([ShopFlags.checkout.overridden(to: .oneStep)]) { CheckoutScreen() }
print("preview screen: \(preview.variant) (\(preview.$variant.resolution.reason.rawValue))")

// A debug screen's model: every declaration with its value, and local overrides.
let debug = FlagDebugModel(store: store)
try debug.setOverride(ShopFlags.darkMode, to: true)
for entry in debug.entries(in: ["plan": "free"]) {
    print("debug: \(entry.name) = \(entry.resolution)")
}
store.stop()
