import FlagRules

extension Lint {
    /// FR107: an attribute of the schema, or a field of an object attribute, that no rule
    /// reads: the app sends it for nothing, or a rule that should read it reads another. A
    /// path read (`org.billing.country`) reads the objects on its way; an object that is
    /// not read at all is named once, not with each of its fields.
    static let unusedAttribute = Lint(
        code: "FR107", name: "unused-attribute", summary: "a context attribute that no rule reads"
    ) { input in
        var read = Set<String>()
        for condition in input.conditions {
            condition.forEach { b in
                switch b.kind {
                case .attribute(let name, _, _), .has(let name, _):
                    read.insert(name)
                    guard name.utf8.contains(UInt8(ascii: ".")) else { break }
                    var path = name.utf8[...]
                    while let dot = path.lastIndex(of: UInt8(ascii: ".")) {
                        path = path[..<dot]
                        read.insert(String(decoding: path, as: UTF8.self))
                    }
                default: break
                }
            }
        }
        var out: [Diagnostic] = []
        let attributes = input.checked.schema?.attributes ?? []
        for attribute in attributes where !read.contains(attribute.name) {
            let ranges = input.checked.symbols.attributeRanges
            guard ranges.indices.contains(attribute.slot) else { continue }
            if let parent = attribute.parent {
                // An unread object is named itself.
                guard read.contains(attributes[parent].name) else { continue }
                out.append(
                    .warning(
                        "FR107", "field '\(attribute.fieldName)' of '\(attributes[parent].name)' is read by no rule",
                        at: ranges[attribute.slot], help: "remove it from the object's type, or read it in a rule"))
                continue
            }
            out.append(
                .warning(
                    "FR107", "context attribute '\(attribute.name)' is read by no rule", at: ranges[attribute.slot],
                    help: "remove it from the schema, or read it in a rule"))
        }
        return out
    }
}
