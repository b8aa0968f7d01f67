import FlagRules
import Foundation

/// What a server served: for each declaration, each value and when it last served it, and
/// since when it has been counting. Read from `flags serve`'s metrics, so that `flags stale`
/// can tell a declaration that served one value to everyone, or nothing, for days.
package struct ServedValues: Sendable, Equatable {
    /// When counting began.
    package var since: Date
    /// For each declaration, each value served (as JSON text) and when last.
    package var lastServed: [String: [String: Date]]

    package init(since: Date, lastServed: [String: [String: Date]]) {
        self.since = since
        self.lastServed = lastServed
    }

    /// Why metrics text could not be read.
    package struct Failure: Error, Sendable, Equatable {
        package let message: String
    }

    /// Reads Prometheus's text format as `flags serve` writes it at `GET /metrics`:
    /// `flags_counting_since_timestamp_seconds` and
    /// `flags_value_last_served_timestamp_seconds{flag="…",value="…"}`; other lines are
    /// ignored.
    package init(metrics text: String) throws(Failure) {
        var since: Date?
        var lastServed: [String: [String: Date]] = [:]
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.hasPrefix("flags_counting_since_timestamp_seconds ") {
                guard let seconds = Double(line.split(separator: " ").last ?? "") else {
                    throw Failure(message: "line \(number + 1): a timestamp is not a number: \(line)")
                }
                since = Date(timeIntervalSince1970: seconds)
            } else if line.hasPrefix(Self.lastServedSample) {
                guard let close = line.lastIndex(of: "}"),
                    let labels = Self.labels(line[line.index(line.startIndex, offsetBy: Self.lastServedSample.count)..<close]),
                    let flag = labels["flag"], let value = labels["value"],
                    let seconds = Double(line[line.index(after: close)...].trimmingCharacters(in: .whitespaces))
                else {
                    throw Failure(message: "line \(number + 1): not a sample of flags_value_last_served_timestamp_seconds: \(line)")
                }
                lastServed[flag, default: [:]][value] = Date(timeIntervalSince1970: seconds)
            }
        }
        guard let since else {
            throw Failure(
                message: "no flags_counting_since_timestamp_seconds: these are not the metrics of 'flags serve' (GET /metrics)")
        }
        self.init(since: since, lastServed: lastServed)
    }

    static let lastServedSample = "flags_value_last_served_timestamp_seconds{"

    /// `name="value",…` with the format's escapes (`\\`, `\"`, `\n`); nil when malformed.
    static func labels(_ text: Substring) -> [String: String]? {
        var out: [String: String] = [:]
        var rest = text[...]
        while !rest.isEmpty {
            guard let equals = rest.firstIndex(of: "="), rest[rest.index(after: equals)...].first == "\"" else { return nil }
            let name = String(rest[..<equals])
            var value = ""
            var i = rest.index(equals, offsetBy: 2)
            var closed = false
            while i < rest.endIndex {
                let c = rest[i]
                if c == "\\" {
                    i = rest.index(after: i)
                    guard i < rest.endIndex else { return nil }
                    value.append(rest[i] == "n" ? "\n" : rest[i])
                } else if c == "\"" {
                    closed = true
                    break
                } else {
                    value.append(c)
                }
                i = rest.index(after: i)
            }
            guard closed else { return nil }
            out[name] = value
            rest = rest[rest.index(after: i)...]
            if rest.first == "," { rest = rest.dropFirst() }
        }
        return out
    }
}
