import FlagRules
import FlagRulesTooling
import Foundation

/// OpenFeature's Remote Evaluation Protocol: one evaluation, every evaluation with an
/// ETag, and the answer's shape.
extension OFREPService {
    // MARK: OFREP

    /// The context of an OFREP body, or the failure to answer with.
    enum ContextFailure: Error {
        case parse(String)
        case invalid(String)
    }

    /// The context of an OFREP body (``EvaluationContext/remoteEvaluation(body:targetingKey:)``).
    func context(of request: HTTPRequest, known: KnownAttributes) -> Result<EvaluationContext, ContextFailure> {
        switch EvaluationContext.remoteEvaluation(body: request.body, targetingKey: options.targetingKey, known: known) {
        case .success(let context): return .success(context)
        case .failure(.notAnObject(let message)): return .failure(.parse(message))
        case .failure(.invalidContext(let message)): return .failure(.invalid(message))
        }
    }

    func single(_ key: String, _ request: HTTPRequest) -> HTTPResponse {
        let state = served.snapshot
        let context: EvaluationContext
        switch self.context(of: request, known: state.knownAttributes) {
        case .failure(.parse(let message)):
            return .json(400, logged(failure(key, "PARSE_ERROR", message)))
        case .failure(.invalid(let message)):
            return .json(400, logged(failure(key, "INVALID_CONTEXT", message)))
        case .success(let c):
            context = c
        }
        guard let position = state.index[key] else {
            let suggestion = Suggestions.closest(to: key, in: state.names).map { "; did you mean '\($0)'?" } ?? ""
            return .json(404, logged(failure(key, "FLAG_NOT_FOUND", "no flag, variant or value is named '\(key)'\(suggestion)")))
        }
        var body: [UInt8] = []
        body.reserveCapacity(256)
        let status = evaluate(position, in: state, context, into: &body)
        return HTTPResponse(status: status, headers: OFREPService.jsonType, body: body)
    }

    /// The header of a JSON answer.
    static let jsonType = [("Content-Type", "application/json")]

