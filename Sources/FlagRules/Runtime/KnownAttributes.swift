/// Attribute names known before a context is read (the attributes a server's rules read),
/// each with its context hash made once: reading an OFREP body finds a member's name here by
/// its bytes, where it would otherwise make the name's string and hash it.
///
/// A table of slots by `LiteralHash` (probed linearly, at most half full), over the names
/// in the order given. The names are the rules' author's; a body's name only probes the
/// table they made, and one that is not there is read as any name is.
package final class KnownAttributes: Sendable {
    private let keys: [Frame.Key]
    /// Every name's bytes, one after another; `ends[k]` is where the `k`th ends.
    private let bytes: [UInt8]
    private let ends: [Int]
    /// Each slot: a name's position + 1, or 0.
    private let slots: [Int32]
    private let seed: UInt64

    /// No name known: every name is read as it comes.
    package static let none = KnownAttributes([])

    /// The table of `names` (a name given twice is kept once).
    package init(_ names: some Sequence<String>, seed: UInt64 = LiteralHash.seed) {
        // Made once for a set of rules; a reading shares it (one reference, not four arrays).
        var keys: [Frame.Key] = []
        var seen = Set<String>()
        for name in names where seen.insert(name).inserted { keys.append(Frame.Key(name)) }
        var capacity = 8
        while capacity < 2 * keys.count { capacity *= 2 }
        var bytes: [UInt8] = []
        var ends: [Int] = []
        var slots = [Int32](repeating: 0, count: capacity)
        for (k, key) in keys.enumerated() {
            let name = Array(key.name.utf8)
            bytes += name
            ends.append(bytes.count)
            var slot = name.withUnsafeBufferPointer { Int(truncatingIfNeeded: LiteralHash.of($0, seed: seed)) } & (capacity - 1)
            while slots[slot] != 0 { slot = (slot + 1) & (capacity - 1) }
            slots[slot] = Int32(k + 1)
        }
        self.keys = keys
        self.bytes = bytes
        self.ends = ends
        self.slots = slots
        self.seed = seed
    }

    /// The names known, in the order given.
    package var names: [String] { keys.map(\.name) }

    /// The known name whose bytes are `name`, with its hash; nil when it is not known.
    func key(_ name: UnsafeBufferPointer<UInt8>) -> Frame.Key? {
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: LiteralHash.of(name, seed: seed)) & mask
        // At most half the slots are full: the probe ends at an empty one.
        while case let entry = Int(slots[slot]), entry != 0 {
            let k = entry - 1
            let start = k == 0 ? 0 : ends[k - 1]
            if ends[k] - start == name.count, equal(name, from: start) { return keys[k] }
            slot = (slot + 1) & mask
        }
        return nil
    }

    /// The known name `name` with its hash, else `name` with its hash made now.
    func key(named name: String) -> Frame.Key {
        StringHash.withBytes(name) { key($0) } ?? Frame.Key(name)
    }

    /// Whether `name` is the bytes from `start` on.
    private func equal(_ name: UnsafeBufferPointer<UInt8>, from start: Int) -> Bool {
        bytes.withUnsafeBufferPointer { known in
            for i in 0..<name.count where known[start + i] != name[i] { return false }
            return true
        }
    }
}
