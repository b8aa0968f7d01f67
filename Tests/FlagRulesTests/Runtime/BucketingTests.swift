import Testing

@testable import FlagRules

@Suite struct Murmur3Tests {
    static let vectors: [([UInt8], UInt32, UInt32)] = [
        ([], 0, 0x0000_0000),
        ([], 1, 0x514E_28B7),
        ([], 0xFFFF_FFFF, 0x81F1_6F39),
        ([0x21, 0x43, 0x65, 0x87], 0, 0xF55B_516B),
        ([0x21, 0x43, 0x65, 0x87], 0x5082_EDEE, 0x2362_F9DE),
        ([0, 0, 0, 0], 0, 0x2362_F9DE),
        (Array("abc".utf8), 0, 0xB3DD_93FA),
        (Array("Hello, world!".utf8), 0x9747_B28C, 0x2488_4CBA),
        (Array("The quick brown fox jumps over the lazy dog".utf8), 0x9747_B28C, 0x2FA8_26CD),
    ]

    @Test(arguments: vectors)
    func referenceVector(input: [UInt8], seed: UInt32, expected: UInt32) {
        #expect(Murmur3.hash(input, seed: seed) == expected)
    }

    @Test func incrementalHashingEqualsOneShot() {
        let text = "Feature.flexibleRollout.10:174-and-a-longer-unit-é"
        let bytes = Array(text.utf8)
        let oneShot = Murmur3.hash(bytes, seed: 7)
        for split in 0...bytes.count {
            var h = Murmur3(seed: 7)
            h.combine(Array(bytes.prefix(split)))
            h.combine(Array(bytes.dropFirst(split)))
            #expect(h.finalize() == oneShot)
            // The string path hashes four bytes at a time after aligning to a block.
            var s = Murmur3(seed: 7)
            s.combine(String(decoding: bytes.prefix(split), as: UTF8.self))
            s.combine(String(decoding: bytes.dropFirst(split), as: UTF8.self))
            if String(decoding: bytes.prefix(split), as: UTF8.self).utf8.count == split {
                #expect(s.finalize() == oneShot, "split at \(split)")
            }
        }
        #expect(Murmur3.hash(text, seed: 7) == oneShot)
    }

    /// MurmurHash3 x86 32-bit as the reference writes it: whole blocks, then the tail.
    static func plainMurmur3(_ bytes: [UInt8], seed: UInt32) -> UInt32 {
        func mix(_ k: UInt32) -> UInt32 {
            var k = k &* 0xcc9e_2d51
            k = (k << 15) | (k >> 17)
            return k &* 0x1b87_3593
        }
        var h = seed
        let blocks = bytes.count / 4
        for b in 0..<blocks {
            var k: UInt32 = 0
            for j in 0..<4 { k |= UInt32(bytes[4 * b + j]) << (8 * j) }
            h ^= mix(k)
            h = (h << 13) | (h >> 19)
            h = h &* 5 &+ 0xe654_6b64
        }
        var k: UInt32 = 0
        for (j, byte) in bytes[(4 * blocks)...].enumerated() { k |= UInt32(byte) << (8 * j) }
        if bytes.count % 4 != 0 { h ^= mix(k) }
        h ^= UInt32(truncatingIfNeeded: bytes.count)
        h ^= h >> 16
        h = h &* 0x85eb_ca6b
        h ^= h >> 13
        h = h &* 0xc2b2_ae35
        h ^= h >> 16
        return h
    }

    /// Bytes fed in random pieces, each by the word-at-a-time path (continuing a partial
    /// block of any length) or a byte at a time, against the plain reference.
    @Test func randomPiecesHashAsTheReference() {
        var g = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let bytes = (0..<Int.random(in: 0...40, using: &g)).map { _ in UInt8.random(in: 0...255, using: &g) }
            let seed = UInt32.random(in: 0...UInt32.max, using: &g)
            var h = Murmur3(seed: seed)
            var i = 0
            while i < bytes.count {
                let piece = Array(bytes[i..<min(bytes.count, i + Int.random(in: 1...13, using: &g))])
                if Bool.random(using: &g) {
                    piece.withUnsafeBufferPointer { h.combine(buffer: $0) }
                } else {
                    h.combine(piece)
                }
                i += piece.count
            }
            #expect(h.finalize() == Self.plainMurmur3(bytes, seed: seed), "\(bytes), seed \(seed)")
        }
        for vector in Self.vectors { #expect(Self.plainMurmur3(vector.0, seed: vector.1) == vector.2) }
    }

