import FlagRules
import FlagRulesTooling
import Foundation

/// The page's API: each declaration's state, and evaluations with their explanations.
extension OFREPService {
    // MARK: The page's API

    func rulesForPage() -> HTTPResponse {
        let state = served.snapshot
        var declarations: [JSON] = []
        var schema: [(String, JSON)] = []
        for file in state.files {
            let lines = String(decoding: file.rules.source.bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            let stale = Dictionary(file.rules.staleDeclarations().map { ($0.name, $0.reasons) }, uniquingKeysWith: { a, _ in a })
            for d in file.rules.declarations
            where d.kind != .segment && state.index[d.name].map({ state.files[$0.file].name == file.name }) == true {
                guard case .object(var m) = d.json else { continue }
                m.append(("file", .string(file.name)))
                // Its text as written, from its keyword to its closing line.
                let text = lines[max(0, d.line - 1)..<min(lines.count, d.endLine)].joined(separator: "\n")
                m.append(("source", .string(text)))
                let reasons = (stale[d.name] ?? []).map { JSON.object([("code", .string($0.code)), ("detail", .string($0.detail))]) }
                m.append(("stale", .array(reasons)))
                declarations.append(.object(m))
            }
            // The form's fields: every attribute and an object's fields by path (not the
            // object itself, whose fields are the form's).
            for a in file.rules.schema?.attributes ?? [] where a.type.fields == nil && !schema.contains(where: { $0.0 == a.name }) {
                var field: [(String, JSON)] = [("type", .string(a.type.description))]
                if let cases = a.type.cases ?? a.type.element?.cases { field.append(("cases", .array(cases.map(JSON.string)))) }
                field.append(("list", .bool(a.type.isList)))
                schema.append((a.name, .object(field)))
            }
        }
        // The instant rules are evaluated at (a schedule or a ramp, previewed).
        if !schema.contains(where: { $0.0 == "now" }) {
            schema.append(("now", .object([("type", .string("datetime")), ("list", .bool(false))])))
        }
        let rejected = served.standing.rejections.map { r in
            JSON.object([("file", .string(r.file)), ("message", .string(r.message)), ("at", .int(Int(r.at.timeIntervalSince1970)))])
        }
        return .json(
            200,
            .object([
                ("declarations", .array(declarations)), ("schema", .object(schema)), ("version", .string(state.version)),
                ("since", .int(Int(state.since.timeIntervalSince1970))), ("rejected", .array(rejected)),
            ]))
    }

    func evaluateForPage(_ request: HTTPRequest) -> HTTPResponse {
        guard case .success(let given) = self.context(of: request, known: .none) else {
            return .json(400, .object([("errorDetails", .string("send {\"context\": {…}}"))]))
        }
        // The form names an object's fields by path (`org.plan`): each goes into its object.
        var context = EvaluationContext()
        for (name, value) in given.entries.sorted(by: { $0.name < $1.name }) { context.set(value, atPath: name) }
        let state = served.snapshot
        let results: [(String, JSON)] = state.names.map { name in
            let rules = state.files[state.index[name]!.file].rules
            let r = rules.evaluate(name, in: context)
            var m: [(String, JSON)] = [("resolution", r.json)]
            if let e = rules.explain(name, in: context) { m.append(("explanation", .string(e.text))) }
            return (name, .object(m))
        }
        return .json(200, .object(results))
    }
}
