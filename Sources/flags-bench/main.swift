import FlagRules
import Foundation
import MallocCounter

/// Whether heap allocations are counted: the counting allocator is linked in (glibc) and
/// `FLAGS_BENCH_NO_ALLOCATION_COUNTING` is not set (which runs, anywhere, the branch that
/// other platforms take).
let allocationCounting = malloc_counter_enabled() == 1 && ProcessInfo.processInfo.environment["FLAGS_BENCH_NO_ALLOCATION_COUNTING"] == nil

func allocationsSoFar() -> Int { allocationCounting ? malloc_counter_allocations() : 0 }
/// `body`, timed with the allocation count off: the counting allocator's atomic add on
/// every malloc is work of the benchmark's own, which a load or a lint pass would pay
/// hundreds of thousands of times.
func uncounted<R>(_ body: () -> R) -> R {
    malloc_counter_count_allocations(0)
    defer { malloc_counter_count_allocations(1) }
    return body()
}
func liveBytes() -> Int { allocationCounting ? malloc_counter_live_bytes() : 0 }
func peakBytes() -> Int { allocationCounting ? malloc_counter_peak_bytes() : 0 }

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

// flags-bench: FlagRules' evaluation against a hand-written Swift baseline, in one process.
//
//   swift run -c release flags-bench [--json] [--contexts N] [--runs N] [--only ROW-NAME-PART[|PART…]]
//                                    [--in-values both|hits|misses] [--in-keys codes|ids|uuids]
//
// Every row evaluates the same rule over the same N pre-built distinct contexts; the
// fraction of ON results must agree across rows (proof that every row ran the same rule).

struct Options {
    var json = false
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
            case "--contexts" where i + 1 < arguments.count:
                i += 1
                contexts = max(1, Int(arguments[i]) ?? contexts)
            case "--long-chain" where i + 1 < arguments.count:
                i += 1
                longChain = max(2, Int(arguments[i]) ?? longChain)
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
                    "usage: flags-bench [--json] [--contexts N] [--runs N] [--only ROW-NAME-PART[|PART…]] [--in-values both|hits|misses] [--in-keys codes|ids|uuids] [--long-chain N]"
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

let options = Options(Array(CommandLine.arguments.dropFirst()))

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
/// `salt:unit`, then the bucket in thousandths of a percent.
struct RolloutKey {
    let prefix: [UInt8]

    init(salt: String) { prefix = Array((salt + ":").utf8) }

    @inline(__always)
    static func mix(_ k: UInt32) -> UInt32 {
        var k = k &* 0xcc9e_2d51
        k = (k << 15) | (k >> 17)
        return k &* 0x1b87_3593
    }

