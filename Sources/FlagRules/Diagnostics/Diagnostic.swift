/// A problem found in a `.flags` file, located at a source range.
public struct Diagnostic: Sendable, Hashable {
    /// How serious it is.
    public enum Severity: String, Sendable, Hashable {
        /// The file cannot be loaded.
        case error
        /// The file loads, but something is likely wrong (an expired flag, an unreachable rule).
        case warning
    }

    /// A secondary message, optionally pointing at another place.
    public struct Note: Sendable, Hashable {
        /// What the note says.
        public var message: String
        /// Where it points, if anywhere.
        public var range: SourceRange?

        /// A note.
        package init(_ message: String, at range: SourceRange? = nil) {
            self.message = message
            self.range = range
        }
    }

    /// Error or warning.
    public var severity: Severity
    /// A stable kebab-case identifier of the kind of problem (`unknown-name`, `type-mismatch`, …).
    public var code: String
    /// The message, lowercase, without a final period.
    public var message: String
    /// The span the message is about.
    public var range: SourceRange
    /// Notes pointing at related places.
    public var notes: [Note]
    /// A suggestion of how to fix it.
    public var help: String?

    /// A diagnostic.
    package init(
        _ severity: Severity, _ code: String, _ message: String, at range: SourceRange,
        notes: [Note] = [], help: String? = nil
    ) {
        self.severity = severity
        self.code = code
        self.message = message
        self.range = range
        self.notes = notes
        self.help = help
    }

    /// An error.
    package static func error(
        _ code: String, _ message: String, at range: SourceRange,
        notes: [Note] = [], help: String? = nil
    ) -> Diagnostic {
        Diagnostic(.error, code, message, at: range, notes: notes, help: help)
    }

    /// A warning.
    package static func warning(
        _ code: String, _ message: String, at range: SourceRange,
        notes: [Note] = [], help: String? = nil
    ) -> Diagnostic {
        Diagnostic(.warning, code, message, at: range, notes: notes, help: help)
    }
}

/// Diagnostics collected by one pipeline stage.
struct DiagnosticBag: Sendable {
    var items: [Diagnostic] = []

    var hasErrors: Bool { items.contains { $0.severity == .error } }

    mutating func error(
        _ code: String, _ message: String, at range: SourceRange,
        notes: [Diagnostic.Note] = [], help: String? = nil
    ) {
        items.append(.error(code, message, at: range, notes: notes, help: help))
    }

    mutating func warning(
        _ code: String, _ message: String, at range: SourceRange,
        notes: [Diagnostic.Note] = [], help: String? = nil
    ) {
        items.append(.warning(code, message, at: range, notes: notes, help: help))
    }
}
