import Foundation

/// Watching the source: one fetch at a time, and nothing a fetch brings after ``stop()``
/// goes in force.
extension FlagStore {
    // MARK: Starting and stopping

    /// Begins watching the file or polling the URL (nothing for a store with no source; a
    /// second call does nothing). When no rules are in force yet, the newer of the cached
    /// rules and the ``BundledRules`` is put in force before it returns.
    ///
    /// The source is looked at every `refresh`. After an outage (a URL that cannot be
    /// reached, or answers with an HTTP error) the wait doubles with each further failure,
    /// up to ten minutes (or `refresh`, if longer), and is drawn between half and all of
    /// that, so that many processes do not retry in step. While no rules are in force (no
    /// cache, no bundle, no fetch yet) the wait starts at a second instead, doubling up to
    /// `refresh`: a store with nothing to serve does not wait a whole `refresh` to try again. A source that answers with
    /// something unusable (a missing or empty file, an empty body, rules that do not
    /// compile) is looked at again after `refresh`, so that its fix is taken at once.
    public func start() {
        guard source != nil, let epoch = state.withLock({ $0.poller == nil ? $0.epoch : nil }) else { return }
        // Before it returns: the cache or the bundle is in force for the first evaluation.
        loadStartingRules(epoch: epoch)
        state.withLock { s in
            guard s.poller == nil, s.epoch == epoch else { return }
            s.poller = Task.detached { [weak self] in
                while !Task.isCancelled {
                    guard let delay = await self?.checkSource(epoch: epoch) else { return }
                    try? await Task.sleep(for: delay)
                }
            }
        }
    }

    /// Stops watching or polling, and cancels the fetch in flight (the poller's or a
    /// ``refreshNow()``'s): nothing it brings goes in force (or into the cache). The rules
    /// in force stay, and ``start()`` begins again.
    public func stop() {
        let subscription = state.withLock { s in
            s.epoch += 1
            s.poller?.cancel()
            s.poller = nil
            defer { s.subscription = nil }
            return s.subscription
        }
        subscription?.cancel()
        fetching?.cancelInFlight()
    }

    /// Looks at the source now, whether or not the store has started (after a pull to
    /// refresh, or when the app comes to the foreground), and returns when the look is
    /// done: what it found is in force, saved or reported. Waits for a look under way
    /// first, and for a file that is still being written to stop changing. Nothing for a
    /// store with no source.
    public func refreshNow() async {
        let epoch = state.withLock { $0.epoch }
        _ = await checkSource(epoch: epoch, untilSettled: true)
    }

    /// Whether `epoch` is still the store's: no `stop()` since.
    private func isCurrent(_ epoch: Int) -> Bool { state.withLock { $0.epoch == epoch } }

    // MARK: One look

    /// One look at the source, after any under way; returns how long to wait before the
    /// next. `untilSettled`: a file still being written is looked at again once it may
    /// have stopped changing, until it has (a few seconds at most), before returning.
    func checkSource(epoch: Int, untilSettled: Bool = false) async -> Duration {
        guard let fetching, let source else { return refresh }
        return await fetching.oneAtATime { fetcher in
            guard isCurrent(epoch) else { return refresh }
            var result = await fetcher.fetch()
            var waited = Duration.zero
            while untilSettled, case .settling(let wait) = result, waited < .seconds(10), isCurrent(epoch) {
                try? await Task.sleep(for: wait)
                waited += wait
                result = await fetcher.fetch()
            }
            guard isCurrent(epoch) else { return refresh }
            if let events = fetcher.eventsURL { subscribe(to: events, epoch: epoch) }
            return settle(result, from: source, into: &fetcher, epoch: epoch)
        }
    }

    /// Subscribes to the event stream the source's server names, once the store has
    /// started (a ``refreshNow()`` alone does not subscribe). What the stream says is taken
    /// in order, one thing at a time (``PushInbox``): a text, a fetch; its rejections and
    /// connections are reported at once.
    private func subscribe(to events: URL, epoch: Int) {
        guard case .url(_, let headers) = source else { return }
        let subscription = state.withLock { s -> EventSubscription? in
            guard s.epoch == epoch, s.poller != nil, s.subscription?.url != events else { return nil }
            s.subscription?.cancel()
            let inbox = PushInbox()
            let subscription = EventSubscription(
                url: events, headers: headers, maximumSize: maximumSize,
                holding: { [weak self] in self?.held },
                heard: { [weak self] heard in self?.handle(heard, from: events, into: inbox, epoch: epoch) })
            s.subscription = subscription
            return subscription
        }
        subscription?.start()
    }

