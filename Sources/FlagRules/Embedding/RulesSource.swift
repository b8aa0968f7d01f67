import Foundation

/// Where a ``FlagStore`` reads its rules.
public enum RulesSource: Sendable, Hashable, CustomStringConvertible {
    /// A `.flags` file, watched by polling its modification time, size and identity (a
    /// file replaced by a rename is seen too). A file that disappears keeps the rules in
    /// force until it is back.
    case file(URL)
    /// A `.flags` file served over HTTP(S), polled with `If-None-Match` and
    /// `If-Modified-Since` (a `304 Not Modified` keeps the rules in force). `headers` go
    /// with every request (an API key, a `User-Agent`). A file `flags serve` serves
    /// (`/rules/NAME`) is also pushed: the store subscribes to the event stream its
    /// response names and takes each new text from it at once. A server's base URL (no
    /// path, as `http://flags.internal:8016`) of a `flags serve` that serves one file reads
    /// that file; one that serves several is a failure naming them (name one in the URL);
    /// another server's base URL is read as it is.
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
    /// The rules shipped with the app (``BundledRules``), newer than the cache or with
    /// none.
    case bundle

    /// `source`, `cache`, `update` or `bundle`.
    public var description: String {
        switch self {
        case .source: return "source"
        case .cache: return "cache"
        case .update: return "update"
        case .bundle: return "bundle"
        }
    }
}

/// Rules shipped with the app (a `.flags` file in its bundle), for a store to start from
/// when it has nothing newer: on the first launch, offline, before the source answers.
///
/// ```swift
/// let store = FlagStore(
///     source: .url(rulesURL), cacheDirectory: cachesURL,
///     bundled: BundledRules(contentsOf: Bundle.main.url(forResource: "app", withExtension: "flags")!))
/// store.start()  // the newer of the cache and the bundle is in force when this returns
/// ```
///
/// When a store starts, it puts in force the newer of its cached rules (dated when they
/// were fetched) and the bundled ones (dated ``publishedAt``); either is skipped when it
/// does not compile. The source, once it answers, wins over both: it is what is live. A
/// bundle newer than the cache (an app update that ships newer rules) wins over the
/// cache; a cache newer than the bundle (rules fetched since the app was built) wins over
/// the bundle.
public struct BundledRules: Sendable {
    /// The rules' text.
    public let text: String
    /// The name diagnostics give it (the file's path).
    public let name: String
    /// When these rules were current: compared with when the cached rules were fetched.
    public let publishedAt: Date

    /// Rules given as text, current at `publishedAt` (the build's date, say).
    public init(source text: String, name: String = "<bundled>", publishedAt: Date) {
        self.text = text
        self.name = name
        self.publishedAt = publishedAt
    }

    /// The rules in the file at `url`, current at `publishedAt`, or else at the file's
    /// modification date (an app bundle's files carry the build's date). An unreadable
    /// file gives rules that do not compile: the store reports it and skips them.
    public init(contentsOf url: URL, publishedAt: Date? = nil) {
        let attributes = try? FileManager.default.attributesOfItem(atPath: url.path)
        let modified = attributes?[.modificationDate] as? Date
        self.init(
            source: (try? String(contentsOf: url, encoding: .utf8)) ?? "", name: url.path,
            publishedAt: publishedAt ?? modified ?? .distantPast)
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
    /// The server the rules come from (`source`) rejected an update of them: it serves its
    /// last good rules, the ones in force here.
    case upstreamRejected(source: String, message: String, at: Date)
    /// The server's rejection no longer stands: a good text of the rules is in force there
    /// (a fix, or the last good text again).
    case upstreamAccepted(source: String)
    /// The event stream of the source's server is open; `after`: how long it had been
    /// lost, when this is a reconnection.
    case eventStreamConnected(url: URL, after: Duration?)
    /// The event stream was lost; it is tried again after `nextAttempt` (and every few
    /// seconds after that while the server cannot be reached).
    case eventStreamLost(reason: String, nextAttempt: Duration)
    /// A text older than the one held (by the generation its server gave it) was not put in
    /// force: a cache or a late answer still held it.
    case olderRulesIgnored(generation: Int, holding: Int)

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
        case .upstreamRejected(let source, let message, _):
            return "\(source) rejected an update and serves its last good rules (those in force here): \(message)"
        case .upstreamAccepted(let source):
            return "\(source) no longer stands on a rejected update: good rules are in force there"
        case .eventStreamConnected(let url, let after):
            return "event stream \(url.absoluteString) connected" + (after.map { " after \($0.readable) without it" } ?? "")
        case .eventStreamLost(let reason, let next):
            return "event stream lost: \(reason); reconnecting in \(next.readable)"
        case .olderRulesIgnored(let generation, let holding):
            return "rules of generation \(generation) ignored: older than those held (\(holding)), as a cache or a late answer may give"
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
