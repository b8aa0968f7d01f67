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
    /// The rules' version: a hash of their text, the same for the same rules on any host.
    public let rulesVersion: String
    /// When the resolution was made.
    public let date: Date
}

/// The exposures a store records, delivered off the evaluation path.
///
/// Each (declaration, unit, variant, rules version) is recorded once within the last
/// `window` distinct ones: one seen again within them is not recorded again, and none is
/// remembered past `2 × window` distinct others (memory grows with what is remembered, to
/// at most 64 bytes a window entry: two tables of 8-byte fingerprints). Exposures wait in
/// a buffer of `buffer` for the consumer of ``exposures``; when it stalls and the buffer is
/// full, later ones are dropped and counted in ``dropped``, and evaluations never wait.
public final class ExposureLog: Sendable {
    /// The exposures, in the order recorded. Iterate it once.
    public let exposures: AsyncStream<Exposure>
    private let continuation: AsyncStream<Exposure>.Continuation
    private let state: Locked<State>
    /// How many distinct exposures are remembered, to record each once.
    public let window: Int

    struct State {
        /// The fingerprints of the exposures remembered (a 64-bit hash of the declaration,
        /// unit, variant and rules version).
        var seen: RecentFingerprints
        var dropped = 0
        var recorded = 0
        /// The rules last seen, and their version, worked out once per rules.
        var rulesIdentity: ObjectIdentifier?
        var version = ""
        var versionHash: UInt64 = 0
    }

    /// Where the remembered fingerprints are, for prefetching.
    private let table: PublishedTable

    init(window: Int, buffer: Int) {
        self.window = max(window, 1)
        (exposures, continuation) = AsyncStream.makeStream(of: Exposure.self, bufferingPolicy: .bufferingOldest(max(buffer, 1)))
        let seen = RecentFingerprints(window: self.window)
        table = seen.published
        state = Locked(State(seen: seen))
    }

    /// Exposures dropped because the buffer was full.
    public var dropped: Int { state.withLock { $0.dropped } }

    /// Exposures recorded (delivered or dropped).
    public var recorded: Int { state.withLock { $0.recorded } }

    /// Delivers the exposures in batches to `handler`, from a task of its own (the stream is
    /// then this task's to iterate): a batch goes when it holds `maxBatch` exposures, when
    /// one arrives `interval` or more after the batch's first, and when the log finishes.
    /// Cancel the returned task to stop.
    @discardableResult
    public func deliverBatches(
        maxBatch: Int = 500, interval: Duration = .seconds(1), _ handler: @escaping @Sendable ([Exposure]) async -> Void
    ) -> Task<Void, Never> {
        let stream = exposures
        let limit = max(maxBatch, 1)
        return Task {
            var batch: [Exposure] = []
            var started = ContinuousClock.now
            for await exposure in stream {
                if batch.isEmpty { started = .now }
                batch.append(exposure)
                if batch.count >= limit || ContinuousClock.now - started >= interval {
                    await handler(batch)
                    batch = []
                }
            }
            if !batch.isEmpty { await handler(batch) }
        }
    }

    /// Ends the stream (the store stops recording into this log).
    func finish() { continuation.finish() }

    /// The hash of declaration `index`'s unit in `context` under its first split rule, its
    /// fingerprint's place asked for in the cache ahead of `record` (which an evaluation
    /// between the two then hides); nil when the declaration has no split.
    @inline(__always)
    func prefetch(_ index: Int?, _ rules: RuleSet, unitValue: (Frame.Key) -> Value?) -> UnitHash? {
        guard let index, index < rules.loaded.splitUnits.count, let first = rules.loaded.splitUnits[index].first,
            let value = unitValue(first.attribute)
        else { return nil }
        let hash = UnitHash(rule: first.rule, hash: ExposureLog.unitHash(index, value))
        table.prefetch(home: UInt32(truncatingIfNeeded: hash.hash))
        return hash
    }

    /// A unit's hash, by the split rule it was read for.
    struct UnitHash {
        let rule: Int
        let hash: UInt64
    }

    /// Records `r` of declaration `name`, at `index` in `rules`, when a split decided it and
    /// it is new. `unitValue` reads an attribute of the evaluation's context; `known` is the
    /// unit's hash `prefetch` gave.
    func record(
        _ name: String, _ index: Int?, _ r: Resolution, rules: RuleSet, known: UnitHash? = nil, unitValue: (Frame.Key) -> Value?
    ) {
        guard r.reason == .split, let ruleIndex = r.rule, let line = r.line, let index else { return }
        let unitHash: UInt64
        if let known, known.rule == ruleIndex {
            unitHash = known.hash
        } else {
            guard let attribute = rules.splitUnit(declaration: index, rule: ruleIndex), let value = unitValue(attribute) else { return }
            unitHash = ExposureLog.unitHash(index, value)
        }
        let identity = ObjectIdentifier(rules.loaded)
        // One lock: the rules' version (worked out once per rules), then the fingerprint
        // looked up; the exposure itself is built only when it is new.
        let version: String? = state.withLock { s in
            if s.rulesIdentity != identity {
                s.rulesIdentity = identity
                s.version = rules.contentVersion
                s.versionHash = ExposureLog.fingerprint(s.version, 0xcbf2_9ce4_8422_2325)
            }
            // The unit's hash in the low half (its place in the table), the whole exposure's
            // in the high half.
            var whole = unitHash ^ s.versionHash
            whole = r.variant.map { ExposureLog.fingerprint($0, whole) } ?? ExposureLog.fingerprint(r.value, whole)
            guard s.seen.insert(whole & 0xFFFF_FFFF_0000_0000 | unitHash & 0xFFFF_FFFF) else { return nil }
            s.recorded += 1
            return s.version
        }
        guard let version, let attribute = rules.splitUnit(declaration: index, rule: ruleIndex), let value = unitValue(attribute)
        else { return }
        deliver(name, r, attribute: attribute, unit: value, rule: ruleIndex, line: line, version: version)
    }

    /// Builds a new exposure and hands it to the stream, out of line: a unit already seen
    /// (the common read) then never touches the stream's generic types.
    @inline(never)
    private func deliver(_ name: String, _ r: Resolution, attribute: Frame.Key, unit: Value, rule: Int, line: Int, version: String) {
        let exposure = Exposure(
            declaration: name, variant: r.variant ?? r.value.description, unitAttribute: attribute.name, unit: unit.unitText,
            rule: rule, line: line, rulesVersion: version, date: Date())
        if case .dropped = continuation.yield(exposure) {
            state.withLock { $0.dropped += 1 }
        }
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
    func splitUnit(declaration i: Int, rule: Int) -> Frame.Key? {
        guard i < loaded.splitUnits.count else { return nil }
        for unit in loaded.splitUnits[i] where unit.rule == rule { return unit.attribute }
        return nil
    }

    /// A hash of the rules' text (FNV-1a, base 36): the same rules give the same version.
    var contentVersion: String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in source.bytes { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return String(h, radix: 36)
    }
}

extension FlagStore {
    /// Where `@sticky` declarations keep each unit's first assignment (nil: they bucket as
    /// any split does). Declarations without `@sticky` never read it.
    public var assignments: (any AssignmentStorage)? {
        get { inForce.current.assignments }
        set { _ = inForce.replace { $0.with(assignments: .some(newValue)) } }
    }

    /// Starts recording exposures: each resolution a `split` decides, once per declaration,
    /// unit and variant within the last `window` distinct ones, and again under new rules.
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
