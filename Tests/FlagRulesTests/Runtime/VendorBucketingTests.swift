import Foundation
import Testing

@testable import FlagRules

/// Other systems' bucketing, bit for bit: vectors computed by the vendors' own SDKs
/// (GrowthBook's Python SDK 4.0.0, `growthbook.core.gbhash`; LaunchDarkly's Python server SDK
/// 9.20.0, `_bucket_context`'s hash), and LaunchDarkly's published bucketing vectors.
@Suite struct VendorBucketingTests {
    /// (seed, value, hash version, k), where GrowthBook's n is k / 1,000 (v1) or k / 10,000 (v2).
    static let growthbook: [(String, String, Int, Int)] = [
        ("", "1", 1, 444),
        ("", "1", 2, 3263),
        ("", "123", 1, 11),
        ("", "123", 2, 4547),
        ("", "u-42", 1, 153),
        ("", "u-42", 2, 8936),
        ("", "user-abcdef", 1, 458),
        ("", "user-abcdef", 2, 4349),
        ("", "\u{FF}", 1, 606),
        ("", "\u{FF}", 2, 6178),
        ("", "\u{65E5}\u{672C}", 1, 396),
        ("", "\u{65E5}\u{672C}", 2, 2632),
        ("", "\u{1F600}x", 1, 192),
        ("", "\u{1F600}x", 2, 5165),
        ("", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 1, 181),
        ("", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 2, 9137),
        ("a", "1", 1, 751),
        ("a", "1", 2, 8633),
        ("a", "123", 1, 790),
        ("a", "123", 2, 4216),
        ("a", "u-42", 1, 536),
        ("a", "u-42", 2, 9980),
        ("a", "user-abcdef", 1, 817),
        ("a", "user-abcdef", 2, 1162),
        ("a", "\u{FF}", 1, 45),
        ("a", "\u{FF}", 2, 6652),
        ("a", "\u{65E5}\u{672C}", 1, 743),
        ("a", "\u{65E5}\u{672C}", 2, 703),
        ("a", "\u{1F600}x", 1, 11),
        ("a", "\u{1F600}x", 2, 7791),
        ("a", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 1, 628),
        ("a", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 2, 1704),
        ("checkout-2026", "1", 1, 489),
        ("checkout-2026", "1", 2, 2410),
        ("checkout-2026", "123", 1, 220),
        ("checkout-2026", "123", 2, 9278),
        ("checkout-2026", "u-42", 1, 666),
        ("checkout-2026", "u-42", 2, 5025),
        ("checkout-2026", "user-abcdef", 1, 639),
        ("checkout-2026", "user-abcdef", 2, 7136),
        ("checkout-2026", "\u{FF}", 1, 171),
        ("checkout-2026", "\u{FF}", 2, 1921),
        ("checkout-2026", "\u{65E5}\u{672C}", 1, 705),
        ("checkout-2026", "\u{65E5}\u{672C}", 2, 8204),
        ("checkout-2026", "\u{1F600}x", 1, 573),
        ("checkout-2026", "\u{1F600}x", 2, 9926),
        ("checkout-2026", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 1, 102),
        ("checkout-2026", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 2, 514),
        ("\u{F1}-seed", "1", 1, 303),
        ("\u{F1}-seed", "1", 2, 5941),
        ("\u{F1}-seed", "123", 1, 272),
        ("\u{F1}-seed", "123", 2, 7398),
        ("\u{F1}-seed", "u-42", 1, 450),
        ("\u{F1}-seed", "u-42", 2, 4436),
        ("\u{F1}-seed", "user-abcdef", 1, 89),
        ("\u{F1}-seed", "user-abcdef", 2, 985),
        ("\u{F1}-seed", "\u{FF}", 1, 333),
        ("\u{F1}-seed", "\u{FF}", 2, 8726),
        ("\u{F1}-seed", "\u{65E5}\u{672C}", 1, 303),
        ("\u{F1}-seed", "\u{65E5}\u{672C}", 2, 5878),
        ("\u{F1}-seed", "\u{1F600}x", 1, 603),
        ("\u{F1}-seed", "\u{1F600}x", 2, 815),
        ("\u{F1}-seed", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 1, 318),
        ("\u{F1}-seed", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 2, 5030),
        ("\u{1F600}", "1", 1, 241),
        ("\u{1F600}", "1", 2, 485),
        ("\u{1F600}", "123", 1, 206),
        ("\u{1F600}", "123", 2, 1256),
        ("\u{1F600}", "u-42", 1, 684),
        ("\u{1F600}", "u-42", 2, 5267),
        ("\u{1F600}", "user-abcdef", 1, 527),
        ("\u{1F600}", "user-abcdef", 2, 5279),
        ("\u{1F600}", "\u{FF}", 1, 739),
        ("\u{1F600}", "\u{FF}", 2, 389),
        ("\u{1F600}", "\u{65E5}\u{672C}", 1, 521),
        ("\u{1F600}", "\u{65E5}\u{672C}", 2, 5882),
        ("\u{1F600}", "\u{1F600}x", 1, 493),
        ("\u{1F600}", "\u{1F600}x", 2, 1676),
        ("\u{1F600}", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 1, 888),
        ("\u{1F600}", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 2, 9294),
    ]

