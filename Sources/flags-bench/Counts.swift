import FlagRules
import FlagRulesLanguageServer
import FlagRulesServer
import FlagRulesTooling
import Foundation
import MallocCounter

// MARK: Counts: the figures that gate
//
// `flags-bench --counts` measures what does not move with the machine's load: the
// instructions (callgrind) and heap allocations (the counting allocator) of one operation,
// each an average over many. It runs itself with `--count-run`: every operation is set
// up, warmed up, then run in `countedLoop`, its allocations counted; then once under
// callgrind for each operation, which collects in `countedLoop` alone. Each operation has a ceiling of
// each, set from measured figures with a margin; one above its ceiling fails the run.

/// One operation whose counts gate: how it is set up, how many times it runs, and the most
/// instructions and allocations it may take each time.
struct CountedOperation {
    let name: String
    /// What one run is (`evaluation`, `load`, …), for the report.
    let unit: String
    let iterations: Int
    let maxInstructions: Double
    let maxAllocations: Double
    /// The row this one is compared with (for a FlagRules fastest path, hand-written Swift).
    var mirror: Mirror? = nil
    /// Builds the operation (outside the counts); the operation takes the run's index.
    let make: () -> (Int) -> Void
}

/// What one operation took, per run.
struct CountedFigures {
    let operation: CountedOperation
    var instructions: Double?
    var allocations: Double?
    /// Its instructions for each of its compared row's (``CountedOperation/mirror``).
    var ratio: Double?

    var passes: Bool {
        (instructions.map { $0 <= operation.maxInstructions } ?? true) && (allocations.map { $0 <= operation.maxAllocations } ?? true)
            && (ratio.map { $0 <= operation.mirror!.maxRatio } ?? true)
    }
}

/// Keeps a result alive so that the optimiser cannot drop the work that made it.
nonisolated(unsafe) var countedSink = 0

/// The loop callgrind collects in (`--toggle-collect`); a dump follows each call
/// (`--dump-after`, which takes the symbol, `countedLoopSymbol`, whole: an operation whose
/// dump is missing has no figure, and fails the report).
@inline(never)
func countedLoop(_ iterations: Int, _ operation: (Int) -> Void) {
    for i in 0..<iterations { operation(i) }
}

/// `countedLoop(_:_:)`'s symbol.
let countedLoopSymbol = "$s11flags_bench11countedLoopyySi_ySiXEtF"

