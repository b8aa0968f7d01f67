/// `rollout` and `split`, bit for bit as Unleash buckets (the Performance and language
/// articles of the documentation give the algorithm): MurmurHash3 (x86, 32-bit) of
/// `salt:unit`, seed 0 for rollouts and 86028157 for splits.
package enum Bucketing {
    /// The seed Unleash uses for variant (split) hashing.
    static let splitSeed: UInt32 = 86_028_157

    /// The rollout bucket of a hash, in thousandths of a percent: `[0, 100000)`.
    @inlinable
    static func bucket(hash h: UInt32) -> Int {
        Int(h % 100) * 1000 + Int((h / 100) % 1000)
    }

    /// `rollout(unit, salt)` in thousandths of a percent, for a unit already rendered as text.
    package static func rolloutBucket(salt: String, unit: String) -> Int {
        var hasher = Murmur3(seed: 0)
        hasher.combine(salt)
        hasher.combine(byte: UInt8(ascii: ":"))
        hasher.combine(unit)
        return bucket(hash: hasher.finalize())
    }

    /// `rollout(unit, salt)` as a percentage in `[0, 100)`, e.g. `22.087`.
    package static func rollout(salt: String, unit: String) -> Double {
        Double(rolloutBucket(salt: salt, unit: unit)) / 1000
    }

    /// The 1-based split target: `hash % total + 1`; nil when `totalWeight` is not positive.
    package static func splitTarget(salt: String, unit: String, totalWeight: Int) -> Int? {
        guard totalWeight > 0, totalWeight <= Int(UInt32.max) else { return nil }
        var hasher = Murmur3(seed: splitSeed)
        hasher.combine(salt)
        hasher.combine(byte: UInt8(ascii: ":"))
        hasher.combine(unit)
        return Int(hasher.finalize() % UInt32(totalWeight)) + 1
    }

    /// The index of the entry a target chooses: the first whose running sum of weights is
    /// at least `target`.
    package static func choose(target: Int, weights: [Int]) -> Int? {
        var sum = 0
        for (i, w) in weights.enumerated() {
            sum += w
            if w > 0, sum >= target { return i }
        }
        return nil
    }
}

extension Bucketing {
    /// The exact thousandths of a percent that a numeric threshold stands for (`20%`,
    /// `20`, `20.5`), or nil when it has no exact value in thousandths.
    static func thousandths(_ v: Value) -> Int? {
        switch v {
        case .int(let i):
            let (t, overflow) = i.multipliedReportingOverflow(by: 1000)
            return overflow ? nil : t
        case .double(let d):
            let scaled = (d * 1000).rounded()
            guard abs(scaled) < 1e15, Double(Int(scaled)) / 1000 == d else { return nil }
            return Int(scaled)
        default: return nil
        }
    }

    /// Whether `rollout(…) op threshold` holds for a bucket, both in thousandths: integers
    /// compared exactly, never through floating point.
    @inline(__always)
    static func rolloutHolds(_ op: ComparisonOperator, bucket: Int, threshold: Int) -> Bool {
        Truth.comparison(op, order: bucket < threshold ? -1 : bucket == threshold ? 0 : 1) == .yes
    }

    /// The split target of a unit, and the index of the outcome it chooses (nil when none
    /// has weight there): `hash % total + 1`, then the first running sum of weights at
    /// least the target.
    static func split(_ prefix: BucketKeyPrefix, _ unit: BucketUnit, weights: [Int], total: Int) -> (target: Int, choice: Int?) {
        split(hash: prefix.hash(unit, split: true), weights: weights, total: total)
    }

    /// `split` of a unit's split hash, already made.
    @inline(__always)
    static func split(hash: UInt32, weights: [Int], total: Int) -> (target: Int, choice: Int?) {
        guard total > 0 else { return (0, nil) }
        let target = Int(hash % UInt32(truncatingIfNeeded: total)) + 1
        return (target, choose(target: target, weights: weights))
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

    /// The split hash of a string unit.
    @inline(__always)
    func splitHash(string unit: String) -> UInt32 {
        var h = splitState
        h.combine(unit)
        return h.finalize()
    }

    @inline(__always)
    func hash(_ unit: BucketUnit, split: Bool) -> UInt32 {
        var h = split ? splitState : rolloutState
        switch unit {
        case .string(let s): h.combine(s)
        case .int(let i): h.combine(decimal: i)
        case .value(let v): h.combine(v.unitText)  // (never made for this scheme)
        }
        return h.finalize()
    }
}

/// A unit of bucketing: strings (and enum cases, variants) by their text, ints in decimal;
/// for flagd's scheme, any value (flagd hashes a value's CBOR).
enum BucketUnit {
    case string(String)
    case int(Int)
    /// A bool, a double, a list or an object: a unit of flagd's scheme only.
    case value(Value)

    /// A string or an int; nil for anything else.
    init?(_ value: Value) {
        switch value {
        case .string(let s): self = .string(s)
        case .int(let i): self = .int(i)
        default: return nil
        }
    }

    /// A unit of `scheme`: flagd's takes any value.
    init?(_ value: Value, scheme: BucketScheme) {
        if let unit = BucketUnit(value) {
            self = unit
        } else if scheme == .flagd || scheme == .flagdCat {
            self = .value(value)
        } else {
            return nil
        }
    }
}
