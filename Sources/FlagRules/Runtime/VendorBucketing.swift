import Foundation

/// How a `rollout` or `split` turns a unit into a bucket: FlagRules' own (Unleash's, the
/// default) or another system's, so that rules imported from it keep every user in the
/// bucket that system put them in. Written as the third argument of `rollout` and `split`:
/// `rollout(userId, "seed", growthbook) < 20%`.
package enum BucketScheme: String, Sendable, CaseIterable {
    /// MurmurHash3 of `salt:unit` (Unleash's normalised hash and variant algorithm).
    case unleash
    /// GrowthBook's hash version 2: FNV-1a 32 of the decimal text of FNV-1a 32 of
    /// `seed + unit`, modulo 10,000, over 10,000 (the SDKs' `hash(seed, value, 2)`).
    case growthbook
    /// GrowthBook's hash version 1: FNV-1a 32 of `unit + seed`, modulo 1,000, over 1,000.
    case growthbookV1
    /// LaunchDarkly's bucket: the first 15 hex digits of SHA-1 of `salt.unit` (the salt is
    /// `flagKey.salt`, or an experiment's seed) over `0xFFFFFFFFFFFFFFF`; a split takes the
    /// first variation whose running weight, in 100,000ths, exceeds the bucket.
    case launchdarkly
    /// flagd's `fractional` (flagd-core 2.0): MurmurHash3 (x86, 32-bit, seed 0) of the
    /// canonical CBOR encoding of `[salt, unit]` (the shorthand: flag key and targeting
    /// key), or of the unit alone when the salt is empty; the bucket is
    /// `(hash × total weight) >> 32`, and a split takes the first entry whose running
    /// weight exceeds it. Splits only: flagd has no percentage rollout.
    case flagd
    /// flagd's `fractional` bucketing by `{"cat": [salt, {"var": unit}]}`: the same hash and
    /// choice as `flagd`, of the canonical CBOR text of the salt followed by the unit as
    /// JSON Logic's `cat` writes it (flagd-core 2.0 with json-logic 0.4: a missing unit is
    /// `null`, a bool `True` or `False`, a double as `%.15g`, a list its elements' texts
    /// joined by commas, an object `[object Object]`). A missing unit is bucketed too, as
    /// the text `null`. Splits only.
    case flagdCat

    /// The names, as written in rules.
    package static let names = allCases.map(\.rawValue)
}

/// `rollout(unit, salt, scheme)` for another system's scheme: where a unit falls, and how
/// it compares with a percentage exactly as that system compares it.
struct VendorRollout: Sendable {
    let salt: String
    let scheme: BucketScheme

    /// The unit's text, as the systems hash it (an int in decimal).
    static func text(_ unit: BucketUnit) -> String {
        switch unit {
        case .string(let s): return s
        case .int(let i): return String(i)
        case .value(let v): return v.description
        }
    }

    /// The unit's position as a percentage in [0, 100]; nil when the system leaves the unit
    /// out (GrowthBook's empty unit).
    func percent(_ unit: BucketUnit) -> Double? {
        let text = Self.text(unit)
        switch scheme {
        case .growthbook, .growthbookV1:
            guard let (k, scale) = VendorBucketing.growthbook(seed: salt, unit: text, version: scheme == .growthbook ? 2 : 1) else {
                return nil
            }
            return Double(k) / Double(scale) * 100
        case .launchdarkly:
            return VendorBucketing.launchdarkly(salt: salt, unit: text) * 100
        case .flagd:
            return VendorBucketing.flagdHash(salt: salt, unit: unit).map { Double($0) / 4_294_967_296 * 100 }
        case .flagdCat:
            return Double(VendorBucketing.flagdCatHash(salt: salt, unit: unit)) / 4_294_967_296 * 100
        case .unleash:
            return Double(Bucketing.bucket(hash: BucketKeyPrefix(salt: salt).hash(unit, split: false))) / 1000
        }
    }

