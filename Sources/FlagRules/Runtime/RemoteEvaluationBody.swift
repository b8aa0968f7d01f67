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
    package static func remoteEvaluation(body bytes: [UInt8], targetingKey: String) -> Result<EvaluationContext, RemoteBodyFailure> {
        if let context = EvaluationContext(remoteEvaluationBody: bytes, targetingKey: targetingKey) { return .success(context) }
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
        if let i = members.firstIndex(where: { $0.0 == "targetingKey" }) {
            let key = members.remove(at: i).1
            if !members.contains(where: { $0.0 == targetingKey }) { members.append((targetingKey, key)) }
        }
        do {
            return .success(try EvaluationContext(jsonMembers: members))
        } catch {
            return .failure(.invalidContext(error.message))
        }
    }
}
