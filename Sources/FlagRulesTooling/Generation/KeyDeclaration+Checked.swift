import FlagRules
import FlagRulesKeys

extension KeyDeclaration {
    /// The key of a checked declaration (`flags generate swift`), or nil for a segment. The
    /// build plugin reads the same from the file's syntax (`read(_:)`); the two agree on
    /// every file that checks.
    package init?(_ info: DeclarationInfo) {
        let kind: Kind
        switch info.kind {
        case .flag:
            kind = .flag(default: info.isDisabled ? false : (info.defaultValue.boolValue ?? false))
        case .variant:
            kind = .variant(cases: info.variants, default: info.defaultValue.stringValue ?? info.variants.first ?? "")
        case .value:
            switch info.defaultValue {
            case .bool(let b): kind = .value(type: "Swift.Bool", typeName: "bool", default: "\(b)")
            case .int(let i): kind = .value(type: "Swift.Int", typeName: "int", default: "\(i)")
            case .double(let d): kind = .value(type: "Swift.Double", typeName: "double", default: KeyDeclaration.doubleLiteral(d))
            case .string(let s): kind = .value(type: "Swift.String", typeName: "string", default: SwiftKeyGenerator.literal(s))
            default: return nil
            }
        case .segment:
            return nil
        }
        self.init(name: info.name, kind: kind, doc: info.doc, line: info.line)
    }
}
