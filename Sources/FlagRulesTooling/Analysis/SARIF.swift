import FlagRules

extension Diagnostic {
    /// A SARIF region: lines and columns (in Unicode scalars: the run says so).
    static func sarifRegion(_ r: SourceRange) -> JSON {
        .object([
            ("startLine", .int(r.start.line)), ("startColumn", .int(r.start.column)),
            ("endLine", .int(r.end.line)), ("endColumn", .int(r.end.column)),
        ])
    }
}

/// Diagnostics as a SARIF 2.1.0 log (what code-scanning views read): one run of the tool
/// `flags`, its rules the lints (each with its name and summary) and every other code
/// reported, and one result a diagnostic with its file and region.
package enum SARIF {
    /// The log of `diagnostics`, each with the file it was found in.
    package static func log(_ diagnostics: [(file: String, diagnostic: Diagnostic)]) -> JSON {
        var rules: [JSON] = Lint.all.map { lint in
            .object([
                ("id", .string(lint.code)), ("name", .string(lint.name)),
                ("shortDescription", .object([("text", .string(lint.summary))])),
            ])
        }
        var known = Set(Lint.all.map(\.code))
        for (_, d) in diagnostics where known.insert(d.code).inserted {
            rules.append(.object([("id", .string(d.code)), ("shortDescription", .object([("text", .string(d.code))]))]))
        }
        let results: [JSON] = diagnostics.map { file, d in
            var text = d.message
            if let help = d.help { text += " (help: \(help))" }
            let region = Diagnostic.sarifRegion(d.range)
            var result: [(String, JSON)] = [
                ("ruleId", .string(d.code)), ("level", .string(d.severity == .error ? "error" : "warning")),
                ("message", .object([("text", .string(text))])),
                (
                    "locations",
                    .array([
                        .object([
                            (
                                "physicalLocation",
                                .object([("artifactLocation", .object([("uri", .string(file))])), ("region", region)])
                            )
                        ])
                    ])
                ),
            ]
            if !d.fixIts.isEmpty {
                let fixes: [JSON] = d.fixIts.map { fix in
                    let replacements: [JSON] = fix.edits.map {
                        .object([
                            ("deletedRegion", Diagnostic.sarifRegion($0.range)),
                            ("insertedContent", .object([("text", .string($0.replacement))])),
                        ])
                    }
                    return .object([
                        ("description", .object([("text", .string(fix.message))])),
                        (
                            "artifactChanges",
                            .array([
                                .object([("artifactLocation", .object([("uri", .string(file))])), ("replacements", .array(replacements))])
                            ])
                        ),
                    ])
                }
                result.append(("fixes", .array(fixes)))
            }
            return .object(result)
        }
        let driver: JSON = .object([("name", .string("flags")), ("rules", .array(rules))])
        return .object([
            ("$schema", .string("https://json.schemastore.org/sarif-2.1.0.json")),
            ("version", .string("2.1.0")),
            (
                "runs",
                .array([
                    .object([
                        ("tool", .object([("driver", driver)])), ("columnKind", .string("unicodeCodePoints")),
                        ("results", .array(results)),
                    ])
                ])
            ),
        ])
    }
}