    @Test(arguments: ["user-42", "a-much-longer-user-identifier-1234567890", "x", ""])
    func rolloutKeysMatchTheReference(_ unit: String) {
        let expected = Bucketing.bucket(hash: Murmur3.hash(Array(("darkMode:" + unit).utf8), seed: 0))
        #expect(Bucketing.rolloutBucket(salt: "darkMode", unit: unit) == expected)
        #expect(Bucketing.bucket(hash: BucketKeyPrefix(salt: "darkMode").hash(string: unit)) == expected)
    }

    @Test(arguments: [0, 7, -7, 174, Int.max, Int.min, 1_000_000_007])
    func decimalUnitsHashLikeTheirText(_ n: Int) {
        var h = Murmur3(seed: 0)
        h.combine(decimal: n)
        #expect(h.finalize() == Murmur3.hash(String(n), seed: 0))
    }
}

@Suite struct RolloutTests {
    static let vectors: [(String, String, UInt32, String)] = [
        ("AB12A", "123", 1_954_468_150, "50.681"),
        ("AB12A", "122", 1_062_108_722, "22.087"),
        ("AB12A", "155", 3_268_232_399, "99.323"),
        ("Feature.flexibleRollout.10", "174", 3_067_997_709, "9.977"),
        ("darkMode", "user-1", 3_333_389_674, "74.896"),
        ("darkMode", "42", 1_299_635_714, "14.357"),
        ("checkout", "Hellø", 3_022_903_271, "71.032"),
    ]

    @Test(arguments: vectors)
    func referenceVector(salt: String, unit: String, hash: UInt32, rollout: String) {
        #expect(Murmur3.hash(salt + ":" + unit, seed: 0) == hash)
        let bucket = Bucketing.rolloutBucket(salt: salt, unit: unit)
        #expect("\(bucket / 1000).\(String(bucket % 1000).leftPadded(3))" == rollout)
        // The integer part is Unleash's normalized value minus one.
        #expect(bucket / 1000 == Int(hash % 100))
    }

    @Test func rolloutInRulesUsesTheDeclarationNameAsSalt() throws {
        let rules = try RuleSet(
            source: """
                flag darkMode { enabled when rollout(userId) < 14.358% }
                flag other { enabled when rollout(userId, "darkMode") < 14.357% }
                """)
        #expect(rules.isEnabled("darkMode", in: ["userId": 42]))  // 14.357 < 14.358
        #expect(!rules.isEnabled("other", in: ["userId": "42"]))  // 14.357 < 14.357 is false
        #expect(!rules.isEnabled("darkMode", in: ["userId": "user-1"]))  // 74.896
    }

    @Test func segmentRolloutUsesTheSegmentNameAsSalt() throws {
        let rules = try RuleSet(
            source: """
                segment darkMode = rollout(userId) < 14.358%
                flag a { enabled when darkMode }
                flag b { enabled when darkMode }
                """)
        #expect(rules.isEnabled("a", in: ["userId": "42"]))
        #expect(rules.isEnabled("b", in: ["userId": "42"]))
        #expect(!rules.isEnabled("a", in: ["userId": "user-1"]))
    }

    @Test func twentyPercentOfAHundredThousandUsers() async throws {
        try await offThePool(computing: true) {
            let rules = try RuleSet(source: "flag f { enabled when rollout(userId) < 20% }")
            var on = 0
            for i in 0..<100_000 where rules.isEnabled("f", in: ["userId": .string("user-\(i)")]) { on += 1 }
            let share = Double(on) / 100_000
            #expect(abs(share - 0.20) <= 0.005, "share \(share)")
        }
    }

