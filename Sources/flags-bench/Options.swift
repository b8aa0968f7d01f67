import FlagRules
import Foundation

/// The report's JSON, written with Foundation's serialiser (the bench uses only the
/// library's public API).
indirect enum ReportJSON {
    case int(Int), double(Double), bool(Bool), string(String)
    case array([ReportJSON])
    case object([(String, ReportJSON)])

    var foundation: Any {
        switch self {
        case .int(let i): return i
        case .double(let d): return d.isFinite ? d : NSNull()
        case .bool(let b): return b
        case .string(let s): return s
        case .array(let xs): return xs.map(\.foundation)
        case .object(let members): return Dictionary(members.map { ($0.0, $0.1.foundation) }, uniquingKeysWith: { a, _ in a })
        }
    }
}

struct Options {
    var json = false
    /// `--counts`: the instruction and allocation counts that gate, instead of the timings.
    var counts = false
    /// `--count-run`: the operations whose counts `--counts` reads (run under callgrind).
    var countRun = false
    /// `--count-run K`: the `K`th operation alone.
    var countOnly: Int?
    /// `--markdown`: the counts as a Markdown table (the catalog's generated report).
    var markdown = false
    var contexts = 1_000_000
    var runs = 7
    /// Only rows whose name contains this, or one of its parts separated by `|` (for
    /// profiling one path, or timing a few rows in rotation).
    var only: String?

    /// Whether the row `name` is measured.
    func selects(_ name: String) -> Bool {
        guard let only else { return true }
        return only.split(separator: "|").contains { name.contains($0) }
    }
    /// Which values the `in` rows look up: members, non-members, or half of each (the default).
    var inValues = InValues.both
    /// The shape of the strings in the `in` lists.
    var inKeys = InKeys.codes
    /// The stores subscribed to the relay, and the idle subscribers added (`--relay-stores`,
    /// `--idle-subscribers`).
    var relayStores = 1_000
    var idleSubscribers = 10_000
    /// The event-stream subscribers `flags serve` is asked to hold from a soft limit of
    /// 1,024 descriptors (`--subscribers`).
    var subscribers = 3_000
    /// The seconds `wrk` measures each route for (`--wrk-seconds`; 0 skips the row).
    var wrkSeconds = 3
    /// The operands of the long `and` chain that is loaded, evaluated, explained and released.
    var longChain = 1_000_000

    enum InValues: String {
        case both, hits, misses

        /// The indices of the values looked up in a list of `size` literals: `c0..c(size-1)`
        /// are in it, `c(size)..c(2*size-1)` are not.
        func range(_ size: Int) -> Range<Int> {
            switch self {
            case .both: 0..<(2 * size)
            case .hits: 0..<size
            case .misses: size..<(2 * size)
            }
        }
    }

    enum InKeys: String {
        /// `c0`, `c1`, …: at most 7 bytes, like country or currency codes.
        case codes
        /// `user-100000`, …: 11 bytes, like user or account ids.
        case ids
        /// UUIDs in text: 36 bytes, kept apart from the table's slots.
        case uuids

        /// The `i`th string of this shape (distinct for distinct `i`).
        func key(_ i: Int) -> String {
            switch self {
            case .codes: return "c\(i)"
            case .ids: return "user-\(100_000 + i)"
            case .uuids:
                var g = SeededGenerator(seed: UInt64(i))
                let a = g.next(), b = g.next()
                func hex(_ x: UInt64, _ digits: Int) -> String {
                    let s = String(x & ((1 << (4 * UInt64(digits))) - 1), radix: 16)
                    return String(repeating: "0", count: digits - s.count) + s
                }
                return "\(hex(a, 8))-\(hex(a >> 32, 4))-4\(hex(a >> 48, 3))-a\(hex(b, 3))-\(hex(UInt64(i), 12))"
            }
        }
    }

    /// The value of an option that takes one of a few words; exits with a message naming
    /// them when `word` is not one.
    static func choice<T: RawRepresentable<String>>(_ word: String, of option: String, _ allowed: String) -> T {
        guard let value = T(rawValue: word) else {
            FileHandle.standardError.write(Data("flags-bench: \(option) takes \(allowed), not '\(word)'\n".utf8))
            exit(2)
        }
        return value
    }

    init(_ arguments: [String]) {
        var i = 0
        while i < arguments.count {
            switch arguments[i] {
            case "--json": json = true
            case "--counts": counts = true
            case "--count-run":
                countRun = true
                if i + 1 < arguments.count, let k = Int(arguments[i + 1]) {
                    countOnly = k
                    i += 1
                }
            case "--markdown": markdown = true
            case "--minimal-server": runMinimalServer()
            case "--contexts" where i + 1 < arguments.count:
                i += 1
                contexts = max(1, Int(arguments[i]) ?? contexts)
            case "--long-chain" where i + 1 < arguments.count:
                i += 1
                longChain = max(2, Int(arguments[i]) ?? longChain)
            case "--relay-stores" where i + 1 < arguments.count:
                i += 1
                relayStores = max(1, min(5_000, Int(arguments[i]) ?? relayStores))
            case "--subscribers" where i + 1 < arguments.count:
                i += 1
                subscribers = max(31, min(15_000, Int(arguments[i]) ?? subscribers))
            case "--idle-subscribers" where i + 1 < arguments.count:
                i += 1
                idleSubscribers = max(0, min(15_000, Int(arguments[i]) ?? idleSubscribers))
            case "--wrk-seconds" where i + 1 < arguments.count:
                i += 1
                wrkSeconds = max(0, min(60, Int(arguments[i]) ?? wrkSeconds))
            case "--runs" where i + 1 < arguments.count:
                i += 1
                runs = max(1, Int(arguments[i]) ?? runs)
            case "--only" where i + 1 < arguments.count:
                i += 1
                only = arguments[i]
            case "--in-values" where i + 1 < arguments.count:
                i += 1
                inValues = Self.choice(arguments[i], of: "--in-values", "both, hits or misses")
            case "--in-keys" where i + 1 < arguments.count:
                i += 1
                inKeys = Self.choice(arguments[i], of: "--in-keys", "codes, ids or uuids")
            case "--help", "-h":
                print(
                    "usage: flags-bench [--counts [--markdown]] [--json] [--contexts N] [--runs N] [--only ROW-NAME-PART[|PART…]] [--in-values both|hits|misses] [--in-keys codes|ids|uuids] [--long-chain N] [--relay-stores N] [--idle-subscribers N] [--subscribers N] [--wrk-seconds N]"
                )
                exit(0)
            default:
                FileHandle.standardError.write(Data("flags-bench: unknown argument '\(arguments[i])'\n".utf8))
                exit(2)
            }
            i += 1
        }
    }
}
