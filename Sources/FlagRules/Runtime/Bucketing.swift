/// `rollout` and `split` exactly as `shared/spec/bucketing.md` defines them (Unleash-compatible).
public enum Bucketing {
    /// The seed Unleash uses for variant (split) hashing.
    public static let splitSeed: UInt32 = 86_028_157

    /// The rollout bucket of a hash, in thousandths of a percent: `[0, 100000)`.
    @inlinable
    public static func bucket(hash h: UInt32) -> Int {
        Int(h % 100) * 1000 + Int((h / 100) % 1000)
    }

    /// `rollout(unit, salt)` in thousandths of a percent, for a unit already rendered as text.
    public static func rolloutBucket(salt: String, unit: String) -> Int {
        var hasher = Murmur3(seed: 0)
        hasher.combine(salt)
        hasher.combine(byte: UInt8(ascii: ":"))
        hasher.combine(unit)
        return bucket(hash: hasher.finalize())
    }

    /// `rollout(unit, salt)` as a percentage in `[0, 100)`, e.g. `22.087`.
    public static func rollout(salt: String, unit: String) -> Double {
        Double(rolloutBucket(salt: salt, unit: unit)) / 1000
    }

    /// The 1-based split target: `hash % total + 1`.
    public static func splitTarget(salt: String, unit: String, totalWeight: Int) -> Int {
        var hasher = Murmur3(seed: splitSeed)
        hasher.combine(salt)
        hasher.combine(byte: UInt8(ascii: ":"))
        hasher.combine(unit)
        return Int(hasher.finalize() % UInt32(totalWeight)) + 1
    }

    /// The index of the entry a target chooses: the first whose running sum of weights is
    /// at least `target`.
    public static func choose(target: Int, weights: [Int]) -> Int? {
        var sum = 0
        for (i, w) in weights.enumerated() {
            sum += w
            if w > 0, sum >= target { return i }
        }
        return nil
    }
}

/// The precomputed part of a bucketing key (`salt + ":"`), continued per unit.
struct BucketKeyPrefix: Sendable {
    let rolloutState: Murmur3
    let splitState: Murmur3

    init(salt: String) {
        var r = Murmur3(seed: 0)
        r.combine(salt)
        r.combine(byte: UInt8(ascii: ":"))
        var s = Murmur3(seed: Bucketing.splitSeed)
        s.combine(salt)
        s.combine(byte: UInt8(ascii: ":"))
        rolloutState = r
        splitState = s
    }

    /// The rollout hash of a string unit.
    @inline(__always)
    func hash(string unit: String) -> UInt32 {
        var h = rolloutState
        h.combine(unit)
        return h.finalize()
    }

    @inline(__always)
    func hash(_ unit: BucketUnit, split: Bool) -> UInt32 {
        var h = split ? splitState : rolloutState
        switch unit {
        case .string(let s): h.combine(s)
        case .int(let i): h.combine(decimal: i)
        }
        return h.finalize()
    }
}

/// A unit of bucketing: strings (and enum cases, variants) by their text, ints in decimal.
enum BucketUnit {
    case string(String)
    case int(Int)

    init?(_ value: Value) {
        switch value {
        case .string(let s): self = .string(s)
        case .int(let i): self = .int(i)
        default: return nil
        }
    }
}

extension Bucketing {
    /// A salt with its hash state precomputed, for hand-written code that buckets many
    /// units with the same salt (what `rollout(unit)` does inside a compiled rule set).
    public struct RolloutKey: Sendable {
        let prefix: BucketKeyPrefix

        /// A key for `salt` (usually a declaration's name).
        public init(salt: String) { prefix = BucketKeyPrefix(salt: salt) }

        /// `rollout(unit)` in thousandths of a percent, `[0, 100000)`.
        @inlinable
        public func bucket(for unit: String) -> Int { Bucketing.bucket(hash: hash(unit)) }

        @usableFromInline
        func hash(_ unit: String) -> UInt32 { prefix.hash(string: unit) }
    }
}