    /// The ETag and generation of the text last taken from the source.
    private var held: (etag: String, generation: Int?)? {
        guard let etag = fetching?.heldETag else { return nil }
        return (etag, state.withLock { $0.heldGeneration })
    }

    /// What the event stream said: texts and fetches go through `inbox`, in turn with the
    /// store's other looks; the rest is reported.
    private func handle(_ heard: EventSubscription.Heard, from events: URL, into inbox: PushInbox, epoch: Int) {
        let origin = source.map { "\($0)" } ?? events.absoluteString
        switch heard {
        case .rules(let text, let etag, let generation):
            if inbox.add(.rules(text: text, etag: etag, generation: generation)) { drain(inbox, epoch: epoch) }
        case .fetch:
            if inbox.add(.fetch) { drain(inbox, epoch: epoch) }
        case .rejected(let message, let at):
            let told = state.withLock { s -> Bool in
                guard s.epoch == epoch, s.upstreamRejection != message else { return false }
                s.upstreamRejection = message
                s.noteProblem(StoreEvent.upstreamRejected(source: origin, message: message, at: at).description)
                return true
            }
            if told { emit(.upstreamRejected(source: origin, message: message, at: at)) }
        case .accepted(let etag, let generation):
            let heldETag = fetching?.heldETag
            let cleared = state.withLock { s -> Bool in
                guard s.epoch == epoch else { return false }
                // The text held is in force upstream under this generation (after a revert,
                // a newer one than it came with): no older text is taken after it.
                if let generation, let heldETag, PushProtocol.sameETag(heldETag, etag) { s.raiseGeneration(to: generation) }
                guard s.upstreamRejection != nil else { return false }
                s.upstreamRejection = nil
                return true
            }
            if cleared { emit(.upstreamAccepted(source: origin)) }
        case .connected(let after):
            // The server answers: the looks' outage is over.
            state.withLock { $0.failures = 0 }
            emit(.eventStreamConnected(url: events, after: after.map { Duration.milliseconds(Int($0 * 1_000)) }))
        case .lost(let reason, let retry):
            emit(.eventStreamLost(reason: reason, nextAttempt: .milliseconds(Int(retry * 1_000))))
        }
    }

    /// Takes what `inbox` holds until it is empty, one thing at a time.
    private func drain(_ inbox: PushInbox, epoch: Int) {
        Task.detached { [weak self] in
            while let work = inbox.next() {
                guard let self, self.isCurrent(epoch) else {
                    inbox.abandon()
                    return
                }
                switch work {
                case .rules(let text, let etag, let generation):
                    await self.apply(delivered: text, etag: etag, generation: generation, epoch: epoch)
                case .fetch:
                    _ = await self.checkSource(epoch: epoch)
                }
            }
        }
    }

    /// Rules text the event stream carried, taken as a fetch of the source that answered
    /// it with `etag` and `generation` (the next conditional fetch sends the ETag): checked,
    /// cached and put in force as any fetched text, in turn with the fetches.
    private func apply(delivered text: [UInt8], etag: String, generation: Int?, epoch: Int) async {
        guard let fetching, let source, text.count <= maximumSize else {
            _ = await checkSource(epoch: epoch)
            return
        }
        _ = await fetching.oneAtATime { fetcher in
            guard isCurrent(epoch) else { return refresh }
            return settle(
                .fetched(text, Seen(validators: Validators(etag: etag), generation: generation)), from: source, into: &fetcher, epoch: epoch
            )
        }
    }

    /// How the link to the source's server stands: reachable (its stream is open, or the
    /// latest look answered), connected (the stream), and when the rules were last known
    /// current (now, while the stream is open).
    package var upstream: (reachable: Bool, connected: Bool, lastSync: Date?) {
        let s = state.withLock { $0 }
        let connected = s.subscription?.isConnected ?? false
        let answered = s.failures == 0 && !(s.subscription?.isFailing ?? false) && (s.confirmedAt != nil || s.origin == .source)
        let synced = [s.confirmedAt, s.origin == .source ? s.fetchedAt : nil].compactMap { $0 }.max()
        return (connected || answered, connected, connected ? Date() : synced)
    }

    /// The generation its server gave the text in force, if it gave one.
    package var rulesGeneration: Int? { state.withLock { $0.inForceGeneration } }

    /// The rules in force and their generation, read at one instant (both change under the
    /// state lock).
    package var rulesAndGeneration: (RuleSet?, Int?) { state.withLock { (inForce.current.rules, $0.inForceGeneration) } }