    /// `rollout(…) OP t`, `t` in thousandths of a percent: GrowthBook's `n` is k / scale, so
    /// the comparison is of integers; LaunchDarkly's bucket compares in double precision
    /// with `t / 100,000`, as its SDKs compare it with a running weight.
    func holds(_ unit: BucketUnit, _ op: ComparisonOperator, threshold t: Int) -> Truth {
        let text = Self.text(unit)
        switch scheme {
        case .growthbook, .growthbookV1:
            guard let (k, scale) = VendorBucketing.growthbook(seed: salt, unit: text, version: scheme == .growthbook ? 2 : 1) else {
                return .unknown
            }
            return Truth(Bucketing.rolloutHolds(op, bucket: k * (100_000 / scale), threshold: t))
        case .launchdarkly:
            let b = VendorBucketing.launchdarkly(salt: salt, unit: text), limit = Double(t) / 100_000.0
            return Truth.comparison(op, order: b < limit ? -1 : b == limit ? 0 : 1)
        case .flagd, .flagdCat:
            return .unknown  // refused by the checker: flagd buckets splits only
        case .unleash:
            let bucket = Bucketing.bucket(hash: BucketKeyPrefix(salt: salt).hash(unit, split: false))
            return Truth(Bucketing.rolloutHolds(op, bucket: bucket, threshold: t))
        }
    }

    /// The entry a split by this scheme chooses for a unit, among `weights` adding up to
    /// `total` (tenths of a percent add up to 1,000): GrowthBook's first range holding its
    /// `n` (nil past the last), LaunchDarkly's first running weight above its bucket.
    func choice(_ unit: BucketUnit, _ split: VendorSplitWeights) -> Int? {
        let text = Self.text(unit)
        switch scheme {
        case .growthbook, .growthbookV1:
            guard let (k, scale) = VendorBucketing.growthbook(seed: salt, unit: text, version: scheme == .growthbook ? 2 : 1) else {
                return nil
            }
            return VendorBucketing.growthbookChoice(Double(k) / Double(scale), fractions: split.fractions)
        case .launchdarkly:
            return VendorBucketing.launchdarklyChoice(
                VendorBucketing.launchdarkly(salt: salt, unit: text), weights: split.hundredThousandths)
        case .flagd:
            guard let hash = VendorBucketing.flagdHash(salt: salt, unit: unit) else { return nil }
            return VendorBucketing.flagdChoice(hash, weights: split.weights)
        case .flagdCat:
            return VendorBucketing.flagdChoice(VendorBucketing.flagdCatHash(salt: salt, unit: unit), weights: split.weights)
        case .unleash:
            return nil
        }
    }

    /// The key the system hashes, for explanations.
    func key(_ unit: BucketUnit) -> String {
        let text = Self.text(unit)
        switch scheme {
        case .growthbook: return "FNV-1a of \"\(salt)\(text)\", twice"
        case .growthbookV1: return "FNV-1a of \"\(text)\(salt)\""
        case .launchdarkly: return "SHA-1 of \"\(salt).\(text)\""
        case .flagd:
            let shown = if case .string = unit { "\"\(text)\"" } else { text }
            return salt.isEmpty ? "murmur3 of CBOR \(shown)" : "murmur3 of CBOR [\"\(salt)\", \(shown)]"
        case .flagdCat: return "murmur3 of CBOR \"\(salt)\(VendorBucketing.catText(unit))\""
        case .unleash: return "\"\(salt):\(text)\""
        }
    }
}

/// A split's weights as other systems read them: fractions of the total (GrowthBook's), and
/// 100,000ths (LaunchDarkly's; a percentage's tenths times 100).
struct VendorSplitWeights: Sendable {
    let fractions: [Double]
    let hundredThousandths: [Int]
    /// As written (flagd's integer weights, relative to their total).
    let weights: [Int]

    init(_ weights: [Int]) {
        self.weights = weights
        let total = weights.reduce(0, +)
        fractions = weights.map { Double($0) / Double(total) }
        hundredThousandths = total == 1_000 ? weights.map { $0 * 100 } : weights
    }
}

