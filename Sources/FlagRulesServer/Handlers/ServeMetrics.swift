import FlagRules
import FlagRulesTooling
import Foundation

/// What `flags serve` counts, for `GET /metrics` in Prometheus's text format: evaluations
/// by declaration and reason, the values each declaration served and when it last served
/// each (what `flags stale --metrics` reads), reloads and rejected reloads, requests by
/// status, and a histogram of request latency.
package final class ServeMetrics: Sendable {
    /// The histogram's upper bounds, in seconds.
    static let bounds: [Double] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1]

    struct Counts: Sendable {
        /// For each declaration: its evaluations by reason, and each value it served.
        var declarations: [String: Declaration] = [:]
        var requests: [Int: Int] = [:]
        var latency = [Int](repeating: 0, count: ServeMetrics.bounds.count + 1)
        var latencySum = 0.0
        var reloads = 0
        var rejectedReloads = 0
        var failedReloads = 0
        /// When rules were last put in force (seconds since 1970).
        var lastReload: Double?
    }

    /// What is counted of one declaration.
    struct Declaration: Sendable {
        /// Its evaluations by reason, by the reason's place in ``ServeMetrics/reasons``.
        var reasons = [Int](repeating: 0, count: ServeMetrics.reasons.count)
        /// Each value it served: how often, and when last (seconds since 1970). The
        /// exposition writes each value as JSON text.
        var served: [Value: (count: Int, last: Double)] = [:]
        /// A flag's `false` and `true`, counted apart from `served` (no value hashed).
        var bools: [(count: Int, last: Double)?] = [nil, nil]

        /// Every value it served, bools included.
        var allServed: [Value: (count: Int, last: Double)] {
            var all = served
            for (k, counted) in bools.enumerated() { if let counted { all[.bool(k == 1)] = counted } }
            return all
        }
    }

    private let counts = Locked(Counts())
    /// When counting began (seconds since 1970).
    let since: Double

    package init(since: Date = Date()) {
        self.since = since.timeIntervalSince1970
    }

    /// The most distinct values counted for one declaration besides `false` and `true`
    /// (its rules bound them; this bounds the memory whatever they are).
    static let maxValues = 64

    /// The most distinct declaration names counted (names come from requests).
    static let maxNames = 10_000

    /// The reasons counted, in the order the exposition writes them.
    static let reasons: [Resolution.Reason] = [.default, .disabled, .error, .override, .split, .static, .targetingMatch]

    /// Where `reason` is counted in a declaration's `reasons`.
    static func place(of reason: Resolution.Reason) -> Int {
        switch reason {
        case .default: 0
        case .disabled: 1
        case .error: 2
        case .override: 3
        case .split: 4
        case .static: 5
        case .targetingMatch: 6
        }
    }

    /// Counts an evaluation of `key`, and the value it served (nil: it failed).
    func evaluation(_ key: String, reason: Resolution.Reason, value: Value? = nil, at now: Date = Date()) {
        let time = now.timeIntervalSince1970
        counts.withLock { c in
            if c.declarations.count >= ServeMetrics.maxNames, c.declarations[key] == nil { return }
            ServeMetrics.count(&c.declarations[key, default: Declaration()], reason: reason, value: value, at: time)
        }
    }

    /// Counts one evaluation of a declaration, in place.
    private static func count(_ d: inout Declaration, reason: Resolution.Reason, value: Value?, at time: Double) {
        d.reasons[place(of: reason)] += 1
        guard let value else { return }
        if case .bool(let b) = value {
            let k = b ? 1 : 0
            d.bools[k] = ((d.bools[k]?.count ?? 0) + 1, time)
            return
        }
        if let i = d.served.index(forKey: value) {
            d.served.values[i] = (d.served.values[i].count + 1, time)
        } else if d.served.count < ServeMetrics.maxValues {
            d.served[value] = (1, time)
        }
    }

    func request(status: Int, seconds: Double) {
        let bucket = ServeMetrics.bounds.firstIndex { seconds <= $0 } ?? ServeMetrics.bounds.count
        counts.withLock { c in
            c.requests[status, default: 0] += 1
            c.latency[bucket] += 1
            c.latencySum += seconds
        }
    }

    /// What became of a look at a served file that found a change.
    package enum Reload: Sendable {
        /// Put in force.
        case loaded
        /// Refused: the rules do not compile or declare nothing (the last good ones stay).
        case rejected
        /// Unusable: the file is missing, empty or unreadable (the last good rules stay).
        case failed
    }

    /// Counts a reload.
    package func reload(_ outcome: Reload) {
        counts.withLock { c in
            switch outcome {
            case .loaded:
                c.reloads += 1
                c.lastReload = Date().timeIntervalSince1970
            case .rejected: c.rejectedReloads += 1
            case .failed: c.failedReloads += 1
            }
        }
    }

    /// The exposition text.
    package func text() -> String {
        let c = counts.withLock { $0 }
        var out = "# HELP flags_evaluations_total Evaluations served, by declaration and reason.\n"
        out += "# TYPE flags_evaluations_total counter\n"
        let keys = c.declarations.keys.sorted()
        for key in keys {
            for (reason, n) in zip(ServeMetrics.reasons, c.declarations[key]!.reasons) where n > 0 {
                out += "flags_evaluations_total{flag=\"\(ServeMetrics.escape(key))\",reason=\"\(reason.rawValue)\"} \(n)\n"
            }
        }
        out += "# HELP flags_served_values_total Evaluations served, by declaration and value (as JSON).\n"
        out += "# TYPE flags_served_values_total counter\n"
        var last = ""
        for key in keys {
            // Values whose JSON text is the same are one value here.
            var byText: [String: (count: Int, last: Double)] = [:]
            for (value, n) in c.declarations[key]!.allServed {
                let text = value.json.serialized()
                let before = byText[text] ?? (0, 0)
                byText[text] = (before.count + n.count, max(before.last, n.last))
            }
            for (value, n) in byText.sorted(by: { $0.key < $1.key }) {
                let labels = "{flag=\"\(ServeMetrics.escape(key))\",value=\"\(ServeMetrics.escape(value))\"}"
                out += "flags_served_values_total\(labels) \(n.count)\n"
                last += "flags_value_last_served_timestamp_seconds\(labels) \(Int(n.last))\n"
            }
        }
        out += "# HELP flags_value_last_served_timestamp_seconds When a declaration last served a value (Unix time).\n"
        out += "# TYPE flags_value_last_served_timestamp_seconds gauge\n" + last
        out += "# HELP flags_counting_since_timestamp_seconds When these counts began (Unix time).\n"
        out += "# TYPE flags_counting_since_timestamp_seconds gauge\nflags_counting_since_timestamp_seconds \(Int(since))\n"
        out += "# HELP flags_reloads_total Rules reloads put in force.\n# TYPE flags_reloads_total counter\n"
        out += "flags_reloads_total \(c.reloads)\n"
        out += "# HELP flags_rejected_reloads_total Rules reloads refused (the last good rules stayed).\n"
        out += "# TYPE flags_rejected_reloads_total counter\nflags_rejected_reloads_total \(c.rejectedReloads)\n"
        out += "# HELP flags_failed_reloads_total Times a served file's source became unusable (missing, empty or unreadable; "
        out += "upstream unreachable or answering an error), once for each run of failed looks.\n"
        out += "# TYPE flags_failed_reloads_total counter\nflags_failed_reloads_total \(c.failedReloads)\n"
        if let last = c.lastReload {
            out += "# HELP flags_rules_loaded_timestamp_seconds When the rules in force were put in force (Unix time).\n"
            out += "# TYPE flags_rules_loaded_timestamp_seconds gauge\nflags_rules_loaded_timestamp_seconds \(last)\n"
        }
        out += "# HELP flags_http_requests_total HTTP requests answered, by status.\n# TYPE flags_http_requests_total counter\n"
        for (status, n) in c.requests.sorted(by: { $0.key < $1.key }) {
            out += "flags_http_requests_total{status=\"\(status)\"} \(n)\n"
        }
        out += "# HELP flags_http_request_duration_seconds Time to answer a request.\n"
        out += "# TYPE flags_http_request_duration_seconds histogram\n"
        var cumulative = 0
        for (i, bound) in ServeMetrics.bounds.enumerated() {
            cumulative += c.latency[i]
            out += "flags_http_request_duration_seconds_bucket{le=\"\(bound)\"} \(cumulative)\n"
        }
        cumulative += c.latency[ServeMetrics.bounds.count]
        out += "flags_http_request_duration_seconds_bucket{le=\"+Inf\"} \(cumulative)\n"
        out += "flags_http_request_duration_seconds_sum \(c.latencySum)\n"
        out += "flags_http_request_duration_seconds_count \(cumulative)\n"
        return out
    }

    /// A label value escaped as the format asks (``ServedValues/escape(_:)``).
    static func escape(_ s: String) -> String { ServedValues.escape(s) }
}
