/// An IPv4 or IPv6 address, parsed strictly: IPv4 as four decimal parts without leading
/// zeros, IPv6 as up to eight hex groups with at most one `::` and an optional IPv4 tail;
/// no zone (`%en0`), no blanks. An IPv4-mapped IPv6 address (`::ffff:10.1.2.3`) is its
/// IPv4 address, for `==` and for blocks.
package struct IPAddress: Hashable, Sendable {
    /// The address's 128 bits (an IPv4 address in the low 32, `isV4` set).
    let high: UInt64
    let low: UInt64
    /// Whether this is an IPv4 address (written so, or IPv4-mapped).
    let isV4: Bool

    init(v4 bits: UInt32) {
        high = 0
        low = UInt64(bits)
        isV4 = true
    }

    init(v6 high: UInt64, _ low: UInt64) {
        // ::ffff:a.b.c.d is the IPv4 address a.b.c.d.
        let mapped = high == 0 && low >> 32 == 0xFFFF
        self.high = high
        self.low = mapped ? low & 0xFFFF_FFFF : low
        isV4 = mapped
    }

    /// The address `text` spells, or nil when it is not one.
    init?(_ text: String) {
        var text = text
        let parsed: IPAddress? = text.withUTF8 { IPAddress.parse($0) }
        guard let parsed else { return nil }
        self = parsed
    }

    /// The address in a context value: a string that parses as one, else nil (mistyped).
    init?(_ value: Value) {
        guard case .string(let s) = value else { return nil }
        self.init(s)
    }

    static func parse(_ b: UnsafeBufferPointer<UInt8>) -> IPAddress? {
        if b.contains(UInt8(ascii: ":")) { return parseV6(b) }
        return parseV4(b[...]).map { IPAddress(v4: $0) }
    }

    /// `a.b.c.d`: four decimal parts of 0–255, no leading zeros.
    static func parseV4(_ b: Slice<UnsafeBufferPointer<UInt8>>) -> UInt32? {
        var result: UInt32 = 0
        var parts = 0
        var i = b.startIndex
        while i < b.endIndex || parts == 0 {
            var value = 0
            var digits = 0
            let start = i
            while i < b.endIndex, b[i] >= UInt8(ascii: "0"), b[i] <= UInt8(ascii: "9") {
                value = value * 10 + Int(b[i] - UInt8(ascii: "0"))
                digits += 1
                i += 1
                if digits > 3 { return nil }
            }
            guard digits > 0, value <= 255, !(digits > 1 && b[start] == UInt8(ascii: "0")) else { return nil }
            result = result << 8 | UInt32(value)
            parts += 1
            if parts == 4 { break }
            guard i < b.endIndex, b[i] == UInt8(ascii: ".") else { return nil }
            i += 1
        }
        guard parts == 4, i == b.endIndex else { return nil }
        return result
    }

    /// Up to eight groups of 1–4 hex digits, at most one `::`, an optional IPv4 tail.
    static func parseV6(_ b: UnsafeBufferPointer<UInt8>) -> IPAddress? {
        var groups: [UInt16] = []
        groups.reserveCapacity(8)
        var gap: Int?  // the index in `groups` where `::` stands
        var i = 0
        let n = b.count
        if n >= 2, b[0] == UInt8(ascii: ":"), b[1] == UInt8(ascii: ":") {
            gap = 0
            i = 2
        } else if n >= 1, b[0] == UInt8(ascii: ":") {
            return nil
        }
        while i < n {
            // An IPv4 tail: the rest holds a '.'.
            var j = i
            var hasDot = false
            while j < n, b[j] != UInt8(ascii: ":") {
                if b[j] == UInt8(ascii: ".") { hasDot = true }
                j += 1
            }
            if hasDot {
                guard j == n, let v4 = parseV4(b[i..<n]) else { return nil }
                groups.append(UInt16(v4 >> 16))
                groups.append(UInt16(v4 & 0xFFFF))
                i = n
                break
            }
            guard j - i >= 1, j - i <= 4 else { return nil }
            var value: UInt16 = 0
            for k in i..<j {
                guard let h = ASCII.hexValue(b[k]) else { return nil }
                value = value << 4 | UInt16(h)
            }
            groups.append(value)
            i = j
            if i == n { break }
            // ':' then a group, or '::'.
            i += 1
            if i < n, b[i] == UInt8(ascii: ":") {
                guard gap == nil else { return nil }
                gap = groups.count
                i += 1
            } else if i == n {
                return nil  // a trailing single ':'
            }
            if groups.count > 8 { return nil }
        }
        if let gap {
            guard groups.count <= 7 else { return nil }
            groups.insert(contentsOf: repeatElement(0, count: 8 - groups.count), at: gap)
        }
        guard groups.count == 8 else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        for k in 0..<4 { high = high << 16 | UInt64(groups[k]) }
        for k in 4..<8 { low = low << 16 | UInt64(groups[k]) }
        return IPAddress(v6: high, low)
    }

    /// The address as written canonically: dotted IPv4, or IPv6 per RFC 5952 (lowercase,
    /// the longest run of zero groups as `::`).
    package var text: String {
        if isV4 {
            let v = UInt32(truncatingIfNeeded: low)
            return "\(v >> 24).\(v >> 16 & 0xFF).\(v >> 8 & 0xFF).\(v & 0xFF)"
        }
        var groups: [UInt16] = []
        for k in (0..<4).reversed() { groups.append(UInt16(truncatingIfNeeded: high >> (UInt64(k) * 16))) }
        for k in (0..<4).reversed() { groups.append(UInt16(truncatingIfNeeded: low >> (UInt64(k) * 16))) }
        var best = (start: -1, length: 1)
        var k = 0
        while k < 8 {
            guard groups[k] == 0 else { k += 1; continue }
            var e = k
            while e < 8, groups[e] == 0 { e += 1 }
            if e - k > best.length { best = (k, e - k) }
            k = e
        }
        let hex = groups.map { String($0, radix: 16) }
        guard best.start >= 0 else { return hex.joined(separator: ":") }
        return hex[..<best.start].joined(separator: ":") + "::" + hex[(best.start + best.length)...].joined(separator: ":")
    }
}

