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

        A context key is an attribute's name, dots and all: a field is given inside its
        object ({"org": {"plan": "team"}}), or with -c org.plan=team. A key the schema does
        not declare, and a value that does not fit its attribute, are named in a warning and
        evaluated as a service reads them: no rule reads the key, the value is unknown.

        exit status: 0 resolved, 1 errors in the rules, 2 usage error (bad file, unknown name,
        a -c value that does not fit the schema)

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
        var warnings = ContextWarnings()
        defer { warnings.finish() }
        guard let linesPath = parsed.value("contexts") else {
            let context = try buildContext(parsed, rules: rules, warnings: &warnings)
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
            var context = try jsonContext(text, origin: "\(origin):\(i + 1)", rules: rules, warnings: &warnings)
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

    static func buildContext(_ parsed: ParsedArguments, rules: RuleSet, warnings: inout ContextWarnings) throws(UsageError)
        -> EvaluationContext
    {
        var context = EvaluationContext()
        if let jsonPath = parsed.value("context-json") {
            let bytes = try Terminal.read(jsonPath)
            context = try jsonContext(
                String(decoding: bytes, as: UTF8.self), origin: jsonPath == "-" ? "<stdin>" : jsonPath, rules: rules,
                warnings: &warnings)
        }
        try apply(parsed.all("context"), to: &context, schema: rules.schema)
        return context
    }

    /// The context a JSON object gives; errors name `origin`. Its problems for the rules'
    /// schema (`RuleSet.problems(in:)`: an undeclared key, a dotted key, a mistyped value)
    /// are kept, as a service would get them, and named in warnings.
    static func jsonContext(_ text: String, origin: String, rules: RuleSet, warnings: inout ContextWarnings) throws(UsageError)
        -> EvaluationContext
    {
        let context: EvaluationContext
        do {
            context = try EvaluationContext(json: text)
        } catch {
            throw UsageError(message: "\(origin): \(error.message)")
        }
        for problem in rules.problems(in: context) {
            warnings.add(problem, given: context.value(atPath: problem.attribute), at: origin)
        }
        return context
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

/// The warnings of `flags eval` about its contexts: each problem once, at the first place
/// it is found, and a count of the places it recurs (a file of many contexts with one
/// extra key is one warning, not one a line); at most 20 distinct problems are named.
struct ContextWarnings {
    private var order: [String] = []
    private var seen: [String: (origin: String, more: Int)] = [:]
    private var unnamed = 0
    static let limit = 20

    /// Adds `problem`, whose value as given (for a mistyped one) is `value`.
    mutating func add(_ problem: ContextProblem, given value: Value?, at origin: String) {
        var text = problem.description
        if case .mistyped = problem.kind, let value { text += ", got \(value)" }
        text += ContextWarnings.consequence(problem)
        if let first = seen[text] {
            seen[text] = (first.origin, first.more + 1)
        } else if order.count < ContextWarnings.limit {
            order.append(text)
            seen[text] = (origin, 0)
        } else {
            unnamed += 1
        }
    }

    static func consequence(_ problem: ContextProblem) -> String {
        switch problem.kind {
        case .mistyped: return "; it is evaluated as unknown, as a service would read it"
        case .unknownAttribute, .fieldPathAsKey: return "; no rule reads it"
        }
    }

    /// Writes the warnings to standard error.
    func finish() {
        for text in order {
            guard let place = seen[text] else { continue }
            let more = place.more > 0 ? " (and in \(place.more) more context\(place.more == 1 ? "" : "s"))" : ""
            Terminal.writeError("flags: warning: \(place.origin): \(text)\(more)\n")
        }
        if unnamed > 0 { Terminal.writeError("flags: warning: \(unnamed) more problems of the contexts are not named\n") }
    }
}
