import Foundation

/// Attribute names known before a context is read (the attributes a server's rules read),
/// each with its context hash made once: reading an OFREP body finds a member's name here by
/// its bytes, where it would otherwise make the name's string and hash it.
///
/// A table of slots by `LiteralHash` (probed linearly, at most half full), over the names
/// in the order given. The names are the rules' author's; a body's name only probes the
/// table they made, and one that is not there is read as any name is.
///
/// Its buffers are written only while it is made, and read alone after: sharing it between
/// threads is safe.
package final class KnownAttributes: @unchecked Sendable {
    private let keys: [Frame.Key]
    /// Every name's bytes, one after another; `ends[k]` is where the `k`th ends.
    private let bytes: UnsafeMutableBufferPointer<UInt8>
    private let ends: UnsafeMutableBufferPointer<Int>
    /// Each slot: a name's position + 1, or 0. A power of two, at least twice the names.
    private let slots: UnsafeMutableBufferPointer<Int32>
    private let seed: UInt64

    /// No name known: every name is read as it comes.
    package static let none = KnownAttributes([])

    /// The table of `names` (a name given twice is kept once). Made once for a set of
    /// rules; every reading shares it.
    package init(_ names: some Sequence<String>, seed: UInt64 = LiteralHash.seed) {
        var keys: [Frame.Key] = []
        var seen = Set<String>()
        for name in names where seen.insert(name).inserted { keys.append(Frame.Key(name)) }
        var capacity = 8
        while capacity < 2 * keys.count { capacity *= 2 }
        let all = keys.flatMap { Array($0.name.utf8) }
        bytes = .allocate(capacity: all.count)
        _ = bytes.initialize(from: all)
        ends = .allocate(capacity: keys.count)
        slots = .allocate(capacity: capacity)
        slots.initialize(repeating: 0)
        var end = 0
        for (k, key) in keys.enumerated() {
            let start = end
            end += key.name.utf8.count
            ends[k] = end
            var slot =
                Int(truncatingIfNeeded: LiteralHash.of(UnsafeBufferPointer(rebasing: bytes[start..<end]), seed: seed)) & (capacity - 1)
            while slots[slot] != 0 { slot = (slot + 1) & (capacity - 1) }
            slots[slot] = Int32(k + 1)
        }
        self.keys = keys
        self.seed = seed
    }

    deinit {
        bytes.deallocate()
        ends.deallocate()
        slots.deallocate()
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
            if ends[k] - start == name.count, name.count == 0 || memcmp(bytes.baseAddress! + start, name.baseAddress!, name.count) == 0 {
                return keys[k]
            }
            slot = (slot + 1) & mask
        }
        return nil
    }

    /// The known name `name` with its hash, else `name` with its hash made now.
    func key(named name: String) -> Frame.Key {
        StringHash.withBytes(name) { key($0) } ?? Frame.Key(name)
    }
}