/// A network block: an address and a prefix length (`10.0.0.0/8`, `2001:db8::/32`); a bare
/// address is a /32 or /128 block.
package struct IPBlock: Sendable, Hashable {
    let address: IPAddress
    let prefix: Int

    /// Why a block literal is refused, for a load error.
    package enum Problem: Error, Equatable {
        /// Not an address, or a prefix that is not a decimal number.
        case notABlock
        /// `/255.0.0.0`.
        case netmask
        /// A prefix past 32 (IPv4) or 128 (IPv6).
        case prefixTooLong(Int)
        /// Bits set past the prefix: the block meant.
        case hostBits(meant: String)
    }

    /// The block `text` spells.
    package static func parse(_ text: String) -> Result<IPBlock, Problem> {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(String(parts[0])) else { return .failure(.notABlock) }
        let width = address.isV4 && !parts[0].contains(":") ? 32 : 128
        guard parts.count == 2 else { return .success(IPBlock(address: address, prefix: address.isV4 ? 32 : 128)) }
        let digits = parts[1]
        if digits.contains(".") || digits.contains(":") { return .failure(.netmask) }
        guard !digits.isEmpty, digits.count <= 3, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
            !(digits.count > 1 && digits.hasPrefix("0")), let written = Int(digits)
        else { return .failure(.notABlock) }
        guard written <= width else { return .failure(.prefixTooLong(written)) }
        // A mapped block (`::ffff:10.0.0.0/104`) is the IPv4 block.
        var prefix = written
        if address.isV4, width == 128 {
            guard written >= 96 else { return .failure(.notABlock) }
            prefix = written - 96
        }
        let block = IPBlock(address: address, prefix: prefix)
        let masked = block.first
        guard masked == address else {
            let meant = masked.text + "/" + String(written == prefix ? prefix : written)
            return .failure(.hostBits(meant: address.isV4 && width == 128 ? "::ffff:" + meant : meant))
        }
        return .success(block)
    }

    init(address: IPAddress, prefix: Int) {
        self.address = address
        self.prefix = prefix
    }

    /// The first address of the block.
    var first: IPAddress {
        if address.isV4 {
            let mask: UInt32 = prefix == 0 ? 0 : ~0 << UInt32(32 - prefix)
            return IPAddress(v4: UInt32(truncatingIfNeeded: address.low) & mask)
        }
        let (h, l) = IPBlock.mask(prefix)
        return IPAddress(v6: address.high & h, address.low & l)
    }

    /// The last address of the block.
    var last: IPAddress {
        if address.isV4 {
            let mask: UInt32 = prefix == 0 ? 0 : ~0 << UInt32(32 - prefix)
            return IPAddress(v4: UInt32(truncatingIfNeeded: address.low) | ~mask)
        }
        let (h, l) = IPBlock.mask(prefix)
        return IPAddress(v6: address.high | ~h, address.low | ~l)
    }

    static func mask(_ prefix: Int) -> (UInt64, UInt64) {
        let h: UInt64 = prefix >= 64 ? ~0 : prefix == 0 ? 0 : ~0 << UInt64(64 - prefix)
        let l: UInt64 = prefix <= 64 ? 0 : prefix >= 128 ? ~0 : ~0 << UInt64(128 - prefix)
        return (h, l)
    }

    /// Whether a string has a block's shape: an address, `/`, digits.
    static func hasBlockShape(_ s: String) -> Bool {
        let parts = s.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        return parts.count == 2 && !parts[1].isEmpty && parts[1].allSatisfy { $0.isASCII && $0.isNumber }
            && IPAddress(String(parts[0])) != nil
    }
}

