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
    package struct Note: Sendable, Hashable {
        /// What the note says.
        package var message: String
        /// Where it points, if anywhere.
        package var range: SourceRange?

        /// A note.
        package init(_ message: String, at range: SourceRange? = nil) {
            self.message = message
            self.range = range
        }
    }

    /// One change to the source: the text of `range` replaced (empty: deleted).
    package struct Edit: Sendable, Hashable {
        /// What is replaced (an empty range: an insertion there).
        package var range: SourceRange
        /// What replaces it.
        package var replacement: String

        /// An edit.
        package init(_ range: SourceRange, _ replacement: String) {
            self.range = range
            self.replacement = replacement
        }
    }

    /// A fix for the problem: edits to make together, and what they do.
    package struct FixIt: Sendable, Hashable {
        /// What the fix does, as an editor's quick-fix menu shows it ("replace with '50%'").
        package var message: String
        /// The edits, none overlapping.
        package var edits: [Edit]

        /// A fix.
        package init(_ message: String, _ edits: [Edit]) {
            self.message = message
            self.edits = edits
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
    package var notes: [Note]
    /// A suggestion of how to fix it.
    public var help: String?
    /// Fixes an editor or `flags check --fix` can apply, the likeliest first; `--fix` applies
    /// a diagnostic's fix only when it has exactly one.
    package var fixIts: [FixIt]

    /// A diagnostic.
    package init(
        _ severity: Severity, _ code: String, _ message: String, at range: SourceRange,
        notes: [Note] = [], help: String? = nil, fixIts: [FixIt] = []
    ) {
        self.severity = severity
        self.code = code
        self.message = message
        self.range = range
        self.notes = notes
        self.help = help
        self.fixIts = fixIts
    }

    /// An error.
    package static func error(
        _ code: String, _ message: String, at range: SourceRange,
        notes: [Note] = [], help: String? = nil, fixIts: [FixIt] = []
    ) -> Diagnostic {
        Diagnostic(.error, code, message, at: range, notes: notes, help: help, fixIts: fixIts)
    }

    /// A warning.
    package static func warning(
        _ code: String, _ message: String, at range: SourceRange,
        notes: [Note] = [], help: String? = nil, fixIts: [FixIt] = []
    ) -> Diagnostic {
        Diagnostic(.warning, code, message, at: range, notes: notes, help: help, fixIts: fixIts)
    }
}

/// Diagnostics collected by one pipeline stage.
package struct DiagnosticBag: Sendable {
    package var items: [Diagnostic] = []
    /// The errors reported so far, with those of the stages before (`init(errorsSoFar:)`).
    package private(set) var errorCount = 0
    /// Whether `Diagnostic.errorLimit` errors have been reported: the stage stops, and
    /// later errors are dropped.
    package private(set) var isFull = false

    /// A bag for a stage that follows stages which reported `errorsSoFar` errors.
    package init(errorsSoFar: Int = 0) {
        errorCount = errorsSoFar
        isFull = errorsSoFar >= Diagnostic.errorLimit
    }

    package var hasErrors: Bool { errorCount > 0 }

    package mutating func error(
        _ code: String, _ message: String, at range: SourceRange,
        notes: [Diagnostic.Note] = [], help: String? = nil
    ) {
        guard !isFull else { return }
        items.append(.error(code, message, at: range, notes: notes, help: help))
        errorCount += 1
        if errorCount >= Diagnostic.errorLimit {
            isFull = true
            items.append(.tooManyErrors(at: range))
        }
    }

    package mutating func warning(
        _ code: String, _ message: String, at range: SourceRange,
        notes: [Diagnostic.Note] = [], help: String? = nil
    ) {
        items.append(.warning(code, message, at: range, notes: notes, help: help))
    }
}

extension Diagnostic {
    /// After this many errors, loading stops and says so (as clang's `-ferror-limit`): the
    /// time, memory and output of loading any input stay bounded.
    package static let errorLimit = 30

    /// `too many errors (100); stopping`.
    package static func tooManyErrors(at range: SourceRange) -> Diagnostic {
        .error("too-many-errors", "too many errors (\(errorLimit)); stopping", at: range)
    }
}
