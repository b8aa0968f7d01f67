import FlagRules

/// The tests written next to the rules, and expressions evaluated as the REPL does.
extension RuleSet {
    /// The `test "…" { … }` declarations, in source order.
    package var tests: [TestCase] { checked.tests }

    /// Runs every test; each result lists the expectations that failed.
    public func runTests() -> [TestResult] {
        tests.map { test in
            var failures: [TestResult.Failure] = []
            for e in test.expectations {
                let actual = evaluate(e.subject, in: test.context)
                if !e.isMet(by: actual), let explanation = explain(e.subject, in: test.context) {
                    failures.append(TestResult.Failure(expectation: e, actual: actual, explanation: explanation))
                }
            }
            return TestResult(test: test, failures: failures)
        }
    }
}

/// The outcome of one `test` declaration; `print(result)` shows it as `flags test` does.
public struct TestResult: Sendable, CustomStringConvertible {
    /// An expectation that did not hold, with what happened instead.
    public struct Failure: Sendable, CustomStringConvertible {
        /// The expectation.
        package let expectation: TestExpectation
        /// The actual resolution.
        public let actual: Resolution
        /// How the actual resolution came about.
        public let explanation: Explanation
        /// The line of the `expect`.
        public var line: Int { expectation.line }
        /// The expectation as written (`expect darkMode == true`).
        public var text: String { expectation.text }

        /// The expectation's line and text (`file:` before the line when given), what was
        /// expected, what came, and the explanation, each line indented.
        package func lines(file: String?) -> String {
            let e = expectation
            var expected = e.expected.description
            if actual.variant != nil, case .value(.string(let name)) = e.expected { expected = name }
            var out = "  \(file.map { "\($0):" } ?? "line ")\(e.line): \(e.text)\n"
            out += "    expected: \(e.negated ? "not " : "")\(expected)\n"
            out += "    actual:   \(actual.summary(name: e.subject))\n"
            for line in explanation.text.split(separator: "\n").dropFirst() {
                out += "    " + line + "\n"
            }
            return out
        }

        /// The failure over several lines: the expectation, expected, actual, explanation.
        public var description: String { lines(file: nil) }
    }

    /// `PASS line 12 "name"`, or `FAIL …` followed by each failure.
    public var description: String {
        let head = "\(passed ? "PASS" : "FAIL") line \(test.line) \(StringEscaping.quoted(test.name))"
        return failures.isEmpty ? head : head + "\n" + failures.map(\.description).joined().dropLast()
    }

    package let test: TestCase
    /// The test's title.
    public var name: String { test.name }
    /// The line of its `test` keyword.
    public var line: Int { test.line }
    /// Its failed expectations (empty when it passed).
    public let failures: [Failure]

    /// Whether every expectation held.
    public var passed: Bool { failures.isEmpty }
}

/// The result of evaluating an expression typed at a REPL.
package struct ExpressionResult: Sendable {
    /// The value; nil when it is unknown (an absent or mistyped attribute).
    package let value: Value?
    /// How it came about.
    package let trace: ExpressionTrace

    /// `true`, `42`, `"Howdy"`, or `unknown (country is absent)`.
    package var text: String {
        guard let value else { return "unknown" + (trace.note.map { " (\($0))" } ?? "") }
        return value.description
    }
}

extension RuleSet {
    /// Evaluates an expression written against this rule set's names (attributes,
    /// declarations, segments, `now`), as the REPL does. `rollout` needs an explicit salt
    /// here, since there is no declaration to take it from. Throws every diagnostic of an
    /// expression that does not parse or check.
    /// The expression is numbered as line `line` of `name` in diagnostics (the REPL counts
    /// the lines it has read).
    package func evaluate(
        expression text: String, in context: EvaluationContext, name: String = "<expression>",
        line: Int = 1
    ) throws(RuleSetError) -> ExpressionResult {
        // Blank lines before the expression give its tokens the line it was read on.
        let source = SourceText(String(repeating: "\n", count: max(0, min(line, 1_000_000) - 1)) + text, name: name)
        let (syntax, parseDiagnostics) = Parser.parseExpression(source)
        guard let syntax, !parseDiagnostics.contains(where: { $0.severity == .error }) else {
            throw .invalid(source: source, diagnostics: parseDiagnostics)
        }
        let (bound, diagnostics) = Checker.check(expression: syntax, in: checked.symbols)
        guard let bound else { throw .invalid(source: source, diagnostics: diagnostics) }
        let explainer = Explainer(checked: checked, source: source, fileSource: self.source, context: context)
        let (value, trace) = explainer.value(bound)
        return ExpressionResult(value: value, trace: trace)
    }
}
