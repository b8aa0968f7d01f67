import Testing

@testable import FlagRules

@Suite struct LiteralSetTests {
    /// Every string is found at its position and nothing else is, for scanned sets (up to
    /// eight strings) and hashed ones.
    @Test(arguments: [0, 1, 3, 8, 9, 100, 5_000, 100_000])
    func findsEveryStringAndNothingElse(_ count: Int) async {
        await offThePool(computing: true) {
            let strings = (0..<count).map { "k\($0)" }
            let set = LiteralSet(strings)
            #expect(set.count == count)
            #expect(set.isHashed == (count > LiteralSet.scanLimit))
            for (i, s) in strings.enumerated() { #expect(set.index(of: s) == i, "\(s)") }
            for i in count..<(count + 50) { #expect(!set.contains("k\(i)")) }
            #expect(!set.contains("") && !set.contains("k") && !set.contains("k0 "))
        }
    }

    /// Short keys and long ones (UUIDs) in one set.
    @Test func aHundredThousandShortAndLongKeys() {
        let strings = (0..<100_000).map { $0 % 2 == 0 ? "s\($0)" : "0000-\(100_000_000 + $0)-aaaa-bbbb-cccc" }
        let set = LiteralSet(strings)
        for i in stride(from: 0, to: strings.count, by: 97) { #expect(set.index(of: strings[i]) == i) }
        #expect(!set.contains("0000-100000000-aaaa-bbbb-cccd") && !set.contains("s1"))
    }

    /// A string listed twice keeps its first position.
    @Test(arguments: [4, 40])
    func duplicatesKeepTheirFirstPosition(_ count: Int) {
        let strings = (0..<count).map { "d\($0 % (count / 2))" }
        let set = LiteralSet(strings)
        for i in 0..<(count / 2) { #expect(set.index(of: "d\(i)") == i) }
    }

    /// Random lists with duplicates, short and long strings, looked up by copies that share
    /// no storage with the listed strings and by the listed strings themselves: every
    /// answer is the plain dictionary's (a string's first position).
    @Test(arguments: [1, 2, 3, 5, 8, 9, 17, 200])
    func agreesWithADictionary(_ count: Int) {
        var random = SeededGenerator(seed: UInt64(count) &* 7_919)
        for _ in 0..<40 {
            let pool = (0..<max(1, count / 2)).map { k in
                String(repeating: "n", count: Int.random(in: 0...40, using: &random)) + "\(k)"
            }
            let strings = (0..<count).map { _ in pool.randomElement(using: &random)! }
            var plain: [String: Int] = [:]
            for (i, s) in strings.enumerated() where plain[s] == nil { plain[s] = i }
            let set = LiteralSet(strings)
            for s in strings + pool + ["", "n", "nn0x"] {
                let copy = String(decoding: Array(s.utf8), as: UTF8.self)
                #expect(set.index(of: s) == plain[s], "\(s) in \(strings)")
                #expect(set.index(of: copy) == plain[s], "\(s) in \(strings)")
                #expect(set.contains(s) == (plain[s] != nil))
            }
        }
    }

    /// A lookup given the string's hash (as a prepared context gives it) answers as one
    /// that hashes the string, in scanned and hashed sets; the hash of a string is that of
    /// its bytes, however the string is held.
    @Test(arguments: [1, 8, 300, 20_000])
    func lookupsWithAKnownHashAgree(_ count: Int) {
        let strings = (0..<count).map { $0 % 3 == 0 ? "a string longer than fifteen bytes \($0)" : "m\($0)" }
        let set = LiteralSet(strings)
        for probe in strings.prefix(200) + ["m\(count)", "", "zz", "a string longer than fifteen bytes"] {
            #expect(set.contains(probe, hash: StringHash.key(probe)) == set.contains(probe), "\(probe)")
            #expect(set.contains(probe) == strings.contains(probe), "\(probe)")
        }
        let bridged = String(decoding: Array("a string longer than fifteen bytes 0".utf8), as: UTF8.self)
        #expect(StringHash.of(bridged) == StringHash.of("a string longer than fifteen bytes 0"))
        #expect(set.contains(bridged))
    }

    /// Keys of every length around the word boundaries, and near misses that differ from a
    /// key in one byte, in the length, or by a NUL.
    @Test(arguments: [6, 40])
    func everyKeyLengthAndItsNearMisses(_ size: Int) {
        let keys = (0...40).map { String(repeating: "x", count: $0) + "y" }
        let set = LiteralSet(Array(keys.prefix(size)))
        for (i, k) in keys.prefix(size).enumerated() {
            #expect(set.index(of: k) == i)
            #expect(!set.contains(k + "\u{0}"))
            #expect(!set.contains(String(k.dropLast()) + "z"))
            #expect(!set.contains(String(k.dropLast())) || k == "y")
        }
    }

    /// Strings compare by their Unicode scalars, without normalisation: "é" written as one
    /// scalar and as "e" plus a combining accent are different strings.
    @Test(arguments: [2, 20])
    func stringsCompareByScalarsNotByCanonicalEquivalence(_ size: Int) {
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        let set = LiteralSet([composed] + (1..<size).map { "other\($0)" })
        #expect(set.contains(composed) && !set.contains(decomposed))
        #expect(composed == decomposed)  // Swift's own `==` would call them equal
        #expect(!Comparison.bytesEqual(composed, decomposed) && Comparison.bytesEqual(composed, "caf\u{E9}"))
    }

    /// Non-contiguous strings (bridged or lazily built) are read through a copy of their bytes.
    @Test func substringsAndBuiltStringsAreFound() {
        let set = LiteralSet((0..<50).map { "key-\($0)" })
        let built = String("xxkey-7xx".dropFirst(2).dropLast(2))
        #expect(set.index(of: built) == 7)
        #expect(set.index(of: "key-\(49)") == 49)
    }

    /// A scanned set finds a string that is one of its elements bit for bit (a small
    /// string, or the same storage) without reading its bytes, and an equal string held
    /// elsewhere by its bytes: the two answer alike.
    @Test func identicalAndEqualStringsAreFoundAlike() {
        let long = "a string longer than fifteen bytes"
        let set = LiteralSet(["debug", long, "release", "debug"])
        let copy = String(decoding: Array(long.utf8), as: UTF8.self)
        #expect(!copy._isIdentical(to: long) && "debug"._isIdentical(to: String("xdebug".dropFirst())))
        #expect(set.index(of: long) == 1 && set.index(of: copy) == 1)
        #expect(set.index(of: String("xdebug".dropFirst())) == 0)
        #expect(set.index(of: "releas") == nil && set.index(of: long + " ") == nil && set.index(of: "Debug") == nil)
        #expect(Comparison.bytesEqual(long, copy) && !Comparison.bytesEqual(long, copy + "x"))
    }

    /// A hashed set's filter lets every string of the set through and stops most others
    /// (about one in nine gets through to the table, at eight bits a string).
    @Test(arguments: [9, 1_000, 100_000])
    func theFilterStopsMostStringsNotInTheSet(_ count: Int) async {
        await offThePool(computing: true) {
            let strings = (0..<count).map { $0 % 2 == 0 ? "c\($0)" : "a string longer than fifteen bytes \($0)" }
            let set = LiteralSet(strings)
            #expect(strings.allSatisfy(set.filterAdmits))
            let others = (0..<20_000).map { $0 % 2 == 0 ? "x\($0)" : "another string, not in the set \($0)" }
            let admitted = others.filter(set.filterAdmits).count
            #expect(admitted < others.count / 5, "\(admitted) of \(others.count) got through")
            #expect(!others.contains(where: set.contains))
            #expect(LiteralSet(["a", "b"]).filterAdmits("z"))
        }
    }
}
