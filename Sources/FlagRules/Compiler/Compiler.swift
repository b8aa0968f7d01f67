import Foundation

/// Turns a checked program into a tree of closures.
///
/// - each declaration becomes one closure: `@disabled`, no rules, then the rules as a chain
///   (each rule's closure calls the next), then the default;
/// - attribute reads go to a prepared context's slot (already checked against the schema)
///   or to the dictionary by name (checked on read: a mistyped value reads as absent);
/// - enum comparisons (`build in [debug, alpha]`, `build == beta`) test a bit of a mask by
///   case ordinal;
/// - literal lists become literal sets or hash sets, so `in` costs about the same for 3
///   literals or 100,000;
/// - patterns are compiled once; sub-expressions without attributes are folded;
/// - `rollout(…) < N%` compares integer buckets exactly, with the salt's hash precomputed.
struct Compiler {
    /// `and`/`or` chains of up to this many operands become nested closures; longer ones
    /// a loop over an array, so that no length of chain recurses deeply.
    static let foldedOperands = 8
    /// Bodies of up to this many rules become a chain of closures; longer ones a loop.
    static let chainedRules = 32
    let checked: CheckedProgram
    /// Each schema attribute's coercion, by slot, made once: every read of an enum
    /// attribute shares its table of cases (made per read, they were a tenth of a load).
    let coercions: [Coercion]

    init(checked: CheckedProgram, coercions: [Coercion]) {
        self.checked = checked
        self.coercions = coercions
    }

    static func compile(_ checked: CheckedProgram) -> Program {
        let coercions = checked.schema?.attributes.map { Coercion($0.type) } ?? []
        let compiler = Compiler(checked: checked, coercions: coercions)
        let declarations = checked.declarations.map(compiler.declaration)
        return Program(declarations: declarations, schema: checked.schema, coercions: coercions, names: checked.names)
    }

    /// How an attribute read is checked: the schema slot's coercion, or one for `type`
    /// when there is no slot.
    func coercion(_ type: FlagType, slot: Int?) -> Coercion {
        guard let slot, coercions.indices.contains(slot) else { return Coercion(type) }
        return coercions[slot]
    }