    func bucket(for unit: String) -> Int {
        var unit = unit
        return unit.withUTF8 { u in
            var h: UInt32 = 0, block: UInt32 = 0, filled: UInt32 = 0
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
            return Int(h % 100) * 1000 + Int((h / 100) % 1000)
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

// MARK: Measurement

func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

struct Row {
    let name: String
    var nanoseconds: Double
    var onFraction: Double
    var allocations: Double
    /// Ns per evaluation in each timed run, in the order run (rows measured in one rotation
    /// have one entry a rotation each).
    var runs: [Double] = []

    /// A row `--only` left out: shown as not measured, and in no check or target.
    static func skipped(_ name: String) -> Row { Row(name: name, nanoseconds: .nan, onFraction: .nan, allocations: .nan) }
    var measured: Bool { !nanoseconds.isNaN }

    /// This row's cost as a multiple of `reference`'s: when both were timed in one rotation,
    /// the median of the ratios run by run (each run's two passes lie seconds apart, so a
    /// slow spell of this shared machine that lasts longer than a rotation slows both and
    /// cancels out), else the ratio of the medians.
    func ratio(to reference: Row) -> Double {
        guard runs.count == reference.runs.count, !runs.isEmpty else { return nanoseconds / reference.nanoseconds }
        let ratios = zip(runs, reference.runs).map { $0 / $1 }.sorted()
        return ratios[ratios.count / 2]
    }
}

/// Median ns per evaluation over `runs` timed passes after one warm-up pass.
@inline(__always)
func measure(_ name: String, count: Int, runs: Int, _ body: (Int) -> Bool) -> Row {
    if !options.selects(name) { return .skipped(name) }
    var on = 0
    for i in 0..<count where body(i) { on += 1 }  // warm-up
    var times: [Double] = []
    var allocations = 0
    for _ in 0..<runs {
        on = 0
        let a0 = allocationsSoFar()
        let t0 = now()
        for i in 0..<count where body(i) { on += 1 }
        let t1 = now()
        allocations = allocationsSoFar() - a0
        times.append(Double(t1 - t0) / Double(count))
    }
    times.sort()
    return Row(
        name: name, nanoseconds: times[times.count / 2], onFraction: Double(on) / Double(count),
        allocations: Double(allocations) / Double(count))
}

func load(_ source: String) -> RuleSet {
    do {
        return try RuleSet(source: source, name: "bench.flags")
    } catch {
        FileHandle.standardError.write(Data("flags-bench: \(error)\n".utf8))
        exit(1)
    }
}

// MARK: Fixed costs (`--only micro`: before the load, which it does not need)

if options.only == "micro" {
    // The plain path's fixed costs over contexts that stay in cache with `--contexts 2000`:
    // a constant flag, one enum attribute, one rollout, one string list, and the seed rule
    // (MICRO=name runs one).
    let dictionaries = makeUsers(options.contexts).map(dictionary)
    let micro = load(
        schema + """

            flag constant = true
            flag enumOnly { enabled when build in [debug, alpha] }
            flag rolloutOnly { enabled when rollout(userId) < 20% }
            flag inList { enabled when country in ["US", "CA", "GB", "DE", "FR"] }
            flag seed { enabled when \(seedRule) }
            """)
    for name in (ProcessInfo.processInfo.environment["MICRO"].map { [$0] } ?? ["constant", "enumOnly", "rolloutOnly", "inList", "seed"]) {
        let row = measure("micro", count: options.contexts, runs: options.runs) {
            micro.evaluate(name, in: dictionaries[$0]).value == .bool(true)
        }
        print("\(name): \(row.nanoseconds) ns")
    }
    exit(0)
}

// MARK: Loading 10,000 declarations (first, on a fresh heap, as an app loads its rules)

func generatedFile(_ count: Int) -> String {
    var s = schema + "\n"
    for i in 0..<count {
        switch i % 4 {
        case 0:
            s +=
                "/// Flag \(i).\n@owner(\"team\(i % 7)\")\nflag f\(i) { enabled when build in [debug, alpha] and rollout(userId) < \(i % 100)% }\n"
        case 1: s += "variant v\(i) [a, b, c] = a {\n  b when country == \"US\"\n  split(userId) { a: 50%, b: 25%, c: 25% }\n}\n"
        case 2: s += "value n\(i): int = \(i) { \(i + 1) when appVersion >= \"2.3.0\" and email ends with \"@example.com\" }\n"
        default: s += "segment s\(i) = country in [\"US\", \"CA\"] or build == release\n"
        }
    }
    return s
}

let bigSource = generatedFile(10_000)
/// The bytes the loaded rules hold, and the most the load had allocated at once (the parse
/// tree and the checker's tables included), both above what was allocated before it:
/// from one load on a fresh heap, every byte counted.
var heldBytes = 0, peakLoadBytes = 0
do {
    let before = liveBytes()
    malloc_counter_reset_peak()
    let rules = load(bigSource)
    heldBytes = liveBytes() - before
    peakLoadBytes = peakBytes() - before
    withExtendedLifetime(rules) {}
}
// The load time: 7 loads with the counting allocator off (`uncounted`: its
// malloc_usable_size call and atomic add on every malloc is work a real load does not do), taken
// at three moments spread over the run (3 here, 2 after the rules' rows, 2 after the `in`
// rows), as the rows are measured in rotation: a burst on this shared VM, which can last
// the second that 7 loads in a row take, then falls on some of them, not on all.
malloc_counter_count_bytes(0)
var loadTimes: [Double] = []
@MainActor func sampleLoads(_ count: Int) {
    for _ in 0..<count {
        let (rules, time) = uncounted {
            let t0 = now()
            let rules = load(bigSource)
            return (rules, Double(now() - t0) / 1e6)
        }
        loadTimes.append(time)
        withExtendedLifetime(rules) {}  // freed outside the timed part
    }
}
sampleLoads(3)

/// `flags check` on the 10,000-declaration file with and without its lints: loading
/// (parse, check, compile), then `lint()` (5 runs each, medians), and the median of the
/// lints' time over the load's, run by run.
let checkTimes: (load: Double, lint: Double, ratio: Double) = {
    guard options.only == nil || options.only == "lint" else { return (.nan, .nan, .nan) }
    var loads: [Double] = []
    var lints: [Double] = []
    for _ in 0..<5 {
        let (rules, warnings, t0, t1, t2) = uncounted {
            let t0 = now()
            let rules = load(bigSource)
            let t1 = now()
            let warnings = rules.lint()
            return (rules, warnings, t0, t1, now())
        }
        loads.append(Double(t1 - t0) / 1e6)
        lints.append(Double(t2 - t1) / 1e6)
        withExtendedLifetime((rules, warnings)) {}
    }
    let ratios = zip(lints, loads).map { $0 / $1 }.sorted()
    loads.sort()
    lints.sort()
    return (loads[2], lints[2], ratios[2])
}()

/// `flags lsp`: a change to a 2,000-line document until its diagnostics are published
/// (the server's work: the re-check, the lints and the notification, without the pipe).
let lspChangeMilliseconds: Double = {
    guard options.only == nil || options.only == "lsp" else { return .nan }
    var lines = ["context {", "  build: enum(debug, alpha, beta, release)", "  userId: string", "  country: string", "}", ""]
    var i = 0
    while lines.count < 2_000 {
        lines += [
            "/// Declaration \(i).", "flag f\(i) {", "  enabled when build in [debug, alpha]",
            "  enabled when build == beta and rollout(userId) < \(i % 90 + 5)%", "  enabled when country in [\"US\", \"CA\"]", "}", "",
        ]
        i += 1
    }
    let text = lines.joined(separator: "\n")
    let server = LanguageServer()
    let uri = JSON.string("file:///bench.flags")
    func send(_ method: String, _ params: JSON, id: Int? = nil) {
        var m: [(String, JSON)] = [("jsonrpc", .string("2.0")), ("method", .string(method)), ("params", params)]
        if let id { m.append(("id", .int(id))) }
        _ = server.handle(.json(.object(m)))
    }
    send("initialize", .object([("capabilities", .object([]))]), id: 1)
    send("textDocument/didOpen", .object([("textDocument", .object([("uri", uri), ("version", .int(1)), ("text", .string(text))]))]))
    _ = server.flush()
    var times: [Double] = []
    for run in 0..<11 {
        let changed = text.replacingOccurrences(of: "rollout(userId) < 5%", with: "rollout(userId) < \(run % 2 == 0 ? 6 : 5)%")
        let t0 = now()
        send(
            "textDocument/didChange",
            .object([
                ("textDocument", .object([("uri", uri), ("version", .int(run + 2))])),
                ("contentChanges", .array([.object([("text", .string(changed))])])),
            ]))
        let published = server.flush()
        times.append(Double(now() - t0) / 1e6)
        withExtendedLifetime(published) {}
    }
    times.sort()
    return times[times.count / 2]
}()

if options.only == "load" {
    // Loads the 10,000-declaration file repeatedly (for profiling the load path).
    let source = generatedFile(10_000)
    var times: [Double] = []
    for _ in 0..<options.runs {
        let (rules, time) = uncounted {
            let t0 = now()
            let rules = load(source)
            return (rules, Double(now() - t0) / 1e6)
        }
        times.append(time)
        withExtendedLifetime(rules) {}  // freed outside the timed part
    }
    times.sort()
    print("load 10,000 declarations: min \(times[0]) ms, median \(times[times.count / 2]) ms")
    exit(0)
}

let n = options.contexts
let runs = options.runs
let users = makeUsers(n)
let boxed: [AnyObject] = users
let dictionaries = users.map(dictionary)

/// What a row times: one call a context, or one call over all of them (a batch).
enum Workload {
    case each((Int) -> Bool)
    case batch(() -> [Bool])

    /// Runs it over `count` contexts; the number of ON results.
    func run(_ count: Int) -> Int {
        switch self {
        case .each(let evaluate):
            var hits = 0
            for i in 0..<count where evaluate(i) { hits += 1 }
            return hits
        case .batch(let evaluate):
            var hits = 0
            for on in evaluate() where on { hits += 1 }
            return hits
        }
    }
}

/// Measures rows in rotation: each run times one pass of every row in turn, so that the
/// machine's drift (a shared VM here) falls on all rows alike. Median per row, and each
/// run's time kept for ratios run by run (`Row.ratio(to:)`).
func measureInterleaved(count: Int, runs: Int, _ rows: [(String, (Int) -> Bool)]) -> [Row] {
    measureInterleaved(count: count, runs: runs, rows.map { ($0.0, Workload.each($0.1)) })
}

func measureInterleaved(count: Int, runs: Int, _ rows: [(String, Workload)]) -> [Row] {
    let active = rows.map { options.selects($0.0) }
    var times = Array(repeating: [Double](), count: rows.count)
    var on = Array(repeating: 0, count: rows.count)
    var allocations = Array(repeating: 0, count: rows.count)
    for (k, row) in rows.enumerated() where active[k] {
        on[k] = row.1.run(count)  // warm-up
    }
    for _ in 0..<runs {
        for (k, row) in rows.enumerated() where active[k] {
            let a0 = allocationsSoFar()
            let t0 = now()
            let hits = row.1.run(count)
            let t1 = now()
            allocations[k] = allocationsSoFar() - a0
            on[k] = hits
            times[k].append(Double(t1 - t0) / Double(count))
        }
    }
    return rows.enumerated().map { k, row in
        guard active[k] else { return .skipped(row.0) }
        let sorted = times[k].sorted()
        return Row(
            name: row.0, nanoseconds: sorted[sorted.count / 2], onFraction: Double(on[k]) / Double(count),
            allocations: Double(allocations[k]) / Double(count), runs: times[k])
    }
}

struct RuleReport {
    let name: String
    let rule: String
    let rows: [Row]
}

var reports: [RuleReport] = []
for (name, rule, handWritten) in [("seed", seedRule, handWrittenSeed), ("large", largeRule, handWrittenLarge)] {
    let rules = load(schema + "\nflag \(name) { enabled when \(rule) }\n")
    let handle = rules.handle(name)
    let prepared = dictionaries.map(rules.prepare)
    let predicate = NSPredicate { object, _ in
        guard let u = object as? User else { return false }
        return handWritten(u)
    }
    let slots = prepared.map { Slots($0, HandWrittenOnSlots.names) }
    let onSlotsRow: (Int) -> Bool = name == "seed" ? { HandWrittenOnSlots.seed(slots[$0]) } : { HandWrittenOnSlots.large(slots[$0]) }
    let rows = measureInterleaved(
        count: n, runs: runs,
        [
            ("hand-written Swift (same values, by position)", onSlotsRow),
            ("FlagRules fastest (handle, prepared context)", { rules.isEnabled(handle, in: prepared[$0]) }),
            ("FlagRules plain (name, dictionary context)", { rules.evaluate(name, in: dictionaries[$0]).value == .bool(true) }),
            ("NSPredicate(block:)", { predicate.evaluate(with: boxed[$0]) }),
            ("hand-written Swift over a typed struct (reference)", { handWritten(users[$0]) }),
            // A context prepared for each evaluation (one flag a request): the prepare's cost.
            ("FlagRules prepare + fastest (dictionary context)", { rules.isEnabled(handle, in: rules.prepare(dictionaries[$0])) }),
        ])
    reports.append(RuleReport(name: name, rule: rule, rows: rows))
}

// MARK: The store

/// `FlagStore` reads the rules in force on every call (borrowed from the thread's copy: no
/// lock, no reference count) and evaluates them: beside the same call on the `RuleSet` it
/// holds, and with an evaluation hook set (which builds a resolution and an event with the
/// context, and calls the hook after the borrow).
let storeRows: [Row] = {
    let rules = load(schema + "\nflag seed { enabled when \(seedRule) }\n")
    let store = FlagStore(rules)
    let hooked = FlagStore(rules)
    hooked.onEvaluation = { _ in }
    return measureInterleaved(
        count: n, runs: runs,
        [
            ("RuleSet.isEnabled (name, dictionary context)", { rules.isEnabled("seed", in: dictionaries[$0]) }),
            ("FlagStore.isEnabled (the rules in force, read per call)", { store.isEnabled("seed", in: dictionaries[$0]) }),
            ("FlagStore.isEnabled with an evaluation hook", { hooked.isEnabled("seed", in: dictionaries[$0]) }),
        ])
}()

// MARK: Exposures

/// A split variant read through a store, and the same with exposures recorded (over
/// 100,000 users, each seen before the timed runs: the common case, a unit's exposure
/// already recorded).
let exposureRows: [Row] = {
    let rules = load(
        schema + "\nvariant exp [a, b] { split(userId) { a: 50%, b: 50% } }\nvariant matched [a, b] = a { b when \(seedRule) }\n")
    let plain = FlagStore(rules)
    let tracked = FlagStore(rules)
    tracked.recordExposures(window: 200_000, buffer: 200_000)
    let stickyStore = FlagStore(load(schema + "\n@sticky variant exp [a, b] { split(userId) { a: 50%, b: 50% } }\n"))
    stickyStore.assignments = InMemoryAssignments(limit: 200_000)
    return measureInterleaved(
        count: min(n, 100_000), runs: runs,
        [
            ("a split variant, by name through a store", { plain.evaluate("exp", in: dictionaries[$0]).variant == "a" }),
            ("the same, recording exposures (each unit seen)", { tracked.evaluate("exp", in: dictionaries[$0]).variant == "a" }),
            ("the same, @sticky (each unit's assignment kept)", { stickyStore.evaluate("exp", in: dictionaries[$0]).variant == "a" }),
            ("a variant a rule decides (no exposure)", { plain.evaluate("matched", in: dictionaries[$0]).variant == "b" }),
            ("the same, recording exposures", { tracked.evaluate("matched", in: dictionaries[$0]).variant == "b" }),
        ])
}()

// MARK: Targeting: lists and networks

/// `contains any` of a 5-element list attribute against 1,000 literals, and an address
/// against 10,000 network blocks, on the plain path (by name, a dictionary context) and
/// the fastest (a handle, a prepared context), beside the seed rule's plain path measured
/// in the same rotation: the reference of their targets.
let targetingRows: [Row] = {
    var g = SeededGenerator(seed: 11)
    let groupPool = (0..<2_000).map { "group-\($0)" }
    let groupsRule =
        "flag member { enabled when groups contains any [" + groupPool[0..<1_000].map { "\"\($0)\"" }.joined(separator: ", ") + "] }"
    // 10,000 /24 blocks spread over 10.0.0.0/8; the addresses looked up fall in one about half the time.
    var blockStarts = Set<UInt32>()
    while blockStarts.count < 10_000 { blockStarts.insert(0x0A00_0000 | UInt32(g.next() % 65_536) << 8) }
    let blocks = blockStarts.sorted()
    func dotted(_ a: UInt32) -> String { "\(a >> 24).\(a >> 16 & 255).\(a >> 8 & 255).\(a & 255)" }
    let networkRule = "flag office { enabled when clientIP in [" + blocks.map { "\"\(dotted($0))/24\"" }.joined(separator: ", ") + "] }"
    let rules = load(
        "context { groups: [string]; clientIP: ip; userId: string }\n" + groupsRule + "\n" + networkRule + "\n")
    let seed = load(schema + "\nflag seed { enabled when \(seedRule) }\n")
    // Each rule's contexts are made one after another, as a service makes them (a list
    // just before the context that holds it), the reference row's included: made here,
    // from the same heap as the others, so that the rows differ by the work of their rules
    // and not by where their contexts lie.
    let seedContexts = users.map(dictionary)
    let groupContexts: [EvaluationContext] = (0..<n).map { _ in
        // Five groups, each listed with probability 1/8: about half the users hold one.
        let groups = (0..<5).map { _ in Value.string(groupPool[Int(g.next() % 8 == 0 ? g.next() % 1_000 : 1_000 + g.next() % 1_000)]) }
        return ["groups": .list(groups), "userId": .string("user-\(g.next() % 1_000_000)")]
    }
    let addressContexts: [EvaluationContext] = (0..<n).map { _ in
        let address = 0x0A00_0000 | UInt32(g.next() % 65_536) << 8 | UInt32(g.next() % 256)
        return ["clientIP": .string(dotted(address)), "userId": .string("user-\(g.next() % 1_000_000)")]
    }
    let groupsPrepared = groupContexts.map(rules.prepare), addressPrepared = addressContexts.map(rules.prepare)
    let groupsHandle = rules.handle("member"), officeHandle = rules.handle("office")
    return measureInterleaved(
        count: n, runs: runs,
        [
            ("seed rule, plain (name, dictionary context)", { seed.evaluate("seed", in: seedContexts[$0]).value == .bool(true) }),
            ("contains any: 5 elements, 1,000 literals (plain)", { rules.evaluate("member", in: groupContexts[$0]).value == .bool(true) }),
            ("contains any: 5 elements, 1,000 literals (fastest)", { rules.isEnabled(groupsHandle, in: groupsPrepared[$0]) }),
            ("ip in 10,000 blocks (plain)", { rules.evaluate("office", in: addressContexts[$0]).value == .bool(true) }),
            ("ip in 10,000 blocks (fastest)", { rules.isEnabled(officeHandle, in: addressPrepared[$0]) }),
        ])
}()

// MARK: `in` over long literal lists

func inRule(_ count: Int) -> String {
    "flag member { enabled when country in [" + (0..<count).map { "\"\(options.inKeys.key($0))\"" }.joined(separator: ", ") + "] }\n"
}

/// One list size: FlagRules' fastest path, one call a context and one batch call over all
/// of them (a large list's answer is a bit of the prepared slot); the plain path (by name,
/// a dictionary context), which looks the value up in the list's literal set when it
/// evaluates and hashes the value first when the set is large; setting the value on a
/// prepared context, which checks it once and looks it up in each large list that reads
/// it; and hand-written Swift looking the same value up in a `Set<String>` of the same
/// literals (the same values).
struct InRow {
    let size: Int
    let flagRules: Row
    let batch: Row
    let plain: Row
    let prepare: Row
    let handWritten: Row
}

sampleLoads(2)

var inRows: [InRow] = []
do {
    var g = SeededGenerator(seed: 7)
    var rows: [(String, Workload)] = []
    let sizes = [3, 1_000, 100_000]
    // Every size's rules are loaded before any contexts are made: a long list's load
    // leaves the heap in pieces, and contexts made after it would lie farther apart than
    // the short lists' (the rows should differ by their lookups, not by their contexts).
    let ruleSets = sizes.map { load(schema + "\n" + inRule($0)) }
    for (size, rules) in zip(sizes, ruleSets) {
        let handle = rules.handle("member")
        // Keys 0..<size are in the list, size..<2*size are not.
        let values = options.inValues.range(size)
        let contexts = (0..<n).map { _ in rules.prepare(["country": .string(options.inKeys.key(Int.random(in: values, using: &g)))]) }
        let set = Set((0..<size).map(options.inKeys.key))
        let dictionaries = contexts.map(\.dictionary)
        let countries = contexts.map { $0["country"] }
        var prepared = rules.makeContext()
        rows.append(("in over \(size) literals", .each { rules.isEnabled(handle, in: contexts[$0]) }))
        rows.append(("batch: in over \(size) literals", .batch { rules.isEnabled(handle, in: contexts) }))
        rows.append(("plain: in over \(size) literals", .each { rules.isEnabled("member", in: dictionaries[$0]) }))
        rows.append(
            (
                "prepare: in over \(size) literals (setting the value)",
                .each {
                    prepared["country"] = countries[$0]
                    return false
                }
            ))
        rows.append(
            (
                "Set<String> of \(size) literals (hand-written)",
                .each {
                    guard case .string(let country)? = countries[$0] else { return false }
                    return set.contains(country)
                }
            ))
    }
    let measured = measureInterleaved(count: n, runs: runs, rows)
    let perSize = rows.count / sizes.count
    inRows = sizes.enumerated().map {
        let m = Array(measured[perSize * $0..<perSize * ($0 + 1)])
        return InRow(size: $1, flagRules: m[0], batch: m[1], plain: m[2], prepare: m[3], handWritten: m[4])
    }
}

sampleLoads(2)
loadTimes.sort()
let loadMilliseconds = loadTimes[loadTimes.count / 2]

// MARK: `flags eval examples/app.flags`, whole process

/// The median wall time of running the built `flags` on the app example, spawned directly
/// (Foundation's Process adds tens of milliseconds of its own on Linux).
func processMilliseconds() -> Double? {
    let flags = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("flags").path
    let example = "examples/app.flags"
    guard FileManager.default.isExecutableFile(atPath: flags), FileManager.default.fileExists(atPath: example) else { return nil }
    let arguments = [flags, "eval", example, "-c", "build=beta", "-c", "userId=user-42"]
    var times: [Double] = []
    for _ in 0..<15 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        let t0 = now()
        guard posix_spawn(&pid, flags, &actions, nil, &argv, environ) == 0 else { return nil }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        times.append(Double(now() - t0) / 1e6)
    }
    times.sort()
    return times[times.count / 2]
}
let evalProcess = processMilliseconds()

// MARK: flags serve

/// `flags serve examples/app.flags` under load from this process: the requests a second
/// that two keep-alive connections get through (each sending its next request once the
/// last is answered), then the 99th percentile of the latency at half that rate.
struct ServeFigures {
    var requestsPerSecond = 0.0
    var p99Milliseconds = 0.0
    var halfRate = 0.0
}

/// One keep-alive connection to the server, sending one OFREP request at a time.
final class BenchConnection {
    let fd: Int32
    let request: [UInt8]
    var buffer = [UInt8](repeating: 0, count: 65_536)

    init?(port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let ok = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        let body = #"{"context": {"targetingKey": "user-42", "build": "beta", "appVersion": "2.4.0"}}"#
        self.request = Array(
            "POST /ofrep/v1/evaluate/flags/newMediaPicker HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
                .utf8)
        if ok != 0 { return nil }
    }

    deinit { close(fd) }

    /// Sends the request and reads its whole response; false when the server is gone.
    func roundTrip() -> Bool {
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress!, request.count, Int32(MSG_NOSIGNAL)) }) == request.count else {
            return false
        }
        var have = 0
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + have, $0.count - have, 0) }
            if n <= 0 { return false }
            have += n
            // The answer is small: done once the header block and its Content-Length are in.
            if let end = (0..<max(0, have - 3)).first(where: {
                buffer[$0] == 13 && buffer[$0 + 1] == 10 && buffer[$0 + 2] == 13 && buffer[$0 + 3] == 10
            }) {
                let head = String(decoding: buffer[0..<end], as: UTF8.self)
                let length =
                    head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
                if have >= end + 4 + length { return true }
            }
        }
    }
}

