import Testing
import Foundation
@testable import FlagRules

@Suite struct StringTableTests {
    @Test(arguments: [0, 1, 3, 8, 9, 100, 5_000])
    func findsEveryStringAndNothingElse(_ count: Int) {
        let strings = (0..<count).map { "s\($0)-é" }
        let table = StringTable(strings)
        for (i, s) in strings.enumerated() { #expect(table.index(of: s) == i) }
        #expect(table.index(of: "missing") == nil)
        #expect(table.index(of: "") == nil)
        #expect(table.count == count)
    }

    /// Short keys and keys longer than 15 bytes (by fingerprint and offset) in one table.
    @Test func aHundredThousandShortAndLongKeys() {
        let strings = (0..<100_000).map { "c\($0)" } + (0..<1_000).map { "a longer key, past fifteen bytes: \($0)" }
        let table = StringTable(strings)
        #expect(table.layout == .wideLines)
        #expect(table.overflowCount < 50)
        for (i, s) in strings.enumerated() where table.index(of: s) != i { Issue.record("\(s) not at \(i)"); break }
        for i in 100_000..<101_000 where table.contains("c\(i)") { Issue.record("c\(i) found"); break }
        #expect(!table.contains("a longer key, past fifteen bytes: 1000"))
    }

    /// Large tables answer most misses from their filter; every key, short, long or in the
    /// overflow list, gets through it.
    @Test(arguments: [true, false])
    func largeTablesHaveAMissFilterThatAdmitsEveryKey(_ everyKeyInOverflow: Bool) {
        let count = StringTableStorage.filterMinimum
        let strings = (0..<count).map { $0 % 5 == 0 ? "a key longer than fifteen bytes \($0)" : "u\($0)" }
        let table = StringTable(strings, everyKeyInOverflow: everyKeyInOverflow)
        #expect(table.hasMissFilter)
        #expect(everyKeyInOverflow ? table.overflowCount == count : table.overflowCount < 10)
        for (i, s) in strings.enumerated() where !table.missFilterAdmits(s) || table.index(of: s) != i {
            Issue.record("\(s) not at \(i)")
            break
        }
        let misses = (count..<2 * count).map { $0 % 5 == 0 ? "a key longer than fifteen bytes \($0)" : "u\($0)" }
        #expect(!misses.contains(where: table.contains))
        let admitted = misses.filter(table.missFilterAdmits).count
        #expect(admitted < count / 20, "\(admitted) of \(count) misses passed the filter")
        #expect(!StringTable(strings.dropLast()).hasMissFilter)
    }

    /// Keys of at most 7 bytes take 8-byte slots; longer keys, even with the same first
    /// bytes, are never found in such a table. One longer key makes the slots 16 bytes.
    @Test(arguments: [9, 1_000, 20_000])
    func tablesOfShortKeysHaveNarrowSlots(_ count: Int) {
        let strings = (0..<count).map { String($0 * 7919 % 10_000_000, radix: 36) } + ["", "\u{0}", "é"]
        let table = StringTable(strings)
        #expect(table.layout == .narrowLines)
        for (i, s) in strings.enumerated() where table.index(of: s) != i { Issue.record("\(s) not at \(i)"); break }
        for s in strings.prefix(200) {
            for longer in [s + "\u{0}", s + "x", s + "1234567", s + "123456789abcdef", s + String(repeating: "y", count: 20)]
            where table.contains(longer) && !strings.contains(longer) {
                Issue.record("\(longer) found")
            }
        }
        #expect(!table.contains("\u{0}\u{0}"))
        #expect(StringTable(strings + ["8 bytes!"]).layout == .wideLines)
        #expect(StringTable(strings + ["fifteen bytes!!"]).layout == .wideLines)
        #expect(StringTable(strings + ["sixteen bytes!!!"]).layout == .wideLines)
        #expect(StringTable(Array(strings.prefix(8))).layout == .scanned)
        let overflowing = StringTable(strings, everyKeyInOverflow: true)
        #expect(overflowing.layout == .narrowLines && overflowing.overflowCount == Set(strings).count)
        for (i, s) in strings.enumerated().prefix(300) { #expect(overflowing.index(of: s) == i) }
        #expect(!overflowing.contains("12345678"))
    }

    /// Short keys sit in 64-byte lines, half full: a key whose first line is full goes
    /// on to up to three more lines, and when those are full too, to the overflow list. Keys are chosen
    /// so that more share one first line than it holds: twenty keys of at most 7 bytes
    /// (eight a line), or ten of 10 to 14 bytes (four a line).
    @Test(arguments: [true, false])
    func shortKeysSpillToASecondLineAndThenTheOverflowList(_ narrow: Bool) {
        let lines = narrow ? 10 : 20  // for 40 keys, four or two a line
        func key(_ i: Int) -> String { narrow ? "k\(i)" : "wide-\(i)-key" }
        func firstLine(_ s: String) -> Int {
            var s = s
            return s.withUTF8 { TableHash.range(TableHash.inline(PackedKey(inline: $0)), lines) }
        }
        let crowding = narrow ? 20 : 10
        let crowded = (0..<100_000).lazy.map(key).filter { firstLine($0) == 3 }.prefix(crowding)
        let others = (0..<100_000).lazy.map { "o\($0)" + (narrow ? "" : "-padding") }.filter { firstLine($0) != 3 }.prefix(40 - crowding)
        let strings = Array(crowded) + Array(others)
        let table = StringTable(strings)
        #expect(table.layout == (narrow ? .narrowLines : .wideLines) && !table.hasMissFilter)
        #expect(table.displacedCount + table.overflowCount >= crowding - (narrow ? 8 : 4))
        #expect(table.displacedCount > 0)
        for (i, s) in strings.enumerated() { #expect(table.index(of: s) == i, "\(s)") }
        let misses = (0..<100_000).lazy.map(key).filter { firstLine($0) == 3 }.dropFirst(crowding).prefix(50)
        for s in misses { #expect(!table.contains(s), "\(s)") }
        #expect(!table.contains("k") && !table.contains("wide--key"))
    }

    /// Lists like the benchmark's: 100,000 short keys in lines (of at most 7 bytes, or of
    /// 11 like user ids), behind a miss filter; each found at its position, those in
    /// later lines and the overflow list too, and none of 100,000 others.
    @Test(arguments: [true, false])
    func aHundredThousandShortKeysInLines(_ narrow: Bool) {
        func key(_ i: Int) -> String { narrow ? "c\(i)" : "user-\(100_000 + i)" }
        let strings = (0..<100_000).map(key)
        let table = StringTable(strings)
        #expect(table.layout == (narrow ? .narrowLines : .wideLines) && table.hasMissFilter)
        #expect(table.displacedCount > 0 && table.displacedCount < (narrow ? 3_000 : 6_000), "\(table.displacedCount) keys displaced")
        #expect(table.overflowCount < 50, "\(table.overflowCount) keys in the overflow list")
        for (i, s) in strings.enumerated() where table.index(of: s) != i { Issue.record("\(s) not at \(i)"); break }
        for i in 100_000..<200_000 where table.contains(key(i)) { Issue.record("\(key(i)) found"); break }
        let admitted = (100_000..<200_000).filter { table.missFilterAdmits(key($0)) }.count
        #expect(admitted < 5_000, "\(admitted) of 100,000 misses passed the filter")
    }

    /// A lookup given the key's hash (`TableHash.key`, as a prepared context keeps it)
    /// answers as one that hashes the key: in scanned tables, narrow and wide lines, with
    /// a miss filter, and for long keys; and the key hash of a string is that of its bytes,
    /// however the string is held. (Scanned tables of 1 to 8 strings, padded to 4 or 8
    /// slots, answer with no branch on the answer.)
    @Test(arguments: [1, 4, 5, 8, 300, 20_000])
    func lookupsWithAKnownHashAgree(_ count: Int) {
        for long in [false, true] {
            let strings = (0..<count).map { long && $0 % 2 == 0 ? "a key longer than fifteen bytes \($0)" : "k\($0)" }
            let table = StringTable(strings)
            for i in stride(from: 0, to: 2 * count, by: max(1, count / 500)) {
                let s = i < count ? strings[i] : "k\(i)"
                #expect(table.contains(s, keyHash: TableHash.key(s)) == (i < count), "\(s)")
            }
            // Not a padding slot's key either.
            #expect(!table.contains("", keyHash: TableHash.key("")))
            // A scanned table never has an overflow list (its lookup does not ask one).
            if count <= StringTableStorage.scanLimit {
                let scanned = StringTable(strings, everyKeyInOverflow: true)
                #expect(scanned.layout == .scanned && scanned.overflowCount == 0)
            }
        }
        let bytes = Array("a key longer than fifteen bytes".utf8)
        let made = String(decoding: bytes, as: UTF8.self)
        let bridged = NSString(string: made) as String
        #expect(TableHash.key(made) == bytes.withUnsafeBufferPointer { TableHash.key($0) })
        #expect(TableHash.key(bridged) == TableHash.key(made))
        for s in ["k1", "", "ü", "ünïcödé", "fifteen bytes!!", "sixteen bytes!!!"] {
            #expect(TableHash.key(s) == Array(s.utf8).withUnsafeBufferPointer { TableHash.key($0) }, "\(s)")
        }
        #expect(TableHash.key("k1") != TableHash.key("k2"))
    }

    /// A lookup with a known hash in a table in lines without a miss filter (9 to 16,383
    /// strings: no branch on its answer, the rare miss in a full line computed apart)
    /// answers as the plain lookup: for members in their first line, in a later one (their
    /// first was full) and in the overflow list, and for non-members whose line is full, in
    /// narrow and wide lines.
    @Test(arguments: [true, false])
    func lookupsWithoutAFilterAgree(narrow: Bool) {
        let count = 10_000
        func key(_ i: Int) -> String { narrow ? "c\(i)" : "id-\(100_000_000 + i)" }
        let strings = (0..<count).map(key)
        for overflowing in [false, true] {
            let table = StringTable(strings, everyKeyInOverflow: overflowing)
            #expect(!table.hasMissFilter && table.layout == (narrow ? .narrowLines : .wideLines))
            #expect(overflowing ? table.overflowCount == count : table.displacedCount > 50, "\(table.displacedCount) keys in a later line")
            var wrong: [String] = []
            for i in stride(from: 0, to: 2 * count, by: overflowing ? 13 : 1) {
                let s = key(i)
                let hashed = table.contains(s, keyHash: TableHash.key(s))
                if hashed != (i < count) || hashed != table.contains(s) { wrong.append(s) }
            }
            #expect(wrong.count == 0, "wrong for \(wrong.prefix(5)), …")
        }
    }

    /// Two long keys of the same length whose hashes share the low half (the fingerprint a
    /// slot keeps) and their line: a lookup compares the bytes of both candidates, in lines
    /// and in a scanned table.
    @Test func longKeysWithTheSameFingerprintInOneLine() {
        let lines = 5  // for 9 keys, two a line
        func key(_ i: Int) -> String { "long-key-\(String(100_000_000 + i))-padding" }
        func hash(_ s: String) -> UInt64 {
            var s = s
            return s.withUTF8 { TableHash.long($0) }
        }
        var seen: [UInt32: Int] = [:]
        var pair: (Int, Int)?
        for i in 0..<1_000_000 where pair == nil {
            let h = hash(key(i))
            let fingerprint = UInt32(truncatingIfNeeded: h)
            if let j = seen[fingerprint], TableHash.range(hash(key(j)), lines) == TableHash.range(h, lines) { pair = (j, i) }
            seen[fingerprint] = i
        }
        guard let (a, b) = pair else {
            Issue.record("no two keys share a fingerprint and a line")
            return
        }
        let strings = [key(a), key(b)] + (0..<7).map { "other key number \($0)" }
        let table = StringTable(strings)
        #expect(table.layout == .wideLines && table.overflowCount == 0)
        for (i, s) in strings.enumerated() { #expect(table.index(of: s) == i, "\(s)") }
        #expect(!table.contains(key(a + b)))
        // A scanned table matches long keys by length and fingerprint too.
        for scanned in [[key(a), key(b), "k"], [key(b), "k", key(a)], ["k", "l", "m", "n", key(b), "o", key(a)]] {
            let table = StringTable(scanned)
            #expect(table.layout == .scanned)
            for (i, s) in scanned.enumerated() {
                #expect(table.index(of: s) == i, "\(s)")
                #expect(table.contains(s, keyHash: TableHash.key(s)), "\(s)")
            }
            for miss in [key(a + b), key(a) + "x", String(key(a).dropLast())] {
                #expect(!table.contains(miss) && !table.contains(miss, keyHash: TableHash.key(miss)), "\(miss)")
            }
        }
    }

    /// Keys of every length around the inline limit (15 bytes) and the word boundaries, and
    /// near misses that differ from a key in one byte, in the length, or by a NUL.
    /// (Keys up to 15 bytes only, or up to 40.)
    @Test(arguments: [15, 40])
    func everyKeyLengthAndItsNearMisses(_ longest: Int) {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ".utf8)
        let keys = (0...longest).map { String(decoding: alphabet.prefix($0), as: UTF8.self) }
        let table = StringTable(keys)
        #expect(table.layout == .wideLines)
        for (i, key) in keys.enumerated() {
            #expect(table.index(of: key) == i)
            var bytes = Array(key.utf8)
            for j in bytes.indices {
                let saved = bytes[j]
                bytes[j] = UInt8(ascii: "_")
                #expect(!table.contains(String(decoding: bytes, as: UTF8.self)), "\(key) with byte \(j) changed")
                bytes[j] = saved
            }
            #expect(!table.contains(key + "\u{0}"))
            #expect(!table.contains("\u{0}" + key))
        }
        #expect(!table.contains(String(decoding: alphabet, as: UTF8.self) + "K"))
    }

    @Test(arguments: [9, 50, 1_000])
    func keysInTheOverflowListAreFound(_ count: Int) {
        let strings = (0..<count).map { $0 % 3 == 0 ? "k\($0)" : "a key longer than fifteen bytes \($0)" } + ["k0", ""]
        let table = StringTable(strings, everyKeyInOverflow: true)
        #expect(table.overflowCount == count + 1)
        for (i, s) in strings.enumerated().dropLast(2) { #expect(table.index(of: s) == i) }
        #expect(table.index(of: "k0") == 0)
        #expect(table.index(of: "") == count + 1)
        #expect(!table.contains("k1"))
        #expect(!table.contains("zzz"))
        #expect(!table.contains("a key longer than fifteen bytes"))
    }

    /// Tables of up to eight strings are scanned, not hashed: the same answers.
    @Test func smallTablesAreScanned() {
        let strings = ["debug", "alpha", "a key longer than fifteen bytes", "debug", "", "a key longer than fifteen bytez"]
        let table = StringTable(strings)
        #expect(strings.map(table.index(of:)) == [0, 1, 2, 0, 4, 5])
        for miss in ["Debug", "alph", "alphaa", "a key longer than fifteen byte", "a key longer than fifteen bytes!", "\u{0}"] {
            #expect(!table.contains(miss), "\(miss)")
        }
        #expect(StringTable([]).index(of: "") == nil)
    }

    /// Scanned tables compare four slots at a time, padded with slots no key equals: every
    /// size finds each key in each slot, and nothing in the padding.
    @Test(arguments: 1...8)
    func scannedTablesOfEverySize(_ count: Int) {
        let strings = (0..<count).map { ["", "a", "fifteen bytes!!", "é", "\u{0}", "a longer key than fifteen bytes", "b", "c"][$0] }
        let table = StringTable(strings)
        #expect(table.layout == .scanned)
        #expect(strings.map(table.index(of:)) == Array(0..<count))
        for miss in ["x", "aa", "fifteen bytes!?", "\u{0}\u{0}", "a longer key than fifteen byte"] { #expect(!table.contains(miss)) }
    }

    /// Random lists (short, long, multi-byte and duplicate strings) against a dictionary of
    /// first positions, probed with members and near misses.
    @Test(arguments: 0..<20)
    func agreesWithADictionary(_ seed: Int) {
        var state = UInt64(seed) &* 0x9E37_79B9_7F4A_7C15 &+ 1
        func next(_ n: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(n))
        }
        let pieces = ["a", "b", "é", "€", "😀", "0", "-", " ", "\u{0}"]
        func randomString() -> String { (0..<next(24)).map { _ in pieces[next(pieces.count)] }.joined() }
        let strings = (0..<[0, 1, 5, 8, 9, 40, 700, 3_000][seed % 8]).map { _ in randomString() }
        var first: [[UInt8]: Int] = [:]
        for (i, s) in strings.enumerated() where first[Array(s.utf8)] == nil { first[Array(s.utf8)] = i }
        let table = StringTable(strings)
        for s in strings { #expect(table.index(of: s) == first[Array(s.utf8)]) }
        for _ in 0..<500 {
            let probe = randomString()
            #expect(table.index(of: probe) == first[Array(probe.utf8)], "\(probe.debugDescription)")
        }
    }

    /// The same against lists of short strings only (at most 7 bytes for seeds 0-7: lines
    /// of 8-byte slots; at most 15 for 8-15: lines of 16-byte slots); the larger lists have
    /// keys in later lines and the overflow list, and the largest a miss filter.
    @Test(arguments: 0..<16)
    func shortKeysAgreeWithADictionary(_ seed: Int) {
        let longest = seed < 8 ? 7 : 15
        var state = UInt64(seed) &* 0x9E37_79B9_7F4A_7C15 &+ 7
        func next(_ n: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(n))
        }
        let pieces = ["a", "b", "c", "d", "e", "f", "g", "é", "€", "😀", "0", "1", "2", "-", " ", "\u{0}"]
        func randomString() -> String {
            var s = ""
            for _ in 0..<next(longest + 1) {
                let piece = pieces[next(pieces.count)]
                if s.utf8.count + piece.utf8.count <= longest { s += piece }
            }
            return s
        }
        let strings = (0..<[9, 40, 700, 3_000, 20_000, 9, 200, 40_000][seed % 8]).map { _ in randomString() }
        var first: [[UInt8]: Int] = [:]
        for (i, s) in strings.enumerated() where first[Array(s.utf8)] == nil { first[Array(s.utf8)] = i }
        let table = StringTable(strings)
        #expect(table.layout == (first.keys.contains { $0.count > 7 } ? .wideLines : .narrowLines))
        #expect(table.hasMissFilter == (first.count >= StringTableStorage.filterMinimum))
        for s in strings where table.index(of: s) != first[Array(s.utf8)] { Issue.record("\(s.debugDescription)"); break }
        for _ in 0..<2_000 {
            let probe = randomString() + (next(4) == 0 ? "x" : "")
            if table.index(of: probe) != first[Array(probe.utf8)] { Issue.record("probe \(probe.debugDescription)"); break }
        }
    }

    @Test func duplicatesKeepTheFirstPositionAndNormalisationIsNotApplied() {
        let table = StringTable(["a", "b", "c", "d", "e", "f", "g", "h", "i", "a", "\u{E9}"])
        #expect(table.index(of: "a") == 0)
        #expect(table.index(of: "\u{E9}") == 10)
        #expect(table.index(of: "e\u{301}") == nil)
        #expect(table.index(of: "") == nil)
    }

    @Test func longListsInRules() throws {
        let list = (0..<1_000).map { "\"c\($0)\"" }.joined(separator: ", ")
        let rules = try RuleSet(source: "context { country: string }\nflag f { enabled when country in [\(list)] }\nflag g { enabled when country not in [\(list)] }")
        #expect(rules.isEnabled("f", in: ["country": "c999"]))
        #expect(!rules.isEnabled("f", in: ["country": "c1000"]))
        #expect(rules.isEnabled("g", in: ["country": "c1000"]))
        #expect(rules.evaluate("f", in: [:]).reason == .default)
        let prepared = rules.prepare(["country": "c500"])
        #expect(rules.isEnabled(rules.handle("f")!, in: prepared))
        let untyped = try RuleSet(source: "flag f { enabled when country in [\(list)] }")
        #expect(untyped.isEnabled("f", in: ["country": "c7"]))
        #expect(untyped.evaluate("f", in: ["country": 7]).reason == .default)
    }
}
