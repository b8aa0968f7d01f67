import FlagRules

extension Lint {
    /// FR113: a test that asserts nothing new — its context and every expectation are an
    /// earlier test's — or an expectation a test already makes: it passes or fails with
    /// the other, and reads as if something more were checked.
    static let redundantTest = Lint(
        code: "FR113", name: "redundant-test", summary: "a test or expectation that asserts nothing new"
    ) { input in
        struct Assertion: Hashable {
            let subject: String
            let expected: TestExpectation.Expected
            let negated: Bool
        }
        func assertion(_ e: TestExpectation) -> Assertion {
            Assertion(subject: e.subject, expected: e.expected, negated: e.negated)
        }
        var out: [Diagnostic] = []
        var earlier: [(test: TestCase, asserts: Set<Assertion>)] = []
        for test in input.checked.tests {
            var seen: [Assertion: Int] = [:]
            for e in test.expectations {
                let a = assertion(e)
                if let line = seen[a] {
                    out.append(
                        .warning(
                            "FR113", "this expectation repeats line \(line) of the same test", at: e.range,
                            help: "remove it, or expect something else",
                            fixIts: [Diagnostic.deletingLines(of: e.range, in: input.source, message: "remove the repeated expectation")]
                                .compactMap { $0 }))
                }
                seen[a] = seen[a] ?? e.line
            }
            let asserts = Set(seen.keys)
            if !asserts.isEmpty,
                let covering = earlier.first(where: { $0.test.context == test.context && asserts.isSubset(of: $0.asserts) })
            {
                out.append(
                    .warning(
                        "FR113",
                        "test \"\(test.name)\" asserts nothing that test \"\(covering.test.name)\" (line \(covering.test.line)) does not: "
                            + "the same context, and expectations it makes too", at: test.range,
                        help: "remove it, or give it a context or an expectation of its own"))
            }
            earlier.append((test, asserts))
        }
        return out
    }
}