    func bulk(_ request: HTTPRequest) -> HTTPResponse {
        let state = served.snapshot
        let context: EvaluationContext
        switch self.context(of: request, known: state.knownAttributes) {
        case .failure(.parse(let message)):
            return .json(400, logged(.object([("errorCode", .string("PARSE_ERROR")), ("errorDetails", .string(message))])))
        case .failure(.invalid(let message)):
            return .json(400, logged(.object([("errorCode", .string("INVALID_CONTEXT")), ("errorDetails", .string(message))])))
        case .success(let c):
            context = c
        }
        // The same context in any key order has the same ETag.
        let etag = "\"\(state.contentVersion)-\(String(FNV1a.hash(OFREPService.canonicalBytes(of: context)), radix: 36))\""
        if let match = request.header("If-None-Match"), OFREPService.matches(match, etag) {
            return HTTPResponse(status: 304, headers: [("ETag", etag)])
        }
        // {"flags": [each answer], "metadata": {"version": …}, "eventStreams": […]}, written
        // as JSON's compact form writes it.
        var body: [UInt8] = []
        body.reserveCapacity(256 * state.names.count)
        ASCII.append(#"{"flags": ["#, to: &body)
        for (k, position) in state.positions.enumerated() {
            if k > 0 { body.append(0x2C) }
            _ = evaluate(position, in: state, context, into: &body)
        }
        ASCII.append(#"], "metadata": {"version": "#, to: &body)
        JSON.writeString(state.version, to: &body)
        ASCII.append(#"}, "eventStreams": ["#, to: &body)
        body += OFREPService.eventStreamBytes
        ASCII.append("]}", to: &body)
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/json"), ("ETag", etag)], body: body)
    }

    /// The bulk response's `eventStreams` entry: this server's stream, on its own origin.
    static let eventStream: JSON = .object([
        ("type", .string("sse")), ("endpoint", .object([("requestUri", .string(OFREPService.eventsPath))])),
        ("inactivityDelaySec", .int(120)),
    ])
    static let eventStreamBytes = eventStream.serializedBytes()
    /// Where the event stream is served.
    package static let eventsPath = PushProtocol.eventsPath
    /// The header a served rules file names the event stream with, so that a store
    /// fetching it subscribes (`FlagStore` reads it).
    package static let eventsHeader = PushProtocol.eventsHeader

    func failure(_ key: String, _ code: String, _ details: String) -> JSON {
        .object([("key", .string(key)), ("errorCode", .string(code)), ("errorDetails", .string(details))])
    }

    /// `failure` (an OFREP failure: `key` when it names one, `errorCode`, `errorDetails`),
    /// written to the evaluation log first as the event of an evaluation that failed:
    /// reason `error`, `error.type` the code in lower case, the details as
    /// `feature_flag.error.message` (and no `feature_flag.key` for a bulk request's).
    func logged(_ failure: JSON) -> JSON {
        guard let log = evaluationLines else { return failure }
        var attributes: [(String, JSON)] = [
            ("error.type", .string(failure["errorCode"]?.string?.lowercased() ?? "general")),
            ("feature_flag.error.message", .string(failure["errorDetails"]?.string ?? "")),
        ]
        if let key = failure["key"]?.string { attributes.append(("feature_flag.key", .string(key))) }
        attributes += [("feature_flag.provider.name", .string("FlagRules")), ("feature_flag.result.reason", .string("error"))]
        log.append(Self.eventLine("feature_flag.evaluation", attributes))
        return failure
    }

    /// An evaluation as a JSON line: `{"time", "name": "feature_flag.evaluation",
    /// "attributes": {…}}`, the attributes sorted by key.
    func evaluationLine(_ key: String, _ r: Resolution, _ rules: RuleSet, servedAs: String, _ context: EvaluationContext) -> String {
        let attributes = FlagEvaluation.openTelemetryAttributes(
            key, r, context[options.targetingKey], rules, servedAs: servedAs, knowsCallersDefault: false)
        return Self.eventLine("feature_flag.evaluation", attributes.sorted { $0.key < $1.key }.map { ($0.key, $0.value.json) })
    }

    /// An event as a JSON line of the evaluation log: `{"time", "name", "attributes"}`.
    static func eventLine(_ name: String, _ attributes: [(String, JSON)]) -> String {
        let members: [(String, JSON)] = [
            ("time", .string(DateTime.format(Date()))), ("name", .string(name)), ("attributes", .object(attributes)),
        ]
        return JSON.object(members).serialized()
    }

    /// The OFREP answer of the declaration at `position`, written to `out` as JSON's compact
    /// form writes it: 200 and a success, or 400 and a failure; the status.
    func evaluate(
        _ position: ServedRules.Snapshot.Position, in state: ServedRules.Snapshot, _ context: EvaluationContext, into out: inout [UInt8]
    )
        -> Int
    {
        // The file and the declaration read in place: a copy of either retains each field.
        state.files.withUnsafeBufferPointer { files in
            let file = files.baseAddress! + position.file
            return file.pointee.declarations.withUnsafeBufferPointer { declarations in
                file.pointee.answerParts.withUnsafeBufferPointer { parts in
                    answer(
                        declarations.baseAddress! + position.declaration, parts.baseAddress! + position.declaration,
                        at: position.declaration, file.pointee.rules, servedAs: file.pointee.name, context, into: &out)
                }
            }
        }
    }

    /// ``evaluate(_:in:_:into:)`` of the declaration `info` points at, at `index` in `rules`.
    private func answer(
        _ info: UnsafePointer<DeclarationInfo>, _ parts: UnsafePointer<ServedRules.File.AnswerParts>, at index: Int, _ rules: RuleSet,
        servedAs fileName: String, _ context: EvaluationContext,
        into out: inout [UInt8]
    ) -> Int {
        let key = info.pointee.name
        // A value of the wrong type for an attribute the declaration reads fails it; other
        // attributes are not its concern.
        if let problem = rules.mistypedRead(info.pointee.reads, in: context) {
            metrics.evaluation(key, reason: .error)
            logged(failure(key, "INVALID_CONTEXT", problem.description)).write(to: &out)
            return 400
        }
        let r = rules.evaluate(declaration: index, named: key, in: context)
        metrics.evaluation(key, reason: r.reason, value: r.reason == .error || r.isFallback ? nil : r.value)
        if let log = evaluationLines { log.append(evaluationLine(key, r, rules, servedAs: fileName, context)) }
        if r.reason == .error {
            failure(key, r.errorCode?.rawValue ?? "GENERAL", r.errorMessage ?? "evaluation failed").write(to: &out)
            return 400
        }
        // Each member's name with what comes before it is one literal.
        out.append(contentsOf: parts.pointee.head)
        // A `fallback` rule: OFREP's code default, a success with no value and no variant.
        if !r.isFallback {
            ASCII.append(#", "value": "#, to: &out)
            r.value.json.write(to: &out)
        }
        ASCII.append(OFREPService.reasonMember(r.reason), to: &out)
        if !r.isFallback {
            ASCII.append(#", "variant": "#, to: &out)
            OFREPService.writeVariant(r, to: &out)
        }
        ASCII.append(OFREPService.kindMember(info.pointee.kind), to: &out)
        if r.isFallback { ASCII.append(#", "fallback": true"#, to: &out) }
        if let rule = r.rule {
            ASCII.append(#", "rule": "#, to: &out)
            ASCII.appendDecimal(rule, to: &out)
        }
        if let line = r.line {
            ASCII.append(#", "line": "#, to: &out)
            ASCII.appendDecimal(line, to: &out)
        }
        if !parts.pointee.owner.isEmpty { out.append(contentsOf: parts.pointee.owner) }
        // A rollout or split whose unit is absent does not match (the language's rule, the
        // same in Swift and `flags eval`); say so, so that a keyless context is not taken
        // for an assignment.
        let absent = rules.absentUnits(info.pointee.bucketingUnits, resolution: r, in: context)
        if !absent.isEmpty {
            ASCII.append(#", "absentUnits": "#, to: &out)
            JSON.writeString(absent.joined(separator: ","), to: &out)
        }
        ASCII.append("}}", to: &out)
        return 200
    }

    /// The OFREP variant: a variant's name; for a flag or value, what decided, as a stable
    /// name (`rule2`, `default`, `static`, `disabled`).
    static func variant(_ r: Resolution) -> String {
        if let v = r.variant { return v }
        if let rule = r.rule { return "rule\(rule)" }
        return r.reason.rawValue.lowercased()
    }

    /// The `reason` member (its raw value, quoted) with the comma before it, as one literal.
    static func reasonMember(_ reason: Resolution.Reason) -> StaticString {
        switch reason {
        case .static: return #", "reason": "STATIC""#
        case .targetingMatch: return #", "reason": "TARGETING_MATCH""#
        case .split: return #", "reason": "SPLIT""#
        case .default: return #", "reason": "DEFAULT""#
        case .disabled: return #", "reason": "DISABLED""#
        case .error: return #", "reason": "ERROR""#
        case .override: return #", "reason": "OVERRIDE""#
        }
    }

    /// The `metadata` member's start up to its `kind` (the kind's raw value, quoted), as one
    /// literal.
    static func kindMember(_ kind: DeclarationKind) -> StaticString {
        switch kind {
        case .flag: return #", "metadata": {"kind": "flag""#
        case .variant: return #", "metadata": {"kind": "variant""#
        case .value: return #", "metadata": {"kind": "value""#
        case .segment: return #", "metadata": {"kind": "segment""#
        }
    }

    /// ``variant(_:)`` as a JSON string, written without making the string.
    static func writeVariant(_ r: Resolution, to out: inout [UInt8]) {
        if let v = r.variant {
            JSON.writeString(v, to: &out)
        } else if let rule = r.rule {
            ASCII.append(#""rule"#, to: &out)
            ASCII.appendDecimal(rule, to: &out)
            out.append(UInt8(ascii: "\""))
        } else {
            out.append(UInt8(ascii: "\""))
            for byte in r.reason.rawValue.utf8 { out.append(byte >= 65 && byte <= 90 ? byte | 0x20 : byte) }
            out.append(UInt8(ascii: "\""))
        }
    }

    /// A context as one text, the same whatever the order its attributes were given in:
    /// its attributes sorted by name, each with its value's canonical JSON.
    static func canonicalText(of context: EvaluationContext) -> String {
        let members = context.entries.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }.map {
            ($0.name, $0.value.json.canonical)
        }
        return JSON.object(members).serialized()
    }

    /// ``canonicalText(of:)``'s bytes, written straight from the context's attributes (no
    /// JSON tree of the context is made).
    static func canonicalBytes(of context: EvaluationContext) -> [UInt8] {
        let entries = context.entries.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        var out: [UInt8] = []
        out.reserveCapacity(32 * entries.count + 2)
        out.append(UInt8(ascii: "{"))
        for (k, entry) in entries.enumerated() {
            if k > 0 { ASCII.append(", ", to: &out) }
            JSON.writeString(entry.name, to: &out)
            ASCII.append(": ", to: &out)
            entry.value.json.canonical.write(to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// FNV-1a of a text, in base 36.
    static func hash(_ text: String) -> String {
        String(FNV1a.hash(text.utf8), radix: 36)
    }
}
