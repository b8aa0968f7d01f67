import FlagRules
import Foundation

/// A declaration that is done: what shows it, and the edit that removes it.
package struct StaleDeclaration: Sendable {
    /// One sign that the declaration is done.
    package struct Reason: Sendable, Hashable {
        /// `expired`, `disabled`, `constant`, `rollout-complete`, `rollout-zero`,
        /// `ramp-ended`, `unread`, `one-value` (served one value to everyone for days) or
        /// `unevaluated` (served nothing for days).
        package let code: String
        /// The sign in words, with its line where it has one.
        package let detail: String
    }
    /// A place that reads the declaration and must change when it goes.
    package struct Reader: Sendable, Hashable {
        /// `rules` (another declaration), `test` (an `expect` of the rules' own tests) or
        /// `code`.
        package let kind: String
        /// The reading declaration's name, the test's name, or the file.
        package let place: String
        package let line: Int
    }

    package let name: String
    package let kind: DeclarationKind
    /// The declaration's line, as `flags refs` and `flags list` give it (its attributes'
    /// line when it has any).
    package let line: Int
    /// Its lines in the rules file, attributes and doc comment included.
    package let startLine: Int
    package let endLine: Int
    package let reasons: [Reason]
    /// The value every context gets, when the rules show it.
    package let value: Value?
    package let readers: [Reader]

    /// The edit that removes it, in words: its lines, the reads to replace, and its tests'
    /// expectations to remove (else `flags test` fails on the name).
    package var fix: String {
        var out = "remove lines \(startLine)–\(endLine) ('\(kind.rawValue) \(name)')"
        let reads = readers.filter { $0.kind != "test" }, tests = readers.filter { $0.kind == "test" }
        if !reads.isEmpty {
            let what = value.map { "with \($0)" } ?? "with the value it should keep"
            out += "; replace its reads \(what): " + reads.map { "\($0.place):\($0.line)" }.joined(separator: ", ")
        }
        if !tests.isEmpty {
            // By test, in order: `test "a" (lines 61, 62)`.
            var byTest: [(name: String, lines: [Int])] = []
            for t in tests {
                if let k = byTest.firstIndex(where: { $0.name == t.place }) {
                    byTest[k].lines.append(t.line)
                } else {
                    byTest.append((t.place, [t.line]))
                }
            }
            out +=
                "; remove its tests' expectations: "
                + byTest.map {
                    "test \"\($0.name)\" (line\($0.lines.count == 1 ? "" : "s") \($0.lines.map(String.init).joined(separator: ", ")))"
                }
                .joined(separator: ", ")
        }
        return out
    }
}