    /// Whether the store holds an open connection to its source's event stream.
    package var isSubscribed: Bool { state.withLock { $0.subscription?.isConnected ?? false } }

    private func settle(_ result: FetchResult, from source: RulesSource, into fetcher: inout RulesFetcher, epoch: Int) -> Duration {
        switch result {
        case .unchanged(let generation):
            state.withLock { s in
                s.failures = 0
                // The text held, under the generation the answer names (a newer one after a revert).
                if let generation { s.raiseGeneration(to: generation) }
                // The source still holds what was taken from it (or the cache's, whose validators went with the request).
                // (A 304 from a cache in front of the server may be older than a pushed text; it
                // changes nothing.)
                if s.origin == .source || s.origin == .cache { s.confirmedAt = Date() }
            }
            return refresh
        case .failed(let reason, let outage, let unreachable, let retryAfter):
            return failed(reason, outage: outage, unreachable: unreachable, retryAfter: retryAfter)
        case .settling(let wait):
            // A file still being written: looked at again once it may have settled.
            return min(refresh, wait)
        case .fetched(let bytes, let seen):
            guard !bytes.isEmpty else {
                // Not committed: the next look reads it again, whatever its stamp.
                return failed("\(source) is empty: an empty file or body never replaces rules", outage: false)
            }
            // A text older than one taken (a cache's, a late answer's) is not taken, nor its
            // validators: the next look asks again for what is held.
            let older = state.withLock { s -> Int? in
                guard let generation = seen.generation, let held = s.heldGeneration, generation < held else { return nil }
                s.failures = 0
                return held
            }
            if let older {
                emit(.olderRulesIgnored(generation: seen.generation!, holding: older))
                return refresh
            }
            fetcher.commit(seen)
            let digest = ContentDigest(bytes)
            let same = state.withLock { s in
                s.failures = 0
                if let generation = seen.generation { s.heldGeneration = max(s.heldGeneration ?? 0, generation) }
                let same = s.lastSeen == digest
                if same, s.inForceDigest == digest { s.confirmedAt = Date() }
                return same
            }
            if same { return refresh }
            let rules: RuleSet
            do {
                rules = try accepted(SourceText(bytes: bytes, name: source.description))
            } catch {
                state.withLock { $0.lastSeen = digest }
                reject(error, origin: .source)
                return refresh
            }
            let saved = save(bytes, validators: seen.validators, generation: seen.generation, events: fetcher.eventsURL, epoch: epoch)
            let inForceNow = swap(
                origin: .source, etag: seen.validators.etag, digest: digest, generation: seen.generation,
                when: { s, current in s.epoch == epoch && (self.apply == .immediately || current.rules == nil) }
            ) { $0.with(rules: .some(rules), failure: .some(nil)) }
            guard !inForceNow, isCurrent(epoch) else { return refresh }
            state.withLock { $0.lastSeen = digest }
            if saved {
                emit(.rulesSavedForNextLaunch(declarations: rules.checked.declarations.count, etag: seen.validators.etag))
            } else if cacheDirectory == nil {
                emit(.cacheNotWritten(reason: "rules fetched for the next launch were not saved: the store has no cache directory"))
            }
            return refresh
        }
    }

    /// A look that found nothing to use. After an outage the next look backs off; after a
    /// source that answered with something unusable (an empty or missing file, an empty
    /// body), it comes at the usual pace, so that a fix is taken within `refresh`. The same
    /// failure again in a row is not reported again.
    private func failed(_ reason: String, outage: Bool, unreachable: Bool = false, retryAfter: Duration? = nil) -> Duration {
        let (failures, repeated) = state.withLock { s in
            s.failures += 1
            if s.failures == 1 { s.failureRuns += 1 }
            let repeated = s.failures > 1 && s.lastProblem == reason
            s.noteProblem(reason)
            return (s.failures, repeated)
        }
        let delay =
            retryAfter.map { ErrorAnswers.wait(after: $0, jitter: Double.random(in: 0..<1)) }
            ?? (outage
                ? FlagStore.retryDelay(
                    after: failures, refresh: refresh, jitter: Double.random(in: 0..<1), hasRules: rules != nil, unreachable: unreachable)
                : refresh)
        if !repeated || outage { emit(.fetchFailed(reason: reason, nextAttempt: delay)) }
        return delay
    }

