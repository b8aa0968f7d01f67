import FlagRules
import FlagRulesTooling
import Foundation

/// `/healthz` and the gauges of what stands now (a rejection, a relay's upstream).
extension OFREPService {
    // MARK: Health

    /// What `/healthz` answers: `ok` and, for a relay, a line on each upstream file.
    package struct Health: Sendable {
        /// One file fetched from another server (a relay's).
        package struct Upstream: Sendable {
            package var file: String
            package var source: String
            package var reachable: Bool
            /// Whether its event stream is open.
            package var connected: Bool
            package var lastSync: Date?
            package init(file: String, source: String, reachable: Bool, connected: Bool, lastSync: Date?) {
                self.file = file
                self.source = source
                self.reachable = reachable
                self.connected = connected
                self.lastSync = lastSync
            }
        }
        package var upstreams: [Upstream]
        /// Whether everything the server follows is reachable.
        package var ok: Bool { upstreams.allSatisfy(\.reachable) }
        /// Lines after the first (`upstream http://…: connected, last synced …`).
        package var detail: [String] {
            upstreams.map { u in
                let state = u.connected ? "connected" : u.reachable ? "reachable (no stream)" : "unreachable"
                let synced = u.lastSync.map { "last synced \(DateTime.format($0))" } ?? "never synced"
                return "upstream \(u.source): \(state), \(synced)"
            }
        }
        package init(upstreams: [Upstream] = []) { self.upstreams = upstreams }
    }

    /// Sets what `/healthz` reports besides `ok`.
    package func reportHealth(_ report: @escaping @Sendable () -> Health) { healthReport.withLock { $0 = Report(read: report) } }

    /// The gauges of what stands now: the generation, each file's rejection, a relay's
    /// upstream.
    func statusMetrics() -> String {
        let (snapshot, _) = served.current
        let rejected = Set(served.standing.rejections.map(\.file))
        var out = "# HELP flags_rules_generation The generation of the rules in force (it only goes up).\n"
        out += "# TYPE flags_rules_generation gauge\nflags_rules_generation \(snapshot.generation)\n"
        out += "# HELP flags_rules_rejected Whether a served file's latest update stands rejected (its last good rules are served).\n"
        out += "# TYPE flags_rules_rejected gauge\n"
        for file in snapshot.files {
            out += "flags_rules_rejected{file=\"\(ServeMetrics.escape(file.name))\"} \(rejected.contains(file.name) ? 1 : 0)\n"
        }
        let upstreams = healthReport.withLock({ $0 })?.read().upstreams ?? []
        guard !upstreams.isEmpty else { return out }
        out += "# HELP flags_upstream_up Whether the server a relayed file comes from is reachable.\n# TYPE flags_upstream_up gauge\n"
        for u in upstreams { out += "flags_upstream_up{file=\"\(ServeMetrics.escape(u.file))\"} \(u.reachable ? 1 : 0)\n" }
        out += "# HELP flags_upstream_last_sync_timestamp_seconds When a relayed file was last known current (Unix time).\n"
        out += "# TYPE flags_upstream_last_sync_timestamp_seconds gauge\n"
        for u in upstreams {
            if let at = u.lastSync {
                out +=
                    "flags_upstream_last_sync_timestamp_seconds{file=\"\(ServeMetrics.escape(u.file))\"} \(Int(at.timeIntervalSince1970))\n"
            }
        }
        return out
    }

    /// `/healthz`: always `200` while the server serves (a relay whose upstream is down still
    /// serves its last good rules, so a load balancer keeps it), its first word `ok` or
    /// `degraded`. `/healthz/upstream` says the same with its status, for a monitor that reads
    /// status codes only: `503` while an upstream is unreachable.
    func health(statusTells: Bool = false) -> HTTPResponse {
        guard let report = healthReport.withLock({ $0 })?.read(), !report.upstreams.isEmpty else { return OFREPService.plainOK }
        let text = ([report.ok ? "ok" : "degraded"] + report.detail).joined(separator: "\n") + "\n"
        return .text(statusTells && !report.ok ? 503 : 200, text)
    }

    /// `/healthz` with no upstream to report on, made once.
    static let plainOK = HTTPResponse.text(200, "ok\n")

    /// What the transport holds now: open connections, and event-stream subscribers by the
    /// file they follow (`*`: every change).
    package struct TransportLoad: Sendable {
        package var connections: Int
        package var subscribers: [String: Int]
        package init(connections: Int, subscribers: [String: Int]) {
            self.connections = connections
            self.subscribers = subscribers
        }
    }

    /// Sets what the metrics say of the transport.
    package func reportTransport(_ report: @escaping @Sendable () -> TransportLoad) {
        transportReport.withLock { $0 = Report(read: report) }
    }

    /// The transport's gauges: connections, and subscribers by file.
    func transportMetrics() -> String {
        var out = ""
        if let log = evaluationLines {
            out += "# HELP flags_evaluation_log_dropped_total Evaluation log lines dropped while the log's reader fell behind.\n"
            out += "# TYPE flags_evaluation_log_dropped_total counter\nflags_evaluation_log_dropped_total \(log.dropped)\n"
        }
        guard let load = transportReport.withLock({ $0 })?.read() else { return out }
        out += "# HELP flags_http_connections Open HTTP connections making requests (event-stream subscribers apart).\n"
        out += "# TYPE flags_http_connections gauge\nflags_http_connections \(load.connections)\n"
        out += "# HELP flags_event_stream_subscribers Event-stream subscribers, by the file they follow (* for every change).\n"
        out += "# TYPE flags_event_stream_subscribers gauge\n"
        var files = Set(served.current.snapshot.files.map(\.name))
        files.insert("*")
        for file in files.union(load.subscribers.keys).sorted() {
            out += "flags_event_stream_subscribers{file=\"\(ServeMetrics.escape(file))\"} \(load.subscribers[file] ?? 0)\n"
        }
        return out
    }
}
