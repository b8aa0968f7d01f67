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
        #expect(try EvaluationContext(json: #"{"tags": []}"#) == ["tags": []])
        #expect(throws: ContextError(message: "attribute 'tags' must be a string, number, boolean or array, not an object")) {
            try EvaluationContext(json: #"{"tags": {}}"#)
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
}
