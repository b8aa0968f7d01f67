import Foundation

/// What an HTTP error answer from a rules server (or a proxy or CDN in front of it) asks of
/// a client that will ask again: a store's fetches and its event stream, and a relay's,
/// read it alike.
///
/// - `429` and `503` with `Retry-After` (seconds, or an HTTP date): asked again after that
///   wait, held between a second and ``longestRetryAfter``, and spread up to half as long
///   again (so that a fleet refused at once does not come back at once).
/// - `502`, `504`, and `503` without `Retry-After`: the server behind the proxy is down, an
///   outage like a refused connection, asked again within seconds (not backed off from as
///   an answer).
/// - Any other error status: an answer, backed off from.
package enum ErrorAnswers {
    /// The longest wait a `Retry-After` is taken for.
    package static let longestRetryAfter: Duration = .seconds(60)

    /// The wait `Retry-After` asks for on a `429` or `503`, bounded; nil for another status,
    /// or when the field is absent or unreadable.
    package static func retryAfter(status: Int, field: String?, now: Date = Date()) -> Duration? {
        guard status == 429 || status == 503, let field = field?.trimmingCharacters(in: .whitespaces), !field.isEmpty else {
            return nil
        }
        let seconds: Double
        if field.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) {
            guard let n = Double(field.prefix(9)) else { return nil }
            seconds = n
        } else if let date = HTTPDate.parse(field, now: now) {
            seconds = date.timeIntervalSince(now)
        } else {
            return nil
        }
        let bounded = min(max(seconds, 1), Double(longestRetryAfter.components.seconds))
        return .milliseconds(Int((bounded * 1_000).rounded()))
    }

    /// The wait before asking again after a `Retry-After` of `retryAfter`: it, spread by
    /// `jitter` (in 0..<1) up to half as long again.
    package static func wait(after retryAfter: Duration, jitter: Double) -> Duration {
        retryAfter * (1 + 0.5 * min(max(jitter, 0), 1))
    }

    /// Whether `status` says the server behind a proxy cannot be reached: `502`, `504`, or
    /// `503` without a `Retry-After`.
    package static func isUnreachable(status: Int, retryAfter: Duration?) -> Bool {
        status == 502 || status == 504 || (status == 503 && retryAfter == nil)
    }
}

/// The one back-off a client of a rules server follows, a store's looks and its event
/// stream alike (a relay's files are stores): a wait that doubles with each failure in a
/// row, from `first` to at most `longest`, times a factor between 0.5 and 1 drawn from
/// `jitter` in 0..<1, so that a fleet refused at once does not come back in step.
package struct BackOff: Sendable {
    package let first: Duration
    package let longest: Duration

    package init(first: Duration, longest: Duration) {
        self.first = first
        self.longest = longest
    }

    /// The wait after `failures` failures in a row (the first waits `first`).
    package func wait(after failures: Int, jitter: Double) -> Duration {
        let doubled = first * (1 << min(max(failures - 1, 0), 20))
        return min(doubled, longest) * (0.5 + 0.5 * min(max(jitter, 0), 1))
    }
}
