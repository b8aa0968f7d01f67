extension Diagnostic {
    /// The diagnostic as a JSON object for tools: file, line, column, endLine, endColumn,
    /// severity, code, message, and help, notes and fixes when present.
    package func json(file: String) -> JSON {
        var members: [(String, JSON)] = [
            ("file", .string(file)), ("line", .int(range.start.line)), ("column", .int(range.start.column)),
            ("endLine", .int(range.end.line)), ("endColumn", .int(range.end.column)),
            ("severity", .string(severity.rawValue)), ("code", .string(code)), ("message", .string(message)),
        ]
        if let help { members.append(("help", .string(help))) }
        if !notes.isEmpty {
            members.append(
                (
                    "notes",
                    .array(
                        notes.map { note in
                            var m: [(String, JSON)] = [("message", .string(note.message))]
                            if let r = note.range { m += [("line", .int(r.start.line)), ("column", .int(r.start.column))] }
                            return .object(m)
                        })
                ))
        }
        if !fixIts.isEmpty {
            members.append(
                (
                    "fixes",
                    .array(
                        fixIts.map { fix in
                            .object([
                                ("message", .string(fix.message)),
                                (
                                    "edits",
                                    .array(
                                        fix.edits.map { e in
                                            .object([
                                                ("line", .int(e.range.start.line)), ("column", .int(e.range.start.column)),
                                                ("endLine", .int(e.range.end.line)), ("endColumn", .int(e.range.end.column)),
                                                ("replacement", .string(e.replacement)),
                                            ])
                                        })
                                ),
                            ])
                        })
                ))
        }
        return .object(members)
    }
}
