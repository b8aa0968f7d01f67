import Foundation

/// A unit's assignment to a variant by a `split`: what an experiment's analysis counts.
/// A store records one per declaration, unit and variant (see
/// ``FlagStore/recordExposures(window:buffer:)``).
public struct Exposure: Sendable, Hashable {
    /// The declaration whose split decided.
    public let declaration: String
    /// The variant's name, or the value as written for a value declaration.
    public let variant: String
    /// The split's unit attribute (`userId`).
    public let unitAttribute: String
    /// The unit's value, as text (`user-42`).
    public let unit: String
    /// The deciding rule (1-based).
    public let rule: Int
    /// The deciding rule's line.
    public let line: Int
    /// The declaration's version: a hash of its rules as written (their tokens: not its
    /// comments, its layout or the rest of the file), the same on any host. An edit of its
    /// rules exposes its units again; a comment or another declaration's edit does not.
    public let rulesVersion: String
    /// When the resolution was made.
    public let date: Date
}

/// The exposures a store records, delivered off the evaluation path.
///
/// Each (declaration, unit, variant, declaration's version) is recorded once within the last
/// `window` distinct ones: one seen again within them is not recorded again, and none is
/// remembered past `2 × window` distinct others (memory grows with what is remembered, to
/// at most 64 bytes a window entry: two tables of 8-byte fingerprints).
///
/// Recorded exposures wait in a queue of at most `buffer` for the consumer (``exposures``
/// or ``deliverBatches(maxBatch:interval:_:)``). When the consumer falls behind and the
/// queue is full, a new exposure is not queued and its unit is *not* remembered: it is
/// counted in ``dropped`` and recorded again the next time the unit is evaluated, so a
/// unit is never taken as seen unless its exposure is queued for delivery. Evaluations
/// never wait for the consumer.
public final class ExposureLog: Sendable {
    private let state: Locked<State>
    /// How many distinct exposures are remembered, to record each once.
    public let window: Int
    /// How many recorded exposures wait for the consumer at most.
    public let buffer: Int

    struct State {
        /// The fingerprints of the exposures queued or delivered (a 64-bit hash of the
        /// declaration, unit, variant and rules version).
        var seen: RecentFingerprints
        /// Recorded, not yet taken by the consumer, oldest first.
        var pending: [Exposure] = []
        /// When each pending exposure was recorded, oldest first (a partial batch left
        /// after a full one keeps its first exposure's time, not the time of the take).
        var pendingAt: [ContinuousClock.Instant] = []
        /// When the oldest pending exposure was recorded.
        var oldestAt: ContinuousClock.Instant { pendingAt.first ?? .now }
        var dropped = 0
        /// The fingerprints counted in `dropped` and not recorded since, so that a unit
        /// evaluated again while the queue is full is counted once (at most `2 × window`
        /// remembered; past that, counting starts afresh).
        var droppedFingerprints = Set<UInt64>()
        var recorded = 0
        var delivered = 0
        var finished = false
        /// Consumers waiting for `threshold` pending exposures (or the end).
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0
        /// The rules last seen, and each declaration's version, worked out once per rules.
        var rulesIdentity: ObjectIdentifier?
        var versions: [String] = []
        var versionHashes: [UInt64] = []

        /// The waiters that `pending` (or the end) now satisfies, removed.
        mutating func satisfied() -> [CheckedContinuation<Void, Never>] {
            guard !waiters.isEmpty else { return [] }
            var ready: [CheckedContinuation<Void, Never>] = []
            for (id, w) in waiters where finished || pending.count >= w.threshold {
                ready.append(w.continuation)
                w.timer?.cancel()
                waiters[id] = nil
            }
            return ready
        }
    }

    struct Waiter {
        let threshold: Int
        let continuation: CheckedContinuation<Void, Never>
        /// The task that wakes it at its deadline, cancelled when it is woken otherwise.
        var timer: Task<Void, Never>?
    }

    init(window: Int, buffer: Int) {
        self.window = max(window, 1)
        self.buffer = max(buffer, 1)
        state = Locked(State(seen: RecentFingerprints(window: self.window)))
    }

    /// Exposures not queued because the queue was full, each counted once however often its
    /// unit was evaluated meanwhile: each is recorded when its unit is evaluated again.
    public var dropped: Int { state.withLock { $0.dropped } }

    /// Exposures recorded: queued for the consumer (delivered or waiting).
    public var recorded: Int { state.withLock { $0.recorded } }

    /// When the oldest exposure waiting for the consumer was recorded: a timed batch goes at
    /// this time plus its interval (for tests).
    package var oldestPendingAt: ContinuousClock.Instant? { state.withLock { $0.pendingAt.first } }

