extension Diagnostic {
    /// The diagnostic as a JSON object for tools: file, line, column, endLine, endColumn,
    /// severity, code, message, and help and notes when present.
    public func json(file: String) -> JSON {
        var members: [(String, JSON)] = [
            ("file", .string(file)), ("line", .int(range.start.line)), ("column", .int(range.start.column)),
            ("endLine", .int(range.end.line)), ("endColumn", .int(range.end.column)),
            ("severity", .string(severity.rawValue)), ("code", .string(code)), ("message", .string(message)),
        ]
        if let help { members.append(("help", .string(help))) }
        if !notes.isEmpty {
            members.append(("notes", .array(notes.map { note in
                var m: [(String, JSON)] = [("message", .string(note.message))]
                if let r = note.range { m += [("line", .int(r.start.line)), ("column", .int(r.start.column))] }
                return .object(m)
            })))
        }
        return .object(members)
    }
}

extension DeclarationInfo {
    /// The declaration's metadata as JSON (for `flags list --json` and debug screens).
    public var json: JSON {
        var members: [(String, JSON)] = [
            ("name", .string(name)), ("kind", .string(kind.rawValue)), ("type", .string(type)),
            ("default", defaultValue.json),
        ]
        if kind == .variant { members.append(("variants", .array(variants.map { .string($0) }))) }
        if let owner { members.append(("owner", .string(owner))) }
        if let expires { members.append(("expires", .string(String(DateTime.format(expires).prefix(10))))) }
        if let doc { members.append(("doc", .string(doc))) }
        members.append(("disabled", .bool(isDisabled)))
        members.append(("rules", .int(ruleCount)))
        members.append(("line", .int(line)))
        return .object(members)
    }
}