    /// The wait before the next look after `failures` failures in a row, times a factor
    /// between 0.5 and 1 drawn from `jitter` (in 0..<1). While the source cannot be reached
    /// at all (`unreachable`: no answer, not an HTTP error), half a second doubled for each
    /// failure after the first, at most 2 s, with rules in force or not, so that the source's
    /// rules (and its event stream) come within seconds of its return. A source that answers
    /// with an error: `refresh` doubled, at most ten minutes (or `refresh`); without rules in
    /// force, a second doubled, at most `refresh`.
    static func retryDelay(
        after failures: Int, refresh: Duration, jitter: Double, hasRules: Bool = true, unreachable: Bool = false
    ) -> Duration {
        let (first, longest) =
            unreachable
            ? (min(refresh, .milliseconds(500)), min(refresh, .seconds(2)))
            : hasRules ? (refresh, max(refresh, .seconds(600))) : (min(refresh, .seconds(1)), refresh)
        return BackOff(first: first, longest: longest).wait(after: failures, jitter: jitter)
    }

    // MARK: The cache

    /// Writes fetched rules to the cache, unless the store stopped meanwhile; whether
    /// they were written.
    private func save(_ bytes: [UInt8], validators: Validators, generation: Int?, events: URL?, epoch: Int) -> Bool {
        guard let cacheDirectory, let source, isCurrent(epoch) else { return false }
        let entry = RulesCache.Entry(
            source: source.description, etag: validators.etag, lastModified: validators.lastModified, fetchedAt: Date(),
            rules: String(decoding: bytes, as: UTF8.self), generation: generation, events: events?.absoluteString)
        do {
            try RulesCache(directory: cacheDirectory, source: source).write(entry)
            return true
        } catch {
            emit(.cacheNotWritten(reason: error.reason))
            return false
        }
    }

    /// Puts the newer of the cached rules and the bundled ones in force, if either is good
    /// and no rules are in force yet; with the cache's, sends its validators with the next
    /// fetch (with the bundle's, the next fetch asks for the source's whole text).
    private func loadStartingRules(epoch: Int) {
        guard let source, rules == nil else { return }
        struct Candidate {
            let rules: RuleSet
            let origin: RulesOrigin
            let date: Date
            let validators: Validators?
            var generation: Int?
            var events: URL?
        }
        var candidates: [Candidate] = []
        if let cacheDirectory {
            switch RulesCache(directory: cacheDirectory, source: source).read() {
            case nil:
                break
            case .failure(let problem)?:
                state.withLock { $0.noteProblem("cache ignored: \(problem.reason)") }
                emit(.cacheIgnored(reason: problem.reason))
            case .success(let entry)?:
                do {
                    let rules = try RuleSet(source: SourceText(entry.rules, name: source.description), today: Date())
                    let validators = Validators(etag: entry.etag, lastModified: entry.lastModified)
                    candidates.append(
                        Candidate(
                            rules: rules, origin: .cache, date: entry.fetchedAt, validators: validators, generation: entry.generation,
                            events: entry.events.flatMap(URL.init(string:))))
                } catch {
                    let reason = "the cached rules no longer compile: " + (error.errors.first?.message ?? "\(error)")
                    state.withLock { $0.noteProblem("cache ignored: \(reason)") }
                    emit(.cacheIgnored(reason: reason))
                }
            }
        }
        if let bundled {
            do {
                let rules = try accepted(SourceText(bundled.text, name: bundled.name))
                candidates.append(Candidate(rules: rules, origin: .bundle, date: bundled.publishedAt, validators: nil))
            } catch {
                reject(error, origin: .bundle)
            }
        }
        // The newer wins; on a tie, the cache (whose validators spare the next fetch).
        guard let chosen = candidates.max(by: { $0.date < $1.date || ($0.date == $1.date && $0.origin == .cache) }) else { return }
        let loaded = swap(
            origin: chosen.origin, etag: chosen.validators?.etag, digest: ContentDigest(chosen.rules.source.bytes),
            fetchedAt: chosen.date, generation: chosen.generation, when: { s, current in s.epoch == epoch && current.rules == nil }
        ) { $0.with(rules: .some(chosen.rules), failure: .some(nil)) }
        guard loaded, let validators = chosen.validators else { return }
        // The cache's text, its generation and its server's stream: a restart while the
        // server is down subscribes at once and catches up as soon as it is back.
        state.withLock { $0.heldGeneration = chosen.generation }
        fetching?.sendNext(validators, events: chosen.events)
    }

    // MARK: Waiting for rules

