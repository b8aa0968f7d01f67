import FlagRules
import Foundation

/// What a rules change does to the resolutions of a set of contexts: for every declaration
/// in both versions, how many contexts resolve differently and from what to what; the
/// declarations added and removed; and how the schema changed. `flags diff` prints it.
package struct ImpactReport: Sendable {
    /// Contexts that moved from one result to another.
    package struct Transition: Sendable, Equatable {
        /// The old result: a variant name, a value as written, or `error`.
        package let from: String
        /// The new result.
        package let to: String
        /// How many contexts moved.
        package let count: Int
    }

    /// One declaration present in both versions.
    package struct Change: Sendable {
        package let name: String
        package let kind: DeclarationKind
        /// The old kind, when the declaration changed kind (a flag became a variant).
        package let oldKind: DeclarationKind?
        /// How many contexts resolve to a different value (or variant).
        package let changed: Int
        /// The moves, the largest first.
        package let transitions: [Transition]
    }

    /// A declaration in one version only.
    package struct Declaration: Sendable, Equatable {
        package let name: String
        package let kind: DeclarationKind
    }

    /// A schema attribute added, removed or retyped.
    package struct SchemaChange: Sendable, Equatable {
        package let name: String
        /// nil: added.
        package let from: FlagType?
        /// nil: removed.
        package let to: FlagType?
    }

    /// How many contexts were evaluated.
    package let contexts: Int
    /// Every declaration in both versions (segments aside), in the new file's order.
    package let declarations: [Change]
    package let added: [Declaration]
    package let removed: [Declaration]
    package let schema: [SchemaChange]

    /// The share of contexts (0…1) whose resolution of `change` differs.
    package func share(_ change: Change) -> Double {
        contexts == 0 ? 0 : Double(change.changed) / Double(contexts)
    }

    /// The declarations whose share of changed contexts is above `percent`.
    package func exceeding(percent: Double) -> [Change] {
        declarations.filter { share($0) * 100 > percent }
    }
}

