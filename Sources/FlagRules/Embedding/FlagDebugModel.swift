import Foundation

/// What a debug screen shows and does: every declaration with its kind, doc, owner,
/// expiry, current value and reason, the values it can take, and local overrides set and
/// cleared while the app runs, kept through a ``FlagOverrideStorage``.
///
/// The overrides are the store's ``FlagStore/localOverrides``: over the rules, under
/// `withFlagOverrides` scopes, and seen by `store.changes(of:in:)`.
///
/// ```swift
/// let debug = FlagDebugModel(store: store, storage: FileOverrideStorage(url: overridesURL))
/// for entry in debug.entries(in: ["userId": "u-42"]) { print(entry.name, entry.resolution) }
/// try debug.setOverride("checkout", to: "twoStep")
/// debug.clearOverride("checkout")
/// ```
public final class FlagDebugModel: Sendable {
    /// One declaration, as a debug screen lists it.
    public struct Entry: Sendable, Hashable, Identifiable {
        /// The declaration's metadata (kind, type, doc, owner, expiry, …).
        public let declaration: DeclarationInfo
        /// What it resolves to now, overrides included.
        public let resolution: Resolution
        /// The local override set on it, if any.
        public let override: Value?
        /// The values it can take, for a picker: both bools for a flag or a bool value,
        /// the variants of a variant; empty for ints, doubles and strings (free entry).
        public let allowedValues: [Value]

        /// The name.
        public var id: String { declaration.name }
        /// The name.
        public var name: String { declaration.name }
    }

    /// The store read and overridden.
    public let store: FlagStore
    /// Where the overrides are kept, if anywhere.
    public let storage: (any FlagOverrideStorage)?

    /// A model over `store`, putting the overrides `storage` kept in force (an unreadable
    /// storage is reported by ``loadProblem`` and starts empty).
    public init(store: FlagStore, storage: (any FlagOverrideStorage)? = nil) {
        self.store = store
        self.storage = storage
        do {
            let saved = try storage?.load() ?? [:]
            store.localOverrides = saved
            loadProblem = nil
        } catch {
            loadProblem = "\(error)"
        }
    }

    /// Why the saved overrides could not be read, if they could not.
    public let loadProblem: String?

    /// Every flag, variant and value of the rules in force (not segments), in source
    /// order, resolved in `context` over the store's base context.
    /// All rows come from one reading of what is in force (never a mix of two rule sets),
    /// and listing them is not an evaluation: the store's hook is not called.
    public func entries(in context: EvaluationContext = [:]) -> [Entry] {
        let now = store.inForceSnapshot()
        guard let rules = now.rules else { return [] }
        return rules.declarations.filter { $0.kind != .segment }.map { d in
            Entry(
                declaration: d, resolution: now.resolve(d.name, context, expecting: nil, nil), override: now.local[d.name],
                allowedValues: FlagDebugModel.allowedValues(d))
        }
    }

    static func allowedValues(_ d: DeclarationInfo) -> [Value] {
        switch (d.kind, d.defaultValue) {
        case (.flag, _), (.value, .bool): return [.bool(false), .bool(true)]
        case (.variant, _): return d.variants.map { .string($0) }
        default: return []
        }
    }

    /// Overrides `name` with `value` in the store and the storage. Throws when the rules
    /// in force have no such declaration or the value does not fit it; a storage that
    /// cannot be written throws after the override is in force.
    public func setOverride(_ name: String, to value: Value) throws(FlagOverrideError) {
        guard let declaration = store.rules?.declaration(named: name) else {
            throw FlagOverrideError(message: "no declaration named '\(name)' in the rules in force")
        }
        let check = Resolution.overridden(name, value, declaration, default: nil)
        guard check.reason == .override else { throw FlagOverrideError(message: check.errorMessage ?? "the value does not fit") }
        try change { $0[name] = value }
    }

    /// Overrides a typed key.
    public func setOverride<V>(_ key: FlagKey<V>, to value: V) throws(FlagOverrideError) {
        try setOverride(key.name, to: value.flagValue)
    }