/// The operations, each set up from the baseline's rules and users.
func countedOperations() -> [CountedOperation] {
    let users = makeUsers(2_000)
    let dictionaries = users.map(dictionary)
    func evaluation(_ name: String, _ maxInstructions: Double, _ maxAllocations: Double, _ make: @escaping () -> (Int) -> Bool)
        -> CountedOperation
    {
        CountedOperation(
            name: name, unit: "evaluation", iterations: 20_000, maxInstructions: maxInstructions, maxAllocations: maxAllocations
        ) {
            let evaluate = make()
            return { i in if evaluate(i % 2_000) { countedSink &+= 1 } }
        }
    }
    func flag(_ rule: String) -> RuleSet { load(schema + "\nflag f { enabled when \(rule) }\n") }
    return handWrittenPairs(users, dictionaries) + contextFromStructRows() + [
        evaluation("seed rule, plain (name, dictionary context)", 650, 0) {
            let rules = flag(seedRule)
            return { rules.isEnabled("f", in: dictionaries[$0]) }
        },
        evaluation("large rule, fastest (handle, prepared context)", 630, 0) {
            let rules = flag(largeRule)
            let handle = rules.handle("f")
            let prepared = dictionaries.map(rules.prepare)
            return { rules.isEnabled(handle, in: prepared[$0]) }
        },
        evaluation("large rule, plain (name, dictionary context)", 740, 0) {
            let rules = flag(largeRule)
            return { rules.isEnabled("f", in: dictionaries[$0]) }
        },
        evaluation("FlagStore.isEnabled, seed rule", 670, 0) {
            let store = FlagStore(flag(seedRule))
            return { store.isEnabled("f", in: dictionaries[$0]) }
        },
        evaluation("FlagStore.isEnabled with an evaluation hook", 1_120, 0.01) {
            let store = FlagStore(flag(seedRule))
            store.onEvaluation = { _ in }
            return { store.isEnabled("f", in: dictionaries[$0]) }
        },
        evaluation("a split variant through a store, recording exposures", 3_200, 0.01) {
            let store = FlagStore(load(schema + "\nvariant f [a, b] { split(userId) { a: 50%, b: 50% } }\n"))
            store.recordExposures(window: 10_000, buffer: 10_000)
            return { store.evaluate("f", in: dictionaries[$0]).variant == "a" }
        },
        evaluation("a path two levels deep, fastest (handle, prepared context)", 590, 0) {
            let rules = load(objectSchema + "\nflag f { enabled when org.billing.country == \"FR\" }\n")
            let handle = rules.handle("f")
            let prepared = users.map { rules.prepare(organisation($0)) }
            return { rules.isEnabled(handle, in: prepared[$0]) }
        },
        evaluation("a path two levels deep, plain (name, dictionary context)", 1_960, 0) {
            let rules = load(objectSchema + "\nflag f { enabled when org.billing.country == \"FR\" }\n")
            let contexts = users.map(organisation)
            return { rules.isEnabled("f", in: contexts[$0]) }
        },
        evaluation("in over 3 literals, fastest", 440, 0) { inOperation(3) },
        evaluation("in over 100,000 literals, fastest", 490, 0) { inOperation(100_000) },
        CountedOperation(
            name: "EvaluationContext(encoding:) of a struct with 1,000 tags", unit: "context", iterations: 50,
            maxInstructions: 1_000_000, maxAllocations: 25
        ) {
            let member = Member(id: "u-1", plan: "team", seats: 120, tags: (0..<1_000).map { "tag-\($0)" })
            return { _ in countedSink &+= (try? EvaluationContext(encoding: member))?["tags"]?.listValue?.count ?? 0 }
        },
        CountedOperation(
            name: "EvaluationContext(encoding:) of a struct with 32,000 tags (linear: 32 times the row above)", unit: "context",
            iterations: 5, maxInstructions: 32_000_000, maxAllocations: 40
        ) {
            let member = Member(id: "u-1", plan: "team", seats: 120, tags: (0..<32_000).map { "tag-\($0)" })
            return { _ in countedSink &+= (try? EvaluationContext(encoding: member))?["tags"]?.listValue?.count ?? 0 }
        },
        CountedOperation(
            name: "JSONEncoder, then EvaluationContext(json:), of the struct with 1,000 tags", unit: "context", iterations: 50,
            maxInstructions: 6_200_000, maxAllocations: 1_100
        ) {
            let member = Member(id: "u-1", plan: "team", seats: 120, tags: (0..<1_000).map { "tag-\($0)" })
            return { _ in
                let json = (try? JSONEncoder().encode(member)).map { String(decoding: $0, as: UTF8.self) } ?? ""
                countedSink &+= (try? EvaluationContext(json: json))?["tags"]?.listValue?.count ?? 0
            }
        },
        request("GET /healthz", 1_300, 1) { _ in HTTPRequest(method: "GET", path: "/healthz") },
        request("GET /rules/app.flags", 3_000, 2) { _ in HTTPRequest(method: "GET", path: "/rules/app.flags") },
        request("GET /rules/app.flags, revalidated (304)", 9_500, 3) {
            HTTPRequest(method: "GET", path: "/rules/app.flags", headers: [("If-None-Match", $0)])
        },
        request("POST /ofrep/v1/evaluate/flags/newMediaPicker", 18_000, 4) { _ in
            HTTPRequest(method: "POST", path: "/ofrep/v1/evaluate/flags/newMediaPicker", body: Array(ofrepContext.utf8))
        },
        request("POST /ofrep/v1/evaluate/flags (bulk, 9 declarations)", 64_000, 12) { _ in
            HTTPRequest(method: "POST", path: "/ofrep/v1/evaluate/flags", body: Array(ofrepContext.utf8))
        },
        wireRequest(
            "POST /ofrep/v1/evaluate/flags/newMediaPicker, read and written", 25_000, 7, path: "/ofrep/v1/evaluate/flags/newMediaPicker"),
        wireRequest("POST /ofrep/v1/evaluate/flags (bulk), read and written", 72_000, 15, path: "/ofrep/v1/evaluate/flags"),
        CountedOperation(
            name: "load 10,000 declarations (parse, check, compile)", unit: "load", iterations: 1, maxInstructions: 660e6,
            maxAllocations: 270_000
        ) {
            let source = generatedFile(10_000)
            return { _ in countedSink &+= load(source).handle("f0").name.utf8.count }
        },
        CountedOperation(
            name: "lint 10,000 declarations", unit: "lint", iterations: 1, maxInstructions: 450e6, maxAllocations: 70_000
        ) {
            let rules = load(generatedFile(10_000))
            return { _ in countedSink &+= rules.lint().count }
        },
    ]
}