func serveFigures() -> ServeFigures? {
    guard options.only == nil || options.only == "serve" else { return nil }
    let flags = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("flags")
    guard FileManager.default.isExecutableFile(atPath: flags.path), FileManager.default.fileExists(atPath: "examples/app.flags") else {
        return nil
    }
    let process = Process()
    process.executableURL = flags
    process.arguments = ["serve", "examples/app.flags", "--port", "0"]
    let errors = Pipe()
    process.standardError = errors
    guard (try? process.run()) != nil else { return nil }
    defer {
        process.terminate()
        process.waitUntilExit()
    }
    var text = ""
    while !text.contains("listening on") {
        let data = errors.fileHandleForReading.availableData
        if data.isEmpty { return nil }
        text += String(decoding: data, as: UTF8.self)
    }
    guard let port = text.split(separator: ":").last.flatMap({ Int($0.prefix { $0.isNumber }) }) else { return nil }
    var figures = ServeFigures()
    // Throughput: two connections, each on its own thread, for two seconds after a warm-up.
    let seconds = 2.0
    final class Counts: @unchecked Sendable {
        let lock = NSLock()
        var total = 0
        func add(_ n: Int) { lock.withLock { total += n } }
    }
    let counts = Counts()
    let group = DispatchGroup()
    for _ in 0..<2 {
        group.enter()
        Thread {
            defer { group.leave() }
            guard let connection = BenchConnection(port: port) else { return }
            for _ in 0..<500 { _ = connection.roundTrip() }
            let end = now() + UInt64(seconds * 1e9)
            var n = 0
            while now() < end, connection.roundTrip() { n += 1 }
            counts.add(n)
        }.start()
    }
    group.wait()
    figures.requestsPerSecond = Double(counts.total) / seconds
    // Latency at half that rate, one connection pacing its requests.
    figures.halfRate = figures.requestsPerSecond / 2
    guard let connection = BenchConnection(port: port), figures.halfRate > 0 else { return figures }
    let interval = 1e9 / figures.halfRate
    var latencies: [Double] = []
    var next = Double(now())
    let end = next + seconds * 1e9
    while next < end {
        while Double(now()) < next {}
        let t0 = now()
        guard connection.roundTrip() else { break }
        latencies.append(Double(now() - t0) / 1e6)
        next += interval
    }
    latencies.sort()
    figures.p99Milliseconds = latencies.isEmpty ? .nan : latencies[min(latencies.count - 1, Int(Double(latencies.count) * 0.99))]
    return figures
}
let serve = serveFigures()

