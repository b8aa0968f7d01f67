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
        // Lines split scalar by scalar (a newline followed by a combining mark still ends a
        // line), a CR before the LF dropped.
        let lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map { scalars in
            var line = String.UnicodeScalarView(scalars)
            if line.last == "\r" { line.removeLast() }
            return Substring(String(line))
        }
        for (number, line) in lines.enumerated() {
            if line.hasPrefix("flags_counting_since_timestamp_seconds ") {
                guard let seconds = Double(line.split(separator: " ").last ?? ""), seconds.isFinite else {
                    throw Failure(message: "line \(number + 1): a timestamp is not a number: \(Self.shown(line))")
                }
                since = Date(timeIntervalSince1970: seconds)
            } else if line.unicodeScalars.starts(with: Self.lastServedSample.unicodeScalars) {
                guard let (labels, rest) = Self.labels(line.unicodeScalars.dropFirst(Self.lastServedSample.unicodeScalars.count)),
                    let flag = labels["flag"], let value = labels["value"],
                    let seconds = Double(String(rest).trimmingCharacters(in: .whitespacesAndNewlines)), seconds.isFinite
                else {
                    throw Failure(
                        message: "line \(number + 1): not a sample of flags_value_last_served_timestamp_seconds: \(Self.shown(line))")
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

    /// A label value escaped as Prometheus's text format asks: `\\`, `\"` and `\n`, scalar
    /// by scalar (a backslash followed by a combining mark is still a backslash).
    package static func escape(_ s: String) -> String {
        var out = String.UnicodeScalarView()
        for c in s.unicodeScalars {
            switch c {
            case "\\": out.append(contentsOf: "\\\\".unicodeScalars)
            case "\"": out.append(contentsOf: "\\\"".unicodeScalars)
            case "\n": out.append(contentsOf: "\\n".unicodeScalars)
            default: out.append(c)
            }
        }
        return String(out)
    }

    /// A line as an error shows it: its first 120 characters.
    static func shown(_ line: Substring) -> String { line.count > 120 ? line.prefix(120) + "…" : String(line) }

    /// `name="value",…}` with the format's escapes (`\\`, `\"`, `\n`), read scalar by scalar
    /// (a value may start with a combining mark); the labels and what follows the `}`, or
    /// nil when malformed.
    static func labels(_ text: Substring.UnicodeScalarView) -> ([String: String], Substring.UnicodeScalarView)? {
        var out: [String: String] = [:]
        var rest = text
        while true {
            if rest.first == "}" { return (out, rest.dropFirst()) }
            guard let equals = rest.firstIndex(of: "="), rest[rest.index(after: equals)...].first == "\"" else { return nil }
            let name = String(String.UnicodeScalarView(rest[..<equals]))
            var value = String.UnicodeScalarView()
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
            out[name] = String(value)
            rest = rest[rest.index(after: i)...]
            if rest.first == "," { rest = rest.dropFirst() }
        }
    }
}