/// A service's model of a user, encoded into a context.
struct Member: Encodable {
    let id: String
    let plan: String
    let seats: Int
    let tags: [String]
}

/// The context of the OFREP requests counted: what a mobile client sends.
let ofrepContext = #"{"context": {"targetingKey": "user-42", "build": "beta", "appVersion": "2.4.0"}}"#

/// `flags serve`'s handler serving `examples/app.flags`, its health report set.
func servingApp() -> OFREPService {
    let source = (try? String(contentsOfFile: "examples/app.flags", encoding: .utf8)) ?? ""
    let service = OFREPService()
    service.install([OFREPService.ServedFile(name: "app.flags", rules: load(source))])
    service.reportHealth { OFREPService.Health() }
    service.reportTransport { OFREPService.TransportLoad(connections: 1, subscribers: [:]) }
    return service
}

/// A request answered by `flags serve`'s handler (`OFREPService`) serving
/// `examples/app.flags`, as a server answers it (its health report set), its transport
/// apart. `make` gets the served file's ETag.
func request(_ name: String, _ maxInstructions: Double, _ maxAllocations: Double, _ make: @escaping (String) -> HTTPRequest)
    -> CountedOperation
{
    CountedOperation(name: name, unit: "request", iterations: 2_000, maxInstructions: maxInstructions, maxAllocations: maxAllocations) {
        let service = servingApp()
        let request = make(service.servedFiles[0].etag)
        return { _ in countedSink &+= service.respond(request).body.count }
    }
}

/// An OFREP request as a server answers it from the bytes a client sends (what wrk sends:
/// `Host`, `Content-Type` and `Content-Length`) to the bytes of its answer: the request
/// parser, the handler and the answer's serialization, the socket apart.
func wireRequest(_ name: String, _ maxInstructions: Double, _ maxAllocations: Double, path: String) -> CountedOperation {
    CountedOperation(name: name, unit: "request", iterations: 2_000, maxInstructions: maxInstructions, maxAllocations: maxAllocations) {
        let service = servingApp()
        let wire = Array(
            ("POST \(path) HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(ofrepContext.utf8.count)\r\n\r\n\(ofrepContext)").utf8)
        var parser = HTTPRequestParser()
        var out: [UInt8] = []
        out.reserveCapacity(4_096)
        return { _ in
            parser.append(wire)
            guard let request = try? parser.next() else { return }
            service.respond(request).serialize(into: &out, keepAlive: request.keepsAlive)
            countedSink &+= out.count
            out.removeAll(keepingCapacity: true)
        }
    }
}

/// A schema whose organisation is an object, with an object inside it.
let objectSchema = """
    context {
      userId : string
      org    : { id : string, plan : enum(free, team), billing : { country : string } }
    }
    """

/// A user's context with their organisation as an object (its billing country theirs).
func organisation(_ u: User) -> EvaluationContext {
    [
        "userId": .string(u.userId),
        "org": .object(["id": .string("org-\(u.userId.count)"), "plan": "team", "billing": .object(["country": .string(u.country)])]),
    ]
}

