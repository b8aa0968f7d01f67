import Foundation

/// The rules in force for an app or a service: loaded from a watched file or a polled URL,
/// kept in a cache for cold starts offline, replaced atomically and observed.
///
/// ```swift
/// let store = FlagStore(
///     source: .url(URL(string: "https://cdn.example.com/app.flags")!),
///     cacheDirectory: cachesURL,
///     baseContext: ["build": .string(BuildConfiguration.current.name), "appVersion": "2.4.0"])
/// store.start()
/// _ = try? await store.ready(timeout: .seconds(2))
/// if store.isEnabled("darkMode", in: ["userId": "u-42"]) { … }
/// ```
///
/// A text that does not compile never replaces good rules: it is reported through
/// ``onEvent`` and the rules in force stay. Every evaluation reads the rules in force once
/// (one whole rule set, never a mix) and evaluates outside any lock. Until rules have
/// loaded, evaluations give the caller's default with reason `ERROR`.
///
/// Every evaluation merges its context over ``baseContext``: per-call keys win.
public final class FlagStore: @unchecked Sendable {
    /// A `changes(of:in:)` subscriber.
    private struct Watcher {
        let name: String
        let context: EvaluationContext
        let fallback: Value?
        var last: Resolution
        let continuation: AsyncStream<Resolution>.Continuation
    }

    /// What changes only with an update, a subscription or a setting; its lock also
    /// orders updates, so subscribers see them in the order they were put in force.
    private struct State {
        var nextID = 0
        var subscribers: [Int: AsyncStream<RuleSet>.Continuation] = [:]
        var watchers: [Int: Watcher] = [:]
        var waiters: [Int: CheckedContinuation<RuleSet, any Error>] = [:]
        var onEvent: (@Sendable (StoreEvent) -> Void)?
        var poller: Task<Void, Never>?
        var expectedKeys: [AnyFlagKey] = []
        /// The latest problem met (a failed fetch, rejected rules, an ignored cache), for
        /// `ready(timeout:)`'s error.
        var lastProblem: String?

        mutating func makeID() -> Int {
            defer { nextID += 1 }
            return nextID
        }
    }

    private let inForce: CachedReference<InForce>

    /// What evaluations read now.
    @inline(__always)
    func inForceSnapshot() -> InForce { inForce.withCurrent { $0 } }

    /// Runs `body` with what evaluations read now, borrowed (see `CachedReference`): for
    /// the hot paths.
    @inline(__always)
    func withInForce<R>(_ body: (InForce) -> R) -> R { inForce.withCurrent(body) }
    private let state = Locked(State())

    /// Where the rules come from; nil for a store fed only by `update(source:name:)`.
    public let source: RulesSource?
    /// How often the source is looked at (longer after failures: see ``start()``).
    public let refresh: Duration
    /// Where the last good rules are kept for the next start, if anywhere.
    public let cacheDirectory: URL?
    /// When fetched rules are put in force.
    public let apply: ApplyPolicy
    /// The longest one fetch may take.
    public let timeout: Duration
    /// The largest rules file or response body read (16 MiB by default, the largest
    /// source the language accepts).
    public let maximumSize: Int

    // MARK: Making a store

    /// A store reading its rules from `source`: call ``start()`` to begin watching or
    /// polling, and ``ready(timeout:)`` to wait for the first rules.
    ///
    /// - Parameters:
    ///   - source: a watched file or a polled URL.
    ///   - refresh: how often the source is looked at.
    ///   - cacheDirectory: where the last good rules are kept, so that a start offline
    ///     has rules; nil keeps nothing.
    ///   - apply: when fetched rules are put in force.
    ///   - baseContext: attributes under every evaluation's context (the build, the app's
    ///     version, the signed-in user); settable at any time.
    ///   - timeout: the longest one fetch may take.
    ///   - maximumSize: the largest file or body read.
    public init(
        source: RulesSource, refresh: Duration = .seconds(60), cacheDirectory: URL? = nil,
        apply: ApplyPolicy = .immediately, baseContext: EvaluationContext = [:],
        timeout: Duration = .seconds(10), maximumSize: Int = 16 << 20
    ) {
        self.source = source
        self.refresh = max(refresh, .milliseconds(10))
        self.cacheDirectory = cacheDirectory
        self.apply = apply
        self.timeout = timeout
        self.maximumSize = maximumSize
        inForce = CachedReference(InForce(rules: nil, base: baseContext))
    }

    /// A store with no source: every evaluation is an error until ``update(source:name:)``
    /// succeeds.
    public convenience init() {
        self.init(nil)
    }

