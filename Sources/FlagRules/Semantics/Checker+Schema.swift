/// The `context` block: the schema's attributes and their types.
extension Checker {
    mutating func buildSchema(_ c: ContextSyntax) -> ContextSchema {
        for a in c.header.attributes {
            diagnostics.error("misplaced-attribute", "attributes cannot be applied to the context block", at: a.range)
        }
        var seen: [String: SourceRange] = [:]
        var fields: [(String, FlagType)] = []
        for f in c.fields {
            let name = f.name.name
            if let first = seen[name] {
                diagnostics.error(
                    "duplicate-attribute", "context attribute '\(name)' is declared twice", at: f.name.range,
                    notes: [.init("the first declaration is here", at: first)])
                continue
            }
            seen[name] = f.name.range
            if name == "now" {
                diagnostics.error(
                    "reserved-name", "'now' is the evaluation time and cannot be declared in the context", at: f.name.range,
                    help: "pass 'now' in the context to override the evaluation time")
                continue
            }
            if let d = declarationIndex[name] {
                diagnostics.error(
                    "duplicate-name", "'\(name)' is both a context attribute and a declaration", at: f.name.range,
                    notes: [.init("the declaration is here", at: declarations[d].header.name.range)])
            }
            // An attribute whose type has an error is still declared, untyped, so that its
            // uses are not reported as unknown names too (the file does not load anyway).
            let type = resolveType(f.type) ?? .dynamic
            fields.append((name, type))
            appendRanges(f, type)
        }
        return ContextSchema(fields)
    }

    /// Where the attribute `f` and, for an object, each of its fields kept in `type` are
    /// written, in the schema's slot order (an object, then its fields, depth first).
    private mutating func appendRanges(_ f: ContextFieldSyntax, _ type: FlagType) {
        schemaRanges.append(f.name.range)
        guard let fields = type.fields, case .object(let written) = f.type.kind else { return }
        for field in fields {
            if let syntax = written.first(where: { $0.name.name == field.name }) { appendRanges(syntax, field.type) }
        }
    }

    mutating func resolveType(_ t: TypeSyntax) -> FlagType? {
        switch t.kind {
        case .object(let written):
            if written.isEmpty {
                diagnostics.error(
                    "empty-object", "an object type needs at least one field", at: t.range,
                    help: "write its fields, as in { id : string, plan : enum(free, team) }")
                return nil
            }
            var seen: [String: SourceRange] = [:]
            var fields: [(name: String, type: FlagType)] = []
            for f in written {
                if let first = seen[f.name.name] {
                    diagnostics.error(
                        "duplicate-attribute", "field '\(f.name.name)' is declared twice", at: f.name.range,
                        notes: [.init("the first declaration is here", at: first)])
                    continue
                }
                seen[f.name.name] = f.name.range
                fields.append((f.name.name, resolveType(f.type) ?? .dynamic))
            }
            return .object(names: fields.map { $0.name }, types: fields.map { $0.type })
        case .enumeration(let cases):
            if cases.isEmpty {
                diagnostics.error("empty-enum", "an enum needs at least one case", at: t.range)
                return nil
            }
            var seen = Set<String>()
            for c in cases where !seen.insert(c.name).inserted {
                diagnostics.error("duplicate-case", "enum case '\(c.name)' is listed twice", at: c.range)
            }
            return .enumeration(cases.map(\.name))
        case .list(let element):
            guard let inner = resolveType(element) else { return nil }
            switch inner {
            case .string, .int, .enumeration: return .list(inner)
            default:
                diagnostics.error(
                    "unknown-type", "'[\(Parser.typeText(element))]' is not a type", at: t.range,
                    help: "a list holds strings, ints or the cases of an enum: [string], [int] or [enum(a, b)]")
                return nil
            }
        case .named(let name):
            switch name.name {
            case "string": return .string
            case "int": return .int
            case "double": return .double
            case "bool": return .bool
            case "version": return .version
            case "datetime": return .datetime
            case "ip": return .ip
            case "enum":
                diagnostics.error("unknown-type", "an enum lists its cases, as in enum(debug, release)", at: name.range)
                return nil
            default:
                let suggestion =
                    Checker.typeAliases[name.name].map { "; did you mean '\($0)'?" } ?? didYouMean(name.name, Checker.typeNames)
                diagnostics.error(
                    "unknown-type", "unknown type '\(name.name)'" + suggestion,
                    at: name.range,
                    help: "the types are string, int, double, bool, version, datetime, ip, enum(…) and lists such as [string]")
                return nil
            }
        }
    }

    func didYouMean<S: Sequence>(_ name: String, _ candidates: S) -> String where S.Element == String {
        Suggestions.closest(to: name, in: candidates).map { "; did you mean '\($0)'?" } ?? ""
    }
}
