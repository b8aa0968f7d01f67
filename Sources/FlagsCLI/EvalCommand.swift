import FlagRules
import Foundation

/// `flags eval FILE [NAME...] [-c key=value]... [--context-json FILE|- | --contexts FILE|-] [--json]`
enum EvalCommand {
    static let help = """
        usage: flags eval FILE [NAME...] [-c key=value]... [--context-json FILE|- | --contexts FILE|-]
                          [--explain] [--json]

        Resolves the named declarations (all flags, variants and values when none is named)
        against a context and prints one line each:
          darkMode = true  (TARGETING_MATCH, rule 1, line 14)

        options:
          -c, --context key=value   set a context attribute (repeatable); typed by the file's
                                    schema, else true/false, integers and decimals are typed
                                    and anything else is a string
          --context-json FILE|-     read the context from a JSON object ('-' for stdin);
                                    -c values override it
          --contexts FILE|-         resolve against each line of FILE, one JSON object a
                                    line (JSON Lines; blank lines skipped), -c values
                                    overriding each; with --json, one object a line
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
        OptionSpec(name: "contexts", takesValue: true),
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
        if path == "-", parsed.value("context-json") == "-" || parsed.value("contexts") == "-" {
            throw UsageError(message: "the rules and the context cannot both come from standard input")
        }
        if parsed.value("context-json") != nil, parsed.value("contexts") != nil {
            throw UsageError(message: "--context-json and --contexts both give the context; use one")
        }
        guard let rules = try Terminal.loadRules(path) else { return 1 }
        let known = rules.declarations.map(\.name)
        for name in names where !known.contains(name) {
            let suggestion = Suggestions.closest(to: name, in: known).map { "; did you mean '\($0)'?" } ?? ""
            throw UsageError(message: "\(path) declares no '\(name)'" + suggestion)
        }
        let selected = names.isEmpty ? rules.declarations.filter { $0.kind != .segment }.map(\.name) : names
        guard let linesPath = parsed.value("contexts") else {
            let context = try buildContext(parsed, schema: rules.schema)
            write(rules, selected, in: context, explain: parsed.has("explain"), json: parsed.has("json"), pretty: true)
            return 0
        }
        // Every line is read and checked before anything is printed.
        let origin = linesPath == "-" ? "<stdin>" : linesPath
        let bytes = try Terminal.read(linesPath)
        var contexts: [(line: Int, context: EvaluationContext)] = []
        // Lines split at LF bytes (a CR before it is JSON whitespace).
        for (i, line) in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated()
        where !line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\r") }) {
            let text = String(decoding: line, as: UTF8.self)
            var context = try jsonContext(text, origin: "\(origin):\(i + 1)", schema: rules.schema)
            try apply(parsed.all("context"), to: &context, schema: rules.schema)
            contexts.append((i + 1, context))
        }
        for (k, entry) in contexts.enumerated() {
            if !parsed.has("json") { Terminal.write((k > 0 ? "\n" : "") + "# \(origin):\(entry.line)\n") }
            write(rules, selected, in: entry.context, explain: parsed.has("explain"), json: parsed.has("json"), pretty: false)
        }
        return 0
    }

    /// Writes the resolutions (or explanations) of `selected` in `context`: text, or one
    /// JSON object keyed by name.
    static func write(_ rules: RuleSet, _ selected: [String], in context: EvaluationContext, explain: Bool, json: Bool, pretty: Bool) {
        if explain {
            let explanations = selected.compactMap { rules.explain($0, in: context) }
            if json {
                Terminal.write(JSON.object(explanations.map { ($0.name, $0.json) }).serialized(pretty: pretty) + "\n")
            } else {
                Terminal.write(explanations.map(\.text).joined(separator: "\n"))
            }
            return
        }
        let resolutions = selected.map { ($0, rules.evaluate($0, in: context)) }
        if json {
            Terminal.write(JSON.object(resolutions.map { ($0.0, $0.1.json) }).serialized() + "\n")
        } else {
            for (name, r) in resolutions { Terminal.write(r.summary(name: name) + "\n") }
        }
    }

    static func buildContext(_ parsed: ParsedArguments, schema: ContextSchema?) throws(UsageError) -> EvaluationContext {
        var context = EvaluationContext()
        if let jsonPath = parsed.value("context-json") {
            let bytes = try Terminal.read(jsonPath)
            context = try jsonContext(
                String(decoding: bytes, as: UTF8.self), origin: jsonPath == "-" ? "<stdin>" : jsonPath, schema: schema)
        }
        try apply(parsed.all("context"), to: &context, schema: schema)
        return context
    }

    /// The context a JSON object gives, checked against the schema; errors name `origin`.
    /// A key the schema does not declare is a usage error ("did you mean"); a declared
    /// attribute with a value of the wrong type is kept, as a service would get it (the
    /// library reads it as unknown, which `--explain` shows), and named in a warning.
    static func jsonContext(_ text: String, origin: String, schema: ContextSchema?) throws(UsageError) -> EvaluationContext {
        let context: EvaluationContext
        do {
            context = try EvaluationContext(json: text)
        } catch {
            throw UsageError(message: "\(origin): \(error.message)")
        }
        guard let schema else { return context }
        for (key, value) in context.entries.sorted(by: { $0.name < $1.name }) {
            if let path = schema.firstUndeclared(key, value) {
                throw UsageError(message: "\(origin): \(schema.undeclared(path).message)")
            }
            do {
                try schema.validate(key, value)
            } catch {
                if schema[key] == nil, key != "now" { throw UsageError(message: "\(origin): \(error.message)") }
                warnMistyped("\(origin): \(error.message)")
            }
        }
        return context
    }

    /// Warns that a value does not fit its attribute and is evaluated as unknown.
    static func warnMistyped(_ problem: String) {
        Terminal.writeError("flags: warning: \(problem); it is evaluated as unknown, as a service would read it\n")
    }

    /// Sets the `-c key=value` assignments on `context`, typed by the schema.
    static func apply(_ assignments: [String], to context: inout EvaluationContext, schema: ContextSchema?) throws(UsageError) {
        for assignment in assignments {
            guard let eq = assignment.firstIndex(of: "="), eq != assignment.startIndex else {
                throw UsageError(message: "-c expects key=value, got '\(assignment)'", help: "as in -c build=alpha")
            }
            let key = String(assignment[..<eq])
            let text = String(assignment[assignment.index(after: eq)...])
            if Path.names(key).count > Path.maxNames {
                throw UsageError(message: "-c \(key.prefix(40))…: a path has at most \(Path.maxNames) names")
            }
            if let schema {
                do {
                    context.set(try schema.value(for: key, text: text), atPath: key)
                } catch {
                    throw UsageError(message: error.message)
                }
            } else {
                context.set(Value.inferred(from: text), atPath: key)
            }
        }
    }
}