    /// A store with no source, holding `rules`.
    public init(_ rules: RuleSet?, baseContext: EvaluationContext = [:]) {
        source = nil
        refresh = .seconds(60)
        cacheDirectory = nil
        apply = .immediately
        timeout = .seconds(10)
        maximumSize = 16 << 20
        inForce = CachedReference(InForce(rules: rules, base: baseContext))
    }

    deinit {
        let s = state.withLock { $0 }
        s.poller?.cancel()
        for c in s.subscribers.values { c.finish() }
        for w in s.watchers.values { w.continuation.finish() }
        for c in s.waiters.values { c.resume(throwing: FlagStoreError(message: "the store was released")) }
    }

    // MARK: The rules in force

    /// The rules in force, if any have loaded.
    public var rules: RuleSet? { inForce.current.rules }

    /// Why the latest update failed, if it did (cleared by a successful one).
    public var lastError: RuleSetError? { inForce.current.failure }

    /// Attributes merged under every evaluation's context (per-call keys win): the build
    /// configuration, the app's version, the signed-in user. Setting it re-evaluates every
    /// `changes(of:in:)` subscription.
    public var baseContext: EvaluationContext {
        get { inForce.current.base }
        set { swap(origin: nil) { $0.with(base: newValue) } }
    }

    /// The store's own overrides, by declaration name (a debug screen's): over the rules,
    /// under `withFlagOverrides` scopes, answered with reason `OVERRIDE`. Setting them
    /// re-evaluates every `changes(of:in:)` subscription.
    public var localOverrides: FlagOverrides {
        get { inForce.current.local }
        set { swap(origin: nil) { $0.with(local: newValue) } }
    }

    /// Changes the local overrides in one step (no change made meanwhile is lost).
    public func updateLocalOverrides(_ change: (inout FlagOverrides) -> Void) {
        swap(origin: nil) { current in
            var local = current.local
            change(&local)
            return current.with(local: local)
        }
    }

    /// The keys the app was compiled with (`AppFlags.allKeys`): every rule set put in force
    /// is validated against them, and drift is reported with ``StoreEvent/keysDrifted(_:)``.
    public var expectedKeys: [AnyFlagKey] {
        get { state.withLock { $0.expectedKeys } }
        set { state.withLock { $0.expectedKeys = newValue } }
    }

    /// Where the rules in force differ from ``expectedKeys``.
    public var drift: [FlagDrift] { rules?.validate(expectedKeys) ?? [] }

    /// The store that `@Flag` properties read when they are given none: set it once, at
    /// launch. Until then it is an empty store, whose answers are the keys' defaults.
    public static var shared: FlagStore {
        get { sharedStore.withLock { $0 } }
        set { sharedStore.withLock { $0 = newValue } }
    }

    private static let sharedStore = Locked(FlagStore())

    /// Called with every evaluation's name and resolution (exposure events, metrics). When
    /// nil, evaluations cost what they cost on a `RuleSet`.
    public var onEvaluation: (@Sendable (String, Resolution) -> Void)? {
        get { inForce.current.onEvaluation }
        set { inForce.replace { $0.with(onEvaluation: .some(newValue)) } }
    }

    /// Called with everything the store does: rules loaded, rejected or saved for the next
    /// launch, fetches failed, a cache ignored. Called outside the store's locks, from the
    /// thread that did it.
    public var onEvent: (@Sendable (StoreEvent) -> Void)? {
        get { state.withLock { $0.onEvent } }
        set { state.withLock { $0.onEvent = newValue } }
    }

    /// Compiles `source` and, only if it has no errors, puts it in force. On failure the
    /// rules in force stay and the error is thrown (and kept in `lastError`).
    @discardableResult
    public func update(source: String, name: String = "<input>") throws(RuleSetError) -> RuleSet {
        try install(origin: .update) { () throws(RuleSetError) in try RuleSet(source: source, name: name) }
    }

    /// Loads a file and, only if it reads and compiles, puts it in force.
    @discardableResult
    public func update(contentsOf url: URL) throws(RuleSetError) -> RuleSet {
        try install(origin: .update) { () throws(RuleSetError) in try RuleSet(contentsOf: url) }
    }

    private func install(origin: RulesOrigin, etag: String? = nil, _ load: () throws(RuleSetError) -> RuleSet) throws(RuleSetError)
        -> RuleSet
    {
        do {
            let rules = try load()
            swap(origin: origin, etag: etag) { $0.with(rules: .some(rules), failure: .some(nil)) }
            return rules
        } catch {
            inForce.replace { $0.with(failure: .some(error)) }
            state.withLock { $0.lastProblem = StoreEvent.updateRejected(origin: origin, error: error).description }
            emit(.updateRejected(origin: origin, error: error))
            throw error
        }
    }

