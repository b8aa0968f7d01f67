import Foundation
import Observation
import Testing

@testable import FlagRules

/// Reads through `store.observed` (and `@Flag`) tell Observation when what they read
/// changes, and only then.
@Suite struct ObservationTests {
    /// Counts how often tracking of `read` is told of a change, re-tracking after each.
    final class Tracker: Sendable {
        let changes = Locked(0)
        let tracks = Locked(0)
        let read: @Sendable () -> Void

        init(_ read: @escaping @Sendable () -> Void) {
            self.read = read
            track()
        }

        func track() {
            withObservationTracking {
                read()
            } onChange: { [weak self] in
                guard let self else { return }
                changes.withLock { $0 += 1 }
                // onChange runs before the change is in force: track again afterwards.
                DispatchQueue.global().async { [self] in track() }
            }
            tracks.withLock { $0 += 1 }
        }

        var count: Int { changes.withLock { $0 } }
        /// Whether it tracks again after the last change it was told of.
        var isTracking: Bool { tracks.withLock { $0 } == count + 1 }
    }

    @Test func aReadIsToldWhenWhatItReadChangesAndOnlyThen() async throws {
        let store = FlagStore(try RuleSet(source: version(1)))
        let darkMode = Tracker { _ = store.observed.isEnabled("darkMode", in: ["plan": "pro"]) }
        let generation = Tracker { _ = store.observed.value("generation", default: 0) }
        #expect(darkMode.count == 0 && generation.count == 0)

        // New rules that change the generation but not darkMode for a pro user.
        try store.update(source: version(2))
        #expect(await eventually { generation.count == 1 })
        #expect(darkMode.count == 0)

        // A base context that changes nothing either read: no one is told.
        store.baseContext = ["userId": "u-1"]
        try await Task.sleep(for: .milliseconds(50))
        #expect(darkMode.count == 0 && generation.count == 1)

        // A local override of darkMode: only darkMode's reader.
        #expect(await eventually { darkMode.isTracking && generation.isTracking })
        store.localOverrides = ["darkMode": false]
        #expect(await eventually { darkMode.count == 1 })
        #expect(generation.count == 1)

        // The plain entry points register nothing.
        let plain = Tracker { _ = store.isEnabled("darkMode", in: ["plan": "pro"]) }
        #expect(await eventually { darkMode.isTracking })
        store.localOverrides = [:]
        #expect(await eventually { darkMode.count == 2 })
        #expect(plain.count == 0)
    }

    @Test func aBaseContextThatChangesTheAnswerTellsTheReader() async throws {
        let store = FlagStore(try RuleSet(source: version(1)))
        let darkMode = Tracker { _ = store.observed.isEnabled("darkMode") }
        store.baseContext = ["plan": "pro"]
        #expect(await eventually { darkMode.count == 1 })
    }

    @Test func aPropertyWrapperReadsThroughTheObservedPath() async throws {
        let store = FlagStore(try RuleSet(source: version(1)))
        let key = FlagKey<Int>(value: "generation", default: 0)
        let flag = Flag(key, store: store)
        let tracker = Tracker { _ = flag.wrappedValue }
        #expect(flag.wrappedValue == 1)
        #expect(await eventually { tracker.isTracking })
        try store.update(source: version(5))
        #expect(await eventually { tracker.count == 1 })
        #expect(flag.wrappedValue == 5)
    }

    @Test func readsUnderAScopeAreComparedUnderThatScope() async throws {
        let store = FlagStore(try RuleSet(source: version(1)))
        let scoped = Tracker { withFlagOverrides(["generation": 42]) { _ = store.observed.value("generation", default: 0) } }
        try store.update(source: version(2))
        try await Task.sleep(for: .milliseconds(50))
        #expect(scoped.count == 0)  // 42 under its scope, whatever the rules say
    }

    @Test func pastTheLimitEveryObserverIsToldOnce() async throws {
        let store = FlagStore(try RuleSet(source: version(1)))
        let first = Tracker { _ = store.observed.isEnabled("darkMode", in: ["plan": "pro"]) }
        for i in 0..<ObservedReads.capacity {
            _ = store.observed.isEnabled("darkMode", in: ["userId": .string("u-\(i)")])
        }
        #expect(await eventually { first.count == 1 })
    }
}