    @Test func fractionalPercentagesAreExact() throws {
        // bucket for darkMode:42 is 14357 thousandths
        for (literal, expected) in [
            ("14.357%", false), ("14.358%", true), ("14.3571", true), ("14.357", false), ("15", true), ("14", false),
        ] {
            let rules = try RuleSet(source: "flag darkMode { enabled when rollout(userId) < \(literal) }")
            #expect(rules.isEnabled("darkMode", in: ["userId": 42]) == expected, "\(literal)")
        }
        let ge = try RuleSet(source: "flag darkMode { enabled when rollout(userId) >= 14.357% }")
        #expect(ge.isEnabled("darkMode", in: ["userId": 42]))
        let flipped = try RuleSet(source: "flag darkMode { enabled when 14.357% <= rollout(userId) }")
        #expect(flipped.isEnabled("darkMode", in: ["userId": 42]))
    }

    @Test func rolloutAsAValueIsAPercentage() throws {
        let rules = try RuleSet(source: "flag darkMode { enabled when rollout(userId) ?? 0 == 14.357 }")
        #expect(rules.isEnabled("darkMode", in: ["userId": 42]))
    }
}

@Suite struct SplitTests {
    static let vectors: [(String, String, [String: Int], [String], Int, String)] = [
        ("Feature.Variants.C", "232", [:], ["variant1", "variant2", "variant3"], 18, "variant1"),
        ("Feature.Variants.C", "607", [:], ["variant1", "variant2", "variant3"], 58, "variant2"),
        ("Feature.Variants.C", "656", [:], ["variant1", "variant2", "variant3"], 94, "variant3"),
    ]

    /// A split over no weight chooses nothing, and never traps.
    @Test func splitTargetsOfNoWeightAreNil() {
        #expect(Bucketing.splitTarget(salt: "s", unit: "u", totalWeight: 0) == nil)
        #expect(Bucketing.splitTarget(salt: "s", unit: "u", totalWeight: -5) == nil)
        #expect(Bucketing.split(BucketKeyPrefix(salt: "s"), .string("u"), weights: [0, 0], total: 0).choice == nil)
        #expect(Bucketing.choose(target: 1, weights: []) == nil)
    }

    @Test(arguments: [("232", 18, "variant1"), ("607", 58, "variant2"), ("656", 94, "variant3")])
    func unleashVariantVector(unit: String, target: Int, choice: String) throws {
        #expect(Bucketing.splitTarget(salt: "Feature.Variants.C", unit: unit, totalWeight: 99) == target)
        let rules = try RuleSet(
            source: """
                variant v [variant1, variant2, variant3] {
                  split(userId, "Feature.Variants.C") { variant1: 33, variant2: 33, variant3: 33 }
                }
                """)
        let r = rules.evaluate("v", in: ["userId": .string(unit)])
        #expect(r.variant == choice)
        #expect(r.reason == .split)
        #expect(r.rule == 1)
    }

    @Test(arguments: [("user-1", 663, "oneStep"), ("user-2", 9, "control"), ("user-3", 820, "twoStep")])
    func percentageVector(unit: String, target: Int, choice: String) throws {
        #expect(Bucketing.splitTarget(salt: "checkout", unit: unit, totalWeight: 1000) == target)
        let rules = try RuleSet(
            source: """
                variant checkout [control, oneStep, twoStep] {
                  split(userId) { control: 50%, oneStep: 25%, twoStep: 25% }
                }
                """)
        #expect(rules.variant("checkout", in: ["userId": .string(unit)]) == choice)
    }

    @Test func fiftyTwentyFiveTwentyFiveOverAHundredThousandUsers() async throws {
        try await offThePool(computing: true) {
            let rules = try RuleSet(
                source: """
                    variant checkout [control, oneStep, twoStep] {
                      split(userId) { control: 50%, oneStep: 25%, twoStep: 25% }
                    }
                    """)
            var counts: [String: Int] = [:]
            for i in 0..<100_000 { counts[rules.variant("checkout", in: ["userId": .string("u\(i)")]), default: 0] += 1 }
            for (name, expected) in [("control", 0.5), ("oneStep", 0.25), ("twoStep", 0.25)] {
                let share = Double(counts[name] ?? 0) / 100_000
                #expect(abs(share - expected) <= 0.005, "\(name): \(share)")
            }
        }
    }

