import Foundation

/// What a sticky assignment is kept under: the declaration, its `@sticky` version and the
/// unit.
public struct StickyKey: Sendable, Hashable, Codable {
    /// The declaration's name.
    public let declaration: String
    /// `@sticky("v2")`'s version ("" for `@sticky`).
    public let version: String
    /// The unit's value as text (`user-42`).
    public let unit: String

    /// A key.
    public init(declaration: String, version: String, unit: String) {
        self.declaration = declaration
        self.version = version
        self.unit = unit
    }
}

/// Where a store keeps the first assignment a `@sticky` declaration's split gave each unit
/// (set ``FlagStore/assignments``). A service plugs in its own (a database, a cache);
/// ``InMemoryAssignments`` and ``FileAssignments`` come with the library. Called on the
/// evaluation's thread for sticky declarations only.
public protocol AssignmentStorage: Sendable {
    /// The assignment remembered for `key` (a variant's name, or a value as written).
    func assignment(for key: StickyKey) -> String?
    /// Remembers `assignment` for `key`.
    func remember(_ assignment: String, for key: StickyKey)
}

/// Assignments in memory: the most recent `limit` kept (the oldest forgotten first).
public final class InMemoryAssignments: AssignmentStorage {
    struct State {
        var assignments: [StickyKey: String] = [:]
        var order: [StickyKey] = []
        var start = 0
    }
    private let state = Locked(State())
    /// The most assignments kept.
    public let limit: Int

    /// Empty storage keeping at most `limit` assignments.
    public init(limit: Int = 100_000) {
        self.limit = max(limit, 1)
    }

    /// The assignment remembered for `key`.
    public func assignment(for key: StickyKey) -> String? {
        state.withLock { $0.assignments[key] }
    }

    /// Remembers `assignment` for `key`, forgetting the oldest beyond the limit.
    public func remember(_ assignment: String, for key: StickyKey) {
        state.withLock { s in
            if s.assignments.updateValue(assignment, forKey: key) == nil { s.order.append(key) }
            while s.assignments.count > limit, s.start < s.order.count {
                s.assignments[s.order[s.start]] = nil
                s.start += 1
            }
            if s.start > limit {
                s.order.removeFirst(s.start)
                s.start = 0
            }
        }
    }

    /// Every assignment, for saving.
    var all: [StickyKey: String] { state.withLock { $0.assignments } }
}

/// Assignments in a JSON file, for apps: read when made, written atomically (a temporary
/// file renamed over it) at most every `delay` after a change and by ``flush()``. A missing
/// file starts empty; an unreadable or corrupt one too, reported to `onProblem`: evaluation
/// then buckets as if nothing were remembered, and never fails.
public final class FileAssignments: AssignmentStorage {
    /// The file.
    public let url: URL
    private let memory: InMemoryAssignments
    private let pending = Locked(false)
    private let delay: Duration
    private let onProblem: (@Sendable (String) -> Void)?

    /// Storage in `url`, keeping at most `limit` assignments.
    public init(
        url: URL, limit: Int = 100_000, delay: Duration = .milliseconds(500), onProblem: (@Sendable (String) -> Void)? = nil
    ) {
        self.url = url
        self.delay = delay
        self.onProblem = onProblem
        memory = InMemoryAssignments(limit: limit)
        guard FileManager.default.fileExists(atPath: url.path) else { return }
        do {
            let data = try Data(contentsOf: url)
            guard data.count <= 64 << 20 else { throw CocoaError(.fileReadTooLarge) }
            let entries = try JSONDecoder().decode([Entry].self, from: data)
            for e in entries.suffix(memory.limit) { memory.remember(e.assignment, for: e.key) }
        } catch {
            onProblem?("sticky assignments in \(url.path) were not read (\(error)); starting without them")
        }
    }

    struct Entry: Codable {
        let key: StickyKey
        let assignment: String
    }

    /// The assignment remembered for `key`.
    public func assignment(for key: StickyKey) -> String? { memory.assignment(for: key) }

