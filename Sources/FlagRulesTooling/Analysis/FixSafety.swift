import FlagRules
import Foundation

/// Whether a fix keeps a file's meaning as far as the file can tell: the fixed text loads,
/// gives no warning the original did not, and fails no test that passed. `flags check
/// --fix` applies only the fixes that pass; the language server offers the others
/// disabled, with the reason.
package enum FixSafety {
    /// Why a fix was refused.
    package struct Refusal: Sendable, Hashable, CustomStringConvertible {
        /// One line: `test "ramp is at 5% on day one" (line 12) would fail`.
        package let reason: String
        package var description: String { reason }
    }

    /// The refusal of `fix` (of `diagnostic`) on `rules`, or nil when it is safe. Warnings
    /// are compared by code and message (an edit moves their places); lints run with
    /// `options` as of `today`.
    package static func refusal(
        of fix: Diagnostic.FixIt, for diagnostic: Diagnostic, in rules: RuleSet, options: LintOptions = LintOptions(),
        today: Date = Date()
    ) -> Refusal? {
        let (bytes, applied) = FixApplier.apply([fix], to: rules.source)
        guard applied == 1 else { return Refusal(reason: "its edits overlap") }
        let fixed: RuleSet
        do {
            fixed = try RuleSet(source: SourceText(bytes: bytes, name: rules.source.name), today: today)
        } catch {
            let first = error.errors.first.map { ": \($0.message)" } ?? ""
            return Refusal(reason: "the fixed file would not load\(first)")
        }
        var before: [String: Int] = [:]
        for d in rules.warnings + rules.lint(today: today, options) { before[key(d), default: 0] += 1 }
        before[key(diagnostic), default: 0] -= 1
        for d in fixed.warnings + fixed.lint(today: today, options) {
            before[key(d), default: 0] -= 1
            if before[key(d)]! < 0 { return Refusal(reason: "it would warn \(d.code): \(d.message)") }
        }
        let passed = Set(rules.runTests().filter(\.passed).map(\.test.name))
        if let broken = fixed.runTests().first(where: { !$0.passed && passed.contains($0.test.name) }) {
            return Refusal(reason: "test \(StringEscaping.quoted(broken.test.name)) (line \(broken.test.line)) would fail")
        }
        return nil
    }

    private static func key(_ d: Diagnostic) -> String { d.code + "\u{0}" + d.message }
}
