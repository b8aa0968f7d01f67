// A service's request path: one store watches the rules file, each request reads typed
// values for its tenant. Run from the repository's root:
//
//   swift run --package-path examples/FlagsService FlagsService examples/service.flags
import FlagRules
import Foundation

let path = CommandLine.arguments.dropFirst().first ?? "examples/service.flags"
let store = FlagStore(source: .file(URL(fileURLWithPath: path)), refresh: .seconds(1))
store.onEvent = { event in print("flags: \(event)") }
store.start()
do {
    _ = try await store.ready(timeout: .seconds(5))
} catch {
    print("flags: no rules from \(path): \(error)")
    exit(1)
}

// Requests from three tenants, after the new index's launch.
let launch = Date(timeIntervalSince1970: 1_796_115_600)  // 2026-12-01T09:00:00Z
for (tenant, tier, seats) in [("acme", "team", 40), ("initech", "free", 3), ("globex", "enterprise", 900)] {
    let request: EvaluationContext = [
        "tenant": tenant, "tier": .string(tier), "seats": seats, "region": "usEast", "requestId": "r-\(tenant)", "now": launch,
    ]
    let backend = store.value("searchBackend", in: request, default: "elastic")
    let timeout = store.value("searchTimeoutMs", in: request, default: 800)
    let bypass = store.isEnabled("rateLimitBypass", in: request)
    print("\(tenant): backend \(backend), timeout \(timeout) ms, rate limit \(bypass ? "bypassed" : "applied")")
}
store.stop()