/// Other systems' bucketing, bit for bit.
package enum VendorBucketing {
    /// GrowthBook's `n` for a unit: `k / scale` with `k` an integer, so that a rollout's
    /// coverage compares exactly (`n < coverage`). Nil for an empty unit, which GrowthBook
    /// leaves out of every rollout and experiment.
    package static func growthbook(seed: String, unit: String, version: Int) -> (k: Int, scale: Int)? {
        guard !unit.isEmpty else { return nil }
        if version == 1 { return (Int(fnv1a32UTF16(unit + seed) % 1_000), 1_000) }
        return (Int(fnv1a32UTF16(String(fnv1a32UTF16(seed + unit))) % 10_000), 10_000)
    }

    /// FNV-1a 32 over a string's UTF-16 code units, as GrowthBook's SDKs hash (JavaScript's
    /// `charCodeAt`).
    package static func fnv1a32UTF16(_ s: String) -> UInt32 {
        var h: UInt32 = 0x811C_9DC5
        for unit in s.utf16 { h = (h ^ UInt32(unit)) &* 0x0100_0193 }
        return h
    }

    /// LaunchDarkly's bucket of a unit in [0, 1]: SHA-1 of `salt.unit`, its first 15 hex
    /// digits as an integer, over `0xFFFFFFFFFFFFFFF`, in double precision as its SDKs do.
    package static func launchdarkly(salt: String, unit: String) -> Double {
        let digest = SHA1.digest(Array((salt + "." + unit).utf8))
        var first15: UInt64 = 0
        for byte in digest.prefix(8) { first15 = first15 << 8 | UInt64(byte) }
        return Double(first15 >> 4) / Double(0xFFF_FFFF_FFFF_FFFF as UInt64)
    }

    /// GrowthBook's variation for `n` among weights (fractions in order): the first range
    /// `[start, start + w)` that holds it, the starts summed in order as the SDKs sum them
    /// (coverage 1); nil past the last range.
    package static func growthbookChoice(_ n: Double, fractions: [Double]) -> Int? {
        var cumulative = 0.0
        for (i, w) in fractions.enumerated() {
            let start = cumulative
            cumulative += w
            if start <= n && n < start + w { return i }
        }
        return nil
    }

    /// flagd's hash of a unit: MurmurHash3 (seed 0) of the canonical CBOR of `[salt, unit]`,
    /// or of the unit alone when the salt is empty. Nil where flagd gives no variant: the
    /// shorthand's targeting key must be a non-empty string.
    static func flagdHash(salt: String, unit: BucketUnit) -> UInt32? {
        var bytes: [UInt8] = []
        if !salt.isEmpty {
            guard case .string(let key) = unit, !key.isEmpty else { return nil }
            bytes.append(0x82)  // an array of two
            CBOR.append(text: salt, to: &bytes)
            CBOR.append(text: key, to: &bytes)
        } else {
            switch unit {
            case .string(let s): CBOR.append(text: s, to: &bytes)
            case .int(let i): CBOR.append(integer: i, to: &bytes)
            case .value(let v): CBOR.append(value: v, to: &bytes)
            }
        }
        return Murmur3.hash(bytes, seed: 0)
    }

    /// The hash of `flagdCat`: MurmurHash3 of the CBOR text of `salt` followed by the
    /// unit's ``catText(_:)``.
    static func flagdCatHash(salt: String, unit: BucketUnit) -> UInt32 {
        var bytes: [UInt8] = []
        CBOR.append(text: salt + catText(unit), to: &bytes)
        return Murmur3.hash(bytes, seed: 0)
    }

    /// A unit as JSON Logic's `cat` writes it in flagd-core 2.0 (json-logic 0.4's
    /// `to_string`, in its order of tests: a bool is a Python int there, so `True`).
    static func catText(_ unit: BucketUnit) -> String {
        switch unit {
        case .string(let s): return s
        case .int(let i): return String(i)
        case .value(let v): return catText(v)
        }
    }

    /// A value as ``catText(_:)`` writes it (the importer writes `cat`'s literals so).
    package static func catText(_ value: Value) -> String {
        switch value {
        case .string(let s): return s
        case .int(let i): return String(i)
        case .bool(let b): return b ? "True" : "False"
        case .double(let d): return String(format: "%.15g", d)
        case .list(let elements): return elements.map(catText).joined(separator: ",")
        case .object: return "[object Object]"
        default: return value.description
        }
    }

    /// flagd's variant for a hash: the bucket is `(hash × total) >> 32`, and the first
    /// entry whose running weight exceeds it is chosen.
    package static func flagdChoice(_ hash: UInt32, weights: [Int]) -> Int? {
        let total = UInt64(weights.reduce(0, +))
        let bucket = (UInt64(hash) * total) >> 32
        var end: UInt64 = 0
        for (i, w) in weights.enumerated() {
            end += UInt64(w)
            if bucket < end { return i }
        }
        return nil
    }

    /// LaunchDarkly's variation for a bucket: the first whose running weight (100,000ths)
    /// exceeds it, else the last.
    package static func launchdarklyChoice(_ bucket: Double, weights: [Int]) -> Int {
        var sum = 0.0
        for (i, w) in weights.enumerated() {
            sum += Double(w) / 100_000.0
            if bucket < sum { return i }
        }
        return weights.count - 1
    }
}