/// `in` over `size` literals of the `codes` shape, half the values looked up in the list.
func inOperation(_ size: Int) -> (Int) -> Bool {
    let rules = load(
        schema + "\n" + "flag f { enabled when country in [" + (0..<size).map { "\"c\($0)\"" }.joined(separator: ", ") + "] }\n")
    let handle = rules.handle("f")
    var g = SeededGenerator(seed: 5)
    let prepared = (0..<2_000).map { _ in rules.prepare(["country": .string("c\(Int(g.next() % UInt64(2 * size)))")]) }
    return { rules.isEnabled(handle, in: prepared[$0]) }
}

/// `--count-run [K]`: sets the operations up (the `K`th alone when given), then runs each in
/// `countedLoop` after a warm-up, and prints its allocations per run, one line each
/// (`name<TAB>allocations`).
func countRun(only: Int?) {
    let all = countedOperations()
    for (k, operation) in all.enumerated() where only == nil || only == k {
        let run = operation.make()
        // Warm-up: first-use costs (a tenth of the runs, at least one and at most 200).
        for i in 0..<min(max(1, operation.iterations / 10), 200) { run(i) }
        let a0 = allocationsSoFar()
        countedLoop(operation.iterations, run)
        let allocations = allocationsSoFar() - a0
        print("\(operation.name)\t\(Double(allocations) / Double(operation.iterations))")
    }
}

/// `--counts`: runs `--count-run` under callgrind (or, without valgrind, natively: the
/// allocations alone), checks every ceiling, and prints the report (Markdown with
/// `--markdown`). Exits 1 when an operation is over a ceiling.
func countReport() -> Never {
    let operations = countedOperations()
    let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().path
    let valgrind = ["/usr/bin/valgrind", "/usr/local/bin/valgrind"].first { FileManager.default.isExecutableFile(atPath: $0) }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flags-bench-counts-\(getpid())")
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    // Valgrind cannot read the toolchain's DWARF 5: a copy without debug information (its
    // symbols kept, which --toggle-collect names) is what runs under it.
    var counted = executable
    if valgrind != nil {
        let copy = directory.appendingPathComponent("flags-bench").path
        let strip = Process()
        strip.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        strip.arguments = ["strip", "--strip-debug", "-o", copy, executable]
        if (try? strip.run()) != nil {
            strip.waitUntilExit()
            if strip.terminationStatus == 0 { counted = copy }
        }
        if counted == executable {
            FileHandle.standardError.write(Data("flags-bench: 'strip --strip-debug' failed; valgrind may not read the binary\n".utf8))
        }
    }
    // One run of the operations for their allocations, then (with valgrind) one run of them
    // all under callgrind for their instructions: it collects in `countedLoop` alone, and
    // writes what it collected after each call (`.1`, `.2`, … in the operations' order).
    let allocations = Dictionary(
        run(executable, ["--count-run"]).split(separator: "\n").compactMap { line -> (String, Double)? in
            let parts = line.split(separator: "\t")
            guard parts.count == 2, let a = Double(parts[1]) else { return nil }
            return (String(parts[0]), a)
        }, uniquingKeysWith: { a, _ in a })
    var figures = operations.map {
        CountedFigures(operation: $0, instructions: nil, allocations: allocationCounting ? allocations[$0.name] : nil)
    }
    if let valgrind {
        let out = directory.appendingPathComponent("callgrind.out").path
        _ = run(
            valgrind,
            [
                "--tool=callgrind", "--toggle-collect=*countedLoop*", "--dump-after=\(countedLoopSymbol)",
                "--callgrind-out-file=\(out)", counted, "--count-run",
            ])
        for k in figures.indices {
            guard let contents = try? String(contentsOfFile: "\(out).\(k + 1)", encoding: .utf8),
                let line = contents.split(separator: "\n").first(where: { $0.hasPrefix("totals:") || $0.hasPrefix("summary:") }),
                let total = line.split(separator: " ").last.flatMap({ Double($0) })
            else { continue }
            figures[k].instructions = total / Double(figures[k].operation.iterations)
        }
        for k in figures.indices {
            guard let mirror = figures[k].operation.mirror, let mine = figures[k].instructions,
                let hand = figures.first(where: { $0.operation.name == mirror.compared })?.instructions, hand > 0
            else { continue }
            figures[k].ratio = mine / hand
        }
    }
    printCounts(figures, counter: valgrind == nil ? nil : "callgrind")
    exit(figures.allSatisfy(\.passes) && figures.allSatisfy { valgrind == nil || $0.instructions != nil } ? 0 : 1)
}

