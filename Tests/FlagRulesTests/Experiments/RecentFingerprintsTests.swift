import Testing

@testable import FlagRules

/// The exposure log's memory of what it recorded, against a model that knows when each
/// fingerprint was last seen: one seen within the last `window` distinct others is always
/// remembered, one never seen is always new, one not seen for `2 × window` distinct others
/// is forgotten, and no more than `2 × window` are held.
@Suite struct RecentFingerprintsTests {
    @Test(arguments: [1, 2, 7, 64])
    func randomSequencesAgreeWithTheModel(window: Int) async {
        await offThePool(computing: true) {
            var random = SeededGenerator(seed: UInt64(window) &* 7919)
            var set = RecentFingerprints(window: window)
            var order: [UInt64] = []  // fingerprints by their last sighting, oldest first
            for step in 0..<20_000 {
                // A small universe (so that many come back), with low halves shared by several
                // fingerprints (so that probe sequences are shared), and now and then 0.
                let f: UInt64 =
                    step % 997 == 0
                    ? 0 : UInt64.random(in: 0..<UInt64(window * 5 + 3), using: &random) << 32 | UInt64.random(in: 1...4, using: &random)
                let key = f == 0 ? 1 : f
                let wasRemembered = set.contains(f)
                let isNew = set.insert(f)
                #expect(isNew == !wasRemembered, "contains and insert disagree")
                if let index = order.firstIndex(of: key) {
                    let othersSince = order.count - 1 - index
                    if othersSince < window {
                        #expect(!isNew, "seen \(othersSince) distinct others ago, within a window of \(window)")
                    } else if othersSince >= 2 * window {
                        #expect(isNew, "seen \(othersSince) distinct others ago, past twice the window of \(window)")
                    }
                    order.remove(at: index)
                } else {
                    #expect(isNew, "never seen, yet remembered")
                }
                order.append(key)
                #expect(set.count <= 2 * window)
            }
        }
    }

    /// A table grows as it fills, and keeps every fingerprint through each doubling.
    @Test func aGenerationGrowsAndKeepsEverything() {
        var set = RecentFingerprints(window: 50_000)
        var new = 0
        for i in 1...40_000 where set.insert(UInt64(i) &* 0x9E37_79B9_7F4A_7C15) { new += 1 }
        for i in 1...40_000 where set.insert(UInt64(i) &* 0x9E37_79B9_7F4A_7C15) { new += 1 }
        #expect(new == 40_000)
        #expect(set.count == 40_000)
    }
}
