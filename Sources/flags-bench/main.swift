// flags-bench: FlagRules' evaluation against a hand-written Swift baseline, in one process.
//
//   swift run -c release flags-bench [--json] [--contexts N] [--runs N] [--only ROW-NAME-PART[|PART…]]
//                                    [--in-values both|hits|misses] [--in-keys codes|ids|uuids]
//
// Every row evaluates the same rule over the same N pre-built distinct contexts; the
// fraction of ON results must agree across rows (proof that every row ran the same rule).
//
// The parts: Options.swift (the command line and the report's JSON), Baseline.swift (the
// rules and the hand-written Swift they are measured against), Measurement.swift (rows
// and timing), Serve.swift (`flags serve` under load), Report.swift (printing); this file
// runs the measurements in order.

import FlagRules
import FlagRulesLanguageServer
import FlagRulesTooling
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

let options = Options(Array(CommandLine.arguments.dropFirst()))

// MARK: Counts (`--counts`): the figures that gate, in Counts.swift

if options.countRun {
    countRun(only: options.countOnly)
    exit(0)
}
if options.counts { countReport() }

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

let serve = serveFigures()
let relay = relayFigures()
let held = subscriberFigures()
let throughput = throughputFigures()

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

let (failures, targets) = checkedGoals()

printReport()
exit(failures.isEmpty ? 0 : 1)
