import Foundation
import Testing

@testable import FlagRules
@testable import FlagRulesServer

/// A store driven through random sequences of operations, each step checked against a
/// small model of what must be in force and of what each subscriber may have seen.
///
/// The operations: serve good, broken, empty, identical or slow rules from a local server;
/// look at the source now; start; stop (also while a slow fetch is in flight); updates by
/// hand, some from inside another task's override scope; base-context and local-override
/// changes; subscriptions opened (some inside a scope) and dropped. After each step: the
/// rules in force, the answer of a read, and every subscriber's last value agree with the
/// model, and every value a subscriber received is one the model had for it, in order.
///
/// `FLAGRULES_STORE_SEQUENCES` sets the number of sequences (`.ci/run` runs more under
/// the thread sanitizer); `FLAGRULES_STORE_SEED` the seed.
@Suite(.serialized, slowTests) struct StoreStateMachineTests {
    /// What the model says darkMode resolves to.
    struct Expected: Hashable, CustomStringConvertible {
        var value: Bool
        var reason: Resolution.Reason
        var errorCode: Resolution.ErrorCode?

        init(_ value: Bool, _ reason: Resolution.Reason, _ errorCode: Resolution.ErrorCode? = nil) {
            self.value = value
            self.reason = reason
            self.errorCode = errorCode
        }

        init(_ r: Resolution) {
            self.init(r.value.boolValue ?? false, r.reason, r.errorCode)
        }

        var description: String { "\(value) (\(reason.rawValue)\(errorCode.map { ", \($0.rawValue)" } ?? ""))" }
    }

    /// What the server serves.
    enum Served: Equatable {
        case good(Int)
        case broken(Int)
        case empty
        /// Good rules, answered after a short delay.
        case slow(Int)
        /// Good rules, answered after a delay long enough to stop the store meanwhile.
        case stalled(Int)

        var text: String {
            switch self {
            case .good(let n), .slow(let n), .stalled(let n): return version(n)
            case .broken(let n): return "value generation: int = \(n) oops"
            case .empty: return ""
            }
        }
    }

    /// The model: what must be in force, and what each subscriber must see.
    struct Model {
        var inForce: Int?
        /// Whether the latest update failed to compile (while no rules are in force, the
        /// answer's error code says so).
        var failed = false
        var served: Served = .good(1)
        /// The text last taken from the source (in force or rejected): the same again is
        /// not taken again, so a hand update over it stays.
        var taken: Served?
        /// The last good rules taken from the source, in the cache.
        var cached: Int?
        var started = false
        var plan: String?
        var local: Bool?

        func expected(scope: Bool?) -> Expected {
            if let scope { return Expected(scope, .override) }
            if let local { return Expected(local, .override) }
            guard inForce != nil else { return Expected(false, .error, failed ? .parseError : .general) }
            return plan == "pro" ? Expected(true, .targetingMatch) : Expected(false, .default)
        }

        /// A look at the source that completes.
        mutating func look() {
            guard served != .empty, served.text != taken?.text else { return }
            taken = served
            switch served {
            case .good(let n), .slow(let n), .stalled(let n):
                inForce = n
                failed = false
                cached = n
            case .broken:
                failed = true
            case .empty:
                break
            }
        }
    }

    /// One subscription: what it received, and what the model had for it.
    final class Subscriber: Sendable {
        let scope: Bool?
        let received = Locked<[Expected]>([])
        let task: Locked<Task<Void, Never>?> = Locked(nil)
        /// Every value the model had for it, in order, no two alike in a row.
        let history = Locked<[Expected]>([])

        init(scope: Bool?) { self.scope = scope }

        func note(_ e: Expected) {
            history.withLock { h in if h.last != e { h.append(e) } }
        }

        /// Whether what it received is a subsequence of the model's history (values may
        /// be skipped: a slow subscriber gets the newest).
        func receivedIsPossible() -> Bool {
            var h = history.withLock { $0 }[...]
            for r in received.withLock({ $0 }) {
                guard let i = h.firstIndex(of: r) else { return false }
                h = h[(i + 1)...]
            }
            return true
        }
    }

