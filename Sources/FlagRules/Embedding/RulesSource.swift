import Foundation

/// Where a ``FlagStore`` reads its rules.
public enum RulesSource: Sendable, Hashable, CustomStringConvertible {
    /// A `.flags` file, watched by polling its modification time, size and identity (a
    /// file replaced by a rename is seen too). A file that disappears keeps the rules in
    /// force until it is back.
    case file(URL)
    /// A `.flags` file served over HTTP(S), polled with `If-None-Match` and
    /// `If-Modified-Since` (a `304 Not Modified` keeps the rules in force). `headers` go
    /// with every request (an API key, a `User-Agent`).
    case url(URL, headers: [String: String] = [:])

    /// The file's path or the URL.
    public var description: String {
        switch self {
        case .file(let url): return url.path
        case .url(let url, _): return url.absoluteString
        }
    }
}

/// When rules fetched while the app runs are put in force.
///
/// Waiting for the first rules before launch is the third choice an app makes:
/// `try await store.ready(timeout:)`.
public enum ApplyPolicy: Sendable, Hashable {
    /// Each good update is in force as soon as it is fetched.
    case immediately
    /// Good updates are written to the cache and put in force when the next store starts
    /// (the next launch), so that nothing changes under a user mid-session. Until some
    /// rules are in force, the first good rules fetched are put in force at once.
    case nextLaunch
}

/// Where rules put in force (or refused) came from.
public enum RulesOrigin: Sendable, Hashable, CustomStringConvertible {
    /// The store's source: the watched file or the polled URL.
    case source
    /// The cache directory: the last good rules of an earlier run.
    case cache
    /// A call of `update(source:name:)` or `update(contentsOf:)`.
    case update

    /// `source`, `cache` or `update`.
    public var description: String {
        switch self {
        case .source: return "source"
        case .cache: return "cache"
        case .update: return "update"
        }
    }
}

/// What a ``FlagStore`` did, for logs and metrics: set ``FlagStore/onEvent`` to hear of it.
public enum StoreEvent: Sendable, CustomStringConvertible {
    /// Rules were put in force: where from, how many declarations, the ETag they came with.
    case rulesLoaded(origin: RulesOrigin, declarations: Int, etag: String?)
    /// Good rules were fetched and written to the cache, to be put in force at the next
    /// launch (`ApplyPolicy.nextLaunch`).
    case rulesSavedForNextLaunch(declarations: Int, etag: String?)
    /// Rules did not compile and were not put in force; the error holds every diagnostic.
    case updateRejected(origin: RulesOrigin, error: RuleSetError)
    /// The source could not be read (an HTTP error, a timeout, a missing file, a body over
    /// the limit); the rules in force stay, and the next attempt is after `nextAttempt`.
    case fetchFailed(reason: String, nextAttempt: Duration)
    /// The cache was not used: unreadable, corrupt, from another source, or rules that no
    /// longer compile.
    case cacheIgnored(reason: String)
    /// Good rules could not be written to the cache (they are in force all the same).
    case cacheNotWritten(reason: String)
    /// Rules put in force differ from the keys the app was compiled with
    /// (``FlagStore/expectedKeys``): each drifted key reads its default with reason `ERROR`.
    case keysDrifted([FlagDrift])

    /// One line for a log.
    public var description: String {
        switch self {
        case .rulesLoaded(let origin, let declarations, let etag):
            return "rules loaded from the \(origin): \(declarations) declarations" + (etag.map { ", ETag \($0)" } ?? "")
        case .rulesSavedForNextLaunch(let declarations, let etag):
            return "rules saved for the next launch: \(declarations) declarations" + (etag.map { ", ETag \($0)" } ?? "")
        case .updateRejected(let origin, let error):
            let count = error.errors.count
            let name = error.source.name
            let first =
                error.errors.first.map { ": \(name):\($0.range.start.line):\($0.range.start.column): \($0.message)" } ?? ": \(error)"
            return "rules from the \(origin) rejected (\(count) error\(count == 1 ? "" : "s"))\(first)"
        case .fetchFailed(let reason, let next):
            return "fetch failed: \(reason); next attempt in \(next.readable)"
        case .cacheIgnored(let reason):
            return "cache ignored: \(reason)"
        case .cacheNotWritten(let reason):
            return "cache not written: \(reason)"
        case .keysDrifted(let drift):
            return "the rules differ from the app's keys: " + drift.map(\.description).joined(separator: "; ")
        }
    }
}

/// Why ``FlagStore/ready(timeout:)`` returned no rules.
public struct FlagStoreError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, with the latest problem the store met (a fetch failure, a rules
    /// error), if any.
    public let message: String

    /// The message.
    public var description: String { message }
}