    /// Remembers `assignment` for `key`; the file is written soon after.
    public func remember(_ assignment: String, for key: StickyKey) {
        memory.remember(assignment, for: key)
        let schedule = pending.withLock { p -> Bool in
            defer { p = true }
            return !p
        }
        guard schedule else { return }
        let delay = self.delay
        Task.detached { [weak self] in
            try? await Task.sleep(for: delay)
            self?.flush()
        }
    }

    /// Writes every assignment now (atomically).
    public func flush() {
        pending.withLock { $0 = false }
        let entries = memory.all.map { Entry(key: $0.key, assignment: $0.value) }
            .sorted { ($0.key.declaration, $0.key.unit) < ($1.key.declaration, $1.key.unit) }
        do {
            try JSONEncoder().encode(entries).write(to: url, options: .atomic)
        } catch {
            onProblem?("sticky assignments could not be written to \(url.path): \(error)")
        }
    }
}

extension RuleSet {
    /// `@sticky`'s version for declaration `i`; nil when it is not sticky.
    func stickyVersion(_ i: Int) -> String? {
        i < checked.declarations.count ? checked.declarations[i].sticky : nil
    }

    /// `r` with the assignment `storage` remembers for its unit, when declaration `name` is
    /// sticky and a split decided `r`; the first assignment of a unit is remembered (a
    /// `fallback` entry's too, which then gives `callersDefault`, or the declaration's
    /// default where the caller gives none).
    func sticky(
        _ r: Resolution, _ name: String, storage: any AssignmentStorage, remembering: Bool = true, callersDefault: Value? = nil,
        unitValue: (SplitUnit) -> Value?
    ) -> Resolution {
        guard r.reason == .split, let i = index(of: name), let version = stickyVersion(i), let rule = r.rule,
            let attribute = splitUnit(declaration: i, rule: rule), let value = unitValue(attribute),
            let d = Optional(checked.declarations[i]),
            let split = d.rules.first(where: { $0.index == rule }).flatMap({
                if case .split(let s) = $0.outcome { return s } else { return nil }
            })
        else { return r }
        let key = StickyKey(declaration: name, version: version, unit: value.unitText)
        // (A fallback entry is remembered by a mark no variant or value is written as.)
        let fallbackMark = "\u{1}fallback"
        let given = r.isFallback ? fallbackMark : r.variant ?? r.value.description
        if let kept = storage.assignment(for: key) {
            if kept == given { return r }
            var remembered = r
            if kept == fallbackMark, !split.fallbacks.isEmpty {
                remembered.value = callersDefault ?? d.defaultValue
                remembered.variant = nil
                remembered.isFallback = true
                return remembered
            }
            if let k = split.outcomes.indices.first(where: {
                !split.isFallback($0) && (d.kind == .variant ? split.outcomes[$0].stringValue : split.outcomes[$0].description) == kept
            }) {
                let outcome = split.outcomes[k]
                remembered.value = outcome
                remembered.variant = d.kind == .variant ? outcome.stringValue : nil
                remembered.isFallback = false
                return remembered
            }
        }
        if remembering { storage.remember(given, for: key) }
        return r
    }
}

extension FlagStore {
    /// How `name` resolves in this store: the rules in force over the base context, and a
    /// `@sticky` declaration's remembered assignment, which the explanation's summary names
    /// (explaining remembers nothing). Nil for a name the rules lack, or before rules load.
    public func explain(_ name: String, in context: EvaluationContext = [:]) -> Explanation? {
        let s = withInForce { $0 }
        guard let rules = s.rules else { return nil }
        let merged = s.merged(context)
        guard let e = rules.explain(name, in: merged) else { return nil }
        guard let storage = s.assignments, e.resolution.reason == .split else { return e }
        let r = rules.sticky(e.resolution, name, storage: storage, remembering: false) { merged[$0] }
        guard r.value != e.resolution.value else { return e }
        let kept = r.variant ?? r.value.description
        let now = e.resolution.variant ?? e.resolution.value.description
        return Explanation(
            name: e.name, resolution: r, rules: e.rules, condition: e.condition,
            summary: "@sticky: this unit's first assignment, \(kept), is remembered (the split now gives \(now))")
    }
}
