import FlagRules

extension Lint {
    /// FR107: an attribute of the schema that no rule reads: the app sends it for nothing,
    /// or a rule that should read it reads another.
    static let unusedAttribute = Lint(
        code: "FR107", name: "unused-attribute", summary: "a context attribute that no rule reads"
    ) { input in
        var read = Set<String>()
        for condition in input.conditions {
            condition.forEach { b in
                switch b.kind {
                case .attribute(let name, _, _), .has(let name, _): read.insert(name)
                default: break
                }
            }
        }
        var out: [Diagnostic] = []
        for attribute in input.checked.schema?.attributes ?? [] where !read.contains(attribute.name) {
            let ranges = input.checked.symbols.attributeRanges
            guard ranges.indices.contains(attribute.slot) else { continue }
            out.append(
                .warning(
                    "FR107", "context attribute '\(attribute.name)' is read by no rule", at: ranges[attribute.slot],
                    help: "remove it from the schema, or read it in a rule"))
        }
        return out
    }
}
