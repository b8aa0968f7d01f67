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
    // Unchecked: every mutable part is behind `state`'s lock or is the `CachedReference`.

    /// A `changes(of:in:)` subscriber.
    struct Watcher {
        let name: String
        let context: EvaluationContext
        let fallback: Value?
        /// The `withFlagOverrides` scope the subscription was made in: it is evaluated under
        /// that scope, whichever task makes a change.
        let scope: FlagOverrides?
        var last: Resolution
        let continuation: AsyncStream<Resolution>.Continuation

        /// The resolution now, under the subscription's own scope.
        func resolve(_ now: RulesInForce) -> Resolution {
            FlagOverrides.$scoped.withValue(scope) { now.resolve(name, context, expecting: nil, fallback) }
        }
    }

    /// What changes only with an update, a subscription or a setting; its lock also
    /// orders updates, so subscribers see them in the order they were put in force.
    struct State {
        var nextID = 0
        var subscribers: [Int: AsyncStream<RuleSet>.Continuation] = [:]
        var watchers: [Int: Watcher] = [:]
        var waiters: [Int: CheckedContinuation<RuleSet, any Error>] = [:]
        var onEvent: (@Sendable (StoreEvent) -> Void)?
        var poller: Task<Void, Never>?
        /// The subscription to the source's event stream, when its server names one.
        var subscription: EventSubscription?
        /// Moved on by `stop()`: a fetch begun before puts nothing in force.
        var epoch = 0
        /// Failed fetches in a row, for the back-off.
        var failures = 0
        /// How many runs of failed looks there have been (a run begins with the first
        /// failure after a success): what a server counts in `flags_failed_reloads_total`.
        var failureRuns = 0
        var expectedKeys: [AnyFlagKey] = []
        var allowsRemovingExpectedKeys = false
        /// The latest problem met (a failed fetch, rejected rules, an ignored cache), and
        /// when, for `ready(timeout:)`'s error and ``FlagStore/status``.
        var lastProblem: String?
        var lastProblemAt: Date?
        /// Where the rules in force came from, when they were read there, and the last
        /// look that found the source still holding them.
        var origin: RulesOrigin?
        var fetchedAt: Date?
        var confirmedAt: Date?
        /// The text of the rules in force, and the generation its server gave it.
        var inForceDigest: ContentDigest?
        var inForceGeneration: Int?
        /// The newest generation taken from the source (put in force, rejected or saved):
        /// an older text is never put in force.
        var heldGeneration: Int?
        /// The rejection the source's server reports for the rules, while it stands.
        var upstreamRejection: String?

        /// The text held is in force upstream under `generation`: no text older than that
        /// is taken after it (and, when it is the text in force, that is its generation).
        mutating func raiseGeneration(to generation: Int) {
            heldGeneration = max(heldGeneration ?? 0, generation)
            if lastSeen != nil, lastSeen == inForceDigest, generation > inForceGeneration ?? 0 { inForceGeneration = generation }
        }

        mutating func noteProblem(_ problem: String) {
            lastProblem = problem
            lastProblemAt = Date()
        }
        /// The text last taken from the source (put in force, saved for the next launch or
        /// rejected): the same text again is not compiled again.
        var lastSeen: ContentDigest?
        /// Reads made through ``FlagStore/observed``, with what each gave.
        var observedReads = ObservedReads()

        mutating func makeID() -> Int {
            defer { nextID += 1 }
            return nextID
        }
    }

    let inForce: CachedReference<RulesInForce>
    let state = Locked(State())
    /// Reads and writes the source, one fetch at a time.
    let fetching: SourceFetching?
    /// Observation's registrar, on platforms that have it (see ``observed``).
    let observation: AnyObject?

    /// Runs `body` with what evaluations read now, borrowed (see `CachedReference`): the
    /// entry points' one read.
    @inline(__always)
    func withInForce<R>(_ body: (RulesInForce) -> R) -> R { inForce.withCurrent(body) }

    /// What evaluations read now, retained.
    func inForceSnapshot() -> RulesInForce { inForce.current }

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
    /// source the language accepts); any positive size, `Int.max` included.
    public let maximumSize: Int
    /// The rules shipped with the app, to start from when the cache has nothing newer.
    public let bundled: BundledRules?

    // MARK: Making a store

    /// A store reading its rules from `source`: call ``start()`` to begin watching or
    /// polling, and ``ready(timeout:)`` to wait for the first rules.
    ///
    /// - Parameters:
    ///   - source: a watched file or a polled URL.
    ///   - refresh: how often the source is looked at (10 ms at the least).
    ///   - cacheDirectory: where the last good rules are kept, so that a start offline
    ///     has rules; nil keeps nothing. `.nextLaunch` needs one: without it, rules fetched
    ///     for the next launch are reported with ``StoreEvent/cacheNotWritten(reason:)``.
    ///   - apply: when fetched rules are put in force.
    ///   - baseContext: attributes under every evaluation's context (the build, the app's
    ///     version, the signed-in user); settable at any time.
    ///   - timeout: the longest one fetch may take.
    ///   - maximumSize: the largest file or body read (a size below 1 is taken as 1).
    ///   - bundled: rules shipped with the app, put in force at ``start()`` when the cache
    ///     has nothing newer (see ``BundledRules``).
    public init(
        source: RulesSource, refresh: Duration = .seconds(60), cacheDirectory: URL? = nil,
        apply: ApplyPolicy = .immediately, baseContext: EvaluationContext = [:],
        timeout: Duration = .seconds(10), maximumSize: Int = 16 << 20, bundled: BundledRules? = nil
    ) {
        self.bundled = bundled
        self.source = source
        self.refresh = max(refresh, .milliseconds(10))
        self.cacheDirectory = cacheDirectory
        self.apply = apply
        self.timeout = timeout
        self.maximumSize = max(maximumSize, 1)
        inForce = CachedReference(RulesInForce(rules: nil, base: baseContext))
        fetching = SourceFetching(RulesFetcher(source: source, timeout: timeout, maximumSize: self.maximumSize))
        observation = FlagStore.makeRegistrar()
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
        bundled = nil
        inForce = CachedReference(RulesInForce(rules: rules, base: baseContext))
        if let rules {
            state.withLock { s in
                s.origin = .update
                s.fetchedAt = Date()
                s.confirmedAt = s.fetchedAt
                s.inForceDigest = ContentDigest(rules.source.bytes)
            }
        }
        fetching = nil
        observation = FlagStore.makeRegistrar()
    }

    deinit {
        let s = state.withLock { $0 }
        s.poller?.cancel()
        s.subscription?.cancel()
        fetching?.close()
        for c in s.subscribers.values { c.finish() }
        for w in s.watchers.values { w.continuation.finish() }
        for c in s.waiters.values { c.resume(throwing: FlagStoreError(message: "the store was released")) }
    }

    // MARK: The rules in force

    /// The rules in force, if any have loaded.
    public var rules: RuleSet? { inForce.current.rules }

    /// Why the latest rules taken were rejected, if they were (cleared by good ones). A
    /// source that cannot be read leaves it as it is: ``status`` tells of every problem.
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
    /// Rules that lack a declaration these keys name, which the rules in force have, are
    /// rejected (a truncated or wrong file), unless ``allowsRemovingExpectedKeys``.
    public var expectedKeys: [AnyFlagKey] {
        get { state.withLock { $0.expectedKeys } }
        set { state.withLock { $0.expectedKeys = newValue } }
    }

    /// Whether rules that drop a declaration the app reads (``expectedKeys``) may be put in
    /// force; off by default, so that such rules are rejected with
    /// ``StoreEvent/updateRejected(origin:error:)`` and the rules in force stay.
    public var allowsRemovingExpectedKeys: Bool {
        get { state.withLock { $0.allowsRemovingExpectedKeys } }
        set { state.withLock { $0.allowsRemovingExpectedKeys = newValue } }
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

    /// Called with every evaluation (exposure events, metrics): its name, resolution and
    /// context, from every entry point, once for each declaration of `evaluateAll`. Called
    /// after the evaluation, on the caller's thread, with no lock held: it may read the
    /// store. Debug-screen listings (``FlagDebugModel``) and `changes(of:in:)` do not call it.
    /// When nil, evaluations cost what they cost on a `RuleSet`.
    public var onEvaluation: (@Sendable (FlagEvaluation) -> Void)? {
        get { inForce.current.onEvaluation }
        set { _ = inForce.replace { $0.with(onEvaluation: .some(newValue)) } }
    }

    /// Called with everything the store does: rules loaded, rejected or saved for the next
    /// launch, fetches failed, a cache ignored. Called outside the store's locks, from the
    /// thread that did it.
    public var onEvent: (@Sendable (StoreEvent) -> Void)? {
        get { state.withLock { $0.onEvent } }
        set { state.withLock { $0.onEvent = newValue } }
    }

    /// Compiles `source` and, only if it has no errors and declares something (see
    /// ``expectedKeys``), puts it in force. On failure the rules in force stay and the
    /// error is thrown (and kept in `lastError`). The same text as the rules in force
    /// changes nothing.
    @discardableResult
    public func update(source: String, name: String = "<input>") throws(RuleSetError) -> RuleSet {
        try install(SourceText(source, name: name), origin: .update)
    }

    /// Loads a file and, only if it reads and compiles, puts it in force.
    @discardableResult
    public func update(contentsOf url: URL) throws(RuleSetError) -> RuleSet {
        let name = url.isFileURL ? url.path : url.absoluteString
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            reject(.unreadable(name: name, underlying: error), origin: .update)
            throw .unreadable(name: name, underlying: error)
        }
        return try install(SourceText(bytes: Array(data), name: name), origin: .update)
    }

    private func install(_ text: SourceText, origin: RulesOrigin) throws(RuleSetError) -> RuleSet {
        if let current = rules, current.source.bytes == text.bytes { return current }
        let rules: RuleSet
        do {
            rules = try accepted(text)
        } catch {
            reject(error, origin: origin)
            throw error
        }
        swap(origin: origin) { $0.with(rules: .some(rules), failure: .some(nil)) }
        return rules
    }

    /// `text` compiled, if it may replace the rules in force: it compiles, declares
    /// something, and keeps every declaration of ``expectedKeys`` the rules in force have.
    func accepted(_ text: SourceText) throws(RuleSetError) -> RuleSet {
        let rules = try RuleSet(source: text, today: Date())
        let start = SourcePosition(offset: 0, line: 1, column: 1)
        let place = SourceRange(start: start, end: start)
        if let nothing = rules.declaresNothing { throw .invalid(source: text, diagnostics: [nothing]) }
        let (keys, allowed) = state.withLock { ($0.expectedKeys, $0.allowsRemovingExpectedKeys) }
        if !allowed, let current = self.rules {
            let lost = keys.filter { current.index(of: $0.name) != nil && rules.index(of: $0.name) == nil }.map(\.name)
            if !lost.isEmpty {
                let names = lost.map { "'\($0)'" }.joined(separator: ", ")
                let message = "the rules drop \(names), which the app reads and the rules in force declare"
                let help = "set allowsRemovingExpectedKeys on the store to accept rules that drop declarations"
                throw .invalid(source: text, diagnostics: [.error("expected-keys-removed", message, at: place, help: help)])
            }
        }
        return rules
    }

    /// Records and reports rules that were not put in force.
    func reject(_ error: RuleSetError, origin: RulesOrigin) {
        swap(origin: nil) { $0.with(failure: .some(error)) }
        state.withLock { $0.noteProblem(StoreEvent.updateRejected(origin: origin, error: error).description) }
        emit(.updateRejected(origin: origin, error: error))
    }

    /// Replaces what evaluations read and tells every subscriber, in one step under the
    /// state lock (so that updates reach subscribers in order), if `condition` holds then;
    /// `origin` is nil when only the base context, the overrides or the failure changed.
    /// Whether it was replaced. What is no longer in force is released after the lock.
    @discardableResult
    func swap(
        origin: RulesOrigin?, etag: String? = nil, digest: ContentDigest? = nil, fetchedAt: Date? = nil, generation: Int? = nil,
        when condition: (State, RulesInForce) -> Bool = { _, _ in true },
        _ change: (RulesInForce) -> RulesInForce
    ) -> Bool {
        let outcome = state.withLock {
            s -> (
                old: RulesInForce, now: RulesInForce, hook: (@Sendable (StoreEvent) -> Void)?,
                waiters: [CheckedContinuation<RuleSet, any Error>],
                keys: [AnyFlagKey], observed: [ObservedRead]
            )? in
            guard condition(s, inForce.current) else { return nil }
            let (old, now) = inForce.replace(change)
            if let digest { s.lastSeen = digest }
            if let origin, let rules = now.rules, old.rules.map({ $0.loaded !== rules.loaded }) ?? true {
                s.origin = origin
                s.fetchedAt = fetchedAt ?? Date()
                s.confirmedAt = origin == .cache ? nil : s.fetchedAt
                s.inForceDigest = digest ?? ContentDigest(rules.source.bytes)
                s.inForceGeneration = generation
            }
            var waiters: [CheckedContinuation<RuleSet, any Error>] = []
            if origin != nil, let rules = now.rules {
                for c in s.subscribers.values { c.yield(rules) }
                waiters = Array(s.waiters.values)
                s.waiters = [:]
            }
            for (id, w) in s.watchers {
                let r = w.resolve(now)
                if !r.sameOutcome(as: w.last) {
                    s.watchers[id]?.last = r
                    w.continuation.yield(r)
                }
            }
            let observed = s.observedReads.changed(in: now)
            return (old, now, s.onEvent, waiters, s.expectedKeys, observed)
        }
        guard let outcome else { return false }
        notifyObservers(of: outcome.observed)
        guard let origin, let rules = outcome.now.rules, outcome.old.rules.map({ $0.loaded !== rules.loaded }) ?? true else {
            return true
        }
        // Reported before `ready(timeout:)` returns, so that a log shows why it returned.
        outcome.hook?(.rulesLoaded(origin: origin, declarations: rules.checked.declarations.count, etag: etag))
        let drift = outcome.keys.isEmpty ? [] : rules.validate(outcome.keys)
        if !drift.isEmpty { outcome.hook?(.keysDrifted(drift)) }
        for c in outcome.waiters { c.resume(returning: rules) }
        return true
    }

    func emit(_ event: StoreEvent) {
        state.withLock { $0.onEvent }?(event)
    }

    // MARK: Observing

    /// The newest rule set put in force, to any number of subscribers: a subscriber that
    /// falls behind gets the newest, not every one in between.
    public var updates: AsyncStream<RuleSet> {
        let (stream, continuation) = AsyncStream.makeStream(of: RuleSet.self, bufferingPolicy: .bufferingNewest(1))
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
    /// force, the base context or the local overrides were set. It is evaluated under the
    /// `withFlagOverrides` scope it was asked for in (or none), whichever task makes the
    /// change. A subscriber that falls behind gets the newest resolution.
    public func changes(of name: String, in context: EvaluationContext = [:], default fallback: Value? = nil) -> AsyncStream<Resolution> {
        let (stream, continuation) = AsyncStream.makeStream(of: Resolution.self, bufferingPolicy: .bufferingNewest(1))
        let scope = OverrideScopes.everEntered ? FlagOverrides.scoped : nil
        let id = state.withLock { s in
            let id = s.makeID()
            let now = FlagOverrides.$scoped.withValue(scope) { inForce.current.resolve(name, context, expecting: nil, fallback) }
            s.watchers[id] = Watcher(name: name, context: context, fallback: fallback, scope: scope, last: now, continuation: continuation)
            continuation.yield(now)
            return id
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.watchers.removeValue(forKey: id) }
        }
        return stream
    }
}

extension FlagStore {
    /// The typed resolution of `key` in `context` (over the base context) now, and then
    /// each time it changes, as ``changes(of:in:default:)`` gives them by name: the key's
    /// default when the rules cannot give a value of its type.
    ///
    /// ```swift
    /// for await checkout in store.changes(of: AppFlags.checkout, in: ["userId": id]) {
    ///     show(checkout.value)   // an AppFlags.Checkout
    /// }
    /// ```
    public func changes<Wrapped>(of key: FlagKey<Wrapped>, in context: EvaluationContext = [:]) -> AsyncStream<TypedResolution<Wrapped>> {
        let resolutions = changes(of: key.name, in: context, default: key.defaultValue.flagValue)
        let (stream, continuation) = AsyncStream.makeStream(of: TypedResolution<Wrapped>.self, bufferingPolicy: .bufferingNewest(1))
        let forwarding = Task {
            for await r in resolutions { continuation.yield(key.typed(r)) }
            continuation.finish()
        }
        continuation.onTermination = { _ in forwarding.cancel() }
        return stream
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
