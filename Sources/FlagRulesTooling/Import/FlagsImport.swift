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
        // (A byte-order mark, as some editors write, is no part of the JSON.)
        let bytes = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(bytes.dropFirst(3)) : bytes
        let json: JSON
        do {
            json = try JSON.parse(bytes: bytes)
        } catch {
            let (line, column) = Self.position(of: min(error.offset, bytes.count), in: bytes)
            throw ImportError("\(name):\(line):\(column) is not JSON: \(error.message)")
        }
        let file: ImportedFile
        var notes: [ImportNote]
        do throws(ImportError) {
            (file, notes) = try importing(json, from: format)
        } catch {
            // Not of that system: say which system's it looks like.
            let looks = ImportFormat.allCases.first { $0 != format && Self.looksLike(json, $0) }
            throw ImportError(
                "\(name): " + error.message + (looks.map { "; it looks like \($0.system)'s: try --from \($0.rawValue)" } ?? ""))
        }
        // What of each declaration was not imported, as comments above it too: the file
        // says why a rule a reader expects is not there.
        var written = file
        for i in written.declarations.indices {
            guard let place = written.declarations[i].place else { continue }
            written.declarations[i].comments += notes.filter { note in
                note.kind == .notImported
                    && (note.place == place || note.place.hasPrefix(place + ".") || note.place.hasPrefix(place + "["))
            }
            .sorted { $0.place.compare($1.place, options: .numeric) == .orderedAscending }
            .map { note in
                "not imported: \(note.place): " + note.message.map { $0.isNewline ? " " : $0 }.reduce(into: "") { $0.append($1) }
            }
        }
        let source = written.source
        guard source.utf8.count <= Lexer.maxSourceSize else {
            throw ImportError(
                "the rules imported from \(name) are \(source.utf8.count) bytes, past the \(Lexer.maxSourceSize) a .flags file may be: import the vendor file in parts (a .flags file per part), or keep long lists of ids out of the rules"
            )
        }
        // What is written must load: a file that does not is the importer's fault, said as such.
        let formatted: String
        do {
            formatted = try FlagsFormatter.format(source, name: name)
            _ = try RuleSet(source: formatted, name: name)
        } catch {
            let first = error.diagnostics.first.map { "\($0.message) (line \($0.range.start.line))" } ?? "\(error)"
            throw ImportError("the import of \(name) wrote a file that does not load: \(first); please report it with the file")
        }
        // (Places in file order: `features[10]` after `features[9]`.)
        notes.sort { $0.place.compare($1.place, options: .numeric) == .orderedAscending }
        return Result(text: formatted, notes: notes)
    }

    private static func importing(_ json: JSON, from format: ImportFormat) throws(ImportError) -> (ImportedFile, [ImportNote]) {
        let file: ImportedFile
        let notes: [ImportNote]
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
        return (file, notes)
    }

    /// Whether `json` has the shape of `format`'s files, for the hint when it is not of the
    /// system named.
    static func looksLike(_ json: JSON, _ format: ImportFormat) -> Bool {
        switch format {
        case .growthbook:
            if case .object? = json["features"] { return true }
        case .unleash:
            if case .array? = json["features"] { return true }
        case .launchdarkly, .flagd:
            guard case .object(let flags)? = json["flags"], let first = flags.first?.1 else { return false }
            return format == .flagd ? first["variants"] != nil || first["state"] != nil : first["variations"] != nil || first["on"] != nil
        }
        return false
    }

    /// The line and column (both from 1, the column in bytes) of byte `offset`.
    static func position(of offset: Int, in bytes: [UInt8]) -> (Int, Int) {
        var line = 1, start = 0
        for (i, b) in bytes[..<offset].enumerated() where b == 0x0A {
            line += 1
            start = i + 1
        }
        return (line, offset - start + 1)
    }
}