    /// The deadline timers of timed waits not yet ended (for tests: a wait woken before its
    /// deadline cancels its timer).
    package var runningTimers: Int { timers.withLock { $0 } }
    private let timers = Locked(0)

    /// Exposures the consumer has taken.
    public var delivered: Int { state.withLock { $0.delivered } }

    /// The exposures, in the order recorded; the stream ends when the store stops recording
    /// into this log (after what was queued). Iterate it from one task; a second iteration
    /// shares the same queue.
    public var exposures: AsyncStream<Exposure> {
        AsyncStream(unfolding: { [self] in await self.nextBatch(limit: 1, interval: nil)?.first })
    }

    /// Delivers the exposures in batches to `handler`, from a task of its own: a batch goes
    /// when it holds `maxBatch` exposures, when its first has waited `interval` (whether or
    /// not more arrive), and when the log finishes. Cancel the returned task to stop.
    @discardableResult
    public func deliverBatches(
        maxBatch: Int = 500, interval: Duration = .seconds(1), _ handler: @escaping @Sendable ([Exposure]) async -> Void
    ) -> Task<Void, Never> {
        let limit = max(maxBatch, 1)
        return Task {
            while let batch = await nextBatch(limit: limit, interval: interval) {
                await handler(batch)
            }
        }
    }

    /// The next exposures for the consumer: up to `limit`, once `limit` are queued, the
    /// oldest has waited `interval` (nil: at once), or the log has finished; nil when it has
    /// finished with none left, or the task is cancelled.
    func nextBatch(limit: Int, interval: Duration?) async -> [Exposure]? {
        // Wait for a first exposure, then for a full batch until the first has waited long enough.
        await waitFor(1, until: nil)
        if let interval {
            let deadline = state.withLock { $0.oldestAt } + interval
            await waitFor(limit, until: deadline)
        }
        return state.withLock { s -> [Exposure]? in
            guard !s.pending.isEmpty, !Task.isCancelled else { return nil }
            let count = min(limit, s.pending.count)
            let batch = Array(s.pending.prefix(count))
            s.pending.removeFirst(count)
            s.pendingAt.removeFirst(count)
            s.delivered += count
            return batch
        }
    }