    /// Replaces what evaluations read and tells every subscriber, in one step under the
    /// state lock (so that updates reach subscribers in order); `origin` is nil when only
    /// the base context changed.
    private func swap(origin: RulesOrigin?, etag: String? = nil, _ change: (InForce) -> InForce) {
        let (hook, now, waiters, keys) = state.withLock { s in
            let now = inForce.replace(change)
            var waiters: [CheckedContinuation<RuleSet, any Error>] = []
            if origin != nil, let rules = now.rules {
                for c in s.subscribers.values { c.yield(rules) }
                waiters = Array(s.waiters.values)
                s.waiters = [:]
            }
            for (id, w) in s.watchers {
                let r = now.resolve(w.name, w.context, w.fallback)
                if !r.sameOutcome(as: w.last) {
                    s.watchers[id]?.last = r
                    w.continuation.yield(r)
                }
            }
            return (s.onEvent, now, waiters, s.expectedKeys)
        }
        guard let origin, let rules = now.rules else { return }
        // Reported before `ready(timeout:)` returns, so that a log shows why it returned.
        hook?(.rulesLoaded(origin: origin, declarations: rules.declarations.count, etag: etag))
        let drift = keys.isEmpty ? [] : rules.validate(keys)
        if !drift.isEmpty { hook?(.keysDrifted(drift)) }
        for c in waiters { c.resume(returning: rules) }
    }

    private func emit(_ event: StoreEvent) {
        state.withLock { $0.onEvent }?(event)
    }

    // MARK: Observing

