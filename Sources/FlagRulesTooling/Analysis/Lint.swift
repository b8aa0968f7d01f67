import FlagRules
import Foundation

/// One lint: a small check over a checked file that finds what the checker accepts but is
/// almost certainly a mistake (a rule that can never match, a rollout at 200%). Each has a
/// stable code (`FR1xx`), a name, a one-line summary and a warn / near-miss test pair in
/// `LintTests`; its longer description is in the catalog's *Lints* article.
///
/// To add one: a file in `Analysis/Lints/` with a `static let` of this type, listed in
/// `Lint.all`, and its pair of examples in `LintTests`.
package struct Lint: Sendable {
    /// The stable code, `FR` and three digits.
    package let code: String
    /// A short name, for the catalog.
    package let name: String
    /// What it finds, in one line.
    package let summary: String
    /// The warnings it reports on a file.
    let check: @Sendable (LintInput) -> [Diagnostic]

    /// Every lint, in code order.
    package static let all: [Lint] = [
        .rolloutOutOfRange, .rolloutBareNumber, .zeroWeight, .constantCondition, .unreachableRule, .unusedSegment,
        .unusedAttribute, .variantNeverProduced, .rampEnded, .rulesGiveTheDefault, .expiringSoon, .missingOwner,
        .redundantTest, .sharedSplitSalt,
    ]
}

/// What a lint reads: the checked program, its source, and every condition of the file,
/// gathered once for all the lints.
final class LintInput {
    let checked: CheckedProgram
    let source: SourceText
    /// The day the lints run on (a ramp whose window has passed).
    let today: Date
    /// What the caller asked for beyond the defaults.
    let options: LintOptions
    /// Every condition of the file: each rule's, each split's unit and each segment's.
    let conditions: [Bound]

    init(checked: CheckedProgram, source: SourceText, today: Date, options: LintOptions) {
        self.checked = checked
        self.source = source
        self.today = today
        self.options = options
        var conditions: [Bound] = []
        for d in checked.declarations {
            if let c = d.condition { conditions.append(c) }
            for rule in d.rules {
                if let c = rule.condition { conditions.append(c) }
                if case .split(let s) = rule.outcome { conditions.append(s.unit) }
            }
        }
        self.conditions = conditions
    }

    /// The text of `range` on one line, without comments (for comparing and showing).
    func text(_ range: SourceRange) -> String {
        let written = source.text(of: range)
        guard written.contains(where: { $0 == "\n" || $0 == "\r" || $0 == "#" }) else { return written }
        return Explainer.oneLine(written)
    }

    /// The positions of the declarations some expression or test reads.
    var declarationsRead: Set<Int> {
        var read = Set<Int>()
        for condition in conditions {
            condition.forEach { if case .declaration(let i) = $0.kind { read.insert(i) } }
        }
        for test in checked.tests {
            for e in test.expectations { if let i = checked.names.index(of: e.subject) { read.insert(i) } }
        }
        return read
    }
}

/// Runs the lints over a file and drops what its comments silence: `# flags:ignore FR104`
/// at the end of a warning's line, or alone on the line before it, silences that code
/// there (several codes separated by commas or spaces; none: every code), and
/// `# flags:ignore-file FR104` the code everywhere in the file. `# flags:require-owners`
/// turns on FR112 for the file, as `LintOptions.requiresOwners` does.
enum Analyzer {
    static func run(
        _ checked: CheckedProgram, source: SourceText, today: Date = Date(), options: LintOptions = LintOptions(), lints: [Lint] = Lint.all
    ) -> [Diagnostic] {
        // The comments are read only when one may speak to the lints.
        let needle = Array("flags:".utf8)
        let bytes = source.bytes
        let mentionsDirective =
            bytes.count >= needle.count
            && (0...(bytes.count - needle.count)).contains { i in
                bytes[i] == needle[0] && bytes[i..<(i + needle.count)].elementsEqual(needle)
            }
        let silenced = mentionsDirective ? Silenced(Lexer(source).comments, source: source) : Silenced([], source: source)
        var options = options
        if silenced.requiresOwners { options.requiresOwners = true }
        let input = LintInput(checked: checked, source: source, today: today, options: options)
        // Each lint's warnings, in the lints' order.
        let found = lints.map { $0.check(input) }
        var out: [Diagnostic] = []
        for d in found.joined() where !silenced.silences(d.code, line: d.range.start.line) { out.append(d) }
        return out.sorted { ($0.range.start.offset, $0.code) < ($1.range.start.offset, $1.code) }
    }

    /// The codes a file's comments silence, by line and for the whole file.
    struct Silenced {
        /// Codes silenced on a line (an empty set: every code).
        var lines: [Int: Set<String>] = [:]
        var file: Set<String> = []
        var wholeFile = false
        /// `# flags:require-owners`: the file asks for FR112.
        var requiresOwners = false

        init(_ comments: [Comment], source: SourceText) {
            for c in comments where !c.isDoc {
                // A comment alone on its line speaks for the next line; one after code, for its own.
                let alone = source.line(c.range.start.line).prefix { $0 != "#" }.allSatisfy { $0 == " " || $0 == "\t" }
                let text = c.text.trimmingCharacters(in: .whitespaces)
                if text == "flags:require-owners" { requiresOwners = true }
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

/// What a caller asks of the lints beyond the defaults.
public struct LintOptions: Sendable, Hashable {
    /// Warn of `@expires` dates this many days ahead or fewer (FR111); nil: off.
    public var expiringWithinDays: Int?
    /// Warn of flags, variants and values without `@owner` (FR112).
    public var requiresOwners: Bool

    /// The defaults: neither.
    public init(expiringWithinDays: Int? = nil, requiresOwners: Bool = false) {
        self.expiringWithinDays = expiringWithinDays
        self.requiresOwners = requiresOwners
    }
}

extension RuleSet {
    /// The lints' warnings on these rules (`flags check` reports them): rules that can
    /// never match, rollouts out of range, a rollout compared with a bare number, unused
    /// segments and attributes, and more, each with a stable code (`FR101`…) that a
    /// `# flags:ignore FR101` comment silences on its line. Worked out when asked: loading
    /// rules does not run them. `options` turns on the lints that need a setting.
    public func lint(_ options: LintOptions = LintOptions()) -> [Diagnostic] {
        Analyzer.run(checked, source: source, options: options)
    }

    /// The lints' warnings as of `today` (tests pin the day).
    package func lint(today: Date, _ options: LintOptions = LintOptions()) -> [Diagnostic] {
        Analyzer.run(checked, source: source, today: today, options: options)
    }
}
