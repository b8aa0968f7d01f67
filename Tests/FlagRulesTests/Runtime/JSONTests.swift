import Testing

@testable import FlagRules

@Suite struct JSONTests {
    @Test func parsesScalarsAndNesting() throws {
        let json = try JSON.parse(#" {"a": [1, -2.5, true, null, "x\u00e9\ud83d\ude00\n"], "b": {}} "#)
        #expect(json == .object([("a", .array([.int(1), .double(-2.5), .bool(true), .null, .string("xé😀\n")])), ("b", .object([]))]))
    }

    @Test(arguments: [
        ("", "unexpected end of input at byte 0"),
        ("{", "expected a string key at byte 1"),
        ("[1,]", "unexpected character at byte 3"),
        ("01", "leading zero in a number at byte 0"),
        ("1e999", "number out of range at byte 0"),
        ("NaN", "unexpected character at byte 0"),
        ("Infinity", "unexpected character at byte 0"),
        (#""\ud800""#, "lone surrogate in \\u escape at byte 7"),
        ("{} x", "unexpected text after the JSON value at byte 3"),
        ("\"a\u{1}\"", "control character in a string at byte 2"),
        (#"{"a" 1}"#, "expected ':' at byte 5"),
    ])
    func rejectsMalformedJSON(_ text: String, _ message: String) {
        do {
            _ = try JSON.parse(text)
            Issue.record("parsed \(text)")
        } catch {
            #expect(error.description == message)
        }
    }

    @Test func deepNestingIsAnErrorNotACrash() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSON.ParseError.self) { try JSON.parse(deep) }
        let ok = String(repeating: "[", count: 63) + String(repeating: "]", count: 63)
        #expect(throws: Never.self) { try JSON.parse(ok) }
    }

    @Test func invalidUTF8IsRejected() {
        #expect(throws: JSON.ParseError.self) { try JSON.parse(bytes: [0x22, 0xFF, 0x22]) }
        #expect(throws: JSON.ParseError.self) { try JSON.parse(bytes: [0x22, 0xC3, 0x22]) }
    }

    @Test func contextsFromJSON() throws {
        let c = try EvaluationContext(json: #"{"userId": "u1", "age": 31, "score": 0.5, "beta": true, "country": null}"#)
        #expect(c == ["userId": .string("u1"), "age": .int(31), "score": .double(0.5), "beta": .bool(true)])
        #expect(try EvaluationContext(json: #"{"tags": []}"#) == ["tags": .list([])])
        #expect(try EvaluationContext(json: #"{"tags": {}}"#) == ["tags": .object([:])])
        #expect(
            try EvaluationContext(json: #"{"org": {"plan": "team", "billing": {"country": null}}}"#)
                == ["org": .object(["plan": "team", "billing": .object([:])])])
        #expect(throws: ContextError.self) {
            try EvaluationContext(json: #"{"org": {"billing": {"seats": 1e999}}}"#)
        }
        #expect(throws: ContextError(message: "the context must be a JSON object, as in {\"userId\": \"u-1\"}")) {
            try EvaluationContext(json: "[]")
        }
        #expect(throws: ContextError.self) { try EvaluationContext(json: #"{"a": NaN}"#) }
    }

    @Test func serializes() {
        let json = JSON.object([("s", .string("a\"b\n\u{1}")), ("n", .int(-3)), ("d", .double(2)), ("l", .array([.bool(false), .null]))])
        #expect(json.serialized() == #"{"s": "a\"b\n\u0001", "n": -3, "d": 2.0, "l": [false,null]}"#)
    }

    /// Any string survives serializing and parsing, whatever it holds: quotes, backslashes,
    /// every control character, runs of each between plain text, and scalars of every length.
    @Test func stringsRoundTrip() throws {
        var random = SeededGenerator(seed: 5)
        let pieces: [String] = [
            "\"", "\\", "\n", "\r", "\t", "\u{0}", "\u{1F}", "\u{7F}", "a", "plain text", "é", "€", "😀", "/", "\u{2028}",
        ]
        for _ in 0..<2_000 {
            let s = (0..<Int.random(in: 0...8, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
            let text = JSON.string(s).serialized()
            #expect(try JSON.parse(text) == .string(s), "\(text)")
            #expect(!text.utf8.dropFirst().dropLast().contains { $0 < 0x20 })
        }
    }
}
