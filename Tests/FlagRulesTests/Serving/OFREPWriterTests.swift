import Foundation
import Testing

@testable import FlagRules
@testable import FlagRulesServer

/// What `flags serve` writes without making a JSON tree or a string agrees with the plain
/// way of writing it.
@Suite struct OFREPWriterTests {
    /// The bulk answer's ETag is hashed from bytes written straight from the context: they
    /// are the canonical text's bytes, for contexts of every kind of value, in any order.
    @Test func canonicalBytesAreTheCanonicalText() throws {
        var random = SeededGenerator(seed: 0xE7A6)
        let names = ["targetingKey", "build", "a", "Zed", "zeta", "appVersion", "org", "tags", "quote\"d", "ünï", "x\n"]
        for _ in 0..<500 {
            var context = EvaluationContext()
            for _ in 0..<Int.random(in: 0...6, using: &random) {
                let name = names.randomElement(using: &random)!
                let value: FlagRules.Value
                switch Int.random(in: 0..<6, using: &random) {
                case 0: value = .bool(Bool.random(using: &random))
                case 1: value = .int(Int.random(in: -1_000...1_000, using: &random))
                case 2: value = .double(Double(Int.random(in: -100...100, using: &random)) / 8)
                case 3:
                    value = .string(
                        ["", "beta", "a\"b\\c", "tab\there", "naïve", String(repeating: "z", count: 40)].randomElement(using: &random)!)
                case 4: value = .list(["b", "a"])
                default: value = try EvaluationContext(json: #"{"o": {"z": 1, "a": [true, "x"]}}"#)["o"]!
                }
                context[name] = value
            }
            let plain = OFREPService.canonicalText(of: context)
            #expect(OFREPService.canonicalBytes(of: context) == Array(plain.utf8), "\(context)")
            #expect(FNV1a.hash(Array(plain.utf8)) == FNV1a.hash(plain.utf8))
        }
    }

    /// Reasons and kinds are written as their raw values, quoted, after their members' names.
    @Test func reasonsAndKindsAreTheirRawValuesQuoted() {
        let reasons: [Resolution.Reason] = [.static, .targetingMatch, .split, .default, .disabled, .error, .override]
        for reason in reasons {
            #expect("\(OFREPService.reasonMember(reason))" == ", \"reason\": \"\(reason.rawValue)\"")
        }
        let kinds: [DeclarationKind] = [.flag, .variant, .value, .segment]
        for kind in kinds {
            #expect("\(OFREPService.kindMember(kind))" == ", \"metadata\": {\"kind\": \"\(kind.rawValue)\"")
        }
    }

    /// A string is written escaped as JSON reads it back, whether its bytes are stored in the
    /// string (small), on the heap, or reached through a copy.
    @Test func writtenStringsReadBack() throws {
        let texts = [
            "", "a", "user-42", "quote \" and \\ back", "\u{1}\u{1f} controls\r\n\t", "ünïcödé and 😀",
            String(repeating: "long ", count: 20),
        ]
        for text in texts {
            var out: [UInt8] = []
            JSON.writeString(text, to: &out)
            #expect(try JSON.parse(bytes: out) == .string(text), "\(text)")
            var substring: [UInt8] = []
            JSON.writeString(String(Substring(text)), to: &substring)
            #expect(substring == out)
        }
    }
}
