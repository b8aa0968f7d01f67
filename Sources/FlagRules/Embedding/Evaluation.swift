/// The one evaluation path. Every public entry point of `RuleSet` and `FlagStore` (by
/// name or handle, dictionary or prepared context, untyped, typed by kind or by key) is a
/// shell over `RuleSet.resolve(_:_:_:expecting:default:_:)`, or, for a bool answer that
/// needs no resolution, `RuleSet.isOn(_:_:_:default:_:)`. They do, in this order:
///
/// 1. a `withFlagOverrides` scope's override of the name, then a store's local override;
/// 2. the name's lookup (`FLAG_NOT_FOUND`, or a store's "no rules have loaded");
/// 3. the expected kind (`TYPE_MISMATCH`);
/// 4. a strict rule set's context check (`INVALID_CONTEXT`);
/// 5. the compiled rules, over the context's frame;
/// 6. typing by the caller's default (`TYPE_MISMATCH`, an int read as a double converted).
///
/// A store's shells add the last two steps of the path: they read what is in force once,
/// borrowed, and call the evaluation hook after the borrow has ended.

/// What a store adds to its rules: local overrides, and what to answer when no rules have
/// loaded.
struct EvaluationLayers {
    /// The store's own overrides (a debug screen's): under scoped ones, over the rules.
    let local: FlagOverrides
    /// Why there are no rules, when none have loaded; nil when rules are in force.
    let missing: MissingRules?

    /// Whether the layers change nothing: the rules answer as a bare `RuleSet` would.
    @inline(__always)
    var isEmpty: Bool { local.isEmpty && missing == nil }
}

/// Why a store has no rules: nothing loaded yet, or the latest update failed.
struct MissingRules {
    let failure: RuleSetError?

    /// The resolution of any name: the caller's default with reason `ERROR`.
    func resolution(_ fallback: Value?) -> Resolution {
        let value = fallback ?? .bool(false)
        switch failure {
        case .invalid?:
            return .error(.parseError, "the rules have errors: " + (failure?.errors.first?.message ?? "unknown"), default: value)
        case .unreadable?:
            return .error(.general, failure?.description ?? "", default: value)
        case nil:
            return .error(.general, "no rules have been loaded", default: value)
        }
    }
}

/// A context an evaluation reads: a dictionary or a prepared context.
protocol EvaluationInput {
    /// A strict rule set's first problem with this context (only asked when the rule set
    /// checks strictly).
    func problem(for rules: RuleSet) -> ContextProblem?
    /// Runs `body` with a frame over this context for `rules`.
    func withFrame<R>(_ rules: RuleSet, _ body: (Frame) -> R) -> R
}

extension EvaluationContext: EvaluationInput {
    @inline(__always)
    func problem(for rules: RuleSet) -> ContextProblem? { rules.strictProblem(self) }

    @inline(__always)
    func withFrame<R>(_ rules: RuleSet, _ body: (Frame) -> R) -> R { body(Frame(self, program: rules.program)) }
}

extension PreparedContext: EvaluationInput {
    @inline(__always)
    func problem(for rules: RuleSet) -> ContextProblem? { rules.strictProblem(self) }

    /// Its slots when it was prepared for `rules`, else its values by name.
    @inline(__always)
    func withFrame<R>(_ rules: RuleSet, _ body: (Frame) -> R) -> R {
        withStorage { storage in
            let program = rules.program
            guard storage.isLaidOut(for: program) else {
                let dictionary = self.dictionary
                return withExtendedLifetime(dictionary) { body(Frame(dictionary, program: program)) }
            }
            guard program.schema != nil else { return body(Frame(storage.extra, program: program)) }
            return body(Frame(storage, program: program))
        }
    }
}

extension RuleSet {
    /// The position of the declaration `name` (a handle's own when it was made for these
    /// rules), if there is one.
    @inline(__always)
    func index(of name: String) -> Int? { program.names.index(of: name) }

    @inline(__always)
    func index(of handle: DeclarationHandle) -> Int? {
        handle.owner === program && handle.index >= 0 ? handle.index : program.names.index(of: handle.name)
    }

