import Foundation

/// One lint: a small check over a checked file that finds what the checker accepts but is
/// almost certainly a mistake (a rule that can never match, a rollout at 200%). Each has a
/// stable code (`FR1xx`), a name, a one-line summary and a warn / near-miss test pair in
/// `LintTests`; its longer description is in the catalog's *Lints* article.
///
/// To add one: a file in `Analysis/Lints/` with a `static let` of this type, listed in
/// `Lint.all`, and its pair of examples in `LintTests`.
struct Lint: Sendable {
    /// The stable code, `FR` and three digits.
    let code: String
    /// A short name, for the catalog.
    let name: String
    /// What it finds, in one line.
    let summary: String
    /// The warnings it reports on a file.
    let check: @Sendable (LintInput) -> [Diagnostic]

    /// Every lint, in code order.
    static let all: [Lint] = [
        .rolloutOutOfRange, .rolloutBareNumber, .zeroWeight, .constantCondition, .unreachableRule, .unusedSegment,
        .unusedAttribute, .variantNeverProduced,
    ]
}

/// What a lint reads: the checked program, its syntax (for the places of what the
/// checked program does not keep: schema fields, variant names) and its source.
struct LintInput {
    let checked: CheckedProgram
    let file: FileSyntax
    let source: SourceText

    /// Every condition of the file with the declaration it is in: each rule's, each
    /// split's unit and each segment's.
    var conditions: [(declaration: CheckedDeclaration, condition: Bound)] {
        var out: [(CheckedDeclaration, Bound)] = []
        for d in checked.declarations {
            if let c = d.condition { out.append((d, c)) }
            for rule in d.rules {
                if let c = rule.condition { out.append((d, c)) }
                if case .split(let s) = rule.outcome { out.append((d, s.unit)) }
            }
        }
        return out
    }

    /// The text of `range` on one line, without comments (for comparing and showing).
    func text(_ range: SourceRange) -> String { Explainer.oneLine(source.text(of: range)) }

    /// The positions of the declarations some expression or test reads.
    var declarationsRead: Set<Int> {
        var read = Set<Int>()
        for (_, condition) in conditions {
            condition.forEach { if case .declaration(let i) = $0.kind { read.insert(i) } }
        }
        for test in checked.tests {
            for e in test.expectations { if let i = checked.names.index(of: e.subject) { read.insert(i) } }
        }
        return read
    }
}

extension Bound {
    /// Calls `visit` on this expression and every expression inside it, outermost first.
    func forEach(_ visit: (Bound) -> Void) {
        visit(self)
        switch kind {
        case .constant, .percent, .attribute, .declaration, .now, .has, .ramp: break
        case .not(let x), .matches(let x, _), .member(let x, _, _), .rollout(let x, _), .containsSet(let x, _, _), .count(let x),
            .lower(let x), .network(let x, _, _):
            x.forEach(visit)
        case .and(let xs), .or(let xs), .coalesce(let xs): for x in xs { x.forEach(visit) }
        case .compare(_, let x, let y), .text(_, let x, let y):
            x.forEach(visit)
            y.forEach(visit)
        }
    }
}

/// Runs the lints over a file and drops what its comments silence: `# flags:ignore FR104`
/// at the end of a warning's line, or alone on the line before it, silences that code
/// there (several codes separated by commas or spaces; none: every code), and
/// `# flags:ignore-file FR104` the code everywhere in the file.
enum Analyzer {
    static func run(_ checked: CheckedProgram, source: SourceText, lints: [Lint] = Lint.all) -> [Diagnostic] {
        let input = LintInput(checked: checked, file: Parser.parse(source).0, source: source)
        let silenced = Silenced(Lexer(source).comments, source: source)
        var out: [Diagnostic] = []
        for lint in lints {
            for d in lint.check(input) where !silenced.silences(d.code, line: d.range.start.line) { out.append(d) }
        }
        return out.sorted { ($0.range.start.offset, $0.code) < ($1.range.start.offset, $1.code) }
    }

    /// The codes a file's comments silence, by line and for the whole file.
    struct Silenced {
        /// Codes silenced on a line (an empty set: every code).
        var lines: [Int: Set<String>] = [:]
        var file: Set<String> = []
        var wholeFile = false

        init(_ comments: [Comment], source: SourceText) {
            for c in comments where !c.isDoc {
                // A comment alone on its line speaks for the next line; one after code, for its own.
                let alone = source.line(c.range.start.line).prefix { $0 != "#" }.allSatisfy { $0 == " " || $0 == "\t" }
                let text = c.text.trimmingCharacters(in: .whitespaces)
                for (directive, isFile) in [("flags:ignore-file", true), ("flags:ignore", false)] where text.hasPrefix(directive) {
                    let rest = text.dropFirst(directive.count)
                    guard rest.isEmpty || rest.first == " " || rest.first == "\t" else { continue }
                    let codes = Set(rest.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }).map(String.init))
                    if isFile {
                        if codes.isEmpty { wholeFile = true } else { file.formUnion(codes) }
                    } else {
                        let line = c.range.start.line + (alone ? 1 : 0)
                        lines[line, default: []].formUnion(codes)
                        if codes.isEmpty { lines[line] = [] }
                    }
                    break
                }
            }
        }

        func silences(_ code: String, line: Int) -> Bool {
            if wholeFile || file.contains(code) { return true }
            guard let codes = lines[line] else { return false }
            return codes.isEmpty || codes.contains(code)
        }
    }
}

extension RuleSet {
    /// The lints' warnings on these rules (`flags check` reports them): rules that can
    /// never match, rollouts out of range, a rollout compared with a bare number, unused
    /// segments and attributes, and more, each with a stable code (`FR101`…) that a
    /// `# flags:ignore FR101` comment silences on its line. Worked out when asked: loading
    /// rules does not run them.
    public func lint() -> [Diagnostic] {
        Analyzer.run(checked, source: source)
    }
}
