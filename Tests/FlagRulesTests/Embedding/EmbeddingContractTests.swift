import Foundation
import Testing

@testable import FlagRules

/// Every entry point answers an unknown or mistyped name with the caller's default and
/// reason `ERROR`; contexts refuse non-finite doubles; load failures say what failed.
@Suite struct EmbeddingContractTests {
    static let rules = try! RuleSet(
        source: """
            context { score: double; age: int }
            flag on = true
            variant checkout [control, oneStep] = oneStep
            value retries: int = 3
            value ratio: double = 0.5 { 1.5 when score > 0.5 }
            """)

    @Test func unknownNamesGiveTheCallersDefault() throws {
        let rules = Self.rules
        let prepared = rules.prepare([:])
        let byName = rules.evaluate("nope", in: [:], default: .int(7))
        #expect(byName.value == .int(7) && byName.reason == .error && byName.errorCode == .flagNotFound)
        #expect(rules.evaluate("nope", in: [:]).value == .bool(false))
        #expect(rules.evaluate("nope", in: prepared, default: .string("x")).value == .string("x"))
        #expect(rules.evaluate("nope", jsonContext: "{}", default: .int(1)).value == .int(1))
        #expect(rules.isEnabled("nope", in: [:], default: true))
        #expect(rules.value("nope", in: [:], default: 9) == 9)
        let other = try RuleSet(source: "flag elsewhere = true")
        let handle = other.handle("elsewhere")
        #expect(rules.evaluate(handle, in: prepared, default: .bool(true)).errorCode == .flagNotFound)
    }

    @Test func mistypedNamesGiveTheCallersDefault() throws {
        let rules = Self.rules
        let r = rules.evaluate("checkout", in: [:], default: .int(2))
        #expect(r.value == .int(2) && r.reason == .error && r.errorCode == .typeMismatch)
        #expect(rules.evaluate("checkout", in: [:]).variant == "oneStep")  // no default: no type to check
        #expect(rules.evaluate("checkout", in: [:], default: .string("control")).variant == "oneStep")
        #expect(rules.evaluate("retries", in: [:], default: .double(1)).value == .double(3))  // int converts
        #expect(rules.evaluate("ratio", in: [:], default: .int(1)).errorCode == .typeMismatch)
        let handle = rules.handle("retries")
        #expect(rules.evaluate(handle, in: rules.prepare([:]), default: .bool(false)).errorCode == .typeMismatch)
        #expect(rules.variant("retries", in: [:], default: "fallback") == "fallback")
        #expect(rules.isEnabled("checkout", in: [:], default: true))
    }

    @Test func theStoreKeepsTheCallersDefaultAfterLoading() throws {
        let store = FlagStore()
        #expect(store.evaluate("on", in: [:], default: .int(4)).value == .int(4))
        try store.update(source: "flag on = true\nvalue n: int = 1")
        #expect(store.evaluate("on", in: [:]).value == .bool(true))
        let unknown = store.evaluate("nope", in: [:], default: .int(4))
        #expect(unknown.value == .int(4) && unknown.errorCode == .flagNotFound)
        #expect(store.evaluate("n", in: [:], default: .string("s")).errorCode == .typeMismatch)
    }

    @Test(arguments: [Double.nan, .infinity, -.infinity])
    func nonFiniteDoublesAreRefused(_ d: Double) throws {
        let rules = Self.rules
        var context: EvaluationContext = ["score": .double(d), "age": 3]
        #expect(context["score"] == nil && context.count == 1)
        context["score"] = .double(d)
        #expect(context["score"] == nil)
        #expect(rules.evaluate("ratio", in: ["score": .double(d)]).value == .double(0.5))
        var prepared = rules.makeContext()
        prepared["score"] = .double(d)
        #expect(prepared["score"] == nil)
        #expect(rules.evaluate("ratio", in: prepared).value == .double(0.5))
        let schemaless = try RuleSet(source: "flag high { enabled when score > 0.5 }")
        #expect(schemaless.evaluate("high", in: ["score": .double(d)]).reason == .default)
        #expect(Comparison.order(.double(.nan), .double(0.5)) == nil)
        #expect(throws: ContextError.self) { try EvaluationContext(json: #"{"score": 1e999}"#) }
    }

    @Test func loadFailuresSayWhetherTheFileWasUnreadableOrInvalid() throws {
        let missing = URL(fileURLWithPath: "/nonexistent/rules.flags")
        do {
            _ = try RuleSet(contentsOf: missing)
            Issue.record("loaded a missing file")
        } catch {
            guard case .unreadable(let name, let underlying) = error else {
                Issue.record("expected unreadable, got \(error)")
                return
            }
            #expect(name == "/nonexistent/rules.flags")
            #expect((underlying as NSError).domain.isEmpty == false)
            #expect(error.diagnostics.isEmpty && error.description.hasPrefix("cannot read /nonexistent/rules.flags: "))
        }
        do {
            _ = try RuleSet(source: "flag a = maybe", name: "bad.flags")
            Issue.record("loaded an invalid file")
        } catch {
            guard case .invalid(let source, let diagnostics) = error else {
                Issue.record("expected invalid, got \(error)")
                return
            }
            #expect(source.name == "bad.flags" && diagnostics.count == 1 && error.errors.count == 1)
            #expect(error.description.hasPrefix("bad.flags:1:10: error: "))
        }
    }
}

/// Resolutions print as people read them; a declaration's type is what its doc says.
@Suite struct ReadableResultsTests {
    @Test func resolutionsPrintReadably() throws {
        let rules = try RuleSet(
            source: """
                context { country: string }
                flag f {
                  disabled when country == "FR"
                  enabled when country == "US"
                }
                variant v [a, b] = a { b when country == "US" }
                """)
        #expect("\(rules.evaluate("f", in: ["country": "US"]))" == "true (TARGETING_MATCH, rule 2, line 4)")
        #expect("\(rules.evaluate("f", in: [:]))" == "false (DEFAULT)")
        #expect("\(rules.evaluate("v", in: ["country": "US"]))" == "b (TARGETING_MATCH, rule 1, line 6)")
        #expect("\(rules.evaluate("nope", in: [:]))" == "false (ERROR, FLAG_NOT_FOUND: no declaration named 'nope')")
        #expect(rules.declarations.map(\.type) == ["bool", "variant of 'v'"])
    }
}