    @Test func growthbookHashesAsItsSDK() {
        for (seed, value, version, k) in Self.growthbook {
            let got = VendorBucketing.growthbook(seed: seed, unit: value, version: version)
            #expect(got?.k == k && got?.scale == (version == 1 ? 1_000 : 10_000), "\\(seed) \\(value) v\\(version)")
        }
        // An empty unit is in no rollout or experiment of GrowthBook's.
        #expect(VendorBucketing.growthbook(seed: "s", unit: "", version: 2) == nil)
    }

    /// (salt, value, the bucket as a hexadecimal double).
    static let launchdarkly: [(String, String, String)] = [
        ("darkMode.abc123", "", "0x1.de1ca01965d11p-1"),
        ("darkMode.abc123", "userKeyA", "0x1.67a8b5ed84cebp-2"),
        ("darkMode.abc123", "userKeyB", "0x1.78ac8d7fab4eep-3"),
        ("darkMode.abc123", "userKeyC", "0x1.df661ab250e1bp-2"),
        ("darkMode.abc123", "123", "0x1.3542ca57a6cc1p-1"),
        ("darkMode.abc123", "\u{65E5}\u{672C}", "0x1.8b7f9093de305p-3"),
        ("flag.salt", "", "0x1.b6886d9bc61c1p-3"),
        ("flag.salt", "userKeyA", "0x1.da1c928563e5bp-2"),
        ("flag.salt", "userKeyB", "0x1.f24e1f0ae3117p-1"),
        ("flag.salt", "userKeyC", "0x1.6654891ed9d9dp-2"),
        ("flag.salt", "123", "0x1.d9dafeba68481p-3"),
        ("flag.salt", "\u{65E5}\u{672C}", "0x1.36fc939d606c0p-2"),
        ("42", "", "0x1.fceca2a58c4cdp-1"),
        ("42", "userKeyA", "0x1.14d59a70d396fp-1"),
        ("42", "userKeyB", "0x1.73b836a95b9fap-5"),
        ("42", "userKeyC", "0x1.90b64c61657f3p-1"),
        ("42", "123", "0x1.f23a7c3e408c2p-1"),
        ("42", "\u{65E5}\u{672C}", "0x1.863680523d02cp-3"),
    ]

    @Test func launchdarklyBucketsAsItsSDK() throws {
        for (salt, value, hex) in Self.launchdarkly {
            let expected = try #require(Double(hex))
            #expect(VendorBucketing.launchdarkly(salt: salt, unit: value) == expected, "\\(salt).\\(value)")
        }
        // LaunchDarkly's published vectors (its SDKs' bucketing tests): flag key "hashKey",
        // salt "saltyA".
        for (key, bucket) in [("userKeyA", 0.42157587), ("userKeyB", 0.6708485), ("userKeyC", 0.10343106)] {
            #expect(abs(VendorBucketing.launchdarkly(salt: "hashKey.saltyA", unit: key) - bucket) < 1e-7, "\\(key)")
        }
    }

    /// SHA-1's own test vectors (FIPS 180-4's examples), across block boundaries.
    @Test func sha1() {
        func hex(_ s: String) -> String { SHA1.digest(Array(s.utf8)).map { String(format: "%02x", $0) }.joined() }
        #expect(hex("") == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(hex("abc") == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        #expect(hex(String(repeating: "a", count: 1_000)) == "291e9a6c66994949b57ba5e650361e98fc36b1ba")
    }