// MARK: A long rule

/// A rule whose condition is one `and` chain of `options.longChain` comparisons: its load,
/// one evaluation, one explanation and its release, timed, and the most bytes held at once.
struct LongChain {
    var operands = 0
    var bytes = 0
    var loadMilliseconds = Double.nan, evaluateMilliseconds = Double.nan, explainMilliseconds = Double.nan
    var releaseMilliseconds = Double.nan, peakBytes = 0
    /// Whether evaluating and explaining agreed that the rule is on (every operand holds).
    var isOn = true
}
var longChain = LongChain()
if options.only.map({ "long chain".contains($0) }) ?? true {
    let count = options.longChain
    var source = "context { a: int }\nflag long { enabled when "
    source.reserveCapacity(count * 16)
    for k in 0..<count {
        if k > 0 { source += " and " }
        source += "a > \(k - count)"
    }
    source += " }\n"
    longChain.operands = count
    longChain.bytes = source.utf8.count
    malloc_counter_count_bytes(1)
    let before = liveBytes()
    malloc_counter_reset_peak()
    var t0 = now()
    var rules: RuleSet? = load(source)
    longChain.loadMilliseconds = Double(now() - t0) / 1e6
    t0 = now()
    let on = rules?.isEnabled("long", in: ["a": 1]) ?? false
    longChain.evaluateMilliseconds = Double(now() - t0) / 1e6
    t0 = now()
    let explanation = rules?.explain("long", in: ["a": 1])
    longChain.explainMilliseconds = Double(now() - t0) / 1e6
    longChain.isOn = on && explanation?.resolution.value == .bool(true)
    t0 = now()
    rules = nil
    longChain.releaseMilliseconds = Double(now() - t0) / 1e6
    longChain.peakBytes = peakBytes() - before
    malloc_counter_count_bytes(0)
}

