// libFuzzer target: JSON contexts, and what a store reads from a server. Any bytes are
// parsed as a JSON context; one that parses is evaluated against a rule set with a schema
// (lenient and strict) and one without, for every declaration, on every path: by name, by
// handle on the context prepared whole and key by key, `evaluateAll` and `explain` must
// give one resolution (a dotted key is a name on each), and its problems are listed. The
// same bytes are read as a push event's data (one that parses must read back the same from
// the text it writes), as an event stream (its actions for a store), as a chunked body and
// as a response head. Built with the library's sources and the other targets as one
// module: Tests/Fuzz/run.sh.
import Foundation

/// The rules each input is evaluated against, loaded for each input: held in a global, the
/// list types' boxes are reached only through enum payloads whose case tag sits in a
/// pointer's spare bits, which LeakSanitizer does not read as pointers (it reported them
/// as leaked).
func contextFuzzRules() -> (typed: RuleSet, untyped: RuleSet) {
    do {
        return (
            try RuleSet(
                source: """
                    context { build: enum(debug, release); userId: string; age: int; score: double; beta: bool; v: version; at: datetime
                      groups: [string]; roles: [enum(admin, editor)]; ids: [int]; ip: ip
                      org: { id: string, plan: enum(free, team), seats: int, billing: { country: string } } }
                    flag f { enabled when build == debug and rollout(userId) < 50% or age > 30 and score < 2.5 or v >= "2.0" or at < "2026-01-01" }
                    value n: int = 1 { 2 when beta; 3 when has(userId); 4 when groups contains any ["qa", "x"] or roles contains all [admin]
                      5 when count(ids) > 1 or ip in ["10.0.0.0/8", "::1"] or lower(userId) == "u" }
                    value o: int = 0 { 1 when org.plan == team and org.seats > 3; 2 when rollout(org.id) < 30%; 3 when has(org.billing.country) }
                    """),
            try RuleSet(
                source: """
                    flag f { enabled when build == debug and rollout(userId) < 50% or age > 30 and score < 2.5 or v >= "2.0" }
                    value n: int = 1 { 2 when beta == true; 3 when has(userId); 4 when groups contains "qa" or count(ids) == 2
                      5 when ip in ["10.0.0.0/8", "1.2.3.4"] or groups contains all ["a", "b"] }
                    value o: int = 0 { 1 when org.plan == "team" and org.seats > 3; 2 when rollout(org.id) < 30%; 3 when has(org.billing.country) }
                    """)
        )
    } catch {
        fatalError("the context fuzzer's rules do not load: \(error)")
    }
}

/// One input, 0 when it is done with it (a finding traps); called by `FuzzMain.swift`.
func contextFuzzTest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    pushFuzz(text, Array(UnsafeBufferPointer(start: data, count: size)))
    remoteBodyFuzz(Array(UnsafeBufferPointer(start: data, count: size)))
    guard let context = try? EvaluationContext(json: text) else { return 0 }
    let loaded = contextFuzzRules()
    var strict = loaded.typed
    strict.checksContextsStrictly = true
    for rules in [loaded.typed, strict, loaded.untyped] {
        _ = rules.problems(in: context)
        let prepared = rules.prepare(context)
        var keyByKey = rules.makeContext()
        for (key, value) in context.entries { keyByKey[key] = value }
        let all = rules.evaluateAll(in: context)
        for name in ["f", "n", "o"] {
            let plain = rules.evaluate(name, in: context)
            let paths = [
                ("prepared", rules.evaluate(rules.handle(name), in: prepared)),
                ("prepared key by key", rules.evaluate(rules.handle(name), in: keyByKey)),
                ("evaluateAll", all[name]), ("explain", rules.explain(name, in: context)?.resolution),
            ]
            for (path, r) in paths where r != plain {
                fatalError("by name and \(path) disagree on \(name) in \(text.debugDescription): \(plain) vs \(r.map { "\($0)" } ?? "nil")")
            }
        }
    }
    return 0
}

/// What a store reads from a server, from any bytes: nothing traps, an event reads back as
/// written, a chunked body never gives more bytes than it holds.
func pushFuzz(_ text: String, _ bytes: [UInt8]) {
    if let event = PushProtocol.Event(data: text) {
        let line = event.text.split(separator: "\n").first { $0.hasPrefix("data: ") }.map { String($0.dropFirst(6)) }
        if line.flatMap(PushProtocol.Event.init(data:)) != event { fatalError("\(text.debugDescription) does not read back as written") }
    }
    var reader = ServerSentEvents(lineLimit: 4_096)
    if let events = try? reader.feed(bytes) {
        for file in [nil, "a.flags"] { _ = EventSubscription.actions(for: events, file: file) }
    }
    var decoder = ChunkedDecoder()
    if let out = try? decoder.feed(bytes), out.count > bytes.count { fatalError("chunks gave more bytes than they hold") }
    _ = PlainStreams.parseHead(bytes[...])
}

/// Names a fuzzed body's context is read with as known.
let fuzzKnownNames = KnownAttributes(["targetingKey", "userId", "build", "a", "org", "tags"])

/// A remote evaluation's body read straight from its bytes and read as a JSON tree: when
/// the direct reading gives a context, the tree's gives the same (as the fuzzer's bytes,
/// and as the context of a body around them).
func remoteBodyFuzz(_ bytes: [UInt8]) {
    for body in [bytes, Array(#"{"context": "#.utf8) + bytes + [UInt8(ascii: "}")]] {
        for (targetingKey, known) in [("userId", KnownAttributes.none), ("targetingKey", fuzzKnownNames)] {
            guard let direct = EvaluationContext(remoteEvaluationBody: body, targetingKey: targetingKey, known: known) else { continue }
            let plain = EvaluationContext.plainRemoteEvaluation(body: body, targetingKey: targetingKey)
            guard case .success(let tree) = plain, tree == direct else {
                fatalError(
                    "the direct and tree readings disagree on \(String(decoding: body, as: UTF8.self).debugDescription): \(direct) vs \(plain)"
                )
            }
        }
    }
}
