import FlagRules
import Foundation

/// `flags eval FILE [NAME...] [-c key=value]... [--context-json FILE|-] [--json]`
enum EvalCommand {
    static let help = """
        usage: flags eval FILE [NAME...] [-c key=value]... [--context-json FILE|-] [--explain] [--json]

        Resolves the named declarations (all flags, variants and values when none is named)
        against a context and prints one line each:
          darkMode = true  (TARGETING_MATCH, rule 1, line 14)

        options:
          -c, --context key=value   set a context attribute (repeatable); typed by the file's
                                    schema, else true/false, integers and decimals are typed
                                    and anything else is a string
          --context-json FILE|-     read the context from a JSON object ('-' for stdin);
                                    -c values override it
          --explain                 show every rule tried and the value of each sub-expression
          --json                    print one JSON object keyed by declaration name
          --help                    show this help

        exit status: 0 resolved, 1 errors in the rules, 2 usage error (bad file, unknown name,
        a context value that does not fit the schema)

        """

    static let specs = [
        OptionSpec(name: "help", short: "h"),
        OptionSpec(name: "context", short: "c", takesValue: true, repeatable: true),
        OptionSpec(name: "context-json", takesValue: true),
        OptionSpec(name: "json"),
        OptionSpec(name: "explain"),
    ]

    static func run(_ arguments: [String]) throws(UsageError) -> Int32 {
        let parsed = try ParsedArguments(arguments, specs: specs, command: "eval")
        if parsed.has("help") {
            Terminal.write(help)
            return 0
        }
        guard let path = parsed.positionals.first else {
            throw UsageError(message: "'eval' needs a file", help: "flags eval examples/app.flags -c build=alpha")
        }
        let names = Array(parsed.positionals.dropFirst())
        if path == "-", parsed.value("context-json") == "-" {
            throw UsageError(message: "the rules and the context cannot both come from standard input")
        }
        guard let rules = try Terminal.loadRules(path) else { return 1 }
        let context = try buildContext(parsed, schema: rules.schema)
        let known = rules.declarations.map(\.name)
        for name in names where !known.contains(name) {
            let suggestion = Suggestions.closest(to: name, in: known).map { "; did you mean '\($0)'?" } ?? ""
            throw UsageError(message: "\(path) declares no '\(name)'" + suggestion)
        }
        let selected = names.isEmpty ? rules.declarations.filter { $0.kind != .segment }.map(\.name) : names
        if parsed.has("explain") {
            let explanations = selected.compactMap { rules.explain($0, in: context) }
            if parsed.has("json") {
                Terminal.write(JSON.object(explanations.map { ($0.name, $0.json) }).serialized(pretty: true) + "\n")
            } else {
                Terminal.write(explanations.map(\.text).joined(separator: "\n"))
            }
            return 0
        }
        let resolutions = selected.map { ($0, rules.evaluate($0, in: context)) }
        if parsed.has("json") {
            Terminal.write(JSON.object(resolutions.map { ($0.0, $0.1.json) }).serialized() + "\n")
        } else {
            for (name, r) in resolutions { Terminal.write(r.summary(name: name) + "\n") }
        }
        return 0
    }

    static func buildContext(_ parsed: ParsedArguments, schema: ContextSchema?) throws(UsageError) -> EvaluationContext {
        var context = EvaluationContext()
        if let jsonPath = parsed.value("context-json") {
            let bytes = try Terminal.read(jsonPath)
            do {
                context = try EvaluationContext(json: String(decoding: bytes, as: UTF8.self))
                if let schema {
                    for (key, value) in context.entries.sorted(by: { $0.name < $1.name }) { try schema.validate(key, value) }
                }
            } catch {
                throw UsageError(message: "\(jsonPath == "-" ? "<stdin>" : jsonPath): \(error.message)")
            }
        }
        for assignment in parsed.all("context") {
            guard let eq = assignment.firstIndex(of: "="), eq != assignment.startIndex else {
                throw UsageError(message: "-c expects key=value, got '\(assignment)'", help: "as in -c build=alpha")
            }
            let key = String(assignment[..<eq])
            let text = String(assignment[assignment.index(after: eq)...])
            if let schema {
                do {
                    context[key] = try schema.value(for: key, text: text)
                } catch {
                    throw UsageError(message: error.message)
                }
            } else {
                context[key] = Value.inferred(from: text)
            }
        }
        return context
    }
}