// MARK: Overrides

/// The fastest path checks for `withFlagOverrides` scopes with one load of a process-wide
/// switch until the first scope is entered, then with a task-local read. Measured last:
/// entering a scope turns the switch on for the rest of the process.
let overrideRows: [Row] = {
    let rules = load(schema + "\nflag seed { enabled when \(seedRule) }\n")
    let handle = rules.handle("seed")
    let prepared = dictionaries.map(rules.prepare)
    let before = measureInterleaved(
        count: n, runs: runs, [("fastest, no override scope ever entered", { rules.isEnabled(handle, in: prepared[$0]) })])
    let inside = withFlagOverrides(["another": true]) {
        measureInterleaved(
            count: n, runs: runs, [("fastest, inside a scope that overrides another name", { rules.isEnabled(handle, in: prepared[$0]) })])
    }
    return before + inside
}()

// MARK: Report

var failures: [String] = []
if !longChain.isOn { failures.append("long chain: evaluating or explaining did not find the rule on") }
for report in reports {
    let fractions = Set(report.rows.filter(\.measured).map(\.onFraction))
    if fractions.count > 1 { failures.append("\(report.name): rows disagree on the ON fraction: \(report.rows.map(\.onFraction))") }
}

func ratio(_ row: Row, _ report: RuleReport) -> Double { row.ratio(to: report.rows[0]) }

