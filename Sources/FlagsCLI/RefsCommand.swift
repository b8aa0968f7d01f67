import FlagRules
import FlagRulesTooling
import Foundation

/// `flags refs RULES... --source DIR...`: where code reads each declaration.
enum RefsCommand {
    static let help = """
        usage: flags refs FILE|DIR... --source DIR... [--format text|json|sarif]

        Finds every place in source code that reads a declaration of the rules: a string
        literal of its name in any language (Swift, Python, JavaScript, TypeScript, Kotlin,
        Java, Go, Ruby, C#, …) and, in Swift, the key the build plugin generates for it
        ('.darkMode'). Lists the declarations no code reads, and the names code reads as
        flags (the first argument of isEnabled, variant, value, getBooleanValue, …) that no
        rules file declares, with "did you mean". Comments and multi-line strings are
        skipped, and so are hidden directories, .build and node_modules.

        options:
          --source DIR...  directories (or files) of source code to search: every argument
                           after it up to the next option (--source Sources Tests)
          --format FORMAT  text (default), json, or sarif (unread declarations are warnings,
                           undeclared names errors)
          --help           show this help

        exit status: 0 every name code reads is declared, 1 code reads an undeclared name
        (or the rules have errors), 2 usage error

        """

    /// What `refs` found: each declaration's references, and the names read that no file declares.
    struct Findings {
        var declarations: [(file: String, info: DeclarationInfo, references: [CodeReference])] = []
        var undeclared: [(reference: CodeReference, suggestion: String?)] = []
        var unread: [(file: String, info: DeclarationInfo)] {
            declarations.filter { $0.references.isEmpty && $0.info.kind != .segment }.map { ($0.file, $0.info) }
        }
    }

    static func run(_ arguments: [String]) throws(UsageError) -> Int32 {
        let parsed = try ParsedArguments(
            arguments,
            specs: [
                OptionSpec(name: "help", short: "h"), OptionSpec(name: "source", takesValue: true, repeatable: true, takesSeveral: true),
                OptionSpec(name: "format", takesValue: true),
            ], command: "refs")
        if parsed.has("help") {
            Terminal.write(help)
            return 0
        }
        guard !parsed.positionals.isEmpty else {
            throw UsageError(message: "'refs' needs a rules file", help: "flags refs examples/ --source Sources/")
        }
        let sources = parsed.all("source")
        guard !sources.isEmpty else {
            throw UsageError(message: "'refs' needs --source DIR, the code to search", help: "flags refs examples/ --source Sources/")
        }
        try Terminal.checkExists(sources)
        let format = parsed.value("format") ?? "text"
        guard ["text", "json", "sarif"].contains(format) else {
            throw UsageError(message: "--format takes text, json or sarif, not '\(format)'")
        }
        guard let loaded = try Terminal.loadAll(parsed.positionals) else { return 1 }
        let findings = find(loaded, in: CodeScanner.files(under: sources))
        switch format {
        case "json": Terminal.write(json(findings).serialized(pretty: true) + "\n")
        case "sarif": Terminal.write(sarif(findings).serialized(pretty: true) + "\n")
        default: Terminal.write(text(findings))
        }
        return findings.undeclared.isEmpty ? 0 : 1
    }

    static func find(_ loaded: [(String, RuleSet)], in files: [String]) -> Findings {
        let names = Set(loaded.flatMap { $0.1.declarations.map(\.name) })
        var references: [CodeReference] = []
        for file in files {
            guard let data = FileManager.default.contents(atPath: file), data.count <= CodeScanner.maxFileBytes else { continue }
            references += CodeScanner.scan(String(decoding: data, as: UTF8.self), file: file, names: names)
        }
        var byName: [String: [CodeReference]] = [:]
        var findings = Findings()
        for r in references {
            if names.contains(r.name) {
                byName[r.name, default: []].append(r)
            } else if r.isFlagRead {
                findings.undeclared.append((r, Suggestions.closest(to: r.name, in: names)))
            }
        }
        for (file, rules) in loaded {
            for d in rules.declarations { findings.declarations.append((file, d, byName[d.name] ?? [])) }
        }
        return findings
    }

    static func text(_ f: Findings) -> String {
        var out = ""
        for (file, d, references) in f.declarations where d.kind != .segment {
            out += "\(d.name) (\(d.kind.rawValue), \(file):\(d.line)): "
            out += references.isEmpty ? "read by no code\n" : "\(references.count) reference\(references.count == 1 ? "" : "s")\n"
            for r in references { out += "  \(r.file):\(r.line):\(r.column)  \(r.kind.rawValue)\n" }
        }
        let unread = f.unread
        out += "\n\(unread.count) declaration\(unread.count == 1 ? "" : "s") read by no code"
        out += unread.isEmpty ? "\n" : ": " + unread.map(\.info.name).joined(separator: ", ") + "\n"
        for (r, suggestion) in f.undeclared {
            out += "\(r.file):\(r.line):\(r.column): error: '\(r.name)' is read as a flag but no rules file declares it"
            out += suggestion.map { "; did you mean '\($0)'?" } ?? ""
            out += "\n"
        }
        return out
    }

    static func json(_ f: Findings) -> JSON {
        func reference(_ r: CodeReference) -> JSON {
            .object([("file", .string(r.file)), ("line", .int(r.line)), ("column", .int(r.column)), ("kind", .string(r.kind.rawValue))])
        }
        return .object([
            (
                "declarations",
                .array(
                    f.declarations.filter { $0.info.kind != .segment }.map { file, d, references in
                        .object([
                            ("name", .string(d.name)), ("kind", .string(d.kind.rawValue)), ("file", .string(file)), ("line", .int(d.line)),
                            ("references", .array(references.map(reference))),
                        ])
                    })
            ),
            ("unread", .array(f.unread.map { .string($0.info.name) })),
            (
                "undeclared",
                .array(
                    f.undeclared.map { r, suggestion in
                        var m: [(String, JSON)] = [
                            ("name", .string(r.name)), ("file", .string(r.file)), ("line", .int(r.line)), ("column", .int(r.column)),
                        ]
                        if let suggestion { m.append(("suggestion", .string(suggestion))) }
                        return .object(m)
                    })
            ),
        ])
    }

    /// Unread declarations as warnings at their declaration, undeclared names as errors
    /// where code reads them.
    static func sarif(_ f: Findings) -> JSON {
        var diagnostics: [(file: String, diagnostic: Diagnostic)] = []
        for (file, d) in f.unread {
            let start = SourcePosition(offset: 0, line: d.line, column: 1)
            diagnostics.append(
                (
                    file,
                    .warning(
                        "unread-declaration", "'\(d.name)' is read by no code", at: SourceRange(start: start, end: start),
                        help: "remove it (flags stale lists the edit)")
                ))
        }
        for (r, suggestion) in f.undeclared {
            let start = SourcePosition(offset: 0, line: r.line, column: r.column)
            diagnostics.append(
                (
                    r.file,
                    .error(
                        "undeclared-flag", "'\(r.name)' is read as a flag but no rules file declares it",
                        at: SourceRange(start: start, end: start), help: suggestion.map { "did you mean '\($0)'?" })
                ))
        }
        return SARIF.log(diagnostics)
    }
}