/// Measures a rules change on contexts (``ImpactReport``).
package enum Impact {
    /// Resolves every declaration of both rule sets against each context and counts the
    /// changes. Two resolutions differ when their values or variants do, or when one is an
    /// error and the other not; a change of deciding rule alone is not a change. A context
    /// without `now` is evaluated at `now` by both, so that a ramp moves no one between the
    /// two evaluations.
    package static func measure(
        from old: RuleSet, to new: RuleSet, contexts given: [EvaluationContext], now: Date = Date()
    ) -> ImpactReport {
        let contexts = given.map { $0["now"] == nil ? $0.merging(["now": .datetime(now)]) : $0 }
        let oldDeclarations = old.checked.declarations
        let newDeclarations = new.checked.declarations
        let oldByName = Dictionary(oldDeclarations.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        let newNames = Set(newDeclarations.map(\.name))
        var changes: [ImpactReport.Change] = []
        var added: [ImpactReport.Declaration] = []
        for d in newDeclarations {
            guard let before = oldByName[d.name] else {
                added.append(.init(name: d.name, kind: d.kind))
                continue
            }
            if d.kind == .segment && before.kind == .segment { continue }
            var moves: [Pair: Int] = [:]
            var changed = 0
            for context in contexts {
                let a = old.evaluate(d.name, in: context)
                let b = new.evaluate(d.name, in: context)
                if a.value == b.value, a.variant == b.variant, (a.reason == .error) == (b.reason == .error), a.isFallback == b.isFallback {
                    continue
                }
                changed += 1
                moves[Pair(from: label(a), to: label(b)), default: 0] += 1
            }
            let transitions = moves.map { ImpactReport.Transition(from: $0.key.from, to: $0.key.to, count: $0.value) }
                .sorted { ($1.count, $0.from, $0.to) < ($0.count, $1.from, $1.to) }
            changes.append(
                .init(
                    name: d.name, kind: d.kind, oldKind: before.kind == d.kind ? nil : before.kind, changed: changed,
                    transitions: transitions))
        }
        let removed = oldDeclarations.filter { !newNames.contains($0.name) }.map { ImpactReport.Declaration(name: $0.name, kind: $0.kind) }
        return ImpactReport(
            contexts: contexts.count, declarations: changes, added: added, removed: removed,
            schema: schemaChanges(from: old.schema, to: new.schema))
    }

    private struct Pair: Hashable {
        let from: String
        let to: String
    }

    /// A resolution as the report names it: the variant, the value as written, or `error`.
    static func label(_ r: Resolution) -> String {
        if r.reason == .error { return "error" }
        if r.isFallback { return "fallback" }
        return r.variant ?? r.value.description
    }

    /// The attributes added, removed and retyped, in the new schema's order (removed last).
    static func schemaChanges(from old: ContextSchema?, to new: ContextSchema?) -> [ImpactReport.SchemaChange] {
        let before = old?.attributes ?? []
        let after = new?.attributes ?? []
        var out: [ImpactReport.SchemaChange] = []
        for a in after {
            if let b = before.first(where: { $0.name == a.name }) {
                // An object whose fields changed is told by its fields.
                if b.type != a.type, b.type.fields == nil || a.type.fields == nil {
                    out.append(.init(name: a.name, from: b.type, to: a.type))
                }
            } else {
                out.append(.init(name: a.name, from: nil, to: a.type))
            }
        }
        for b in before where !after.contains(where: { $0.name == b.name }) {
            out.append(.init(name: b.name, from: b.type, to: nil))
        }
        return out
    }
}

extension ImpactReport {
    /// The report as `flags diff` prints it: each changed declaration with its moves, then
    /// the declarations added and removed, the schema changes and a count of the unchanged.
    ///
    ///     checkout: 12.4 % of 10,000 contexts change
    ///       control → oneStep  12.4 %
    package var text: String {
        var out = ""
        for c in declarations where c.changed > 0 || c.oldKind != nil {
            out += "\(c.name): \(ImpactReport.percent(share(c))) of \(Int.grouped(contexts)) contexts change"
            if let oldKind = c.oldKind { out += " (was a \(oldKind.rawValue), now a \(c.kind.rawValue))" }
            out += "\n"
            let width = c.transitions.map { $0.from.count + $0.to.count + 3 }.max() ?? 0
            for t in c.transitions {
                let move = "\(t.from) → \(t.to)"
                out += "  " + move + String(repeating: " ", count: max(0, width - move.count) + 2)
                out += ImpactReport.percent(Double(t.count) / Double(max(contexts, 1))) + "\n"
            }
        }
        for d in added { out += "added: \(d.kind.rawValue) \(d.name)\n" }
        for d in removed { out += "removed: \(d.kind.rawValue) \(d.name)\n" }
        for s in schema {
            switch (s.from, s.to) {
            case (nil, let to?): out += "schema: added \(s.name): \(to)\n"
            case (let from?, nil): out += "schema: removed \(s.name): \(from)\n"
            case (let from?, let to?): out += "schema: \(s.name): \(from) → \(to)\n"
            case (nil, nil): break
            }
        }
        let unchanged = declarations.filter { $0.changed == 0 && $0.oldKind == nil }.count
        if unchanged > 0 || out.isEmpty {
            out += "\(unchanged) declaration\(unchanged == 1 ? "" : "s") unchanged over \(Int.grouped(contexts)) contexts\n"
        }
        return out
    }

    /// The report as JSON (documented in the catalog's *The flags command*).
    package var json: JSON {
        func transitions(_ c: Change) -> JSON {
            .array(
                c.transitions.map {
                    .object([
                        ("from", .string($0.from)), ("to", .string($0.to)), ("count", .int($0.count)),
                        ("share", .double(contexts == 0 ? 0 : Double($0.count) / Double(contexts))),
                    ])
                })
        }
        let changes: [JSON] = declarations.map { c in
            var m: [(String, JSON)] = [("name", .string(c.name)), ("kind", .string(c.kind.rawValue))]
            if let oldKind = c.oldKind { m.append(("oldKind", .string(oldKind.rawValue))) }
            m += [("changed", .int(c.changed)), ("share", .double(share(c))), ("transitions", transitions(c))]
            return .object(m)
        }
        func named(_ list: [Declaration]) -> JSON {
            .array(list.map { .object([("name", .string($0.name)), ("kind", .string($0.kind.rawValue))]) })
        }
        let schemaChanges: [JSON] = schema.map { s in
            var m: [(String, JSON)] = [("name", .string(s.name))]
            m.append(("from", s.from.map { .string($0.description) } ?? .null))
            m.append(("to", s.to.map { .string($0.description) } ?? .null))
            return .object(m)
        }
        return .object([
            ("contexts", .int(contexts)), ("declarations", .array(changes)), ("added", named(added)),
            ("removed", named(removed)), ("schema", .array(schemaChanges)),
        ])
    }

    /// `12.4 %`; a share too small to show at one decimal is `<0.1 %`, never `0.0 %`.
    package static func percent(_ share: Double) -> String {
        if share > 0 && share < 0.0005 { return "<0.1 %" }
        if share < 1 && share > 0.9995 { return ">99.9 %" }
        return String(format: "%.1f %%", share * 100)
    }
}
