import Testing

@testable import FlagRules

/// Contexts from requests: keys hash with the standard library's seeded hash (SipHash), so
/// they cannot be chosen to collide, and JSON contexts are bounded.
@Suite struct HostileContextTests {
    /// Keys are hashed with `Hasher` (seeded per process), as `Dictionary` does.
    @Test func keysHashWithTheSeededStandardHash() {
        for key in ["userId", "", "a key with spaces", "ünïcödé"] {
            var hasher = Hasher()
            key.utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
            #expect(ContextStorage.hash(key) == UInt64(UInt(bitPattern: hasher.finalize())))
        }
    }

    /// The literal sets' hash depends on its seed: the same strings under two seeds share
    /// no hash; every byte counts; and similar strings spread evenly over a table.
    @Test func literalsHashWithASeed() {
        let keys = ["userId", "", "a key with spaces", "ünïcödé", "exactly8", "sixteen bytes ok", "seventeen bytes!!"]
        for key in keys {
            let a = StringHash.withBytes(key) { LiteralHash.of($0, seed: 1) }
            let b = StringHash.withBytes(key) { LiteralHash.of($0, seed: 2) }
            #expect(a != b, "\(key)")
            #expect(
                StringHash.key(key) == UInt32(truncatingIfNeeded: StringHash.withBytes(key) { LiteralHash.of($0, seed: LiteralHash.seed) }))
        }
        for length in 1...40 {
            let base = [UInt8](repeating: 0x61, count: length)
            var hashes = Set<UInt64>()
            for position in 0..<length {
                var changed = base
                changed[position] = 0x62
                hashes.insert(changed.withUnsafeBufferPointer { LiteralHash.of($0, seed: LiteralHash.seed) })
            }
            hashes.insert(base.withUnsafeBufferPointer { LiteralHash.of($0, seed: LiteralHash.seed) })
            #expect(hashes.count == length + 1, "length \(length)")
        }
        var buckets = [Int](repeating: 0, count: 64)
        for i in 0..<64_000 { buckets[Int(StringHash.key("user-\(i)") & 63)] += 1 }
        #expect(buckets.allSatisfy { (850...1_150).contains($0) }, "\(buckets)")
    }

    /// 100,000 keys built to share everything but a counter (the shape an attacker
    /// controls) spread over the table: lookups read about one slot each.
    @Test func aHundredThousandSimilarKeysSpread() async {
        await offThePool(computing: true) {
            let keys = (0..<100_000).map { "attribute-" + String(repeating: "0", count: 6 - String($0).count) + String($0) }
            var context = EvaluationContext()
            for (i, key) in keys.enumerated() { context[key] = .int(i) }
            #expect(context.count == keys.count)
            let probes = keys.map { context.storage.probes(for: $0) }
            let average = Double(probes.reduce(0, +)) / Double(probes.count)
            #expect(average < 2.5, "average probes \(average)")
            #expect((probes.max() ?? 0) < 64)
            #expect(context["attribute-099999"] == .int(99_999) && context["attribute-100000"] == nil)
        }
    }

    /// 100,000 keys with one hash, as collisions crafted against a known hash would be:
    /// past 32 full slots a key goes to an overflow seeded per instance, so building the
    /// context stays linear (quadratic, it would take about 10^10 probes) and every lookup
    /// reads at most 32 slots.
    @Test func aHundredThousandCollidingKeysBuildInLinearTime() async {
        await offThePool(computing: true) {
            let count = 100_000
            var context = EvaluationContext()
            for i in 0..<count { context.set(.int(i), for: "k\(i)", hash: 42) }
            #expect(context.count == count)
            #expect(context.storage.overflowCount == count - ContextStorage.maxProbes)
            for i in stride(from: 0, to: count, by: 997) {
                #expect(context.storage.value(for: "k\(i)", hash: 42) == .int(i))
            }
            #expect(context.storage.value(for: "k\(count)", hash: 42) == nil)
            // Removing a key rebuilds the table, overflow included.
            context.set(nil, for: "k5", hash: 42)
            #expect(context.count == count - 1 && context.storage.value(for: "k5", hash: 42) == nil)
            #expect(context.storage.value(for: "k99999", hash: 42) == .int(99_999))
        }
    }

    @Test func jsonContextsAreBounded() async {
        await offThePool(computing: true) {
            let big = "{\"k\": \"" + String(repeating: "x", count: EvaluationContext.maxJSONBytes) + "\"}"
            #expect(throws: ContextError.self) { try EvaluationContext(json: big) }
            do throws(ContextError) {
                _ = try EvaluationContext(json: big)
            } catch {
                #expect(error.message == "the JSON context is \(big.utf8.count) bytes; the limit is \(EvaluationContext.maxJSONBytes)")
            }
            let many = "{" + (0...EvaluationContext.maxJSONKeys).map { "\"k\($0)\": 1" }.joined(separator: ",") + "}"
            do throws(ContextError) {
                _ = try EvaluationContext(json: many)
                Issue.record("a JSON context past the key limit was read")
            } catch {
                #expect(
                    error.message
                        == "the JSON context has \(EvaluationContext.maxJSONKeys + 1) keys; the limit is \(EvaluationContext.maxJSONKeys)")
            }
            let fine = "{" + (0..<1_000).map { "\"k\($0)\": \($0)" }.joined(separator: ",") + "}"
            #expect((try? EvaluationContext(json: fine))?.count == 1_000)
        }
    }
}
