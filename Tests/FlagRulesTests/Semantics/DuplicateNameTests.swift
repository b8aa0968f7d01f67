import Foundation
import Testing

@testable import FlagRules

/// A name declared twice is an error whatever its length, its kind, and however many
/// declarations the file has (the checker's table is a plain dictionary).
@Suite struct DuplicateNameTests {
    @Test(arguments: [1, 7, 8, 15, 16, 17, 40, 300])
    func aNameOfAnyLengthDeclaredTwiceIsAnError(_ length: Int) {
        let name = "f" + String(repeating: "x", count: length - 1)
        for others in [0, 3, 12] {
            let filler = (0..<others).map { "flag other\($0) = false\n" }.joined()
            let source =
                filler + "flag \(name) = true\n" + filler.replacingOccurrences(of: "other", with: "more")
                + "value \(name): int = 3\n"
            do {
                _ = try RuleSet(source: source)
                Issue.record("a file declaring '\(name)' twice loaded (with \(others) others)")
            } catch {
                let messages = error.errors.map(\.message)
                #expect(messages == ["'\(name)' is declared twice"], "\(messages)")
                #expect(error.errors.first?.range.start.line == 2 * others + 2)
            }
        }
    }

    /// The issue's own case: `flags check` refused nothing, `evaluate` and `evaluateAll`
    /// disagreed.
    @Test func freeShippingThresholdTwice() throws {
        let source = "flag freeShippingThreshold = true\nflag freeShippingThreshold = false\n"
        #expect(throws: RuleSetError.self) { try RuleSet(source: source) }
    }

    /// A context attribute that is also a declaration, whatever its length.
    @Test func aLongAttributeNameThatIsAlsoADeclaration() {
        let source = "context { subscriptionTierName: string }\nflag subscriptionTierName = true\n"
        #expect(throws: RuleSetError.self) { try RuleSet(source: source) }
    }
}