    func declaration(_ d: CheckedDeclaration) -> CompiledDeclaration {
        func resolution(_ value: Value, _ reason: Resolution.Reason, _ rule: CheckedRule? = nil) -> Outcome {
            Outcome(value, reason, rule: rule?.index ?? 0, line: rule?.line ?? 0)
        }
        if let condition = d.condition {
            let segment = self.condition(fold(condition))
            let yes = Outcome(.bool(true), .targetingMatch), no = Outcome(.bool(false), .default)
            return CompiledDeclaration(
                name: d.name, kind: d.kind, defaultValue: d.defaultValue,
                resolve: { f in segment(f) == .yes ? yes : no }, segment: segment,
                isOn: CompiledDeclaration.notAFlag)
        }
        let resolve: ResolveFunction
        // For a flag, the same chain answering only whether it is on (no outcome to build
        // and take apart), while every rule's outcome is a constant (not a split). Never
        // optional: a function kept in an optional is called through conversion thunks.
        var isOn = d.defaultValue.boolValue == true ? CompiledDeclaration.alwaysOn : CompiledDeclaration.alwaysOff
        var isOnIsTheChain = d.kind == .flag
        // What `isOn` answers whatever the context, while it does (the rules after this one
        // all give the default): a last rule with a condition then answers with no branch
        // on it, so a miss in the cache or an unpredictable answer does not stall the caller.
        var isOnConstant: Bool? = d.defaultValue.boolValue == true
        // Whether a `fallback` rule may decide.
        var fallsBack = false
        if d.disabled {
            let r = resolution(d.disabledValue, .disabled)
            resolve = { _ in r }
            isOn = CompiledDeclaration.alwaysOff
        } else if d.rules.isEmpty {
            let r = resolution(d.defaultValue, .static)
            resolve = { _ in r }
        } else if d.rules.count > Compiler.chainedRules {
            resolve = longRuleList(d, fallback: resolution(d.defaultValue, .default))
            isOnIsTheChain = false
            fallsBack = d.rules.contains {
                switch $0.outcome {
                case .fallback: true
                case .split(let s): !s.fallbacks.isEmpty
                case .value: false
                }
            }
        } else {
            let fallback = resolution(d.defaultValue, .default)
            var next: ResolveFunction = { _ in fallback }
            for rule in d.rules.reversed() {
                let rest = next
                var condition: ConditionFunction?
                if let c = rule.condition {
                    let folded = fold(c)
                    if case .constant(.bool(let b)) = folded.kind {
                        if !b { continue }  // can never match
                    } else {
                        condition = self.condition(folded)
                    }
                }
                switch rule.outcome {
                case .value(let v):
                    let matched = resolution(v, .targetingMatch, rule)
                    if let condition {
                        next = { f in condition(f) == .yes ? matched : rest(f) }
                    } else {
                        next = { _ in matched }
                    }
                    if isOnIsTheChain, case .bool(let on) = v {
                        let restOn = isOn
                        if let condition {
                            if let rest = isOnConstant {
                                // (A rule giving what the rest gives anyway changes nothing.)
                                if rest != on {
                                    if on {
                                        isOn = { f in condition(f) == .yes }
                                    } else {
                                        isOn = { f in condition(f) != .yes }
                                    }
                                    isOnConstant = nil
                                }
                            } else {
                                isOn = { f in condition(f) == .yes ? on : restOn(f) }
                            }
                        } else {
                            isOn = on ? CompiledDeclaration.alwaysOn : CompiledDeclaration.alwaysOff
                            isOnConstant = on
                        }
                    } else {
                        isOnIsTheChain = false
                    }
                case .fallback:
                    isOnIsTheChain = false
                    fallsBack = true
                    let matched = Outcome.fallback(d.defaultValue, rule: rule.index, line: rule.line)
                    if let condition {
                        next = { f in condition(f) == .yes ? matched : rest(f) }
                    } else {
                        next = { _ in matched }
                    }
                case .split(let s):
                    isOnIsTheChain = false
                    if !s.fallbacks.isEmpty { fallsBack = true }
                    let choose = split(s)
                    let outcomes = splitOutcomes(s, d, rule)
                    if let condition {
                        next = { f in
                            guard condition(f) == .yes, let i = choose(f) else { return rest(f) }
                            return outcomes[i]
                        }
                    } else {
                        next = { f in
                            guard let i = choose(f) else { return rest(f) }
                            return outcomes[i]
                        }
                    }
                }
            }
            resolve = next
        }
        if d.kind != .flag {
            isOn = CompiledDeclaration.notAFlag
        } else if !isOnIsTheChain {
            isOn = { f in resolve(f).value == .bool(true) }
        }
        return CompiledDeclaration(
            name: d.name, kind: d.kind, defaultValue: d.defaultValue, resolve: resolve, segment: nil,
            isOn: isOn, fallsBack: fallsBack && !d.disabled)
    }

    /// One rule of a long body: its condition (nil: always), and its outcome, a constant
    /// or a split's choice.
    struct LoopedRule: Sendable {
        let condition: ConditionFunction?
        let matched: Outcome?
        let split: IndexFunction?
        /// A split's outcome for each entry.
        let outcomes: [Outcome]
        let index: Int
        let line: Int
    }

    /// A body of more than `chainedRules` rules: tried in a loop over an array, not as a
    /// chain of closures (whose depth would grow with the rules).
    func longRuleList(_ d: CheckedDeclaration, fallback: Outcome) -> ResolveFunction {
        let rules = d.rules.map { rule in
            LoopedRule(
                condition: rule.condition.map { self.condition(fold($0)) },
                matched: {
                    switch rule.outcome {
                    case .value(let v): return Outcome(v, .targetingMatch, rule: rule.index, line: rule.line)
                    case .fallback: return Outcome.fallback(d.defaultValue, rule: rule.index, line: rule.line)
                    case .split: return nil
                    }
                }(),
                split: {
                    if case .split(let s) = rule.outcome { return split(s) }; return nil
                }(),
                outcomes: {
                    if case .split(let s) = rule.outcome { return splitOutcomes(s, d, rule) }; return []
                }(),
                index: rule.index, line: rule.line)
        }
        return { f in
            for rule in rules {
                if let condition = rule.condition, condition(f) != .yes { continue }
                if let matched = rule.matched { return matched }
                if let choose = rule.split, let i = choose(f) { return rule.outcomes[i] }
            }
            return fallback
        }
    }