    /// In the language: `rollout(unit, seed, growthbook) < N%` includes a unit exactly when
    /// GrowthBook's `n < coverage` does; `launchdarkly` when its bucket is below the running
    /// weight; an int unit is its decimal text; GrowthBook leaves an empty unit out.
    @Test func rolloutsInTheLanguageBucketAsTheVendors() throws {
        for (seed, value, version, k) in Self.growthbook {
            let scheme = version == 1 ? "growthbookV1" : "growthbook"
            for coverage in [0, 1, 25, 50, 99, 100] {
                let rules = try RuleSet(source: "flag f { enabled when rollout(u, \"\(seed)\", \(scheme)) < \(coverage)% }")
                let n = Double(k) / Double(version == 1 ? 1_000 : 10_000)
                #expect(rules.isEnabled("f", in: ["u": .string(value)]) == (n < Double(coverage) / 100), "\(seed) \(value)")
                let explained = rules.explain("f", in: ["u": .string(value)])?.resolution
                #expect(explained == rules.evaluate("f", in: ["u": .string(value)]))
            }
        }
        let ld = try RuleSet(source: "flag f { enabled when rollout(u, \"hashKey.saltyA\", launchdarkly) < 42.158% }")
        #expect(ld.isEnabled("f", in: ["u": "userKeyA"]) && !ld.isEnabled("f", in: ["u": "userKeyB"]))
        let ints = try RuleSet(
            source:
                "flag f { enabled when rollout(u, \"s\", growthbook) < 50% }\nflag g { enabled when rollout(u, \"s\", growthbook) < 50% }")
        for i in 0..<200 { #expect(ints.isEnabled("f", in: ["u": .int(i)]) == ints.isEnabled("g", in: ["u": .string(String(i))])) }
        let empty = try RuleSet(source: "flag f { enabled when not (rollout(u, \"s\", growthbook) < 100%) }")
        #expect(empty.evaluate("f", in: ["u": ""]).reason == .default)
    }

    @Test(arguments: [
        ("rollout(u, \"s\", growthbok) < 5%", "'growthbok' is not a bucketing scheme; did you mean 'growthbook'?"),
        ("rollout(u, \"s\", \"growthbook\") < 5%", "this is not a bucketing scheme"),
        ("rollout(u, \"s\", growthbook, 2) < 5%", "rollout() takes a unit, an optional salt and an optional bucketing scheme"),
    ])
    func schemesAreChecked(_ expression: String, _ message: String) {
        do {
            _ = try RuleSet(source: "flag f { enabled when \(expression) }")
            Issue.record("loaded")
        } catch {
            #expect(error.errors.first?.message.hasPrefix(message) == true, "\(error.errors.map(\.message))")
        }
    }

    /// Splits by another system's bucketing choose what that system's SDK chooses: the
    /// choices of users u-0 … u-299, computed by GrowthBook's Python SDK 4.0.0
    /// (`chooseVariation(gbhash(…), getBucketRanges(…))`) and by LaunchDarkly's 9.20.0
    /// algorithm (`_variation_index_for_context`), and by flagd-core 2.0.0's `fractional`
    /// (openfeature-flagd-core on PyPI: the shorthand, `[flagKey, targetingKey]`, and a unit
    /// of its own).
    @Test func splitsChooseAsTheVendors() throws {
        let cases: [(String, String, [String], String)] = [
            (
                #"variant v [a, b, c] = a { split(u, "exp-seed", growthbook) { a: 20%, b: 30%, c: 50% } }"#, "v", ["a", "b", "c"],
                "022202221212111212221221022121022022210122222012212211022002111211222122221221222221020022111210222212212210011220112020110222221012222202121122100222010212222220110110212110200101122021200222201122122122212211222210211120222020222222011022112121211222212101010202021220221022212202001221212012022111"
            ),
            (
                #"variant v [a, b] = a { split(u, "exp-seed", growthbookV1) { a: 333, b: 667 } }"#, "v", ["a", "b"],
                "001111110000000110010100010110101111101101111111111101111101011110111111110101111000011110011111000101110010010000010101110101111111111101111011111111111110101011111010111100011101001111011111110111001111111010101011111001011001011111011111111110111011101011111100111101001111011111111001111101101010"
            ),
            (
                #"variant v [a, b, c] = a { split(u, "flagKey.salty", launchdarkly) { a: 60000, b: 25000, c: 15000 } }"#, "v",
                ["a", "b", "c"],
                "012011021020121011110001200011000001002002101002010000011010200011002000000000010211001000210102102001210010012012101100100100122200020000001100000011100002020222210000021010000000200100000010200001010022100211100111001100101010000011001020001000000210100001010000000000020001000122000000120211211010"
            ),
            (
                #"variant v [a, b, c] = a { split(u, "color-flag", flagd) { a: 20, b: 30, c: 50 } }"#, "v", ["a", "b", "c"],
                "111222222221001220122221112120222222102110202112100101202211211022212122122220102222122021222110102121111020122221110122211201120100000221222111222011102122121120210212011022222222212121200122202120021121020211021012210222122111211122122122221200022101002112222110011122202022222202001121222002111221"
            ),
            (
                #"variant v [a, b] = a { split(u, "", flagd) { a: 1, b: 2 } }"#, "v", ["a", "b"],
                "101110110110111110111101111110101100110101000101000111101100011000011001111111011110101110011011110111011111011111111111110101101110011010111001011110011111011111010101111101101010111110110001101011111011010111010111110011010111011000011110101001111110110110111011101111101100111010111011111111111001"
            ),
        ]
        for (source, name, variants, expected) in cases {
            let rules = try RuleSet(source: source)
            var got = ""
            for i in 0..<300 {
                let context: EvaluationContext = ["u": .string("u-\(i)")]
                let r = rules.evaluate(name, in: context)
                #expect(r.reason == .split)
                got += r.variant.flatMap { variants.firstIndex(of: $0) }.map(String.init) ?? "-"
                #expect(rules.explain(name, in: context)?.resolution == r)
                #expect(rules.evaluate(rules.handle(name), in: rules.prepare(context)) == r)
            }
            #expect(got == expected, "\(source)")
        }
        // flagd's own vectors (flagd-core 2.0.0): the shorthand needs a non-empty string
        // key; a unit of its own may be an int (CBOR's integers).
        let vectors: [(String, EvaluationContext, String?)] = [
            ("color-flag", ["u": "user-1"], "b"), ("f", ["u": "user-2"], "c"), ("color-flag", ["u": "alice"], "c"),
            ("f", ["u": "bob"], "c"), ("color-flag", ["u": ""], nil), ("color-flag", ["u": "é-ü"], "b"), ("f", ["u": "é-ü"], "c"),
            ("color-flag", ["u": .string(String(repeating: "x", count: 30))], "a"),
            ("color-flag", ["u": .string(String(repeating: "a", count: 300))], "b"), ("color-flag", ["u": 7], nil),
        ]
        for (key, context, expected) in vectors {
            let rules = try RuleSet(source: #"variant v [a, b, c] = a { split(u, "\#(key)", flagd) { a: 25, b: 50, c: 25 } }"#)
            #expect(rules.evaluate("v", in: context).variant == (expected ?? "a"), "\(key) \(context)")
            #expect(rules.evaluate("v", in: context).reason == (expected == nil ? .default : .split))
        }
        for (unit, expected) in [("hello", "c"), ("targeting", "b")] as [(String, String)] {
            let rules = try RuleSet(source: #"variant v [a, b, c] = a { split(u, "", flagd) { a: 1, b: 1, c: 1 } }"#)
            #expect(rules.evaluate("v", in: ["u": .string(unit)]).variant == expected)
        }
        for (unit, expected) in [(7, "b"), (-3, "c"), (100_000, "b")] {
            let rules = try RuleSet(source: #"variant v [a, b, c] = a { split(u, "", flagd) { a: 1, b: 1, c: 1 } }"#)
            #expect(rules.evaluate("v", in: ["u": .int(unit)]).variant == expected)
        }
        // flagd has no percentage rollout.
        #expect(throws: RuleSetError.self) { try RuleSet(source: #"flag f { enabled when rollout(u, "k", flagd) < 5% }"#) }
        // LaunchDarkly's whole-number weights are 100,000ths.
        #expect(throws: RuleSetError.self) {
            try RuleSet(source: #"variant v [a, b] = a { split(u, "k.s", launchdarkly) { a: 1, b: 1 } }"#)
        }
    }
}