    /// Every rule set put in force from now on, to any number of subscribers. A subscriber
    /// that falls more than 16 updates behind gets the newest 16.
    public var updates: AsyncStream<RuleSet> {
        let (stream, continuation) = AsyncStream.makeStream(of: RuleSet.self, bufferingPolicy: .bufferingNewest(16))
        let id = state.withLock { s in
            let id = s.makeID()
            s.subscribers[id] = continuation
            return id
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// The resolution of `name` in `context` (over the base context) now, and then each
    /// time it changes (its value, variant, reason or error code) because rules were put in
    /// force or the base context was set.
    public func changes(of name: String, in context: EvaluationContext = [:], default fallback: Value? = nil) -> AsyncStream<Resolution> {
        let (stream, continuation) = AsyncStream.makeStream(of: Resolution.self, bufferingPolicy: .bufferingNewest(16))
        let id = state.withLock { s in
            let id = s.makeID()
            let now = inForce.current.resolve(name, context, fallback)
            s.watchers[id] = Watcher(name: name, context: context, fallback: fallback, last: now, continuation: continuation)
            continuation.yield(now)
            return id
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.watchers.removeValue(forKey: id) }
        }
        return stream
    }

    // MARK: Watching the source

    /// Begins watching the file or polling the URL (nothing for a store with no source; a
    /// second call does nothing). Rules from the cache, if any, are put in force first.
    ///
    /// The source is looked at every `refresh`; after a failure the wait doubles with
    /// each further failure, up to ten minutes (or `refresh`, if longer), and is drawn
    /// between half and all of that, so that many processes do not retry in step.
    public func start() {
        guard let source else { return }
        state.withLock { s in
            guard s.poller == nil else { return }
            let fetcher = RulesFetcher(source: source, timeout: timeout, maximumSize: maximumSize)
            s.poller = Task.detached { [weak self] in
                var fetcher = fetcher
                self?.loadCache(into: &fetcher)
                var failures = 0
                while !Task.isCancelled {
                    guard let delay = await self?.poll(&fetcher, failures: &failures) else { return }
                    try? await Task.sleep(for: delay)
                }
            }
        }
    }

    /// Stops watching or polling; the rules in force stay, and ``start()`` begins again.
    public func stop() {
        state.withLock { s in
            s.poller?.cancel()
            s.poller = nil
        }
    }

    /// The rules in force, once there are some: from the cache, the source or an update.
    /// Starts the store if it has not started. Throws when none have loaded within
    /// `timeout`, naming the latest problem (the app then runs on its defaults, and the
    /// rules apply when they come).
    public func ready(timeout: Duration = .seconds(5)) async throws(FlagStoreError) -> RuleSet {
        if let rules { return rules }
        start()
        let id = state.withLock { $0.makeID() }
        do {
            return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<RuleSet, any Error>) in
                let ruleSet: RuleSet? = state.withLock { s in
                    if let rules = inForce.current.rules { return rules }
                    s.waiters[id] = continuation
                    return nil
                }
                if let ruleSet {
                    continuation.resume(returning: ruleSet)
                    return
                }
                Task { [weak self] in
                    try? await Task.sleep(for: timeout)
                    self?.giveUp(id, after: timeout)
                }
            }
        } catch let error as FlagStoreError {
            throw error
        } catch {
            throw FlagStoreError(message: "\(error)")
        }
    }

    private func giveUp(_ id: Int, after timeout: Duration) {
        let (waiter, problem) = state.withLock { s in (s.waiters.removeValue(forKey: id), s.lastProblem) }
        let detail = problem.map { "; the latest problem: \($0)" } ?? ""
        waiter?.resume(throwing: FlagStoreError(message: "no rules within \(timeout)\(detail)"))
    }

    /// Puts the cached rules in force, if there are good ones, and sends their validators
    /// with the first fetch.
    private func loadCache(into fetcher: inout RulesFetcher) {
        guard let cacheDirectory, let source else { return }
        switch RulesCache(directory: cacheDirectory, source: source).read() {
        case nil:
            return
        case .failure(let problem)?:
            state.withLock { $0.lastProblem = "cache ignored: \(problem.reason)" }
            emit(.cacheIgnored(reason: problem.reason))
        case .success(let entry)?:
            do {
                let rules = try RuleSet(source: entry.rules, name: source.description)
                swap(origin: .cache, etag: entry.etag) { $0.with(rules: .some(rules), failure: .some(nil)) }
                fetcher.validators = Validators(etag: entry.etag, lastModified: entry.lastModified)
            } catch {
                let reason = "the cached rules no longer compile: " + (error.errors.first?.message ?? "\(error)")
                state.withLock { $0.lastProblem = "cache ignored: \(reason)" }
                emit(.cacheIgnored(reason: reason))
            }
        }
    }

    /// One look at the source; returns how long to wait before the next.
    private func poll(_ fetcher: inout RulesFetcher, failures: inout Int) async -> Duration {
        let result = await fetcher.fetch()
        switch result {
        case .unchanged:
            failures = 0
            return refresh
        case .failed(let reason):
            failures += 1
            let delay = FlagStore.retryDelay(after: failures, refresh: refresh, jitter: Double.random(in: 0..<1))
            state.withLock { $0.lastProblem = reason }
            emit(.fetchFailed(reason: reason, nextAttempt: delay))
            return delay
        case .fetched(let bytes, let validators):
            failures = 0
            let text = SourceText(bytes: bytes, name: source?.description ?? "<source>")
            let rules: RuleSet
            do {
                rules = try RuleSet(source: text, today: Date())
            } catch {
                inForce.replace { $0.with(failure: .some(error)) }
                state.withLock { $0.lastProblem = StoreEvent.updateRejected(origin: .source, error: error).description }
                emit(.updateRejected(origin: .source, error: error))
                return refresh
            }
            if let cacheDirectory, let source {
                let entry = RulesCache.Entry(
                    source: source.description, etag: validators.etag, lastModified: validators.lastModified,
                    fetchedAt: Date(), rules: String(decoding: bytes, as: UTF8.self))
                do {
                    try RulesCache(directory: cacheDirectory, source: source).write(entry)
                } catch {
                    emit(.cacheNotWritten(reason: error.reason))
                }
            }
            if apply == .immediately || self.rules == nil {
                swap(origin: .source, etag: validators.etag) { $0.with(rules: .some(rules), failure: .some(nil)) }
            } else {
                emit(.rulesSavedForNextLaunch(declarations: rules.declarations.count, etag: validators.etag))
            }
            return refresh
        }
    }

    /// The wait before the next look after `failures` failures in a row: `refresh`
    /// doubled for each failure after the first, at most ten minutes (or `refresh`), times
    /// a factor between 0.5 and 1 drawn from `jitter` (in 0..<1).
    static func retryDelay(after failures: Int, refresh: Duration, jitter: Double) -> Duration {
        let cap = max(refresh, .seconds(600))
        let doubled = refresh * (1 << min(max(failures - 1, 0), 20))
        return min(doubled, cap) * (0.5 + 0.5 * min(max(jitter, 0), 1))
    }
}

extension Resolution {
    /// Whether two resolutions give the same answer: value, variant, reason and error code
    /// (not the rule's position, which an edit elsewhere in the file moves).
    func sameOutcome(as other: Resolution) -> Bool {
        value == other.value && variant == other.variant && reason == other.reason && errorCode == other.errorCode
    }
}

extension RuleSet {
    /// Resolves a declaration against a context given as a JSON object; malformed JSON
    /// resolves to `fallback` (else `false`) with reason `ERROR` and code `INVALID_CONTEXT`.
    public func evaluate(_ name: String, jsonContext: String, default fallback: Value? = nil) -> Resolution {
        do {
            return evaluate(name, in: try EvaluationContext(json: jsonContext), default: fallback)
        } catch {
            return .error(.invalidContext, error.message, default: fallback ?? .bool(false))
        }
    }
}
