import FlagRules

/// A command-line mistake: printed as `flags: error: …` and exits with status 2.
struct UsageError: Error, Sendable {
    let message: String
    var help: String?
}

/// One option a command accepts.
struct OptionSpec {
    let name: String
    var short: Character?
    var takesValue = false
    var repeatable = false
    /// Whether the option takes every argument after it up to the next option
    /// (`--source Sources Tests`).
    var takesSeveral = false
}

/// Arguments split into options and positionals, with "did you mean" for unknown options.
struct ParsedArguments {
    var positionals: [String] = []
    private(set) var values: [String: [String]] = [:]
    private(set) var flags: Set<String> = []

    func has(_ name: String) -> Bool { flags.contains(name) }
    func value(_ name: String) -> String? { values[name]?.last }
    func all(_ name: String) -> [String] { values[name] ?? [] }

    /// Parses `--name`, `--name value`, `--name=value`, `-x value`, `-xvalue`; `--` ends
    /// options and a lone `-` is a positional (standard input).
    init(_ arguments: [String], specs: [OptionSpec], command: String) throws(UsageError) {
        var i = 0
        var onlyPositionals = false
        while i < arguments.count {
            let arg = arguments[i]
            i += 1
            if onlyPositionals || arg == "-" || !arg.hasPrefix("-") {
                positionals.append(arg)
                continue
            }
            if arg == "--" { onlyPositionals = true; continue }
            var name: String
            var inline: String?
            let spec: OptionSpec
            if arg.hasPrefix("--") {
                let body = arg.dropFirst(2)
                if let eq = body.firstIndex(of: "=") {
                    name = String(body[..<eq])
                    inline = String(body[body.index(after: eq)...])
                } else {
                    name = String(body)
                }
                guard let found = specs.first(where: { $0.name == name }) else {
                    let suggestion = Suggestions.closest(to: name, in: specs.map(\.name)).map { "; did you mean '--\($0)'?" } ?? ""
                    throw UsageError(
                        message: "unknown option '--\(name)' for '\(command)'" + suggestion,
                        help: "run 'flags \(command) --help' for the options")
                }
                spec = found
            } else {
                let letter = arg[arg.index(after: arg.startIndex)]
                guard let found = specs.first(where: { $0.short == letter }) else {
                    throw UsageError(
                        message: "unknown option '\(arg)' for '\(command)'", help: "run 'flags \(command) --help' for the options")
                }
                spec = found
                name = found.name
                let rest = arg.dropFirst(2)
                if !rest.isEmpty { inline = String(rest) }
            }
            if spec.takesValue {
                let value: String
                if let inline {
                    value = inline
                } else {
                    guard i < arguments.count else {
                        throw UsageError(message: "option '--\(spec.name)' needs a value")
                    }
                    value = arguments[i]
                    i += 1
                }
                if !spec.repeatable, values[spec.name] != nil {
                    throw UsageError(message: "option '--\(spec.name)' is given twice")
                }
                values[spec.name, default: []].append(value)
                if spec.takesSeveral, inline == nil {
                    while i < arguments.count, !arguments[i].hasPrefix("-") {
                        values[spec.name, default: []].append(arguments[i])
                        i += 1
                    }
                }
            } else {
                if inline != nil { throw UsageError(message: "option '--\(spec.name)' takes no value") }
                flags.insert(spec.name)
            }
        }
    }
}
