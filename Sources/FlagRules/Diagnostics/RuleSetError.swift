import Foundation

/// Why a rule set did not load.
public enum RuleSetError: Error, CustomStringConvertible {
    /// The file could not be read; `underlying` says why.
    case unreadable(name: String, underlying: any Error)
    /// The source has errors: every diagnostic (warnings too), with the source to render
    /// them against.
    case invalid(source: SourceText, diagnostics: [Diagnostic])

    /// Every diagnostic, errors and warnings, in order (none when the file was unreadable).
    public var diagnostics: [Diagnostic] {
        if case .invalid(_, let diagnostics) = self { return diagnostics }
        return []
    }

    /// Only the errors.
    public var errors: [Diagnostic] { diagnostics.filter { $0.severity == .error } }

    /// The source that failed (empty, with the file's name, when it could not be read).
    public var source: SourceText {
        switch self {
        case .invalid(let source, _): return source
        case .unreadable(let name, _): return SourceText("", name: name)
        }
    }

    /// Every diagnostic rendered as `path:line:col: error: message` with source lines, or
    /// why the file could not be read.
    public var description: String {
        switch self {
        case .unreadable(let name, let underlying):
            return "cannot read \(name): \((underlying as NSError).localizedDescription)"
        case .invalid(let source, let diagnostics):
            return DiagnosticRenderer().render(diagnostics, in: source)
        }
    }
}