var targets: [(String, Bool)] = []
for report in reports {
    targets.append(("\(report.name): fastest ≤ 1.3× hand-written on the same context", ratio(report.rows[1], report) <= 1.3))
    targets.append(("\(report.name): plain ≤ 2.5× hand-written on the same context", ratio(report.rows[2], report) <= 2.5))
    if allocationCounting {
        targets.append(("\(report.name): no heap allocation per evaluation on the fastest path", report.rows[1].allocations < 0.001))
    }
}
for row in inRows {
    let fractions = Set([row.flagRules, row.batch, row.plain, row.handWritten].filter(\.measured).map(\.onFraction))
    if fractions.count > 1 {
        failures.append("in over \(row.size): FlagRules (fastest, batch, plain) and Set<String> disagree on the ON fraction")
    }
}
targets.append(("in over 100,000 literals within 2× of in over 3", inRows[2].flagRules.ratio(to: inRows[0].flagRules) <= 2))
// The same over one batch call (`isEnabled(_:in: [PreparedContext])`), reported beside it.
targets.append(("in over 100,000 literals within 2× of in over 3, in one batch call", inRows[2].batch.ratio(to: inRows[0].batch) <= 2))
if storeRows[0].measured && storeRows[1].measured {
    targets.append(("store.isEnabled within 10% of RuleSet.isEnabled", storeRows[1].ratio(to: storeRows[0]) <= 1.1))
    if storeRows[0].onFraction != storeRows[1].onFraction { failures.append("store: FlagStore and RuleSet disagree on the ON fraction") }
}
if exposureRows.allSatisfy(\.measured) {
    targets.append(
        ("a split read recording exposures within 1.5× of without", exposureRows[1].ratio(to: exposureRows[0]) <= 1.5))
    targets.append(
        (
            "a read that is no exposure costs the same with exposures recorded (within 10%)",
            exposureRows[4].ratio(to: exposureRows[3]) <= 1.1
        ))
}
if storeRows[1].measured && storeRows[2].measured {
    targets.append(
        ("store.isEnabled with an evaluation hook within 2× of without", storeRows[2].ratio(to: storeRows[1]) <= 2))
    if storeRows[1].onFraction != storeRows[2].onFraction { failures.append("store: the hooked store disagrees on the ON fraction") }
}
if targetingRows.allSatisfy(\.measured) {
    targets.append(
        (
            "contains any (5 elements, 1,000 literals) within 2× of the seed rule's plain path",
            targetingRows[1].ratio(to: targetingRows[0]) <= 2
        )
    )
    targets.append(("ip in 10,000 blocks within 2× of the seed rule's plain path", targetingRows[3].ratio(to: targetingRows[0]) <= 2))
    if targetingRows[1].onFraction != targetingRows[2].onFraction || targetingRows[3].onFraction != targetingRows[4].onFraction {
        failures.append("targeting: the plain and fastest paths disagree on the ON fraction")
    }
}
if !checkTimes.load.isNaN {
    targets.append(
        ("flags check on 10,000 declarations with every lint under 2× without", checkTimes.ratio < 1))
}
if !lspChangeMilliseconds.isNaN {
    targets.append(("flags lsp: a change to a 2,000-line file to its diagnostics under 50 ms", lspChangeMilliseconds < 50))
}
targets.append(("10,000 declarations load in under 100 ms", loadMilliseconds < 100))
if allocationCounting { targets.append(("10,000 declarations occupy under 50 MB", Double(heldBytes) < 50e6)) }
if let evalProcess { targets.append(("flags eval examples/app.flags under 30 ms", evalProcess < 30)) }
if let serve {
    targets.append(("flags serve: at least 20,000 requests a second on two keep-alive connections", serve.requestsPerSecond >= 20_000))
    targets.append(("flags serve: p99 latency under 2 ms at half that rate", serve.p99Milliseconds < 2))
}

