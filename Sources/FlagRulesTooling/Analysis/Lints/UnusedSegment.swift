import FlagRules

extension Lint {
    /// FR106: a segment that no rule, segment or test reads decides nothing.
    static let unusedSegment = Lint(
        code: "FR106", name: "unused-segment", summary: "a segment that nothing reads"
    ) { input in
        let read = input.declarationsRead
        return input.checked.declarations.indices.compactMap { i in
            let d = input.checked.declarations[i]
            guard d.kind == .segment, d.condition != nil, !read.contains(i) else { return nil }
            return .warning(
                "FR106", "segment '\(d.name)' is read by no rule, segment or test", at: d.range,
                help: "remove it, or use it in a rule",
                fixIts: [Diagnostic.deletingLines(of: d.range, in: input.source, message: "remove segment '\(d.name)'", docComment: true)]
                    .compactMap { $0 })
        }
    }
}