    /// A split reading its unit in place (a string, an int or a path's field; a
    /// prepared context or a dictionary) chooses what `Bucketing.splitTarget` and
    /// `choose` give for the unit's text; an absent or mistyped unit falls to the default.
    @Test func splitsReadingInPlaceChooseAsTheBucketing() throws {
        let rules = try RuleSet(
            source: """
                context {
                  userId : string
                  seat   : int
                  org    : { id : string }
                }
                variant byUser [a, b, c] { split(userId) { a: 20%, b: 30%, c: 50% } }
                variant bySeat [a, b, c] { split(seat) { a: 20%, b: 30%, c: 50% } }
                variant byOrg [a, b, c] = c { split(org.id) { a: 20%, b: 30%, c: 50% } }
                """)
        func expected(_ salt: String, _ unit: String) -> String {
            let target = Bucketing.splitTarget(salt: salt, unit: unit, totalWeight: 1_000)!
            return ["a", "b", "c"][Bucketing.choose(target: target, weights: [200, 300, 500])!]
        }
        var g = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let user = String((0..<Int.random(in: 0...24, using: &g)).map { _ in "ab-19é".randomElement(using: &g)! })
            let seat = Int.random(in: -1_000_000...1_000_000, using: &g)
            let context: EvaluationContext = ["userId": .string(user), "seat": .int(seat), "org": .object(["id": .string(user)])]
            let prepared = rules.prepare(context)
            for (name, unit) in [("byUser", user), ("bySeat", String(seat)), ("byOrg", user)] {
                #expect(rules.variant(name, in: context) == expected(name, unit), "\(name) of \(unit)")
                #expect(rules.variant(rules.handle(name), in: prepared) == expected(name, unit), "\(name) of \(unit), prepared")
            }
        }
        let mistyped: EvaluationContext = ["userId": .int(4), "seat": .string("x"), "org": .object(["id": .int(1)])]
        for name in ["byUser", "bySeat", "byOrg"] {
            #expect(rules.evaluate(name, in: mistyped).reason == .default)
            #expect(rules.evaluate(rules.handle(name), in: rules.prepare([:])).reason == .default)
        }
    }

    @Test func zeroWeightIsNeverChosen() throws {
        let rules = try RuleSet(source: "variant v [a, b, c] { split(id) { a: 0, b: 1, c: 0 } }")
        for i in 0..<500 { #expect(rules.variant("v", in: ["id": .int(i)]) == "b") }
        #expect(Bucketing.choose(target: 1, weights: [0, 1, 0]) == 1)
    }

    @Test func valueSplitsChooseLiterals() throws {
        let rules = try RuleSet(source: "value v: int = 0 { split(id) { 10: 50%, 20: 50% } }")
        var seen = Set<Int>()
        for i in 0..<200 { seen.insert(rules.value("v", in: ["id": .int(i)], default: -1)) }
        #expect(seen == [10, 20])
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}

@Suite struct FNV1aTests {
    /// A text's bytes hash alike read in place and one at a time, continuing from any hash.
    @Test func textsHashAsTheirBytes() {
        var g = SystemRandomNumberGenerator()
        #expect(FNV1a.hash("".utf8) == FNV1a.offsetBasis)
        #expect(FNV1a.hash("a".utf8) == 0xaf63_dc4c_8601_ec8c)
        for _ in 0..<500 {
            let text = String((0..<Int.random(in: 0...40, using: &g)).map { _ in "aZ9-_é🦝\"".randomElement(using: &g)! })
            let from = UInt64.random(in: 0...UInt64.max, using: &g)
            #expect(FNV1a.hash(text.utf8, from: from) == FNV1a.hash(Array(text.utf8), from: from))
            #expect(FNV1a.hash(text.utf8) == FNV1a.hash(AnySequence(text.utf8)))
        }
    }
}