if options.json {
    var out: [(String, ReportJSON)] = [
        ("contexts", .int(n)), ("runs", .int(runs)), ("cores", .int(ProcessInfo.processInfo.activeProcessorCount)),
    ]
    out.append(
        (
            "rules",
            .array(
                reports.map { report in
                    .object([
                        ("name", .string(report.name)), ("rule", .string(report.rule)),
                        (
                            "rows",
                            .array(
                                report.rows.map { row in
                                    .object([
                                        ("name", .string(row.name)), ("nsPerEvaluation", .double(row.nanoseconds)),
                                        ("ratio", .double(ratio(row, report))),
                                        ("onFraction", .double(row.onFraction)), ("allocationsPerEvaluation", .double(row.allocations)),
                                    ])
                                })
                        ),
                    ])
                })
        ))
    out.append(
        (
            "store",
            .array(
                storeRows.map { row in
                    .object([
                        ("name", .string(row.name)), ("nsPerEvaluation", .double(row.nanoseconds)),
                        ("ratio", .double(row.ratio(to: storeRows[0]))),
                    ])
                })
        ))
    out.append(
        (
            "overrides",
            .array(overrideRows.map { .object([("name", .string($0.name)), ("nsPerEvaluation", .double($0.nanoseconds))]) })
        ))
    out.append(
        (
            "targeting",
            .array(
                targetingRows.map { row in
                    .object([
                        ("name", .string(row.name)), ("nsPerEvaluation", .double(row.nanoseconds)),
                        ("ratio", .double(row.ratio(to: targetingRows[0]))), ("onFraction", .double(row.onFraction)),
                        ("allocationsPerEvaluation", .double(row.allocations)),
                    ])
                })
        ))
    out.append(("inValues", .string(options.inValues.rawValue)))
    out.append(("inKeys", .string(options.inKeys.rawValue)))
    out.append(
        (
            "in",
            .array(
                inRows.map {
                    .object([
                        ("literals", .int($0.size)), ("nsPerEvaluation", .double($0.flagRules.nanoseconds)),
                        ("onFraction", .double($0.flagRules.onFraction)),
                        ("batchNsPerEvaluation", .double($0.batch.nanoseconds)),
                        ("plainNsPerEvaluation", .double($0.plain.nanoseconds)),
                        ("prepareNsPerValue", .double($0.prepare.nanoseconds)),
                        ("handWrittenSetNsPerEvaluation", .double($0.handWritten.nanoseconds)),
                    ])
                })
        ))
    out.append(
        (
            "load10k",
            .object([
                ("milliseconds", .double(loadMilliseconds)), ("minimumMilliseconds", .double(loadTimes[0])),
                ("bytes", .int(heldBytes)),
                ("peakBytesWhileLoading", .int(peakLoadBytes)),
            ])
        ))
    if let evalProcess { out.append(("evalProcessMilliseconds", .double(evalProcess))) }
    if let serve {
        out.append(
            (
                "serve",
                .object([
                    ("requestsPerSecond", .double(serve.requestsPerSecond)), ("p99Milliseconds", .double(serve.p99Milliseconds)),
                ])
            ))
    }
    out.append(
        ("check10k", .object([("loadMilliseconds", .double(checkTimes.load)), ("lintMilliseconds", .double(checkTimes.lint))])))
    out.append(("lspChangeMilliseconds", .double(lspChangeMilliseconds)))
    out.append(
        (
            "longChain",
            .object([
                ("operands", .int(longChain.operands)), ("sourceBytes", .int(longChain.bytes)),
                ("loadMilliseconds", .double(longChain.loadMilliseconds)),
                ("evaluateMilliseconds", .double(longChain.evaluateMilliseconds)),
                ("explainMilliseconds", .double(longChain.explainMilliseconds)),
                ("releaseMilliseconds", .double(longChain.releaseMilliseconds)),
                ("peakBytes", .int(longChain.peakBytes)),
            ])
        ))
    out.append(("allocationCounting", .bool(allocationCounting)))
    if options.only == nil { out.append(("targets", .object(targets.map { ($0.0, .bool($0.1)) }))) }
    out.append(("failures", .array(failures.map { .string($0) })))
    let data =
        (try? JSONSerialization.data(withJSONObject: ReportJSON.object(out).foundation, options: [.prettyPrinted, .sortedKeys])) ?? Data()
    print(String(decoding: data, as: UTF8.self))
} else {
    func f(_ x: Double, _ digits: Int = 1) -> String { x.isNaN ? "-" : String(format: "%.\(digits)f", x) }
    print(
        "FlagRules benchmark: \(n) distinct contexts, median of \(runs) runs after a warm-up, \(ProcessInfo.processInfo.activeProcessorCount) cores"
    )
    for report in reports {
        print("\nrule \(report.name): \(report.rule)")
        print("  " + "row".padding(toLength: 52, withPad: " ", startingAt: 0) + "   ns/eval   ratio    ON %   allocs/eval")
        for row in report.rows {
            print(
                "  " + row.name.padding(toLength: 52, withPad: " ", startingAt: 0)
                    + f(row.nanoseconds).leftPad(10) + f(ratio(row, report), 2).leftPad(8) + f(row.onFraction * 100, 2).leftPad(8)
                    + f(row.allocations, 2).leftPad(14))
        }
    }
    print("\nthe store: rule seed, by name on a dictionary context")
    print("  " + "row".padding(toLength: 56, withPad: " ", startingAt: 0) + "   ns/eval   ratio")
    for row in storeRows {
        print(
            "  " + row.name.padding(toLength: 56, withPad: " ", startingAt: 0) + f(row.nanoseconds).leftPad(10)
                + f(row.ratio(to: storeRows[0]), 2).leftPad(8))
    }
    print("\nexposures and sticky assignments: variants by name through a store")
    for row in exposureRows {
        print(
            "  " + row.name.padding(toLength: 56, withPad: " ", startingAt: 0) + f(row.nanoseconds).leftPad(10)
                + f(row.ratio(to: exposureRows[0]), 2).leftPad(8))
    }
    print("\ntargeting: lists and networks, beside the seed rule's plain path")
    print("  " + "row".padding(toLength: 56, withPad: " ", startingAt: 0) + "   ns/eval   ratio    ON %   allocs/eval")
    for row in targetingRows {
        print(
            "  " + row.name.padding(toLength: 56, withPad: " ", startingAt: 0) + f(row.nanoseconds).leftPad(10)
                + f(row.ratio(to: targetingRows[0]), 2).leftPad(8) + f(row.onFraction * 100, 2).leftPad(8)
                + f(row.allocations, 2).leftPad(14))
    }
    print("\noverride scopes: rule seed, handle and prepared context")
    for row in overrideRows { print("  " + row.name.padding(toLength: 56, withPad: " ", startingAt: 0) + f(row.nanoseconds).leftPad(10)) }
    print(
        "\nin over literal lists of \(options.inKeys.rawValue) (\(options.inKeys.key(0)), …; values looked up: \(options.inValues == .both ? "half members, half not" : "only \(options.inValues.rawValue)")): FlagRules fastest path (one call a context, one batch call), plain path (by name, dictionary context), setting the value on a prepared context (which checks it and looks it up in each large list that reads it), and hand-written Set<String>.contains on the same context"
    )
    print(
        "  " + "literals".padding(toLength: 10, withPad: " ", startingAt: 0)
            + "   ns/eval  vs 3    ON %   batch  vs 3   plain  vs 3   prepare  vs 3   Set  vs 3")
    func column(_ row: Row, _ first: Row, _ width: Int) -> String {
        f(row.nanoseconds).leftPad(width) + f(row.ratio(to: first), 2).leftPad(6)
    }
    for row in inRows {
        print(
            "  " + "\(row.size)".padding(toLength: 10, withPad: " ", startingAt: 0) + column(row.flagRules, inRows[0].flagRules, 10)
                + f(row.flagRules.onFraction * 100, 2).leftPad(8) + column(row.batch, inRows[0].batch, 8)
                + column(row.plain, inRows[0].plain, 8) + column(row.prepare, inRows[0].prepare, 10)
                + column(row.handWritten, inRows[0].handWritten, 6))
    }
    print(
        "\nload 10,000 declarations (parse + check + compile): \(f(loadMilliseconds)) ms median, \(f(loadTimes[0])) ms min, \(f(Double(heldBytes) / 1e6)) MB held (\(f(Double(peakLoadBytes) / 1e6)) MB at the peak of loading)"
    )
    if let evalProcess { print("flags eval examples/app.flags (whole process): \(f(evalProcess)) ms") }
    if let serve {
        print(
            "flags serve examples/app.flags, one OFREP evaluation a request: \(f(serve.requestsPerSecond, 0)) requests a second on two keep-alive connections; p99 \(f(serve.p99Milliseconds, 3)) ms at \(f(serve.halfRate, 0)) a second"
        )
    }
    if !checkTimes.load.isNaN {
        print(
            "flags check on 10,000 declarations: load \(f(checkTimes.load)) ms, lints \(f(checkTimes.lint)) ms (\(f(1 + checkTimes.ratio, 2))× the load alone, the median run by run)"
        )
    }
    if !lspChangeMilliseconds.isNaN {
        print("flags lsp, a change to a 2,000-line file until its diagnostics are published: \(f(lspChangeMilliseconds)) ms")
    }
    if longChain.operands > 0 {
        print(
            "a rule of one \(longChain.operands)-operand and chain (\(f(Double(longChain.bytes) / 1e6)) MB of source): load \(f(longChain.loadMilliseconds)) ms, "
                + "evaluate \(f(longChain.evaluateMilliseconds, 2)) ms, explain \(f(longChain.explainMilliseconds)) ms, "
                + "release \(f(longChain.releaseMilliseconds)) ms, \(f(Double(longChain.peakBytes) / 1e6)) MB at the peak")
    }
    if !allocationCounting { print("(allocations are not counted here: the allocation column and the load's bytes are 0)") }
    if options.only == nil {
        print("\ntargets")
        for (name, ok) in targets { print("  \(ok ? "PASS" : "FAIL")  \(name)") }
    }
    for failure in failures { print("ERROR: \(failure)") }
}
exit(failures.isEmpty ? 0 : 1)

extension String {
    func leftPad(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