    static var sequences: Int { ProcessInfo.processInfo.environment["FLAGRULES_STORE_SEQUENCES"].flatMap(Int.init) ?? 200 }
    static var seed: UInt64 { ProcessInfo.processInfo.environment["FLAGRULES_STORE_SEED"].flatMap(UInt64.init) ?? 0x5EED_F1A6 }

    @Test(.timeLimit(.minutes(20))) func randomSequencesAgreeWithTheModel() async throws {
        let served = Locked<Served>(.good(1))
        let requests = Locked(0)
        let server = try TestHTTPServer { _ in
            requests.withLock { $0 += 1 }
            let now = served.withLock { $0 }
            var response = TestHTTPServer.Response(status: 200, body: Array(now.text.utf8))
            if case .slow = now { response.delay = 0.02 }
            if case .stalled = now { response.delay = 0.3 }
            return response
        }
        var random = SeededGenerator(seed: Self.seed)
        var steps = 0
        for sequence in 0..<Self.sequences {
            let failures = try await run(sequence: sequence, server: server, served: served, requests: requests, random: &random)
            steps += failures.steps
            try #require(
                failures.problems.isEmpty, "sequence \(sequence), seed \(Self.seed):\n\(failures.problems.joined(separator: "\n"))")
        }
        #expect(steps > Self.sequences * 10)
    }

    /// Runs one sequence; its problems, and how many steps it took.
    func run(sequence: Int, server: TestHTTPServer, served: Locked<Served>, requests: Locked<Int>, random: inout SeededGenerator)
        async throws -> (problems: [String], steps: Int)
    {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var model = Model()
        served.withLock { $0 = model.served }
        let store = FlagStore(source: .url(server.url), refresh: .seconds(3_600), cacheDirectory: dir, timeout: .seconds(10))
        defer { store.stop() }
        var subscribers: [Subscriber] = []
        var log: [String] = []
        var next = sequence * 1_000 + 2
        let length = Int.random(in: 8...30, using: &random)

        for step in 0..<length {
            let operation = Int.random(in: 0..<100, using: &random)
            switch operation {
            case 0..<12:
                let n = next
                next += 1
                model.served = Bool.random(using: &random) ? .good(n) : .slow(n)
                log.append("serve \(model.served)")
            case 12..<17:
                model.served = .broken(next)
                next += 1
                log.append("serve broken")
            case 17..<21:
                model.served = .empty
                log.append("serve empty")
            case 21..<25:
                // The text last taken again (a server without validators).
                if let taken = model.taken { model.served = taken }
                log.append("serve the same: \(model.served)")
            case 25..<45:
                log.append("refreshNow")
                served.withLock { $0 = model.served }
                await store.refreshNow()
                model.look()
            case 45..<50:
                log.append("start")
                served.withLock { $0 = model.served }
                if !model.started {
                    let before = requests.withLock { $0 }
                    store.start()
                    model.started = true
                    if model.inForce == nil, let cached = model.cached {
                        model.inForce = cached
                        model.failed = false
                        model.taken = .good(cached)
                        for s in subscribers { s.note(model.expected(scope: s.scope)) }
                    }
                    // The poller's first look: wait for its request, then for it to end.
                    if await eventually(10, { requests.withLock { $0 } > before }) == false {
                        return (log + ["the poller sent no request"], step)
                    }
                    await store.refreshNow()
                    model.look()
                }
            case 50..<55:
                log.append("stop")
                store.stop()
                model.started = false
            case 55..<58:
                // A slow fetch in flight when the store stops: nothing it brings goes in force.
                let n = next
                next += 1
                served.withLock { $0 = .stalled(n) }
                log.append("stop during a slow fetch of \(n)")
                let before = requests.withLock { $0 }
                let look = Task { await store.refreshNow() }
                if await eventually(10, { requests.withLock { $0 } > before }) == false {
                    return (log + ["the look sent no request"], step)
                }
                store.stop()
                model.started = false
                await look.value
                // The same rules from now on, answered sooner.
                model.served = .slow(n)
                served.withLock { $0 = model.served }
            case 58..<68:
                let n = next
                next += 1
                let good = Int.random(in: 0..<4, using: &random) != 0
                let text = good ? version(n) : "value generation: int = \(n) oops"
                let scope: Bool? = Bool.random(using: &random) ? Bool.random(using: &random) : nil
                log.append("update \(good ? "good" : "broken") \(n)\(scope.map { " inside a scope darkMode=\($0)" } ?? "")")
                let outcome = await Task.detached {
                    do {
                        if let scope {
                            try withFlagOverrides(["darkMode": .bool(scope)]) { _ = try store.update(source: text) }
                        } else {
                            _ = try store.update(source: text)
                        }
                        return true
                    } catch {
                        return false
                    }
                }.value
                if outcome != good { return (log + ["update gave \(outcome)"], step) }
                if good {
                    model.inForce = n
                    model.failed = false
                } else {
                    model.failed = true
                }
            case 68..<76:
                model.plan = [nil, "pro", "free"].randomElement(using: &random)!
                log.append("base plan \(model.plan ?? "-")")
                store.baseContext = model.plan.map { ["plan": .string($0)] } ?? [:]
            case 76..<84:
                model.local = [nil, true, false].randomElement(using: &random)!
                log.append("local darkMode \(model.local.map(String.init) ?? "-")")
                store.localOverrides = model.local.map { ["darkMode": .bool($0)] } ?? [:]
            case 84..<94:
                let scope: Bool? = Bool.random(using: &random) ? nil : Bool.random(using: &random)
                log.append("subscribe\(scope.map { " inside a scope darkMode=\($0)" } ?? "")")
                let subscriber = Subscriber(scope: scope)
                subscriber.note(model.expected(scope: scope))
                let stream = await Task.detached {
                    if let scope { return withFlagOverrides(["darkMode": .bool(scope)]) { store.changes(of: "darkMode") } }
                    return store.changes(of: "darkMode")
                }.value
                let task = Task.detached {
                    for await r in stream { subscriber.received.withLock { $0.append(Expected(r)) } }
                }
                subscriber.task.withLock { $0 = task }
                subscribers.append(subscriber)
            default:
                guard !subscribers.isEmpty else { continue }
                let i = Int.random(in: 0..<subscribers.count, using: &random)
                log.append("drop subscriber \(i)")
                subscribers[i].task.withLock { $0 }?.cancel()
                subscribers.remove(at: i)
            }

            // Checks.
            for s in subscribers { s.note(model.expected(scope: s.scope)) }
            let generation = store.rules?.value("generation", in: [:], default: -1)
            if generation != model.inForce {
                return (
                    log + ["in force: \(generation.map(String.init) ?? "none"), model: \(model.inForce.map(String.init) ?? "none")"], step
                )
            }
            let read = Expected(store.evaluate("darkMode"))
            if read != model.expected(scope: nil) {
                return (log + ["darkMode reads \(read), model: \(model.expected(scope: nil))"], step)
            }
            for (i, s) in subscribers.enumerated() {
                let want = model.expected(scope: s.scope)
                let arrived = await eventually(10) { s.received.withLock { $0.last } == want }
                if !arrived {
                    return (
                        log + [
                            "subscriber \(i) last saw \(s.received.withLock { $0 }.last.map(String.init(describing:)) ?? "nothing"), model: \(want)"
                        ], step
                    )
                }
                if !s.receivedIsPossible() {
                    return (log + ["subscriber \(i) received \(s.received.withLock { $0 }), model had \(s.history.withLock { $0 })"], step)
                }
            }
        }
        for s in subscribers { s.task.withLock { $0 }?.cancel() }
        return ([], length)
    }
}
