/// The body of an OpenFeature remote evaluation (OFREP): `{"context": {…}}`.
extension EvaluationContext {
    /// Why a remote evaluation's body gives no context.
    package enum RemoteBodyFailure: Error, Equatable {
        /// Not JSON, or not an object (OFREP's `PARSE_ERROR`).
        case notAnObject(String)
        /// Its `context` is not an object, or holds what a context cannot (OFREP's
        /// `INVALID_CONTEXT`).
        case invalidContext(String)
    }

    /// The context of a remote evaluation's body: its `context` member's members (none
    /// when it has no `context`), the first `targetingKey` named `targetingKey` instead
    /// (dropped when the context also has a member of that name), read as
    /// `init(json:)` reads a context. Read straight from the bytes; a body that reading
    /// gives up on is read as a JSON tree, which says what is wrong.
    /// `known`: names a body's context is likely to hold (the served rules' attributes),
    /// found by their bytes rather than made and hashed.
    package static func remoteEvaluation(body bytes: [UInt8], targetingKey: String, known: KnownAttributes = .none)
        -> Result<EvaluationContext, RemoteBodyFailure>
    {
        if let context = EvaluationContext(remoteEvaluationBody: bytes, targetingKey: targetingKey, known: known) {
            return .success(context)
        }
        return plainRemoteEvaluation(body: bytes, targetingKey: targetingKey)
    }

    /// The same reading as a JSON tree: the plain reading the direct one must agree with.
    package static func plainRemoteEvaluation(body bytes: [UInt8], targetingKey: String) -> Result<EvaluationContext, RemoteBodyFailure> {
        let body: JSON
        do {
            body = try JSON.parse(bytes: bytes)
        } catch {
            return .failure(.notAnObject("the body is not JSON: \(error)"))
        }
        guard case .object = body else { return .failure(.notAnObject("the body is \(body.kindName), not an object with a context")) }
        let given = body["context"] ?? .object([])
        guard case .object(var members) = given else {
            return .failure(.invalidContext("'context' is \(given.kindName), not an object"))
        }
        // Names compare by their bytes, as a context's do.
        if let i = members.firstIndex(where: { Comparison.bytesEqual($0.0, "targetingKey") }) {
            let key = members.remove(at: i).1
            if !members.contains(where: { Comparison.bytesEqual($0.0, targetingKey) }) { members.append((targetingKey, key)) }
        }
        do {
            return .success(try EvaluationContext(jsonMembers: members))
        } catch {
            return .failure(.invalidContext(error.message))
        }
    }
}

extension EvaluationContext {
    /// The context of an OpenFeature remote evaluation's body, `{"context": {…}}`, read
    /// straight from its bytes (no JSON tree made for the body, nor for the context's
    /// scalars), as `init(jsonMembers:)` reads the context's members after its first
    /// `targetingKey` member is renamed `targetingKey` (dropped when the context has a
    /// member of that name). A member's name found in `known` is not made nor hashed. Nil
    /// for any other body: malformed, without one `context` object, with a second
    /// `targetingKey` or over ``maxJSONKeys`` members (read those the plain way, which says
    /// why).
    package init?(remoteEvaluationBody bytes: [UInt8], targetingKey: String, known: KnownAttributes = .none) {
        var parser = JSONParser(bytes: bytes)
        var context: EvaluationContext?
        var contexts = 0
        do throws(JSON.ParseError) {
            parser.skipSpace()
            try parser.namedMembers(depth: 0) { name, parser throws(JSON.ParseError) in
                guard parser.isNamed(name, "context") else {
                    _ = try parser.value(depth: 1)
                    return
                }
                contexts += 1
                guard parser.i < parser.bytes.count, parser.bytes[parser.i] == UInt8(ascii: "{") else {
                    _ = try parser.value(depth: 1)
                    return
                }
                context = try EvaluationContext.members(of: &parser, renaming: targetingKey, known: known)
            }
            parser.skipSpace()
            guard parser.i == bytes.count else { return nil }
        } catch {
            return nil
        }
        guard let context, contexts == 1 else { return nil }
        self = context
    }

    /// The context of the object at the parser (see `init(remoteEvaluationBody:targetingKey:known:)`),
    /// or nil when it cannot be read this way.
    private static func members(of parser: inout JSONParser, renaming targetingKey: String, known: KnownAttributes) throws(JSON.ParseError)
        -> EvaluationContext?
    {
        var made = EvaluationContext(reserving: 8)
        // The first `targetingKey` member's value (nil inside for null).
        var given: FlagRules.Value??
        var named = false
        var count = 0
        var usable = true
        // Names compare by their bytes, as a context's do.
        let renames = !Comparison.bytesEqual(targetingKey, "targetingKey")
        try parser.namedMembers(depth: 1) { name, parser throws(JSON.ParseError) in
            let value = try EvaluationContext.memberValue(&parser)
            count += 1
            guard usable, count <= EvaluationContext.maxJSONKeys, let value else {
                usable = false
                return
            }
            let key = EvaluationContext.key(name, in: parser, known: known)
            if renames, Comparison.bytesEqual(key.name, "targetingKey") {
                if given != nil { usable = false }
                given = value
                return
            }
            if Comparison.bytesEqual(key.name, targetingKey) { named = true }
            made.set(value, for: key.name, hash: key.hash)
        }
        if let given, !named {
            let key = known.key(named: targetingKey)
            made.set(given, for: key.name, hash: key.hash)
        }
        return usable ? made : nil
    }

    /// The value at the parser as a context holds it, nil inside for null; nil when a
    /// context cannot hold it (a number that is not finite inside an object: the tree's
    /// reading says where). Strings and scalars are read without a JSON value made.
    private static func memberValue(_ parser: inout JSONParser) throws(JSON.ParseError) -> FlagRules.Value?? {
        guard parser.i < parser.bytes.count else { throw parser.fail("unexpected end of input") }
        if parser.bytes[parser.i] == UInt8(ascii: "\""), let range = parser.plainString() {
            return .some(.string(parser.text(range)))
        }
        let json = try parser.value(depth: 2)
        do throws(ContextError) {
            return .some(try EvaluationContext.value(ofJSON: json, for: ""))
        } catch {
            return nil
        }
    }

    /// A member's name with its hash: the known name's, else made.
    private static func key(_ name: JSONParser.MemberName, in parser: JSONParser, known: KnownAttributes) -> Frame.Key {
        switch name {
        case .bytes(let range):
            return parser.bytes.withUnsafeBufferPointer { b in
                let bytes = UnsafeBufferPointer(rebasing: b[range])
                return known.key(bytes) ?? Frame.Key(String(decoding: bytes, as: UTF8.self))
            }
        case .text(let text):
            return known.key(named: text)
        }
    }
}
