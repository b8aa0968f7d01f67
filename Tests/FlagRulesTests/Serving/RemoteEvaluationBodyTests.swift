import Foundation
import Testing

@testable import FlagRules

/// An OFREP body is read straight from its bytes into a context, or, when that reading
/// gives up, as a JSON tree: the two readings must give one context.
@Suite struct RemoteEvaluationBodyTests {
    /// Bodies made of random members (the context's members among them: renamed and
    /// repeated keys, nulls, lists, objects, non-finite and malformed values), read both
    /// ways: whenever the direct reading gives a context, the tree's gives the same.
    @Test(arguments: 0..<8) func theDirectReadingAgreesWithTheTree(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let names = ["targetingKey", "userId", "build", "country", "org", "tags", "now", "a.b"]
        let values = [
            "null", "true", "42", "-1.5", "1e400", "\"beta\"", "\"user-\\u0034\"", "[1, \"x\", null]", "{\"plan\": \"team\", \"seats\": 3}",
            "{\"x\": {\"y\": null}}", "[]", "{}", "\"é\"", "tru", "\"unterminated",
        ]
        // Names known in advance (a served file's attributes): all, some, none.
        let tables = [KnownAttributes(names), KnownAttributes(["build", "userId", "zone"]), KnownAttributes.none]
        var readDirectly = 0
        for _ in 0..<400 {
            var members: [String] = []
            for _ in 0..<Int.random(in: 0...6, using: &random) {
                members.append("\"\(names.randomElement(using: &random)!)\": \(values.randomElement(using: &random)!)")
            }
            let context = "{" + members.joined(separator: ", ") + "}"
            let shapes = [
                "{\"context\": \(context)}", "{\"flags\": 1, \"context\": \(context)}", "{\"context\": \(context), \"context\": {}}",
                " {\"context\": \(context)} ", "{\"context\": \(context)} x", "[\(context)]", "{\"context\": 3}", "{}",
            ]
            let body = Array(shapes.randomElement(using: &random)!.utf8)
            for targetingKey in ["userId", "targetingKey"] {
                let known = tables.randomElement(using: &random)!
                guard let direct = EvaluationContext(remoteEvaluationBody: body, targetingKey: targetingKey, known: known) else {
                    continue
                }
                readDirectly += 1
                let plain = EvaluationContext.plainRemoteEvaluation(body: body, targetingKey: targetingKey)
                guard case .success(let tree) = plain else {
                    Issue.record("read directly, refused as a tree: \(String(decoding: body, as: UTF8.self))")
                    continue
                }
                #expect(direct == tree, "\(String(decoding: body, as: UTF8.self)) with targeting key \(targetingKey)")
            }
        }
        // Many bodies are whole: the direct reading gives their contexts.
        #expect(readDirectly > 100)
    }

    /// What the direct reading leaves to the tree's, which says what is wrong.
    @Test func bodiesTheDirectReadingLeavesToTheTree() throws {
        for body in [
            "", "{", "[]", "{\"context\": []}", "{\"flags\": {}}", "{\"context\": {\"targetingKey\": \"a\", \"targetingKey\": \"b\"}}",
            "{\"context\": {\"a\": 1e400}}", "{\"context\": {}} trailing",
        ] {
            #expect(EvaluationContext(remoteEvaluationBody: Array(body.utf8), targetingKey: "userId") == nil, "\(body)")
        }
        let read = EvaluationContext(
            remoteEvaluationBody: Array(#"{"context": {"targetingKey": "u-1", "build": "beta"}}"#.utf8), targetingKey: "userId")
        #expect(read == ["userId": "u-1", "build": "beta"])
        let kept = EvaluationContext(
            remoteEvaluationBody: Array(#"{"context": {"targetingKey": "u-1", "userId": "u-2"}}"#.utf8), targetingKey: "userId")
        #expect(kept == ["userId": "u-2"])
        // A name is `targetingKey` by its bytes: a Kelvin sign, which Swift's `==` takes for a
        // K, makes another name, read alike both ways.
        for targetingKey in ["userId", "targetingKey"] {
            let body = Array(#"{"context": {"targeting\#u{212A}ey": "u-1"}}"#.utf8)
            let direct = EvaluationContext(remoteEvaluationBody: body, targetingKey: targetingKey)
            #expect(direct == ["targeting\u{212A}ey": "u-1"])
            #expect(try EvaluationContext.plainRemoteEvaluation(body: body, targetingKey: targetingKey).get() == direct)
        }
    }

    /// A known name is found by its bytes with the hash a context gives it; any other name
    /// is not found. Held to a plain set over random tables, names and seeds (names sharing
    /// prefixes, lengths and bytes, so that probes collide).
    @Test(arguments: 0..<4) func knownNamesAreFoundAsASetFindsThem(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let alphabet = Array("ab.-_é".utf8)
        func name() -> String {
            let bytes = (0..<Int.random(in: 0...12, using: &random)).map { _ in alphabet.randomElement(using: &random)! }
            return String(decoding: bytes, as: UTF8.self)
        }
        for _ in 0..<200 {
            let names = (0..<Int.random(in: 0...40, using: &random)).map { _ in name() }
            let table = KnownAttributes(names, seed: UInt64.random(in: 0...3, using: &random))
            let plain = Set(names)
            #expect(table.names == names.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } })
            for probe in names + (0..<40).map({ _ in name() }) {
                let found = Array(probe.utf8).withUnsafeBufferPointer { table.key($0) }
                #expect((found != nil) == plain.contains(probe), "\(probe) in \(names)")
                if let found {
                    #expect(found.name == probe)
                    #expect(found.hash == ContextStorage.hash(probe))
                }
                #expect(table.key(named: probe).hash == ContextStorage.hash(probe))
            }
        }
    }
}
