import FlagRules
import Foundation

/// `flags list FILE|DIR... [--json]`: every declaration with its metadata.
enum ListCommand {
    static let help = """
        usage: flags list FILE|DIR... [--json]

        Lists every flag, variant, value and segment with its kind, type, default, variants,
        owner, expiry, rule count and doc comment: the data a debug screen or an audit needs.
        Several files (a directory: its .flags files) are listed one after another, each
        under its name.

        options:
          --json      print a JSON array of objects, each with the file it is declared in,
                      its lines ("line", "endLine"), the context attributes it reads with
                      their types ("reads"), and the shares its rules serve: each split's
                      outcomes in percent ("splits"), each rollout ("rollouts") and each
                      ramp's course ("ramps"), each with its rule's number
          --help      show this help

        exit status: 0 listed, 1 errors in the rules, 2 usage error

        """

    static func run(_ arguments: [String]) throws(UsageError) -> Int32 {
        let parsed = try ParsedArguments(
            arguments, specs: [OptionSpec(name: "help", short: "h"), OptionSpec(name: "json")], command: "list")
        if parsed.has("help") {
            Terminal.write(help)
            return 0
        }
        guard !parsed.positionals.isEmpty else {
            throw UsageError(message: "'list' needs a file", help: "flags list examples/app.flags")
        }
        let paths = try Terminal.flagsFiles(parsed.positionals)
        var json: [JSON] = []
        var failed = false
        for (k, path) in paths.enumerated() {
            guard let rules = try Terminal.loadRules(path) else {
                failed = true
                continue
            }
            let name = path == "-" ? "<stdin>" : path
            if parsed.has("json") {
                json += rules.declarations.map { d in
                    guard case .object(let members) = d.json else { return d.json }
                    return .object([("file", .string(name))] + members)
                }
            } else {
                if paths.count > 1 { Terminal.write((k > 0 ? "\n" : "") + name + ":\n") }
                Terminal.write(text(rules.declarations))
            }
        }
        if parsed.has("json") { Terminal.write(JSON.array(json).serialized(pretty: true) + "\n") }
        return failed ? 1 : 0
    }

    /// One line per declaration, names and kinds aligned, doc comments below.
    static func text(_ declarations: [DeclarationInfo]) -> String {
        let nameWidth = declarations.map(\.name.count).max() ?? 0
        var out = ""
        for d in declarations {
            var line =
                d.name.padding(toLength: nameWidth, withPad: " ", startingAt: 0) + "  "
                + d.kind.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0) + "  "
            switch d.kind {
            case .variant: line += "[" + d.variants.joined(separator: ", ") + "] = " + (d.defaultValue.stringValue ?? "")
            case .segment: line += "bool"
            default: line += "\(d.type) = \(d.defaultValue)"
            }
            var details: [String] = []
            if d.kind != .segment { details.append("\(d.ruleCount) rule\(d.ruleCount == 1 ? "" : "s")") }
            if d.isDisabled { details.append("@disabled") }
            if let owner = d.owner { details.append("owner \(owner)") }
            if let expires = d.expires {
                let date = String(DateTime.format(expires).prefix(10))
                details.append(expires < Date() ? "expired \(date)" : "expires \(date)")
            }
            details.append("line \(d.line)")
            line += "  (" + details.joined(separator: ", ") + ")"
            out += line + "\n"
            if let doc = d.doc {
                for docLine in doc.split(separator: "\n", omittingEmptySubsequences: false) {
                    out += String(repeating: " ", count: nameWidth + 2) + "/// " + docLine + "\n"
                }
            }
        }
        return out
    }
}
