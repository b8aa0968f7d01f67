import Foundation
import Testing
@testable import FlagRules

/// The layout `StringBits` reads: a string of at most 15 UTF-8 bytes is held small, with
/// its bytes and length in its representation, however it was made. If a toolchain
/// changes that, these fail before any lookup answers wrongly.
@Suite struct StringBitsTests {
    /// The same text made five ways: a literal, appended, decoded from bytes, from a
    /// substring, and interpolated.
    static func madeFiveWays(_ text: String) -> [String] {
        var appended = ""
        for c in text { appended.append(c) }
        let decoded = String(decoding: Array(text.utf8), as: UTF8.self)
        let sliced = String(("<" + text + ">").dropFirst().dropLast())
        return [text, appended, decoded, sliced, "\(text)"]
    }

    static let samples = ["", "a", "de", "debug", "release", "user-123", "user-1234567", "123456789012345",
                          "é", "über", "日本語", "🇺🇸", "1234567890123456", "a string well past fifteen bytes"]

    @Test(arguments: samples)
    func smallStringsPackAsTheirBytes(_ text: String) {
        let bytes = Array(text.utf8)
        for s in Self.madeFiveWays(text) {
            let packed = StringBits.packedKey(s)
            if bytes.count <= 15 {
                let expected = bytes.withUnsafeBufferPointer { PackedKey(inline: $0) }
                #expect(packed == expected, "\(text)")
            } else {
                #expect(packed == nil, "\(text)")
            }
        }
    }

    @Test func equalityFromRepresentations() {
        for a in Self.samples {
            for b in Self.samples {
                for (x, y) in zip(Self.madeFiveWays(a), Self.madeFiveWays(b).reversed()) {
                    let expected = Array(x.utf8) == Array(y.utf8)
                    // When the representations answer, they answer right; the full compare always does.
                    if let known = StringBits.equal(x, y) { #expect(known == expected, "\(x) \(y)") }
                    #expect(Comparison.bytesEqual(x, y) == expected, "\(x) \(y)")
                }
            }
        }
        // Two small strings always answer from their representations; one string twice too.
        #expect(StringBits.equal("debug", String(decoding: Array("debug".utf8), as: UTF8.self)) == true)
        #expect(StringBits.equal("debug", "alpha") == false)
        let long = String(repeating: "x", count: 40)
        #expect(StringBits.equal(long, long) == true)
        // Long strings held apart need their bytes.
        #expect(StringBits.equal(long, String(repeating: "x", count: 40)) == nil)
    }

    /// Lookups by packed key in every layout agree with lookups by bytes, for strings made
    /// any way (keys found, keys missing, lines that were full).
    @Test(arguments: [4, 8, 300, 20_000])
    func tableLookupsOfSmallStrings(_ count: Int) {
        let keys = (0..<count).map { "k\($0)é" }
        let table = StringTable(keys)
        for (i, key) in keys.enumerated() {
            for s in Self.madeFiveWays(key) where table.index(of: s) != i || !table.contains(s) {
                Issue.record("\(s) not at \(i)")
                return
            }
        }
        for i in count..<(count + 200) {
            #expect(table.index(of: "k\(i)é") == nil)
            #expect(!table.contains("k\(i)é"))
        }
        let enumTable = EnumTable(["debug", "alpha", "beta", "release"])
        #expect(Self.madeFiveWays("beta").map(enumTable.ordinal) == Array(repeating: 2, count: 5))
        #expect(enumTable.ordinal(of: "Beta") == nil)
    }
}