    /// What each entry of split rule `rule` of `d` gives: its value, or the caller's default
    /// for a `fallback` entry (reason SPLIT: the unit's bucket put it there).
    func splitOutcomes(_ s: CheckedSplit, _ d: CheckedDeclaration, _ rule: CheckedRule) -> [Outcome] {
        s.outcomes.indices.map { k in
            s.isFallback(k)
                ? Outcome.fallback(d.defaultValue, rule: rule.index, line: rule.line, reason: .split)
                : Outcome(s.outcomes[k], .split, rule: rule.index, line: rule.line)
        }
    }

    /// The index of the entry a split chooses; nil when it chooses none (its unit is absent).
    func split(_ s: CheckedSplit) -> IndexFunction {
        if s.scheme != .unleash {
            let unit = bucketUnit(s.unit, scheme: s.scheme)
            let rollout = VendorRollout(salt: s.salt, scheme: s.scheme), weights = VendorSplitWeights(s.weights)
            // flagd's `cat` writes a missing unit as `null`, and buckets it.
            let missing: BucketUnit? = s.scheme == .flagdCat ? .string("null") : nil
            return { f in
                guard let u = unit(f) ?? missing else { return nil }
                return rollout.choice(u, weights)
            }
        }
        let prefix = BucketKeyPrefix(salt: s.salt)
        let weights = s.weights
        let total = weights.reduce(0, +)
        if case .attribute(let attribute, let slot?, let type) = s.unit.kind {
            // The common `split(attribute)`, reading the slot in place.
            let coercion = coercion(type, slot: slot)
            if let path = PathRead(attribute) { return splitOver(path, slot, coercion, prefix, weights, total) }
            return splitOver(NamedRead(attribute), slot, coercion, prefix, weights, total)
        }
        let unit = bucketUnit(s.unit)
        return { f in
            guard let u = unit(f) else { return nil }
            return Bucketing.split(prefix, u, weights: weights, total: total).choice
        }
    }

    /// `split(attribute)`, the attribute read in place: the same choice as
    /// `Bucketing.split` of its unit.
    private func splitOver<R: DictionaryRead>(
        _ read: R, _ slot: Int, _ coercion: Coercion, _ prefix: BucketKeyPrefix, _ weights: [Int], _ total: Int
    ) -> IndexFunction {
        { f in
            let hash: UInt32
            switch f.attribute(read, slot: slot, coercion) {
            case .string(let s)?: hash = prefix.splitHash(string: s)
            case .int(let i)?: hash = prefix.hash(.int(i), split: true)
            default: return nil
            }
            return Bucketing.split(hash: hash, weights: weights, total: total).choice
        }
    }

    /// A unit for `rollout`/`split`: strings, enum cases and variants by name, ints in decimal
    /// (and, for flagd's scheme, any value).
    func bucketUnit(_ b: Bound, scheme: BucketScheme = .unleash) -> @Sendable (Frame) -> BucketUnit? {
        let anyValue = scheme == .flagd || scheme == .flagdCat
        if case .attribute(let attribute, let slot?, let type) = b.kind {
            let coercion = coercion(type, slot: slot)
            if let path = PathRead(attribute) { return bucketUnit(path, slot, coercion, anyValue: anyValue) }
            return bucketUnit(NamedRead(attribute), slot, coercion, anyValue: anyValue)
        }
        let v = value(b)
        return { f in v(f).flatMap { BucketUnit($0, scheme: scheme) } }
    }

    private func bucketUnit<R: DictionaryRead>(
        _ read: R, _ slot: Int, _ coercion: Coercion, anyValue: Bool
    ) -> @Sendable (Frame) -> BucketUnit? {
        { f in
            switch f.attribute(read, slot: slot, coercion) {
            case .string(let s)?: return .string(s)
            case .int(let i)?: return .int(i)
            case let other?: return anyValue ? .value(other) : nil
            case nil: return nil
            }
        }
    }

    // MARK: Conditions

