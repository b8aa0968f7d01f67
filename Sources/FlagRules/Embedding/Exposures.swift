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
/// `window` distinct ones (the least recently seen are forgotten first). Exposures wait in
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
        /// Each remembered exposure's fingerprint (a 64-bit hash of the declaration, unit,
        /// variant and rules version), with when it was last seen.
        var seen: [UInt64: UInt64] = [:]
        var clock: UInt64 = 0
        var dropped = 0
        var recorded = 0
        /// The rules last seen, their version, and each split rule's unit attribute (by
        /// declaration and rule), worked out once per rules.
        var rulesIdentity: ObjectIdentifier?
        var version = ""
        var versionHash: UInt64 = 0
        var units: [Int: String?] = [:]
    }

    init(window: Int, buffer: Int) {
        self.window = max(window, 1)
        (exposures, continuation) = AsyncStream.makeStream(of: Exposure.self, bufferingPolicy: .bufferingOldest(max(buffer, 1)))
        state = Locked(State())
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

    /// Records `r` of declaration `name` when a split decided it and it is new.
    func record(_ name: String, _ r: Resolution, rules: RuleSet, unitValue: (String) -> Value?) {
        guard r.reason == .split, let ruleIndex = r.rule, let line = r.line, let index = rules.index(of: name) else { return }
        let identity = ObjectIdentifier(rules.loaded)
        let variant = r.variant ?? r.value.description
        // One lock: the unit attribute and the rules' version from the cache (worked out once
        // per rules), then the fingerprint looked up.
        let found: Exposure? = state.withLock { s in
            if s.rulesIdentity != identity {
                s.rulesIdentity = identity
                s.version = rules.contentVersion
                s.versionHash = ExposureLog.fingerprint(s.version, 0xcbf2_9ce4_8422_2325)
                s.units = [:]
            }
            let slot = index << 16 | ruleIndex
            let attribute: String?
            if let known = s.units[slot] {
                attribute = known
            } else {
                attribute = rules.splitUnitAttribute(declaration: index, rule: ruleIndex)
                s.units[slot] = .some(attribute)
            }
            guard let attribute, let value = unitValue(attribute) else { return nil }
            let unit: String
            switch value {
            case .string(let text): unit = text
            case .int(let i): unit = String(i)
            default: unit = value.description
            }
            var key = ExposureLog.fingerprint(name, s.versionHash)
            key = ExposureLog.fingerprint(unit, key)
            key = ExposureLog.fingerprint(variant, key)
            s.clock &+= 1
            if s.seen.updateValue(s.clock, forKey: key) != nil { return nil }
            if s.seen.count > window * 2 {
                // Forget the least recently seen, down to the window.
                let keep = s.seen.sorted { $0.value > $1.value }.prefix(window)
                s.seen = Dictionary(uniqueKeysWithValues: keep.map { ($0.key, $0.value) })
            }
            s.recorded += 1
            return Exposure(
                declaration: name, variant: variant, unitAttribute: attribute, unit: unit, rule: ruleIndex, line: line,
                rulesVersion: s.version, date: Date())
        }
        guard let exposure = found else { return }
        if case .dropped = continuation.yield(exposure) {
            state.withLock { $0.dropped += 1 }
        }
    }

    /// FNV-1a of a text's bytes and a separator, continuing from `h`.
    @inline(__always)
    static func fingerprint(_ text: String, _ h: UInt64) -> UInt64 {
        var h = h
        var copy = text
        copy.withUTF8 { bytes in
            for b in bytes { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        }
        return (h ^ 0xFF) &* 0x100_0000_01b3
    }
}

extension RuleSet {
    /// The attribute a declaration's split rule buckets by, when it is one.
    func splitUnitAttribute(declaration i: Int, rule: Int) -> String? {
        guard i < checked.declarations.count,
            let r = checked.declarations[i].rules.first(where: { $0.index == rule }), case .split(let s) = r.outcome,
            case .attribute(let name, _, _) = s.unit.kind
        else { return nil }
        return name
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
