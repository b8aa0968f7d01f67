import FlagRules
import Foundation

// MARK: The rules and the hand-written baseline

let schema = """
    context {
      build      : enum(debug, alpha, beta, release)
      userId     : string
      country    : string
      appVersion : version
      email      : string
    }
    """
let seedRule = "build in [debug, alpha] and rollout(userId) < 20%"
let largeRule =
    seedRule + #" and country in ["US", "CA", "GB", "DE", "FR"] and appVersion >= "2.3.0" and not (email ends with "@example.com")"#

enum Build: String, CaseIterable {
    case debug, alpha, beta, release
}

/// The context as hand-written Swift holds it.
final class User {
    let build: Build
    let userId: String
    let country: String
    let appVersion: SemanticVersion
    let email: String

    init(build: Build, userId: String, country: String, appVersion: SemanticVersion, email: String) {
        self.build = build
        self.userId = userId
        self.country = country
        self.appVersion = appVersion
        self.email = email
    }
}

/// `rollout(unit)` with a fixed salt, hand-written: MurmurHash3 (x86, 32-bit, seed 0) of
/// `salt:unit`, then the bucket in thousandths of a percent; with the split seed
/// (86028157), a split's hash.
struct RolloutKey {
    let prefix: [UInt8]
    let seed: UInt32

    init(salt: String, seed: UInt32 = 0) {
        prefix = Array((salt + ":").utf8)
        self.seed = seed
    }

    @inline(__always)
    static func mix(_ k: UInt32) -> UInt32 {
        var k = k &* 0xcc9e_2d51
        k = (k << 15) | (k >> 17)
        return k &* 0x1b87_3593
    }

    func bucket(for unit: String) -> Int {
        let h = hash(for: unit)
        return Int(h % 100) * 1000 + Int((h / 100) % 1000)
    }

    func hash(for unit: String) -> UInt32 {
        var unit = unit
        return unit.withUTF8 { u in
            var h: UInt32 = seed, block: UInt32 = 0, filled: UInt32 = 0
            func add(_ byte: UInt8) {
                block |= UInt32(byte) << (filled * 8)
                filled += 1
                if filled == 4 {
                    h ^= RolloutKey.mix(block)
                    h = ((h << 13) | (h >> 19)) &* 5 &+ 0xe654_6b64
                    block = 0
                    filled = 0
                }
            }
            for b in prefix { add(b) }
            for b in u { add(b) }
            if filled > 0 { h ^= RolloutKey.mix(block) }
            h ^= UInt32(truncatingIfNeeded: prefix.count + u.count)
            h ^= h >> 16
            h = h &* 0x85eb_ca6b
            h ^= h >> 13
            h = h &* 0xc2b2_ae35
            h ^= h >> 16
            return h
        }
    }
}

let seedKey = RolloutKey(salt: "seed")
let largeKey = RolloutKey(salt: "large")
let baselineCountries: Set<String> = ["US", "CA", "GB", "DE", "FR"]
let minimumVersion = SemanticVersion("2.3.0")!

@inline(never)
func handWrittenSeed(_ u: User) -> Bool {
    (u.build == .debug || u.build == .alpha) && seedKey.bucket(for: u.userId) < 20_000
}

@inline(never)
func handWrittenLarge(_ u: User) -> Bool {
    (u.build == .debug || u.build == .alpha) && largeKey.bucket(for: u.userId) < 20_000
        && baselineCountries.contains(u.country) && u.appVersion >= minimumVersion && !u.email.hasSuffix("@example.com")
}

// MARK: Contexts

func makeUsers(_ n: Int) -> [User] {
    var g = SeededGenerator(seed: 42)
    let countries = ["US", "CA", "GB", "DE", "FR", "JP", "BR", "IN"]
    let versions = ["2.2.0", "2.3.0", "2.4.1", "3.0.0-beta.1", "1.9.9", "2.10.0"].compactMap(SemanticVersion.init)
    return (0..<n).map { i in
        User(
            build: Build.allCases.randomElement(using: &g)!,
            userId: "user-\(i)",
            country: countries.randomElement(using: &g)!,
            appVersion: versions.randomElement(using: &g)!,
            email: Int.random(in: 0..<10, using: &g) == 0 ? "u\(i)@example.com" : "u\(i)@mail.test")
    }
}

func dictionary(_ u: User) -> EvaluationContext {
    [
        "build": .string(u.build.rawValue), "userId": .string(u.userId), "country": .string(u.country),
        "appVersion": .version(u.appVersion), "email": .string(u.email),
    ]
}

/// A context as hand-written code would hold it for the rule set's schema: the same
/// checked values, one array a context, read by position (as a prepared context's slots).
final class Slots {
    let values: ContiguousArray<Value?>

    init(_ c: PreparedContext, _ names: [String]) { values = ContiguousArray(names.map { c[$0] }) }
}

/// The same logic hand-written against the same values, read by position.
enum HandWrittenOnSlots {
    static let names = ["build", "userId", "country", "appVersion", "email"]
    static let build = 0, userId = 1, country = 2, appVersion = 3, email = 4

    @inline(never)
    static func seed(_ c: Slots) -> Bool {
        guard case .string(let b)? = c.values[build], b == "debug" || b == "alpha",
            case .string(let u)? = c.values[userId]
        else { return false }
        return seedKey.bucket(for: u) < 20_000
    }

    @inline(never)
    static func large(_ c: Slots) -> Bool {
        guard case .string(let b)? = c.values[build], b == "debug" || b == "alpha",
            case .string(let u)? = c.values[userId], largeKey.bucket(for: u) < 20_000,
            case .string(let country)? = c.values[country], baselineCountries.contains(country),
            case .version(let v)? = c.values[appVersion], v >= minimumVersion,
            case .string(let e)? = c.values[email]
        else { return false }
        return !e.hasSuffix("@example.com")
    }
}