    /// The one evaluation path (see the top of this file): the resolution of the
    /// declaration `name`, found at `index`, in `context`.
    @inline(__always)
    func resolve<C: EvaluationInput>(
        _ name: String, _ index: Int?, _ context: C, expecting kind: DeclarationKind?, default fallback: Value?,
        _ layers: EvaluationLayers?
    ) -> Resolution {
        if OverrideScopes.everEntered || !(layers?.local.isEmpty ?? true) {
            if let r = override(name, index, fallback, layers?.local) { return r }
        }
        guard let i = index else {
            if let missing = layers?.missing { return missing.resolution(fallback) }
            return .error(.flagNotFound, "no declaration named '\(name)'", default: fallback ?? .bool(false))
        }
        if let kind {
            let actual = program.withDeclaration(i) { $0.kind }
            guard actual == kind else {
                return .error(.typeMismatch, "'\(name)' is a \(actual.rawValue), not a \(kind.rawValue)", default: fallback ?? .bool(false))
            }
        }
        if checksContextsStrictly, let problem = context.problem(for: self) {
            return invalidContext(problem, declaration: i, default: fallback)
        }
        let r = context.withFrame(self) { program.resolution(i, $0) }
        if _slowPath(r.isFallback) { return RuleSet.fellBack(r, name, default: fallback) }
        guard let fallback else { return r }
        return RuleSet.typed(r, name, fallback)
    }

    /// Whether the flag `name`, found at `index`, is on in `context`: the same answer as
    /// `resolve` gives with a bool default, without building a resolution.
    @inline(__always)
    func isOn<C: EvaluationInput>(_ name: String, _ index: Int?, _ context: C, default fallback: Bool, _ layers: EvaluationLayers?)
        -> Bool
    {
        if OverrideScopes.everEntered || layers != nil {
            if let r = override(name, index, .bool(fallback), layers?.local) { return r.value.boolValue ?? fallback }
            // No rules loaded: an error, whose value is the caller's default.
            if layers?.missing != nil { return fallback }
        }
        guard let i = index else { return fallback }
        if checksContextsStrictly, context.problem(for: self) != nil { return fallback }
        return program.withDeclaration(i) { d in
            guard d.isOnAnswers else { return resolvedIsOn(d, context, default: fallback) }
            return context.withFrame(self) { d.isOn($0) }
        }
    }

    /// `isOn` of a declaration whose `isOn` does not answer: not a flag (`fallback`), or a
    /// flag with a `fallback` rule, resolved.
    @inline(never)
    func resolvedIsOn<C: EvaluationInput>(_ d: CompiledDeclaration, _ context: C, default fallback: Bool) -> Bool {
        guard d.kind == .flag else { return fallback }
        let outcome = context.withFrame(self) { d.resolve($0) }
        return outcome.isFallback ? fallback : outcome.value == .bool(true)
    }

    /// The variant `name`, found at `index`, chooses in `context`: the same answer as
    /// `resolve` gives with a string default, read as a string, without building a
    /// resolution.
    @inline(__always)
    func chosenVariant<C: EvaluationInput>(_ name: String, _ index: Int?, _ context: C, default fallback: String) -> String {
        if OverrideScopes.everEntered, let r = override(name, index, .string(fallback), nil) { return r.value.stringValue ?? fallback }
        guard let i = index else { return fallback }
        if checksContextsStrictly, context.problem(for: self) != nil { return fallback }
        let value = program.withDeclaration(i) { d -> Value? in
            guard d.kind == .variant else { return nil }
            let outcome = context.withFrame(self) { d.resolve($0) }
            return outcome.isFallback ? nil : outcome.value
        }
        guard case .string(let chosen)? = value else { return fallback }
        return chosen
    }

    /// Every flag, variant and value (not segments), keyed by name, each by the one path.
    func resolveAll<C: EvaluationInput>(_ context: C, _ layers: EvaluationLayers?, _ each: (String, Resolution) -> Void = { _, _ in })
        -> [String: Resolution]
    {
        var out: [String: Resolution] = [:]
        for (i, d) in program.declarations.enumerated() where d.kind != .segment {
            let r = resolve(d.name, i, context, expecting: nil, default: nil, layers)
            out[d.name] = r
            each(d.name, r)
        }
        return out
    }

    /// A scoped override of `name`, else a local one, typed by `fallback`; nil when
    /// neither overrides it.
    @inline(never)
    private func override(_ name: String, _ index: Int?, _ fallback: Value?, _ local: FlagOverrides?) -> Resolution? {
        let scoped = OverrideScopes.everEntered ? FlagOverrides.scoped?.values[name] : nil
        guard let value = scoped ?? local?[name] else { return nil }
        let r = Resolution.overridden(name, value, index.map { declarations[$0] }, default: fallback)
        return RuleSet.typed(r, name, fallback)
    }
}
