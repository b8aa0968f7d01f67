import Testing

@testable import FlagRules

@Suite struct EvaluationContextTests {
    @Test(arguments: [0, 1, 16, 17, 40, 300])
    func setReadAndRemoveAtEverySize(_ count: Int) {
        var c = EvaluationContext()
        for i in 0..<count { c["k\(i)"] = .int(i) }
        #expect(c.count == count)
        for i in 0..<count { #expect(c["k\(i)"] == .int(i)) }
        #expect(c["missing"] == nil)
        // Overwrite, remove every other key, and read again.
        for i in 0..<count { c["k\(i)"] = .int(-i) }
        for i in stride(from: 0, to: count, by: 2) { c["k\(i)"] = nil }
        for i in 0..<count { #expect(c["k\(i)"] == (i % 2 == 0 ? nil : .int(-i))) }
        #expect(c.count == count / 2)
        #expect(c.count == count / 2 && c.entries.count == count / 2)
    }

    @Test func isAValueWithCopyOnWrite() {
        var a: EvaluationContext = ["x": 1]
        let b = a
        a["x"] = 2
        a["y"] = 3
        #expect(b == ["x": 1])
        #expect(a == ["x": 2, "y": 3])
        #expect(a == EvaluationContext(["y": 3, "x": 2]))
        #expect(a.hashValue == EvaluationContext(["y": 3, "x": 2]).hashValue)
        #expect(a != b)
        var c = a
        c = EvaluationContext(["z": true])
        #expect(c == ["z": true])
        #expect(a["z"] == nil)
    }

    @Test func keysCompareByBytes() {
        let c: EvaluationContext = ["\u{E9}": 1, "e\u{301}": 2]
        #expect(c.count == 2)
        #expect(c["\u{E9}"] == 1)
        #expect(c["e\u{301}"] == 2)
    }

    @Test func largeContextsEvaluate() throws {
        let rules = try RuleSet(
            source:
                "context { a39: int; b: string; other: int }\nflag f { enabled when a39 > 5 and has(b) }\nflag g { enabled when other == 1 }"
        )
        var c = EvaluationContext()
        for i in 0..<40 { c["a\(i)"] = .int(i) }
        c["b"] = "x"
        #expect(rules.isEnabled("f", in: c))
        c["other"] = 1
        #expect(rules.isEnabled("g", in: c))
    }

    /// A context's storage is a 16-byte header and 40 bytes an attribute (on 64-bit
    /// platforms), so that its first attributes share the header's cache lines; a context
    /// of many keys adds its index, and loses it when it shrinks back.
    @Test func storageIsCompact() {
        #expect(MemoryLayout<ContextHeader>.stride == 16 && MemoryLayout<ContextEntry>.stride == 40)
        var c: EvaluationContext = ["build": "debug", "userId": "u-1"]
        #expect(c.storage.withUnsafeMutablePointerToHeader { $0.pointee.index == nil })
        for i in 0..<ContextStorage.linearLimit { c["k\(i)"] = .int(i) }
        #expect(c.storage.withUnsafeMutablePointerToHeader { $0.pointee.index != nil })
        #expect(c["build"] == "debug" && c["k3"] == .int(3))
        for i in 0..<ContextStorage.linearLimit { c["k\(i)"] = nil }
        #expect(c.storage.withUnsafeMutablePointerToHeader { $0.pointee.index == nil } && c["userId"] == "u-1")
    }
}