    /// Returns once `threshold` exposures are queued, the log has finished, `deadline` has
    /// passed or the task is cancelled.
    private func waitFor(_ threshold: Int, until deadline: ContinuousClock.Instant?) async {
        let id = state.withLock { s in
            defer { s.nextWaiter += 1 }
            return s.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let now = state.withLock { s -> Bool in
                    if s.finished || s.pending.count >= threshold || Task.isCancelled { return true }
                    if let deadline, deadline <= .now { return true }
                    s.waiters[id] = Waiter(threshold: threshold, continuation: c)
                    return false
                }
                if now {
                    c.resume()
                } else if let deadline {
                    timers.withLock { $0 += 1 }
                    let timer = Task { [weak self, timers] in
                        defer { timers.withLock { $0 -= 1 } }
                        guard (try? await Task.sleep(until: deadline)) != nil else { return }
                        self?.wake(id)
                    }
                    // Kept with the waiter, to be cancelled when it is woken first; a waiter
                    // already woken cancels it now.
                    let waiting = state.withLock { s -> Bool in
                        guard s.waiters[id] != nil else { return false }
                        s.waiters[id]?.timer = timer
                        return true
                    }
                    if !waiting { timer.cancel() }
                }
            }
        } onCancel: {
            wake(id)
        }
    }

    /// Resumes waiter `id`, if it still waits.
    private func wake(_ id: Int) {
        guard let waiter = state.withLock({ $0.waiters.removeValue(forKey: id) }) else { return }
        waiter.timer?.cancel()
        waiter.continuation.resume()
    }

    /// Ends the stream once what is queued is taken (the store stops recording into this log).
    func finish() {
        let ready = state.withLock { s in
            s.finished = true
            return s.satisfied()
        }
        for c in ready { c.resume() }
    }

    /// Records `r` of declaration `name`, at `index` in `rules`, when a split decided it and
    /// it is new. `unitValue` reads an attribute of the evaluation's context.
    func record(_ name: String, _ index: Int?, _ r: Resolution, rules: RuleSet, unitValue: (RuleSet.SplitUnit) -> Value?) {
        guard r.reason == .split, let ruleIndex = r.rule, let line = r.line, let index,
            let attribute = rules.splitUnit(declaration: index, rule: ruleIndex), let unit = unitValue(attribute)
        else { return }
        let unitHash = ExposureLog.unitHash(index, unit)
        let identity = ObjectIdentifier(rules.loaded)
        let buffer = buffer
        // One lock: the rules' version (worked out once per rules), the fingerprint looked
        // up, and a new exposure queued (or, with the queue full, counted and not remembered).
        let ready = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            if s.rulesIdentity != identity {
                s.rulesIdentity = identity
                s.versions = rules.loaded.declarationVersions
                s.versionHashes = s.versions.map { ExposureLog.fingerprint($0, 0xcbf2_9ce4_8422_2325) }
            }
            guard index < s.versions.count else { return [] }
            var whole = unitHash ^ s.versionHashes[index]
            whole = r.variant.map { ExposureLog.fingerprint($0, whole) } ?? ExposureLog.fingerprint(r.value, whole)
            let fingerprint = whole & 0xFFFF_FFFF_0000_0000 | unitHash & 0xFFFF_FFFF
            guard !s.finished else { return [] }
            if s.pending.count >= buffer {
                if !s.seen.contains(fingerprint) {
                    if s.droppedFingerprints.count >= 2 * window { s.droppedFingerprints.removeAll(keepingCapacity: true) }
                    if s.droppedFingerprints.insert(fingerprint).inserted { s.dropped += 1 }
                }
                return []
            }
            guard s.seen.insert(fingerprint) else { return [] }
            if !s.droppedFingerprints.isEmpty { s.droppedFingerprints.remove(fingerprint) }
            s.recorded += 1
            s.pendingAt.append(.now)
            s.pending.append(
                ExposureLog.exposure(name, r, attribute: attribute, unit: unit, rule: ruleIndex, line: line, version: s.versions[index]))
            return s.satisfied()
        }
        for c in ready { c.resume() }
    }

    /// A new exposure, built out of line: a unit already seen (the common read) never
    /// builds one.
    @inline(never)
    private static func exposure(
        _ name: String, _ r: Resolution, attribute: RuleSet.SplitUnit, unit: Value, rule: Int, line: Int, version: String
    ) -> Exposure {
        Exposure(
            declaration: name, variant: r.variant ?? r.value.description, unitAttribute: attribute.path, unit: unit.unitText,
            rule: rule, line: line, rulesVersion: version, date: Date())
    }

    /// The hash of a unit of declaration `index`, seeded per process (so that no one can
    /// choose units whose fingerprints share a place in the table).
    @inline(__always)
    static func unitHash(_ index: Int, _ unit: Value) -> UInt64 {
        fingerprint(unit, LiteralHash.seed ^ UInt64(truncatingIfNeeded: index) &* 0x9E37_79B9_7F4A_7C15)
    }

    /// The fingerprint of a unit's or a value's text, continuing from `h`.
    @inline(__always)
    static func fingerprint(_ value: Value, _ h: UInt64) -> UInt64 { fingerprint(value.unitText, h) }

    /// A 64-bit hash of a text's bytes, continuing from `h` (the same on every host).
    @inline(__always)
    static func fingerprint(_ text: String, _ h: UInt64) -> UInt64 {
        StringHash.withBytes(text) { LiteralHash.of($0, seed: h) }
    }
}

extension RuleSet {
    /// The attribute a declaration's split rule buckets by, when it is one.
    @inline(__always)
    func splitUnit(declaration i: Int, rule: Int) -> SplitUnit? {
        guard i < loaded.splitUnits.count else { return nil }
        for unit in loaded.splitUnits[i] where unit.rule == rule { return unit }
        return nil
    }

    /// A hash of the rules' text (FNV-1a, base 36): the same rules give the same version.
    package var contentVersion: String { loaded.contentVersion }
}

extension FlagStore {
    /// Where `@sticky` declarations keep each unit's first assignment (nil: they bucket as
    /// any split does). Declarations without `@sticky` never read it.
    public var assignments: (any AssignmentStorage)? {
        get { inForce.current.assignments }
        set { _ = inForce.replace { $0.with(assignments: .some(newValue)) } }
    }

    /// Starts recording exposures: each resolution a `split` decides, once per declaration,
    /// unit and variant within the last `window` distinct ones, and again under new rules;
    /// at most `buffer` wait for the consumer (see ``ExposureLog``).
    /// Overrides, defaults and rule matches are not exposures. A log recorded into before
    /// is finished. Flags (`isEnabled`) are never split, and keep their cost.
    @discardableResult
    public func recordExposures(window: Int = 10_000, buffer: Int = 1_000) -> ExposureLog {
        let log = ExposureLog(window: window, buffer: buffer)
        let (old, _) = inForce.replace { $0.with(exposures: .some(log)) }
        old.exposures?.finish()
        return log
    }

    /// Stops recording exposures and finishes the log's stream.
    public func stopRecordingExposures() {
        let (old, _) = inForce.replace { $0.with(exposures: .some(nil)) }
        old.exposures?.finish()
    }
}