    func condition(_ b: Bound) -> ConditionFunction {
        switch b.kind {
        case .constant(let v):
            let t: Truth = v.boolValue.map(Truth.init) ?? .unknown
            return { _ in t }
        case .not(let x):
            let c = condition(x)
            return { f in c(f).negated }
        case .and(let xs):
            if xs.count > Compiler.foldedOperands {
                let cs = xs.map(condition)
                return { f in
                    var result = Truth.yes
                    for c in cs {
                        let t = c(f)
                        if t == .no { return .no }
                        if t == .unknown { result = .unknown }
                    }
                    return result
                }
            }
            // A right fold of binary closures for a few operands: Kleene `and` is
            // associative, and no array of closures (called through reabstraction thunks)
            // is walked per evaluation.
            var chain = condition(xs[xs.count - 1])
            for x in xs.dropLast().reversed() {
                let first = condition(x), rest = chain
                chain = { f in
                    let a = first(f)
                    if a == .no { return .no }
                    return Truth.and(a, rest(f))
                }
            }
            return chain
        case .or(let xs):
            if xs.count > Compiler.foldedOperands {
                let cs = xs.map(condition)
                return { f in
                    var result = Truth.no
                    for c in cs {
                        let t = c(f)
                        if t == .yes { return .yes }
                        if t == .unknown { result = .unknown }
                    }
                    return result
                }
            }
            var chain = condition(xs[xs.count - 1])
            for x in xs.dropLast().reversed() {
                let first = condition(x), rest = chain
                chain = { f in
                    let a = first(f)
                    if a == .yes { return .yes }
                    return Truth.or(a, rest(f))
                }
            }
            return chain
        case .has(let attribute, let slot):
            if let path = PathRead(attribute) { return has(path, slot) }
            return has(NamedRead(attribute), slot)
        case .compare(let op, let l, let r):
            return compare(op, l, r)
        case .member(let x, let values, let negated):
            return member(x, values, negated)
        case .text(.contains, let l, let r):
            // A substring of a string, or an element of a list: the left value decides.
            let lf = value(l), rf = value(r)
            if case .constant(let c) = r.kind {
                return { f in
                    guard let a = lf(f) else { return .unknown }
                    return Comparison.contains(a, c)
                }
            }
            return { f in
                guard let a = lf(f), let c = rf(f) else { return .unknown }
                return Comparison.contains(a, c)
            }
        case .containsSet(let x, let values, all: false) where !values.isEmpty && values.allSatisfy({ $0.stringValue != nil }):
            // `contains any` of strings, the common case: each string element looked up in
            // the literals' set until one is found; another scalar element is unknown there,
            // and a nested one makes the list unknown (as `ListOperations.elements`).
            let xf = value(x)
            let table = LiteralSet(values.compactMap(\.stringValue))
            return { f in
                guard case .list(let elements)? = xf(f) else { return .unknown }
                var found = false, other = false
                for e in elements {
                    switch e {
                    case .string(let s): if !found, table.contains(s) { found = true }
                    case .int, .double, .bool: other = true
                    default: return .unknown
                    }
                }
                return found ? .yes : other ? .unknown : .no
            }
        case .containsSet(let x, let values, let all):
            let xf = value(x)
            let set = LiteralIndex(values)
            return { f in
                guard let v = xf(f), let elements = ListOperations.elements(v),
                    let holds = ListOperations.containsSet(elements, set, all: all)
                else { return .unknown }
                return Truth(holds)
            }
        case .quantified(let x, let test, let all):
            // The test tried on each element in turn: Kleene `or` (`any`) or `and` (`all`)
            // of its answers, stopping at the first that decides.
            let xf = value(x), tf = elementTest(test)
            let decisive: Truth = all ? .no : .yes
            return { f in
                guard let v = xf(f), let elements = ListOperations.elements(v) else { return .unknown }
                var unknown = false
                for e in elements {
                    let t = tf(f, e)
                    if t == decisive { return decisive }
                    if t == .unknown { unknown = true }
                }
                return unknown ? .unknown : decisive.negated
            }
        case .network(let x, let set, let negated):
            let xf = addressValue(x)
            return { f in
                guard let v = xf(f), let address = IPAddress(v) else { return .unknown }
                return Truth(set.contains(address) != negated)
            }
        case .text(let op, let l, let r):
            let lf = value(l), rf = value(r)
            let test: @Sendable (String, String) -> Bool
            switch op {
            case .contains: test = Comparison.contains
            case .startsWith: test = Comparison.hasPrefix
            default: test = Comparison.hasSuffix
            }
            if case .constant(.string(let c)) = r.kind {
                return { f in
                    guard case .string(let a)? = lf(f) else { return .unknown }
                    return Truth(test(a, c))
                }
            }
            return { f in
                guard case .string(let a)? = lf(f), case .string(let c)? = rf(f) else { return .unknown }
                return Truth(test(a, c))
            }
        case .matches(let x, let pattern):
            let xf = value(x)
            return { f in
                guard case .string(let s)? = xf(f) else { return .unknown }
                return Truth(pattern.matches(s))
            }
        case .declaration(let i):
            return { f in
                f.withDeclaration(i) { d in
                    if let segment = d.segment { return segment(f) }
                    let outcome = d.resolve(f)
                    guard !outcome.isFallback, case .bool(let v) = outcome.value else { return .unknown }
                    return Truth(v)
                }
            }
        case .attribute, .now, .coalesce, .percent, .rollout, .vendorRollout, .count, .lower, .convert, .ramp, .element:
            let vf = value(b)
            return { f in
                guard case .bool(let v)? = vf(f) else { return .unknown }
                return Truth(v)
            }
        }
    }

