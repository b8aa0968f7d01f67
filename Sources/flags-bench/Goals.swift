import Foundation

// MARK: Goals

/// The ratio of a row to its report's hand-written row.
func ratio(_ row: Row, _ report: RuleReport) -> Double { row.ratio(to: report.rows[0]) }

/// What the run measured, held against its goals: failures (rows that disagree, a figure
/// that could not be measured) and the ratio goals, each met or missed (reported, not
/// gated: wall-clock ratios move with the machine's load; `--counts` gates).
@MainActor func checkedGoals() -> (failures: [String], targets: [(String, Bool)]) {
    var failures: [String] = []
    if !longChain.isOn { failures.append("long chain: evaluating or explaining did not find the rule on") }
    for report in reports {
        let fractions = Set(report.rows.filter(\.measured).map(\.onFraction))
        if fractions.count > 1 { failures.append("\(report.name): rows disagree on the ON fraction: \(report.rows.map(\.onFraction))") }
    }

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
        if storeRows[0].onFraction != storeRows[1].onFraction {
            failures.append("store: FlagStore and RuleSet disagree on the ON fraction")
        }
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
    if let problem = relay?.problem {
        failures.append("relay: \(problem)")
    } else if let relay, relay.stores > 0 {
        targets.append(("an edit reaches \(relay.stores) stores through a relay, p99 under 1 s", relay.p99 < 1))
        if relay.keptAfterOriginStopped != relay.stores {
            failures.append("relay: \(relay.stores - relay.keptAfterOriginStopped) stores lost their rules when the origin stopped")
        }
    }

    if let problem = held?.problem {
        failures.append("subscribers: \(problem)")
    } else if let held {
        targets.append(("flags serve from 1,024 descriptors holds \(held.asked) subscribers", held.held == held.asked))
        targets.append(("an edit reaches \(held.held - 30) reading subscribers (30 never reading) within 3 s", held.editSeconds < 3))
        targets.append(("evaluations beside \(held.held) subscribers: p99 under 100 ms", held.evaluationP99Milliseconds < 100))
        targets.append(
            (
                "evaluations while a 360 KB file is pushed to \(held.held) subscribers: p99 under 20 ms",
                held.largeEvaluationP99Milliseconds < 20
            ))
        targets.append(
            (
                "evaluations while a 360 KB file is pushed to \(held.held) subscribers: slowest under 100 ms",
                held.largeEvaluationMaxMilliseconds < 100
            ))
    }

    if let throughput, throughput.skipped == nil {
        for route in throughput.routes {
            targets.append(
                (
                    "flags serve, \(route.name): at least \(route.target) of a minimal server's requests a second",
                    route.fraction >= route.target
                ))
        }
    }
    return (failures, targets)
}