    /// Removes the override of `name`.
    public func clearOverride(_ name: String) throws(FlagOverrideError) {
        try change { $0[name] = nil }
    }

    /// Removes every override.
    public func clearAllOverrides() throws(FlagOverrideError) {
        try change { $0 = [:] }
    }

    /// Changes the overrides and saves them, one change at a time: two made at once are
    /// saved in the order they were put in force, so the storage ends with the last.
    private func change(_ body: (inout FlagOverrides) -> Void) throws(FlagOverrideError) {
        let result: Result<Void, FlagOverrideError> = saving.withLock { _ in
            store.updateLocalOverrides(body)
            do {
                try storage?.save(store.localOverrides)
                return .success(())
            } catch {
                return .failure(FlagOverrideError(message: "the override is in force but was not saved: \(error)"))
            }
        }
        try result.get()
    }

    /// Held while an override is put in force and saved.
    private let saving = Locked(())
}

/// Why an override was not set or saved.
public struct FlagOverrideError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public let message: String
    /// The message.
    public var description: String { message }
}

/// Where a debug screen's overrides are kept between launches.
public protocol FlagOverrideStorage: Sendable {
    /// The overrides saved; empty when none have been.
    func load() throws -> FlagOverrides
    /// Replaces the overrides saved.
    func save(_ overrides: FlagOverrides) throws
}

/// Overrides kept in a JSON file (`{"darkMode": true, "checkout": "twoStep"}`), written
/// atomically.
public struct FileOverrideStorage: FlagOverrideStorage {
    /// The file.
    public let url: URL

    /// Storage in `url` (created on the first save).
    public init(url: URL) { self.url = url }

    /// The overrides in the file; empty when there is no file; throws when it is not a
    /// JSON object of bools, numbers and strings.
    public func load() throws -> FlagOverrides {
        guard FileManager.default.fileExists(atPath: url.path) else { return [:] }
        let text = String(decoding: try Data(contentsOf: url), as: UTF8.self)
        return FlagOverrides(try FlagOverrideCoding.decode(text, from: url.path))
    }

    /// Writes the overrides, replacing the file atomically.
    public func save(_ overrides: FlagOverrides) throws {
        try Data(FlagOverrideCoding.encode(overrides).utf8).write(to: url, options: .atomic)
    }
}

/// Overrides kept in `UserDefaults` under one key, as the same JSON text.
public struct UserDefaultsOverrideStorage: FlagOverrideStorage {
    /// The defaults key.
    public let key: String
    /// The suite (nil: the standard defaults).
    public let suiteName: String?

    /// Storage under `key` in the suite `suiteName` (else the standard defaults).
    public init(key: String = "FlagRules.overrides", suiteName: String? = nil) {
        self.key = key
        self.suiteName = suiteName
    }

    private var defaults: UserDefaults { suiteName.flatMap(UserDefaults.init(suiteName:)) ?? .standard }

    /// The overrides saved; empty when none have been.
    public func load() throws -> FlagOverrides {
        guard let text = defaults.string(forKey: key) else { return [:] }
        return FlagOverrides(try FlagOverrideCoding.decode(text, from: "UserDefaults '\(key)'"))
    }

    /// Replaces the overrides saved.
    public func save(_ overrides: FlagOverrides) throws {
        defaults.set(FlagOverrideCoding.encode(overrides), forKey: key)
    }
}

/// Overrides as a JSON object, names sorted.
enum FlagOverrideCoding {
    static func encode(_ overrides: FlagOverrides) -> String {
        JSON.object(overrides.values.sorted { $0.key < $1.key }.map { ($0.key, $0.value.json) }).serialized(pretty: true) + "\n"
    }

    static func decode(_ text: String, from place: String) throws(FlagOverrideError) -> [String: Value] {
        do {
            let context = try EvaluationContext(json: text)
            return Dictionary(context.entries.map { ($0.name, $0.value) }, uniquingKeysWith: { _, last in last })
        } catch {
            throw FlagOverrideError(message: "\(place) does not hold overrides: \(error.message)")
        }
    }
}
