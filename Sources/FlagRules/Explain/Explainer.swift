import Foundation

/// Evaluates a checked program step by step, recording why each sub-expression has its
/// value. It is an evaluator of its own, over the checked declarations rather than the
/// compiled closures, sharing only the runtime's operations (comparison, three-valued
/// logic, bucketing): a differential test compares its resolutions with the closures' on
/// every operator table, every example and seeded random programs. It is slower: it is
/// for `--explain`, test failures and the REPL, not for hot paths.
package struct Explainer {
    let checked: CheckedProgram
    /// The source the traced expressions were written in.
    var source: SourceText
    /// The rule set's file (segments' conditions are written there).
    let fileSource: SourceText
    /// The context, read by name with the bytes-wise equality of every string.
    let values: EvaluationContext
    /// The resolutions of declarations and the truths of segments read as operands,
    /// worked out once each.
    package let memo = Memo()
    /// The list element an `any(…)` or `all(…)` test is being tried on.
    var element: Value?

    package final class Memo {
        var resolutions: [Int: Resolution] = [:]
        var segments: [Int: Truth] = [:]
        /// The explanations of the declarations read as operands, in the order worked out
        /// (what test coverage counts as reached).
        package var operands: [(index: Int, explanation: Explanation)] = []
    }

    package init(checked: CheckedProgram, source: SourceText, fileSource: SourceText? = nil, context: EvaluationContext) {
        self.checked = checked
        self.source = source
        self.fileSource = fileSource ?? source
        self.values = context
    }
    /// How many levels of segments to expand inside a trace.
    var segmentDepth = 0

    /// An expression's text as written; one written over several lines (a list of blocks
    /// with a comment each) is shown on one line, without its comments.
    func text(_ range: SourceRange) -> String {
        let written = source.text(of: range)
        guard written.contains(where: { $0 == "\n" || $0 == "\r" }) else { return written }
        return Explainer.oneLine(written)
    }

    /// `written`'s tokens on one line: comments and line breaks dropped, single spaces
    /// between tokens, none inside brackets or before a comma.
    package static func oneLine(_ written: String) -> String {
        var out = ""
        var previous: TokenKind?
        let lexer = Lexer(SourceText(written, name: ""))
        for token in lexer.tokens {
            switch token.kind {
            case .newline, .endOfFile: continue
            default: break
            }
            let tight: Bool
            switch (previous, token.kind) {
            case (nil, _): tight = true
            case (.punctuation(.leftBracket)?, _), (.punctuation(.leftParen)?, _): tight = true
            case (_, .punctuation(.rightBracket)), (_, .punctuation(.rightParen)), (_, .punctuation(.comma)): tight = true
            case (.identifier?, .punctuation(.leftParen)): tight = true
            default: tight = false
            }
            out += (tight ? "" : " ") + lexer.text(of: token)
            previous = token.kind
        }
        return out
    }

    /// The resolution of declaration `index`, worked out by this evaluator (once).
    func resolve(_ index: Int) -> Resolution {
        if let known = memo.resolutions[index] { return known }
        var inner = self
        inner.source = fileSource
        inner.segmentDepth = 3  // no segment traces are kept
        let explanation = inner.explain(index)
        memo.resolutions[index] = explanation.resolution
        memo.operands.append((index, explanation))
        return explanation.resolution
    }

    package func explain(_ index: Int) -> Explanation {
        let d = checked.declarations[index]
        let isVariant = d.kind == .variant
        func resolution(_ value: Value, _ reason: Resolution.Reason, _ rule: CheckedRule? = nil) -> Resolution {
            Resolution(value: value, variant: isVariant ? value.stringValue : nil, reason: reason, rule: rule?.index, line: rule?.line)
        }
        if let condition = d.condition {
            let (truth, trace) = self.truth(condition)
            let r = truth == .yes ? resolution(.bool(true), .targetingMatch) : resolution(.bool(false), .default)
            return Explanation(name: d.name, resolution: r, rules: [], condition: trace, summary: "")
        }
        if d.disabled {
            return Explanation(
                name: d.name, resolution: resolution(d.disabledValue, .disabled), rules: [], condition: nil,
                summary: d.kind == .flag
                    ? "@disabled: off, whatever the default and the rules say"
                    : "@disabled: the default, whatever the rules say")
        }
        if d.rules.isEmpty {
            return Explanation(
                name: d.name, resolution: resolution(d.defaultValue, .static), rules: [], condition: nil,
                summary: "no rules: the default")
        }
        var traces: [RuleTrace] = []
        var decided: Resolution?
        for rule in d.rules {
            let ruleText = text(rule.range)
            var condition: ExpressionTrace?
            if let c = rule.condition {
                let (t, trace) = truth(c)
                condition = trace
                if t != .yes {
                    traces.append(
                        RuleTrace(index: rule.index, line: rule.line, text: ruleText, condition: trace, split: nil, matched: false))
                    continue
                }
            }
            switch rule.outcome {
            case .value(let v):
                traces.append(
                    RuleTrace(index: rule.index, line: rule.line, text: ruleText, condition: condition, split: nil, matched: true))
                decided = resolution(v, .targetingMatch, rule)
            case .fallback:
                traces.append(
                    RuleTrace(index: rule.index, line: rule.line, text: ruleText, condition: condition, split: nil, matched: true))
                decided = Resolution(value: d.defaultValue, reason: .default, rule: rule.index, line: rule.line, isFallback: true)
            case .split(let s):
                let (choice, trace) = split(s, variants: isVariant)
                traces.append(
                    RuleTrace(
                        index: rule.index, line: rule.line, text: ruleText, condition: condition, split: trace,
                        matched: choice != nil))
                decided = choice.map {
                    s.isFallback($0)
                        ? Resolution(value: d.defaultValue, reason: .split, rule: rule.index, line: rule.line, isFallback: true)
                        : resolution(s.outcomes[$0], .split, rule)
                }
            }
            if decided != nil { break }
        }
        return Explanation(
            name: d.name, resolution: decided ?? resolution(d.defaultValue, .default), rules: traces, condition: nil,
            summary: decided?.isFallback == true
                ? "fallback: the caller's default" : decided != nil ? "" : "no rule matched: the default")
    }

    /// Where a split put declaration `i`'s unit, for a reader of it (a layer read by its
    /// experiments): `target 52,345 of 100,000, the slice 40%–80%`.
    func slice(of i: Int, _ r: Resolution) -> String? {
        guard let ruleIndex = r.rule, let rule = checked.declarations[i].rules.first(where: { $0.index == ruleIndex }),
            case .split(let s) = rule.outcome,
            let trace = memo.operands.last(where: { $0.index == i })?.explanation.rules.last(where: { $0.index == ruleIndex })?.split,
            let target = trace.target, !r.isFallback,
            let chosen = s.outcomes.indices.first(where: { !s.isFallback($0) && s.outcomes[$0] == r.value })
        else { return nil }
        let total = Double(s.weights.reduce(0, +))
        let low = Double(s.weights[..<chosen].reduce(0, +)) / total * 100
        let high = low + Double(s.weights[chosen]) / total * 100
        return
            "target \(Int.grouped(target)) of \(Int.grouped(Int(total))), the slice \(Value.format(low))%–\(Value.format(high))%"
    }

    /// The entry a split chooses (nil: none, as for an unknown unit) and its trace.
    func split(_ s: CheckedSplit, variants: Bool) -> (Int?, SplitTrace) {
        let total = s.weights.reduce(0, +)
        let (unit, unitTrace) = value(s.unit)
        // flagd's `cat` writes a missing unit as `null`, and buckets it.
        let missing: BucketUnit? = s.scheme == .flagdCat ? .string("null") : nil
        guard let bucketUnit = unit.flatMap({ BucketUnit($0, scheme: s.scheme) }) ?? missing else {
            return (
                nil,
                SplitTrace(
                    unit: nil, key: nil, target: nil, total: total, choice: nil,
                    note: "no choice: " + (unitTrace.note ?? "\(unitTrace.text) is unknown"))
            )
        }
        let unitText = Explainer.unitText(bucketUnit)
        if s.scheme != .unleash {
            let rollout = VendorRollout(salt: s.salt, scheme: s.scheme)
            let choice = rollout.choice(bucketUnit, VendorSplitWeights(s.weights))
            let shown = choice.map { shownEntry(s, $0, variants: variants) }
            let at = rollout.percent(bucketUnit).map { Value.format($0) + "%" } ?? "left out"
            return (
                choice,
                SplitTrace(
                    unit: unitText, key: nil, target: nil, total: total, choice: shown,
                    note: "\(s.scheme.rawValue): \(rollout.key(bucketUnit)) at \(at) → \(shown ?? "none")")
            )
        }
        let (target, chosen) = Bucketing.split(BucketKeyPrefix(salt: s.salt), bucketUnit, weights: s.weights, total: total)
        return (
            chosen,
            SplitTrace(
                unit: unitText, key: s.salt + ":" + unitText, target: target, total: total,
                choice: chosen.map { shownEntry(s, $0, variants: variants) }, note: nil)
        )
    }

    /// Entry `k` of a split as a trace shows it: a variant's name, a value, or `fallback`.
    func shownEntry(_ s: CheckedSplit, _ k: Int, variants: Bool) -> String {
        if s.isFallback(k) { return "fallback" }
        return variants ? (s.outcomes[k].stringValue ?? "") : Explainer.show(s.outcomes[k])
    }

    static func unitText(_ u: BucketUnit) -> String {
        switch u {
        case .string(let s): return s
        case .int(let i): return String(i)
        case .value(let v): return v.description
        }
    }

    static func show(_ v: Value) -> String {
        if case .string(let s) = v { return StringEscaping.quoted(s) }
        return v.description
    }

    static func show(_ t: Truth) -> String {
        switch t {
        case .yes: return "true"
        case .no: return "false"
        case .unknown: return "unknown"
        }
    }

    /// Why the unknown ones among `traces` are unknown: every absent attribute named once
    /// (`country and plan are absent`), then any other reason, a segment's taken from inside
    /// it.
    static func why(_ traces: [ExpressionTrace]) -> String? {
        var absent: [String] = []
        var other: [String] = []
        func collect(_ traces: [ExpressionTrace]) {
            for trace in traces where trace.result == "unknown" || trace.result == "absent" {
                guard let note = trace.note, !note.hasPrefix("segment") else {
                    collect(trace.children)
                    continue
                }
                if note.hasSuffix(" is absent") {
                    let name = String(note.dropLast(" is absent".count))
                    if !absent.contains(name) { absent.append(name) }
                } else if let names = absentNames(note) {
                    for name in names where !absent.contains(name) { absent.append(name) }
                } else if !other.contains(note) {
                    other.append(note)
                }
            }
        }
        collect(traces)
        var parts: [String] = []
        if !absent.isEmpty {
            let names = absent.count == 1 ? absent[0] : absent.dropLast().joined(separator: ", ") + " and " + absent.last!
            parts.append(names + (absent.count == 1 ? " is absent" : " are absent"))
        }
        parts += other
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }

    /// The names of a note `a and b are absent` (or `a, b and c are absent`).
    static func absentNames(_ note: String) -> [String]? {
        guard note.hasSuffix(" are absent") else { return nil }
        let list = note.dropLast(" are absent".count)
        return list.components(separatedBy: " and ").flatMap { $0.components(separatedBy: ", ") }
    }

    // MARK: Truth

    func truth(_ b: Bound) -> (Truth, ExpressionTrace) {
        let t = text(b.range)
        func make(_ truth: Truth, _ children: [ExpressionTrace], note: String? = nil) -> (Truth, ExpressionTrace) {
            let note = note ?? (truth == .unknown ? Explainer.why(children) : nil)
            return (
                truth, ExpressionTrace(text: t, result: Explainer.show(truth), note: note, children: children.filter { !$0.isConstant })
            )
        }
        switch b.kind {
        case .constant(let v):
            return make(v.boolValue.map(Truth.init) ?? .unknown, [])
        case .not(let x):
            let (truth, trace) = self.truth(x)
            return make(truth.negated, [trace])
        case .and(let xs), .or(let xs):
            let isAnd: Bool
            if case .and = b.kind { isAnd = true } else { isAnd = false }
            var result: Truth = isAnd ? .yes : .no
            var traces: [ExpressionTrace] = []
            for x in xs {
                let (truth, trace) = self.truth(x)
                traces.append(trace)
                result = isAnd ? Truth.and(result, truth) : Truth.or(result, truth)
                if result == (isAnd ? .no : .yes) { return make(result, traces) }  // decided
            }
            return make(result, traces)
        case .has(let name, _):
            let (found, why) = read(name)
            return make(Truth(found != nil), [], note: found != nil ? "\(name) is present" : why)
        case .compare(let op, let l, let r):
            if case .rollout = l.kind, let th = r.rolloutThreshold {
                let (v, trace) = value(l)
                guard case .double? = v else { return make(.unknown, [trace]) }
                let bucket = rolloutBucket(l)
                return make(Truth(Bucketing.rolloutHolds(op, bucket: bucket, threshold: th)), [trace])
            }
            if case .rollout = r.kind, let th = l.rolloutThreshold {
                let (v, trace) = value(r)
                guard case .double? = v else { return make(.unknown, [trace]) }
                let bucket = rolloutBucket(r)
                return make(Truth(Bucketing.rolloutHolds(op.flipped, bucket: bucket, threshold: th)), [trace])
            }
            for (side, threshold, flip) in [(l, r.rolloutThreshold, false), (r, l.rolloutThreshold, true)] {
                guard case .vendorRollout(let unit, let salt, let scheme) = side.kind, let th = threshold else { continue }
                let (v, trace) = value(side)
                guard case .double? = v, case (let u?, _) = value(unit), let bu = BucketUnit(u) else { return make(.unknown, [trace]) }
                return make(VendorRollout(salt: salt, scheme: scheme).holds(bu, flip ? op.flipped : op, threshold: th), [trace])
            }
            let (a, lt) = value(l)
            let (c, rt) = value(r)
            guard let a, let c else { return make(.unknown, [lt, rt]) }
            if l.type == .ip || r.type == .ip {
                guard let eq = Comparison.addressEqual(a, c) else {
                    return make(.unknown, [lt, rt], note: "\(IPAddress(a) == nil ? a : c) is not an IP address")
                }
                return make(Truth(eq != (op == .notEqual)), [lt, rt])
            }
            if op == .equal || op == .notEqual {
                guard let eq = Comparison.equal(a, c) else { return make(.unknown, [lt, rt], note: Explainer.incomparable(a, c)) }
                return make(Truth(eq != (op == .notEqual)), [lt, rt])
            }
            guard let o = Comparison.order(a, c) else { return make(.unknown, [lt, rt], note: Explainer.incomparable(a, c)) }
            return make(Truth.comparison(op, order: o), [lt, rt])
        case .member(let x, let list, let negated):
            let (v, trace) = value(x)
            guard let v else { return make(.unknown, [trace]) }
            guard let found = MemberTest(list).contains(v) else {
                return make(.unknown, [trace], note: "\(v) (\(v.typeName)) does not compare with the list")
            }
            return make(Truth(found != negated), [trace])
        case .text(.contains, let l, let r) where l.type.isList || l.type.isDynamic:
            let (a, lt) = value(l)
            let (c, rt) = value(r)
            guard let a, let c else { return make(.unknown, [lt, rt]) }
            let truth = Comparison.contains(a, c)
            guard case .list = a else {
                let why: String? =
                    truth != .unknown
                    ? nil
                    : a.stringValue != nil
                        ? "a string contains strings, not \(c.typeName)s" : "'contains' needs a string or a list on the left"
                return make(truth, [lt, rt], note: why)
            }
            guard ListOperations.elements(a) != nil else { return make(.unknown, [lt, rt], note: Explainer.notAList(a)) }
            let note: String
            switch truth {
            case .yes: note = "\(Explainer.show(c)) is an element"
            case .no: note = "\(Explainer.show(c)) is not an element"
            case .unknown: note = "\(c) (\(c.typeName)) does not compare with the elements"
            }
            return make(truth, [lt, rt], note: note)
        case .containsSet(let x, let list, let all):
            let (v, trace) = value(x)
            guard let v else { return make(.unknown, [trace]) }
            guard let elements = ListOperations.elements(v) else { return make(.unknown, [trace], note: Explainer.notAList(v)) }
            let set = LiteralIndex(list)
            guard let holds = ListOperations.containsSet(elements, set, all: all) else {
                return make(.unknown, [trace], note: "an element does not compare with the listed values")
            }
            // Each element's test, and for `all` the literals not found.
            let found = elements.filter { set.index(of: $0) ?? nil != nil }
            var parts: [String] = []
            if all {
                let present = LiteralIndex(elements)
                var seen = Set<MemberKey>()
                let missing = list.filter { seen.insert(MemberKey($0)).inserted && (present.index(of: $0) ?? nil) == nil }
                parts.append(
                    missing.isEmpty ? "every listed value is present" : "missing " + missing.map(Explainer.show).joined(separator: ", "))
            } else {
                parts.append(
                    found.isEmpty
                        ? (elements.isEmpty ? "the list is empty" : "no element is listed")
                        : "listed: " + found.map(Explainer.show).joined(separator: ", "))
            }
            return make(Truth(holds), [trace], note: parts.joined(separator: "; "))
        case .network(let x, let set, let negated):
            let (v, trace) = value(x)
            guard let v else { return make(.unknown, [trace]) }
            guard let address = IPAddress(v) else {
                return make(.unknown, [trace], note: "\(v) is not an IP address")
            }
            let inside = set.contains(address)
            return make(
                Truth(inside != negated), [trace],
                note: "\(address.text) lies in \(inside ? "a listed block" : "no listed block")")
        case .text(let op, let l, let r):
            let (a, lt) = value(l)
            let (c, rt) = value(r)
            guard case .string(let x)? = a, case .string(let y)? = c else {
                let note = a == nil || c == nil ? Explainer.why([lt, rt]) : "'\(op.rawValue)' needs strings"
                return make(.unknown, [lt, rt], note: note)
            }
            let holds: Bool
            switch op {
            case .contains: holds = Comparison.contains(x, y)
            case .startsWith: holds = Comparison.hasPrefix(x, y)
            default: holds = Comparison.hasSuffix(x, y)
            }
            return make(Truth(holds), [lt, rt])
        case .matches(let x, let pattern):
            let (v, trace) = value(x)
            guard case .string(let s)? = v else {
                return make(.unknown, [trace], note: v == nil ? trace.note : "\(v!) is not a string")
            }
            return make(Truth(pattern.matches(s)), [trace])
        case .declaration(let i):
            let d = checked.declarations[i]
            if let condition = d.condition {
                var inner = self
                inner.segmentDepth += 1
                inner.source = fileSource
                if segmentDepth < 3 {
                    let (truth, trace) = inner.truth(condition)
                    let why = truth == .unknown ? Explainer.why([trace]).map { "segment: " + $0 } : nil
                    return make(truth, [trace], note: why ?? "segment")
                }
                if let known = memo.segments[i] { return make(known, [], note: "segment") }
                let (truth, _) = inner.truth(condition)
                memo.segments[i] = truth
                return make(truth, [], note: "segment")
            }
            let (v, trace) = value(b)
            guard case .bool(let bv)? = v else { return make(.unknown, [], note: trace.note) }
            return (Truth(bv), trace)
        case .quantified(let x, let test, let all):
            let (v, trace) = value(x)
            guard let v else { return make(.unknown, [trace]) }
            guard let elements = ListOperations.elements(v) else { return make(.unknown, [trace], note: Explainer.notAList(v)) }
            // The test on each element in turn, as evaluation tries them.
            let decisive: Truth = all ? .no : .yes
            var unknown = false
            for e in elements {
                var inner = self
                inner.element = e
                let (truth, _) = inner.truth(test)
                if truth == decisive {
                    return make(decisive, [trace], note: "\(all ? "fails" : "passes") for \(Explainer.show(e))")
                }
                if truth == .unknown { unknown = true }
            }
            let note =
                elements.isEmpty
                ? "the list is empty"
                : unknown ? "unknown for an element" : all ? "passes for every element" : "passes for no element"
            return make(unknown ? .unknown : decisive.negated, [trace], note: note)
        case .attribute, .now, .coalesce, .percent, .rollout, .vendorRollout, .count, .lower, .convert, .ramp, .element:
            let (v, trace) = value(b)
            guard case .bool(let bv)? = v else {
                if v == nil { return (.unknown, trace) }
                return make(.unknown, [trace], note: "\(v!) is not a bool")
            }
            return (Truth(bv), trace)
        }
    }

    func rolloutBucket(_ b: Bound) -> Int {
        guard case .rollout(let unit, let salt) = b.kind, case (let u?, _) = value(unit), let bu = BucketUnit(u) else { return 0 }
        return Bucketing.bucket(hash: BucketKeyPrefix(salt: salt).hash(bu, split: false))
    }

    static func incomparable(_ a: Value, _ b: Value) -> String {
        "\(a) (\(a.typeName)) does not compare with \(b) (\(b.typeName))"
    }
}

extension ExpressionTrace {
    /// A literal: left out of its parent's operands.
    var isConstant: Bool { children.isEmpty && note == nil && text == result }
}