/// Runs `executable` with `arguments` to its end; its standard output. Exits the bench when
/// it cannot start or fails.
func run(_ executable: String, _ arguments: [String]) -> String {
    let process = Process()
    let output = Pipe()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    // Swift's hashing is seeded per process unless this is set: with it, a run's
    // instructions are the same from run to run.
    process.environment = ProcessInfo.processInfo.environment.merging(["SWIFT_DETERMINISTIC_HASHING": "1"]) { _, new in new }
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    do {
        try process.run()
    } catch {
        FileHandle.standardError.write(Data("flags-bench: cannot run \(executable): \(error)\n".utf8))
        exit(1)
    }
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        FileHandle.standardError.write(
            Data("flags-bench: \(executable) \(arguments.joined(separator: " ")) failed (status \(process.terminationStatus))\n".utf8))
        exit(1)
    }
    return text
}

func printCounts(_ figures: [CountedFigures], counter: String?) {
    func count(_ x: Double?) -> String {
        guard let x else { return "-" }
        if x >= 1e6 { return String(format: "%.1fM", x / 1e6) }
        if x >= 10_000 { return String(format: "%.0fk", x / 1e3) }
        return String(format: x < 10 ? "%.2f" : "%.0f", x)
    }
    if options.markdown {
        print("# Benchmark counts\n")
        print("Instructions and heap allocations per operation, the figures that gate performance.\n")
        print("## Overview\n")
        print("Generated by `swift run -c release flags-bench --counts --markdown`: instructions counted by")
        print("\(counter ?? "no counter (valgrind was not found)"), allocations by the bench's counting allocator, each an")
        print("average over many runs of the operation after a warm-up. `.ci/run` runs `flags-bench")
        print("--counts`, which fails when an operation is over a ceiling.\n")
        print("| operation | instructions | ceiling | allocations | ceiling |")
        print("|---|---:|---:|---:|---:|")
        for f in figures {
            print(
                "| \(f.operation.name), one \(f.operation.unit) | \(count(f.instructions)) | \(count(f.operation.maxInstructions)) | \(count(f.allocations)) | \(count(f.operation.maxAllocations)) |"
            )
        }
        print("\n## Against the rows beside them\n")
        print("Each fastest path's instructions for each of its hand-written row's (the same logic over the same")
        print("values, read by position), a context encoded from a struct's for each of its JSON text's, and the")
        print("most each may take.\n")
        print("| operation | against | × | ceiling |")
        print("|---|---|---:|---:|")
        for f in figures {
            guard let mirror = f.operation.mirror else { continue }
            print(
                "| \(f.operation.name) | \(mirror.label) | \(f.ratio.map { String(format: "%.2f", $0) } ?? "-") | \(String(format: "%.2f", mirror.maxRatio)) |"
            )
        }
        return
    }
    print(
        "counts per operation (instructions: \(counter ?? "not counted: no valgrind"); allocations: \(allocationCounting ? "the counting allocator" : "not counted"))"
    )
    print("  " + "operation".padding(toLength: 75, withPad: " ", startingAt: 0) + "  instructions (ceiling)   allocations (ceiling)")
    for f in figures {
        print(
            "  \(f.passes ? "PASS" : "FAIL") "
                + "\(f.operation.name), one \(f.operation.unit)".padding(toLength: 70, withPad: " ", startingAt: 0)
                + "\(count(f.instructions)) (\(count(f.operation.maxInstructions)))".leftPad(24)
                + "\(count(f.allocations)) (\(count(f.operation.maxAllocations)))".leftPad(24)
                + (f.operation.mirror.map { m in
                    "   \(f.ratio.map { String(format: "%.2f", $0) } ?? "-")× \(m.label) (\(String(format: "%.2f", m.maxRatio)))"
                } ?? ""))
    }
}