/// A list of network blocks, looked up by a binary search over their merged ranges: the
/// cost grows with the logarithm of the list, never with its length. Past 64 IPv4 ranges,
/// a table indexed by an address's leading bits (about one entry a range, at most 2^16)
/// says which ranges can hold it, and the search runs over those alone: one read of the
/// table, then a search over a few ranges where they are spread out, never worse than the
/// whole search where they are not.
package struct NetworkSet: Sendable {
    /// IPv4 ranges (sorted, disjoint, not adjacent): their first and last addresses.
    private let v4Starts: [UInt32]
    private let v4Ends: [UInt32]
    /// For each value `p` of an address's leading bits, how many ranges start before the
    /// first address with those bits (one entry more, for the end of the last); empty
    /// for a short list.
    private let v4Index: [UInt32]
    /// How far an address is shifted right to give its leading bits.
    private let v4Shift: UInt32
    /// IPv6 ranges as (high, low) pairs, sorted and disjoint.
    private let v6Starts: [IPv6Key]
    private let v6Ends: [IPv6Key]

    struct IPv6Key: Comparable, Sendable {
        let high: UInt64
        let low: UInt64
        static func < (a: IPv6Key, b: IPv6Key) -> Bool { a.high != b.high ? a.high < b.high : a.low < b.low }
    }

    init(_ blocks: [IPBlock]) {
        var four: [ClosedRange<UInt32>] = []
        var six: [(IPv6Key, IPv6Key)] = []
        for b in blocks {
            if b.address.isV4 {
                four.append(UInt32(truncatingIfNeeded: b.first.low)...UInt32(truncatingIfNeeded: b.last.low))
            } else {
                six.append((IPv6Key(high: b.first.high, low: b.first.low), IPv6Key(high: b.last.high, low: b.last.low)))
            }
        }
        four.sort { $0.lowerBound < $1.lowerBound }
        var merged4: [ClosedRange<UInt32>] = []
        for r in four {
            if let last = merged4.last, r.lowerBound <= last.upperBound || r.lowerBound == last.upperBound &+ 1 {
                merged4[merged4.count - 1] = last.lowerBound...max(last.upperBound, r.upperBound)
            } else {
                merged4.append(r)
            }
        }
        six.sort { $0.0 < $1.0 }
        var starts: [IPv6Key] = []
        var ends: [IPv6Key] = []
        for (s, e) in six {
            if let last = ends.last, !(last < s) {
                if last < e { ends[ends.count - 1] = e }
            } else {
                starts.append(s)
                ends.append(e)
            }
        }
        v4Starts = merged4.map(\.lowerBound)
        v4Ends = merged4.map(\.upperBound)
        (v4Index, v4Shift) = NetworkSet.index(v4Starts)
        v6Starts = starts
        v6Ends = ends
    }

    /// How many merged ranges the set holds (for tests).
    var rangeCount: Int { v4Starts.count + v6Starts.count }

    /// Whether `address` lies in a block of the set.
    func contains(_ address: IPAddress) -> Bool {
        if address.isV4 {
            let a = UInt32(truncatingIfNeeded: address.low)
            var range = 0..<v4Starts.count
            if !v4Index.isEmpty {
                let p = Int(a >> v4Shift)
                range = Int(v4Index[p])..<Int(v4Index[p + 1])
            }
            let i = range.lowerBound + v4Starts.withUnsafeBufferPointer { NetworkSet.countAtOrBelow(a, in: .init(rebasing: $0[range])) }
            return i > 0 && a <= v4Ends[i - 1]
        }
        let a = IPv6Key(high: address.high, low: address.low)
        let i = v6Starts.withUnsafeBufferPointer { NetworkSet.countAtOrBelow(a, in: $0) }
        return i > 0 && !(v6Ends[i - 1] < a)
    }

    /// How many elements of the sorted `starts` are at most `a` (the index of the range
    /// that may hold `a`, plus one).
    @inline(__always)
    private static func countAtOrBelow<Key: Comparable>(_ a: Key, in starts: UnsafeBufferPointer<Key>) -> Int {
        var lo = 0
        var hi = starts.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if starts[mid] <= a { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// The index of sorted IPv4 range starts by their leading bits, and the shift that
    /// gives them: none under 64 ranges; else about one entry a range, 2^16 at most.
    private static func index(_ starts: [UInt32]) -> ([UInt32], UInt32) {
        guard starts.count >= 64 else { return ([], 32) }
        let bits = min(16, Int.bitWidth - starts.count.leadingZeroBitCount)
        let shift = UInt32(32 - bits)
        var index = [UInt32](repeating: 0, count: (1 << bits) + 1)
        var i = 0
        for p in 0...(1 << bits) {
            // The ranges starting before the first address with leading bits `p`.
            let first = UInt64(p) << UInt64(shift)
            while i < starts.count, UInt64(starts[i]) < first { i += 1 }
            index[p] = UInt32(i)
        }
        return (index, shift)
    }

    /// The addresses at the edges of the set: the first and last of each merged range and
    /// the ones just outside it (for sampling contexts that land on either side).
    package var edgeAddresses: [IPAddress] {
        var out: [IPAddress] = []
        for (start, end) in zip(v4Starts, v4Ends) {
            if start > 0 { out.append(IPAddress(v4: start - 1)) }
            out.append(IPAddress(v4: start))
            out.append(IPAddress(v4: end))
            if end < .max { out.append(IPAddress(v4: end + 1)) }
        }
        for (start, end) in zip(v6Starts, v6Ends) {
            if start.high != 0 || start.low != 0 {
                let (low, borrow) = start.low.subtractingReportingOverflow(1)
                out.append(IPAddress(v6: borrow ? start.high - 1 : start.high, low))
            }
            out.append(IPAddress(v6: start.high, start.low))
            out.append(IPAddress(v6: end.high, end.low))
            if end.high != .max || end.low != .max {
                let (low, carry) = end.low.addingReportingOverflow(1)
                out.append(IPAddress(v6: carry ? end.high + 1 : end.high, low))
            }
        }
        return out
    }
}
