import FlagRules

extension Lint {
    /// FR112 (with `--require-owners`): a flag, variant or value without `@owner("…")`: no
    /// one to ask when it misbehaves, or to remind when it expires.
    static let missingOwner = Lint(
        code: "FR112", name: "missing-owner", summary: "a declaration without @owner, when owners are required"
    ) { input in
        guard input.options.requiresOwners else { return [] }
        return input.checked.declarations.compactMap { d in
            guard d.kind != .segment, d.owner == nil else { return nil }
            return .warning(
                "FR112", "\(d.kind.rawValue) '\(d.name)' has no @owner", at: d.range,
                help: "add @owner(\"team\") above it")
        }
    }
}
