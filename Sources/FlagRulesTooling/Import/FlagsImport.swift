import FlagRules
import Foundation

/// `flags import`: another flag system's file as an equivalent `.flags` file.
package enum FlagsImport {
    /// The result: the formatted `.flags` text and what was not carried over exactly.
    package struct Result: Sendable {
        package let text: String
        package let notes: [ImportNote]
        /// Whether anything was left out or imported with another meaning.
        package var isExact: Bool { !notes.contains { $0.kind == .notImported } }
    }

    /// The largest file read (a vendor export of thousands of flags is a few MiB).
    package static let maximumSize = 32 << 20

    /// Imports `bytes`, a file of `format`, named `name` in messages. Throws for a file
    /// that is not one of `format` at all (not JSON, not its shape).
    package static func run(_ bytes: [UInt8], from format: ImportFormat, name: String) throws(ImportError) -> Result {
        guard bytes.count <= maximumSize else {
            throw ImportError("\(name) is \(bytes.count) bytes; the most 'flags import' reads is \(maximumSize)")
        }
        let json: JSON
        do {
            json = try JSON.parse(bytes: bytes)
        } catch {
            throw ImportError("\(name) is not JSON: \(error)")
        }
        let file: ImportedFile
        var notes: [ImportNote]
        switch format {
        case .launchdarkly:
            var importer = LaunchDarklyImport()
            file = try importer.run(json)
            notes = importer.notes
        case .growthbook:
            var importer = GrowthBookImport()
            file = try importer.run(json)
            notes = importer.notes
        case .flagd:
            var importer = FlagdImport()
            file = try importer.run(json)
            notes = importer.notes
        case .unleash:
            var importer = UnleashImport()
            file = try importer.run(json)
            notes = importer.notes
        }
        let source = file.source
        // What is written must load: a file that does not is the importer's fault, said as such.
        let formatted: String
        do {
            formatted = try FlagsFormatter.format(source, name: name)
            _ = try RuleSet(source: formatted, name: name)
        } catch {
            let first = error.diagnostics.first.map { "\($0.message) (line \($0.range.start.line))" } ?? "\(error)"
            throw ImportError("the import of \(name) wrote a file that does not load: \(first); please report it with the file")
        }
        notes.sort { $0.place < $1.place }
        return Result(text: formatted, notes: notes)
    }
}