    func compare(_ op: ComparisonOperator, _ l: Bound, _ r: Bound) -> ConditionFunction {
        // rollout(unit) OP N% compares integer buckets, never through floating point.
        if case .rollout(let unit, let salt) = l.kind, let t = r.rolloutThreshold {
            return rolloutCompare(op, unit, salt, t)
        }
        if case .rollout(let unit, let salt) = r.kind, let t = l.rolloutThreshold {
            return rolloutCompare(op.flipped, unit, salt, t)
        }
        // Another system's rollout compares as that system compares it.
        if case .vendorRollout(let unit, let salt, let scheme) = l.kind, let t = r.rolloutThreshold {
            return vendorRolloutCompare(op, unit, VendorRollout(salt: salt, scheme: scheme), t)
        }
        if case .vendorRollout(let unit, let salt, let scheme) = r.kind, let t = l.rolloutThreshold {
            return vendorRolloutCompare(op.flipped, unit, VendorRollout(salt: salt, scheme: scheme), t)
        }
        // Addresses compare as addresses, not spellings.
        if l.type == .ip || r.type == .ip {
            let lf = value(l), rf = value(r), negate = op == .notEqual
            return { f in
                guard let a = lf(f), let b = rf(f), let eq = Comparison.addressEqual(a, b) else { return .unknown }
                return Truth(eq != negate)
            }
        }
        // An enum attribute against a case: one ordinal comparison.
        if op == .equal || op == .notEqual, case .constant(.string(let c)) = r.kind, let test = enumTest(l, [c], negated: op == .notEqual) {
            return test
        }
        let lf = value(l)
        if op == .equal || op == .notEqual {
            let negate = op == .notEqual
            if case .constant(let c) = r.kind {
                return { f in
                    guard let a = lf(f), let eq = Comparison.equal(a, c) else { return .unknown }
                    return Truth(eq != negate)
                }
            }
            let rf = value(r)
            return { f in
                guard let a = lf(f), let b = rf(f), let eq = Comparison.equal(a, b) else { return .unknown }
                return Truth(eq != negate)
            }
        }
        if case .constant(let c) = r.kind {
            return { f in
                guard let a = lf(f), let o = Comparison.order(a, c) else { return .unknown }
                return Truth.comparison(op, order: o)
            }
        }
        let rf = value(r)
        return { f in
            guard let a = lf(f), let b = rf(f), let o = Comparison.order(a, b) else { return .unknown }
            return Truth.comparison(op, order: o)
        }
    }

    /// `has(attribute)`: from its slot, or read from the dictionary.
    private func has<R: DictionaryRead>(_ read: R, _ slot: Int?) -> ConditionFunction {
        guard let slot else { return { f in read.value(in: f) != nil ? .yes : .no } }
        return { f in f.isGiven(read, slot: slot) ? .yes : .no }
    }

}