extension RuleSet {
    /// The declarations that are done (segments aside): expired, `@disabled`, giving one
    /// value whatever the context, a rollout at 100% or 0%, a ramp that has ended, (when
    /// `code` is given) read by no code, or (when `served` is given and has counted for at
    /// least `days` days before `today`) served one value to everyone, or nothing, in those
    /// days; each with its readers, in the rules and in `code`.
    package func staleDeclarations(
        today: Date = Date(), code: [CodeReference]? = nil, served: ServedValues? = nil, days: Int = 30
    ) -> [StaleDeclaration] {
        let windowStart = today.addingTimeInterval(-Double(days) * 86_400)
        let servedLongEnough = served.map { $0.since <= windowStart } ?? false
        let declarations = checked.declarations
        // The readers of each declaration in the rules: the rule (or condition) reading it.
        var ruleReaders: [Int: [StaleDeclaration.Reader]] = [:]
        for d in declarations {
            var conditions: [(Bound, Int)] = []
            if let c = d.condition { conditions.append((c, d.range.start.line)) }
            for rule in d.rules { if let c = rule.condition { conditions.append((c, rule.line)) } }
            for (condition, line) in conditions {
                condition.forEach { b in
                    if case .declaration(let j) = b.kind {
                        let reader = StaleDeclaration.Reader(kind: "rules", place: d.name, line: line)
                        if !(ruleReaders[j]?.contains(reader) ?? false) { ruleReaders[j, default: []].append(reader) }
                    }
                }
            }
        }
        var testReaders: [String: [StaleDeclaration.Reader]] = [:]
        for test in checked.tests {
            for e in test.expectations { testReaders[e.subject, default: []].append(.init(kind: "test", place: test.name, line: e.line)) }
        }
        var codeReaders: [String: [StaleDeclaration.Reader]] = [:]
        for r in code ?? [] { codeReaders[r.name, default: []].append(.init(kind: "code", place: r.file, line: r.line)) }

        var out: [StaleDeclaration] = []
        for (i, d) in declarations.enumerated() where d.kind != .segment {
            var reasons: [StaleDeclaration.Reason] = []
            var value: Value?
            if let expires = d.expires, expires <= today {
                reasons.append(.init(code: "expired", detail: "expired on \(DateTime.format(expires).prefix(10))"))
            }
            if d.disabled {
                reasons.append(.init(code: "disabled", detail: "@disabled: \(d.disabledValue) for everyone"))
                value = d.disabledValue
            } else if d.rules.isEmpty && d.kind == .flag {
                reasons.append(.init(code: "constant", detail: "no rules: \(d.defaultValue) for everyone"))
                value = d.defaultValue
            } else if !d.rules.isEmpty, d.rules.allSatisfy({ gives($0, only: d.defaultValue) }) {
                reasons.append(.init(code: "constant", detail: "every rule gives the default: \(d.defaultValue) for everyone"))
                value = d.defaultValue
            }
            if !d.disabled {
                for rule in d.rules {
                    guard let condition = rule.condition else { continue }
                    condition.forEach { b in
                        switch b.kind {
                        case .compare(.less, let l, let r):
                            guard case .rollout(let unit, _) = l.kind, case .percent(let p) = r.kind else { return }
                            let unitText = source.text(of: unit.range)
                            if p >= 100_000 {
                                reasons.append(
                                    .init(
                                        code: "rollout-complete",
                                        detail: "line \(rule.line): rollout(\(unitText)) at 100%: write has(\(unitText))"))
                            } else if p <= 0 {
                                reasons.append(
                                    .init(
                                        code: "rollout-zero",
                                        detail: "line \(rule.line): rollout(\(unitText)) at 0%: the rule never matches"))
                            }
                        case .ramp(_, let to, _, let end) where to <= today:
                            reasons.append(
                                .init(
                                    code: "ramp-ended",
                                    detail:
                                        "line \(rule.line): the ramp ended on \(DateTime.format(to).prefix(10)) at \(String(format: "%g", end))%"
                                ))
                        default: break
                        }
                    }
                }
            }
            if let served, servedLongEnough {
                let recent = (served.lastServed[d.name] ?? [:]).filter { $0.value >= windowStart }.keys.sorted()
                let since = "since \(DateTime.format(windowStart).prefix(10)), by flags serve's metrics"
                if recent.isEmpty {
                    reasons.append(.init(code: "unevaluated", detail: "not evaluated in \(days) days (\(since))"))
                } else if recent.count == 1, let only = recent.first {
                    reasons.append(.init(code: "one-value", detail: "served \(only) to everyone for \(days) days (\(since))"))
                    if value == nil, let json = try? JSON.parse(bytes: Array(only.utf8)) { value = Value(jsonElement: json) }
                }
            }
            let readers = (ruleReaders[i] ?? []) + (codeReaders[d.name] ?? [])
            if code != nil, readers.isEmpty {
                reasons.append(.init(code: "unread", detail: "neither code nor another declaration reads it"))
            }
            guard !reasons.isEmpty else { continue }
            out.append(
                StaleDeclaration(
                    name: d.name, kind: d.kind, line: d.range.start.line, startLine: declarationStartLine(d), endLine: d.range.end.line,
                    reasons: reasons, value: value, readers: readers + (testReaders[d.name] ?? [])))
        }
        return out
    }

    /// Whether every outcome of `rule` is `value`.
    private func gives(_ rule: CheckedRule, only value: Value) -> Bool {
        switch rule.outcome {
        case .value(let v): return Comparison.equal(v, value) == true
        case .fallback: return false
        case .split(let s):
            return s.weights.indices.allSatisfy {
                s.weights[$0] == 0 || (!s.isFallback($0) && Comparison.equal(s.outcomes[$0], value) == true)
            }
        }
    }

    /// The first line of a declaration with its doc comment and attributes above it.
    private func declarationStartLine(_ d: CheckedDeclaration) -> Int {
        let lines = String(decoding: source.bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        var line = d.range.start.line
        while line > 1 {
            let above = lines[line - 2].trimmingCharacters(in: .whitespaces)
            guard above.hasPrefix("///") || above.hasPrefix("@") else { break }
            line -= 1
        }
        return line
    }
}