/// SHA-1 (FIPS 180-4), for LaunchDarkly's bucketing: the package has no dependencies, and
/// Foundation has no digest on Linux.
package enum SHA1 {
    /// The 20-byte digest of `message`.
    package static func digest(_ message: [UInt8]) -> [UInt8] {
        var h: (UInt32, UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0)
        var padded = message
        padded.append(0x80)
        while padded.count % 64 != 56 { padded.append(0) }
        let bits = UInt64(message.count) &* 8
        for shift in stride(from: 56, through: 0, by: -8) { padded.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
        var w = [UInt32](repeating: 0, count: 80)
        for block in stride(from: 0, to: padded.count, by: 64) {
            for t in 0..<16 {
                let i = block + 4 * t
                w[t] = UInt32(padded[i]) << 24 | UInt32(padded[i + 1]) << 16 | UInt32(padded[i + 2]) << 8 | UInt32(padded[i + 3])
            }
            for t in 16..<80 { w[t] = rotate(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1) }
            var (a, b, c, d, e) = h
            for t in 0..<80 {
                let f: UInt32, k: UInt32
                switch t {
                case 0..<20: (f, k) = ((b & c) | (~b & d), 0x5A82_7999)
                case 20..<40: (f, k) = (b ^ c ^ d, 0x6ED9_EBA1)
                case 40..<60: (f, k) = ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
                default: (f, k) = (b ^ c ^ d, 0xCA62_C1D6)
                }
                let temp = rotate(a, 5) &+ f &+ e &+ k &+ w[t]
                (e, d, c, b, a) = (d, c, rotate(b, 30), a, temp)
            }
            h = (h.0 &+ a, h.1 &+ b, h.2 &+ c, h.3 &+ d, h.4 &+ e)
        }
        var out: [UInt8] = []
        out.reserveCapacity(20)
        for word in [h.0, h.1, h.2, h.3, h.4] {
            for shift in stride(from: 24, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: word >> UInt32(shift))) }
        }
        return out
    }

    @inline(__always)
    private static func rotate(_ x: UInt32, _ n: UInt32) -> UInt32 { x << n | x >> (32 - n) }
}

