import FlagRules
import Foundation
import MallocCounter

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
