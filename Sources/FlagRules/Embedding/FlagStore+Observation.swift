#if canImport(Observation)
    import Observation
#endif

/// A store's reads that Swift's Observation tracks: ``FlagStore/observed``.
///
/// ```swift
/// struct CheckoutView: View {
///     let store: FlagStore
///     var body: some View {
///         if store.observed.isEnabled("newCheckout") { NewCheckout() } else { OldCheckout() }
///     }
/// }
/// ```
///
/// Each read answers as the store's own entry point does (the hook included), and
/// registers with Observation as one read: the name, the context, the kind and default
/// asked for, and the `withFlagOverrides` scope in force. A view or a
/// `withObservationTracking` is told of a change when rules put in force, a new base
/// context or new local overrides change what that read gives (its value, variant,
/// reason or error code); a change that leaves it alone tells no one. Past 1,024
/// distinct reads the store forgets them all and tells every observer once, so that each
/// reads again. The plain entry points on the store register nothing and cost nothing
/// more.
public struct ObservedFlags: FlagEvaluating {
    /// The store read.
    public let store: FlagStore

    /// Resolves a declaration, observed.
    public func evaluate(_ name: String, in context: EvaluationContext = [:], default fallback: Value? = nil) -> Resolution {
        store.observedRead(name, context, nil, fallback)
    }

    /// Resolves a declaration checking its kind, observed.
    public func evaluate(_ name: String, in context: EvaluationContext, expecting kind: DeclarationKind, default fallback: Value)
        -> Resolution
    {
        store.observedRead(name, context, kind, fallback)
    }

    /// Whether a flag is on, observed.
    public func isEnabled(_ name: String, in context: EvaluationContext = [:], default fallback: Bool = false) -> Bool {
        store.observedRead(name, context, .flag, .bool(fallback)).value.boolValue ?? fallback
    }

    /// Every flag, variant and value, each observed.
    public func evaluateAll(in context: EvaluationContext = [:]) -> [String: Resolution] {
        let names = store.withInForce { s in s.evaluated.declarations.filter { $0.kind != .segment }.map(\.name) }
        var all: [String: Resolution] = [:]
        for name in names { all[name] = store.observedRead(name, context, nil, nil) }
        return all
    }

    /// A handle (as the store's).
    public func handle(_ name: String) -> DeclarationHandle { store.handle(name) }

    /// An empty context (as the store's).
    public func makeContext() -> PreparedContext { store.makeContext() }

    /// A prepared context (as the store's).
    public func prepare(_ context: EvaluationContext) -> PreparedContext { store.prepare(context) }

    /// Resolves by handle, observed as a read by name of the context's values.
    public func evaluate(_ handle: DeclarationHandle, in context: PreparedContext, default fallback: Value? = nil) -> Resolution {
        store.observedRead(handle.name, context.dictionary, nil, fallback)
    }

    /// Resolves by handle checking its kind, observed.
    public func evaluate(
        _ handle: DeclarationHandle, in context: PreparedContext, expecting kind: DeclarationKind, default fallback: Value
    ) -> Resolution {
        store.observedRead(handle.name, context.dictionary, kind, fallback)
    }

    /// Whether a flag is on by handle, observed.
    public func isEnabled(_ handle: DeclarationHandle, in context: PreparedContext, default fallback: Bool = false) -> Bool {
        store.observedRead(handle.name, context.dictionary, .flag, .bool(fallback)).value.boolValue ?? fallback
    }

    /// Whether a flag is on for each context, each observed.
    public func isEnabled(_ handle: DeclarationHandle, in contexts: [PreparedContext], default fallback: Bool = false) -> [Bool] {
        contexts.map { isEnabled(handle, in: $0, default: fallback) }
    }
}

/// One read made through ``FlagStore/observed``: what it asked, under which scope.
struct ObservedRead: Hashable, Sendable {
    let name: String
    let context: EvaluationContext
    let kind: DeclarationKind?
    let fallback: Value?
    let scope: FlagOverrides?

    /// What it gives with `now` in force, under its own scope.
    func resolve(_ now: FlagStore.RulesInForce) -> Resolution {
        FlagOverrides.$scoped.withValue(scope) { now.resolve(name, context, expecting: kind, fallback) }
    }
}

/// The observed reads a store has answered, with what each gave.
struct ObservedReads {
    static let capacity = 1_024
    private var reads: [ObservedRead: Resolution] = [:]

    /// Records `read`'s answer; when that makes too many, forgets them all and returns
    /// them (every observer is then told once).
    mutating func record(_ read: ObservedRead, _ r: Resolution) -> [ObservedRead] {
        if reads[read] == nil, reads.count >= ObservedReads.capacity {
            let all = Array(reads.keys)
            reads = [read: r]
            return all
        }
        reads[read] = r
        return []
    }

    /// The reads whose answer differs with `now` in force (now recorded as theirs).
    mutating func changed(in now: FlagStore.RulesInForce) -> [ObservedRead] {
        guard !reads.isEmpty else { return [] }
        var changed: [ObservedRead] = []
        for (read, last) in reads {
            let r = read.resolve(now)
            if !r.sameOutcome(as: last) {
                reads[read] = r
                changed.append(read)
            }
        }
        return changed
    }
}

extension FlagStore {
    /// The store's reads, tracked by Swift's Observation: a SwiftUI view, or any
    /// `withObservationTracking`, that reads a flag through it is told when what it read
    /// changes (see ``ObservedFlags``). `@Flag` reads through it.
    public var observed: ObservedFlags { ObservedFlags(store: self) }

    /// A read through `observed`: registered with Observation first, then resolved and
    /// recorded in one step with what is in force (so that no change falls between), then
    /// reported to the hook.
    func observedRead(_ name: String, _ context: EvaluationContext, _ kind: DeclarationKind?, _ fallback: Value?) -> Resolution {
        let read = ObservedRead(
            name: name, context: context, kind: kind, fallback: fallback, scope: OverrideScopes.everEntered ? FlagOverrides.scoped : nil)
        registerAccess(read)
        let (r, forgotten, hook, merged, rules) = state.withLock { s in
            let now = inForce.current
            let r = read.resolve(now)
            return (r, s.observedReads.record(read, r), now.hook, now.merged(context), now.evaluated)
        }
        notifyObservers(of: forgotten)
        hook?.call(FlagEvaluation(name: name, resolution: r, input: .dictionary(merged), rules: rules))
        return r
    }

    /// A key path for one observed read, Observation's unit of change.
    subscript(observedRead read: ObservedRead) -> Int { 0 }

    static func makeRegistrar() -> AnyObject? {
        #if canImport(Observation)
            if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) { return Registrar() }
        #endif
        return nil
    }

    private func registerAccess(_ read: ObservedRead) {
        #if canImport(Observation)
            if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *), let box = observation as? Registrar {
                box.registrar.access(self, keyPath: \FlagStore.[observedRead: read])
            }
        #endif
    }

    /// Tells Observation that these reads changed; called with no lock held, since
    /// observers run at once.
    func notifyObservers(of reads: [ObservedRead]) {
        guard !reads.isEmpty else { return }
        #if canImport(Observation)
            if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *), let box = observation as? Registrar {
                for read in reads { box.registrar.withMutation(of: self, keyPath: \FlagStore.[observedRead: read]) {} }
            }
        #endif
    }
}

#if canImport(Observation)
    /// Observation's registrar, boxed: a stored property of its type would need the
    /// platforms that have it.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    final class Registrar: Sendable {
        let registrar = ObservationRegistrar()
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    extension FlagStore: Observable {}
#endif