/// The canonical CBOR (RFC 8949 §4.2.1) of the values flagd's `fractional` hashes.
package enum CBOR {
    /// A text string: major type 3, its UTF-8 bytes.
    package static func append(text: String, to bytes: inout [UInt8]) {
        head(3, UInt64(text.utf8.count), to: &bytes)
        bytes += text.utf8
    }

    /// An integer: major type 0, or 1 for a negative one (`-1 - n`).
    package static func append(integer: Int, to bytes: inout [UInt8]) {
        if integer >= 0 {
            head(0, UInt64(integer), to: &bytes)
        } else {
            head(1, UInt64(-(integer + 1)), to: &bytes)
        }
    }

    /// Any value, as flagd-core 2.0 encodes a unit (cbor2's canonical encoding): a double
    /// with no fraction that fits in 64 bits as an integer, any other double in the
    /// shortest float that holds it exactly, an object's members sorted by their keys'
    /// encodings (shorter first, then bytewise).
    package static func append(value: Value, to bytes: inout [UInt8]) {
        switch value {
        case .bool(let b): bytes.append(b ? 0xF5 : 0xF4)
        case .int(let i): append(integer: i, to: &bytes)
        case .double(let d): append(double: d, to: &bytes)
        case .string(let s): append(text: s, to: &bytes)
        case .version, .datetime: append(text: value.description, to: &bytes)
        case .list(let elements):
            head(4, UInt64(elements.count), to: &bytes)
            for element in elements { append(value: element, to: &bytes) }
        case .object(let fields):
            let keys = fields.keys.map { key -> ([UInt8], String) in
                var encoded: [UInt8] = []
                append(text: key, to: &encoded)
                return (encoded, key)
            }
            head(5, UInt64(keys.count), to: &bytes)
            let sorted = keys.sorted { $0.0.count != $1.0.count ? $0.0.count < $1.0.count : $0.0.lexicographicallyPrecedes($1.0) }
            for (encoded, key) in sorted {
                bytes += encoded
                append(value: fields[key]!, to: &bytes)
            }
        }
    }

    /// A double: an integer when it has no fraction and fits in 64 bits (`-0.0` is 0),
    /// else a half, a single or a double float, the shortest that holds it exactly.
    package static func append(double d: Double, to bytes: inout [UInt8]) {
        if d.isFinite, d == d.rounded(.towardZero), d >= -0x1p63, d < 0x1p64 {
            if d < 0 { append(integer: Int(d), to: &bytes) } else { head(0, UInt64(d), to: &bytes) }
            return
        }
        let single = Float(d)
        guard Double(single) == d else {
            bytes.append(0xFB)
            appendBigEndian(d.bitPattern, bytes: 8, to: &bytes)
            return
        }
        if let half = halfBits(single) {
            bytes.append(0xF9)
            appendBigEndian(UInt64(half), bytes: 2, to: &bytes)
        } else {
            bytes.append(0xFA)
            appendBigEndian(UInt64(single.bitPattern), bytes: 4, to: &bytes)
        }
    }

    /// The IEEE 754 half-precision bits of `f` when a half holds it exactly; nil otherwise.
    package static func halfBits(_ f: Float) -> UInt16? {
        let bits = f.bitPattern
        let sign = UInt16(bits >> 31) << 15
        if f == 0 { return sign }
        guard f.isFinite else { return f.isNaN ? 0x7E00 : sign | 0x7C00 }
        let exponent = Int((bits >> 23) & 0xFF) - 127
        let mantissa = bits & 0x7F_FFFF
        guard exponent >= -24, exponent <= 15, (bits >> 23) & 0xFF != 0 else { return nil }
        if exponent >= -14 {
            guard mantissa & 0x1FFF == 0 else { return nil }
            return sign | UInt16(exponent + 15) << 10 | UInt16(mantissa >> 13)
        }
        // A subnormal half: the significand over 2^-24.
        let significand = mantissa | 0x80_0000
        let shift = UInt32(-exponent - 1)
        guard significand & ((1 << shift) - 1) == 0 else { return nil }
        return sign | UInt16(significand >> shift)
    }

    private static func appendBigEndian(_ value: UInt64, bytes count: Int, to bytes: inout [UInt8]) {
        for i in (0..<count).reversed() { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))) }
    }

    /// A head in its shortest form.
    private static func head(_ major: UInt8, _ argument: UInt64, to bytes: inout [UInt8]) {
        let type = major << 5
        switch argument {
        case 0..<24: bytes.append(type | UInt8(argument))
        case 24..<0x100: bytes += [type | 24, UInt8(argument)]
        case 0x100..<0x1_0000: bytes += [type | 25, UInt8(argument >> 8), UInt8(truncatingIfNeeded: argument)]
        case 0x1_0000..<0x1_0000_0000: bytes += [type | 26] + (0..<4).reversed().map { UInt8(truncatingIfNeeded: argument >> (8 * $0)) }
        default: bytes += [type | 27] + (0..<8).reversed().map { UInt8(truncatingIfNeeded: argument >> (8 * $0)) }
        }
    }
}