    /// The rules in force, once there are some: at once when the store has them (the
    /// rules it was made with, or its bundle's), else the first good rules from the cache,
    /// the source or an update. Starts the store if it has not started. Throws when none have loaded within
    /// `timeout`, naming the latest problem (the app then runs on its defaults, and the
    /// rules apply when they come), or when the waiting task is cancelled.
    public func ready(timeout: Duration = .seconds(5)) async throws(FlagStoreError) -> RuleSet {
        if let rules { return rules }
        start()
        let id = state.withLock { $0.makeID() }
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<RuleSet, any Error>) in
                    let answer: Result<RuleSet, FlagStoreError>? = state.withLock { s in
                        if let rules = inForce.current.rules { return .success(rules) }
                        if Task.isCancelled { return .failure(FlagStoreError(message: "the wait for rules was cancelled")) }
                        s.waiters[id] = continuation
                        return nil
                    }
                    if let answer {
                        continuation.resume(with: answer)
                        return
                    }
                    Task { [weak self] in
                        try? await Task.sleep(for: timeout)
                        self?.giveUp(id, reason: "no rules within \(timeout.readable)")
                    }
                }
            } onCancel: {
                giveUp(id, reason: "the wait for rules was cancelled")
            }
        } catch let error as FlagStoreError {
            throw error
        } catch {
            throw FlagStoreError(message: "\(error)")
        }
    }

    private func giveUp(_ id: Int, reason: String) {
        let (waiter, problem) = state.withLock { s in (s.waiters.removeValue(forKey: id), s.lastProblem) }
        let detail = problem.map { "; the latest problem: \($0)" } ?? ""
        waiter?.resume(throwing: FlagStoreError(message: reason + detail))
    }
}

/// The fetcher of a store's source, used by one look at a time (the poller's, or
/// `refreshNow()`'s): a look waits for the one under way.
final class SourceFetching: Sendable {
    private struct State {
        var fetcher: RulesFetcher
        var busy = false
        var queue: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Locked<State>

    init(_ fetcher: RulesFetcher) { state = Locked(State(fetcher: fetcher)) }

    /// Runs `body` with the fetcher once no other look is under way.
    func oneAtATime<R: Sendable>(_ body: (inout RulesFetcher) async -> R) async -> R {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let free = state.withLock { s in
                if s.busy {
                    s.queue.append(c)
                    return false
                }
                s.busy = true
                return true
            }
            if free { c.resume() }
        }
        var fetcher = state.withLock { $0.fetcher }
        let result = await body(&fetcher)
        let next = state.withLock { s in
            s.fetcher = fetcher
            if s.queue.isEmpty {
                s.busy = false
                return nil as CheckedContinuation<Void, Never>?
            }
            return s.queue.removeFirst()
        }
        next?.resume()
        return result
    }

    /// The ETag of the last text taken from the source.
    var heldETag: String? { state.withLock { $0.fetcher.validators.etag } }

    /// Validators to send with the next request (the cached rules'), and the event stream
    /// their server named.
    func sendNext(_ validators: Validators, events: URL? = nil) {
        state.withLock {
            $0.fetcher.validators = validators
            if let events { $0.fetcher.eventsURL = events }
        }
    }

    /// Ends the fetcher's HTTP session.
    func close() { state.withLock { $0.fetcher.close() } }

    /// Cancels the request in flight, if any.
    func cancelInFlight() { state.withLock { $0.fetcher }.cancelInFlight() }
}

/// A text's identity for "the same rules again": its length, its FNV-1a hash and a second
/// hash of another kind.
struct ContentDigest: Hashable, Sendable {
    let count: Int
    let first: UInt64
    let second: UInt64

    init(_ bytes: [UInt8]) {
        var b: UInt64 = 0x8422_2325_cbf2_9ce4
        for byte in bytes {
            b = (b &+ UInt64(byte)) &* 0x9e37_79b9_7f4a_7c15
            b ^= b >> 29
        }
        count = bytes.count
        first = FNV1a.hash(bytes)
        second = b
    }
}

extension Duration {
    /// The duration in seconds, with its fraction.
    var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }

    /// A wait as people read it: `250 ms`, `1.5 s`, `10 min`, `2 min 30 s`.
    var readable: String {
        let seconds = inSeconds
        if seconds < 1 { return "\(Int((seconds * 1_000).rounded())) ms" }
        if seconds < 60 {
            let tenths = (seconds * 10).rounded() / 10
            return tenths == tenths.rounded() ? "\(Int(tenths)) s" : "\(tenths) s"
        }
        let whole = Int(seconds.rounded())
        return whole % 60 == 0 ? "\(whole / 60) min" : "\(whole / 60) min \(whole % 60) s"
    }
}
