import FlagRules
import Foundation

/// Prints the report: JSON with `--json`, else the tables, the figures and the targets.
@MainActor
func printReport() {
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
        if let relay {
            out.append(
                (
                    "relay",
                    .object([
                        ("stores", .int(relay.stores)), ("secondsToSubscribe", .double(relay.secondsToSubscribe)),
                        ("p50Seconds", .double(relay.p50)), ("p99Seconds", .double(relay.p99)),
                        ("maxSeconds", .double(relay.maximum)), ("idleSubscribers", .int(relay.idleSubscribers)),
                        ("relayMegabytesBefore", .double(relay.relayMegabytesBefore)),
                        ("relayMegabytesAfter", .double(relay.relayMegabytesAfter)), ("p99SecondsWithIdle", .double(relay.p99WithIdle)),
                        ("keptAfterOriginStopped", .int(relay.keptAfterOriginStopped)),
                    ])
                ))
        }
        if let held {
            out.append(
                (
                    "subscribers",
                    .object([
                        ("asked", .int(held.asked)), ("held", .int(held.held)), ("refused", .int(held.refused)),
                        ("kilobytesPerSubscriber", .double(held.kilobytesPerSubscriber)), ("editSeconds", .double(held.editSeconds)),
                        ("evaluationP99Milliseconds", .double(held.evaluationP99Milliseconds)),
                        ("largeEditBytes", .int(held.largeEditBytes)), ("largeEditSeconds", .double(held.largeEditSeconds)),
                        ("largeEvaluationP99Milliseconds", .double(held.largeEvaluationP99Milliseconds)),
                        ("largeEvaluationMaxMilliseconds", .double(held.largeEvaluationMaxMilliseconds)),
                    ])
                ))
        }
        if let throughput {
            var members: [(String, ReportJSON)] = []
            for route in throughput.routes {
                let figures: [(String, ReportJSON)] = [
                    ("requestsPerSecond", .double(route.requestsPerSecond)),
                    ("minimalRequestsPerSecond", .double(route.minimal)),
                    ("cpuMicroseconds", .double(route.cpuMicroseconds ?? .nan)),
                    ("minimalCPUMicroseconds", .double(route.minimalCPUMicroseconds ?? .nan)),
                ]
                members.append((route.name, .object(figures)))
            }
            if let skipped = throughput.skipped { members.append(("skipped", .string(skipped))) }
            out.append(("throughput", .object(members)))
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
        // Goals of wall-clock ratios, reported and not gated (`--counts` gates).
        if options.only == nil { out.append(("ratioGoals", .object(targets.map { ($0.0, .bool($0.1)) }))) }
        out.append(("failures", .array(failures.map { .string($0) })))
        let data =
            (try? JSONSerialization.data(withJSONObject: ReportJSON.object(out).foundation, options: [.prettyPrinted, .sortedKeys]))
            ?? Data()
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
        for row in overrideRows {
            print("  " + row.name.padding(toLength: 56, withPad: " ", startingAt: 0) + f(row.nanoseconds).leftPad(10))
        }
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
        if let relay, relay.problem == nil {
            print(
                "push through a relay: \(relay.stores) stores load and subscribe in \(f(relay.secondsToSubscribe, 1)) s; an edit reaches them in p50 \(f(relay.p50 * 1000, 0)) ms, p99 \(f(relay.p99 * 1000, 0)) ms, max \(f(relay.maximum * 1000, 0)) ms (5 edits); \(relay.idleSubscribers) idle subscribers take the relay from \(f(relay.relayMegabytesBefore)) MB to \(f(relay.relayMegabytesAfter)) MB, and an edit then reaches the stores in p99 \(f(relay.p99WithIdle * 1000, 0)) ms; with the origin stopped, \(relay.keptAfterOriginStopped) of \(relay.stores) stores keep their rules"
            )
        }
        if let held, held.problem == nil {
            print(
                "flags serve from a soft limit of 1,024 descriptors: \(held.held) of \(held.asked) subscribers held (\(held.refused) answered 503), \(f(held.kilobytesPerSubscriber, 1)) KB each; an edit reaches the \(held.held - 30) reading ones (30 never read) in \(f(held.editSeconds * 1000, 0)) ms from the write; evaluations meanwhile p99 \(f(held.evaluationP99Milliseconds, 2)) ms"
            )
            print(
                "  an edit making the file \(f(Double(held.largeEditBytes) / 1e3, 0)) KB, pushed whole to each: the last reading subscriber had it \(f(held.largeEditSeconds, 2)) s after the write; evaluations meanwhile p99 \(f(held.largeEvaluationP99Milliseconds, 2)) ms, slowest \(f(held.largeEvaluationMaxMilliseconds, 2)) ms"
            )
        }
        if let throughput {
            if let skipped = throughput.skipped {
                print("requests a second with wrk: skipped (\(skipped))")
            } else {
                print(
                    "requests a second with wrk, each server on one core and wrk on the other (16 connections), each route beside a minimal epoll server measured just before it; CPU microseconds a request of each server"
                )
                for route in throughput.routes {
                    let cpu = route.cpuMicroseconds.map { " CPU \(f($0, 1)) µs" } ?? ""
                    let minimalCPU = route.minimalCPUMicroseconds.map { " CPU \(f($0, 1)) µs" } ?? ""
                    print(
                        "  flags serve, \(route.name): \(f(route.requestsPerSecond, 0))\(cpu) (\(f(route.fraction, 2)) of the minimal server's \(f(route.minimal, 0))\(minimalCPU))"
                    )
                }
            }
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
            print("\nratio goals (reported, not gated: wall-clock ratios move with the machine's load; `--counts` gates)")
            for (name, ok) in targets { print("  \(ok ? "meets " : "misses")  \(name)") }
        }
        for failure in failures { print("ERROR: \(failure)") }
    }
}

extension String {
    func leftPad(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
