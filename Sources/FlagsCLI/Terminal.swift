import FlagRules
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Output streams and terminal facts for the commands.
enum Terminal {
    static func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    static func writeError(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// Colour only on a terminal, and never when `NO_COLOR` is set (https://no-color.org).
    static var stderrWantsColor: Bool {
        if let v = ProcessInfo.processInfo.environment["NO_COLOR"], !v.isEmpty { return false }
        return isatty(2) == 1
    }

    /// The most bytes read from one file or from standard input.
    static let maxInputSize = Lexer.maxSourceSize

    /// Reads a path, or standard input for `-`, refusing more than `maxInputSize` bytes.
    static func read(_ path: String) throws(UsageError) -> [UInt8] {
        if path == "-" {
            var data = Data()
            while true {
                let chunk = FileHandle.standardInput.readData(ofLength: 65_536)
                if chunk.isEmpty { break }
                data.append(chunk)
                if data.count > maxInputSize {
                    throw UsageError(message: "standard input is larger than \(maxInputSize) bytes")
                }
            }
            return Array(data)
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw UsageError(message: "no such file: \(path)")
        }
        if isDirectory.boolValue { throw UsageError(message: "\(path) is a directory; name a file") }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw UsageError(message: "cannot read \(path)")
        }
        defer { try? handle.close() }
        let data = handle.readData(ofLength: maxInputSize + 1)
        if data.count > maxInputSize {
            throw UsageError(message: "\(path) is larger than \(maxInputSize) bytes")
        }
        return Array(data)
    }

    /// Reads and loads a rules file ('-' for standard input); prints its diagnostics and
    /// returns nil when it has errors.
    static func loadRules(_ path: String) throws(UsageError) -> RuleSet? {
        let source = SourceText(bytes: try read(path), name: path == "-" ? "<stdin>" : path)
        do {
            return try RuleSet(source: source, today: Date())
        } catch {
            writeError(DiagnosticRenderer(colored: stderrWantsColor).render(error.diagnostics, in: source))
            return nil
        }
    }

    /// The files that paths name: a file as itself, `-` as standard input, a directory as
    /// its .flags files, recursively (not in hidden directories), in sorted order. Throws for a path that does not
    /// exist and for a directory without .flags files.
    /// The `.flags` files under `directory`, by their paths relative to it, sorted; hidden
    /// directories (.build, .git) are not entered: a build copies rules files there.
    static func flagsFiles(in directory: String) -> [String] {
        var entries: [String] = []
        if let enumerator = FileManager.default.enumerator(atPath: directory) {
            while let entry = enumerator.nextObject() as? String {
                if entry.split(separator: "/").last?.hasPrefix(".") == true {
                    enumerator.skipDescendants()
                    continue
                }
                if entry.hasSuffix(".flags") { entries.append(entry) }
            }
        }
        return entries.sorted()
    }

    static func flagsFiles(_ paths: [String]) throws(UsageError) -> [String] {
        var files: [String] = []
        for path in paths {
            if path == "-" {
                files.append(path)
                continue
            }
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw UsageError(message: "no such file or directory: \(path)")
            }
            guard isDirectory.boolValue else {
                files.append(path)
                continue
            }
            let base = path.hasSuffix("/") ? String(path.dropLast()) : path
            let entries = flagsFiles(in: path)
            let found = entries.map { base + "/" + $0 }
            guard !found.isEmpty else { throw UsageError(message: "no .flags files in \(path)") }
            files += found
        }
        return files
    }

    /// Every rules file of `paths` (a directory: its `.flags` files), loaded; nil when one
    /// has errors (they are printed).
    static func loadAll(_ paths: [String]) throws(UsageError) -> [(String, RuleSet)]? {
        var loaded: [(String, RuleSet)] = []
        var failed = false
        for path in try flagsFiles(paths) {
            guard let rules = try loadRules(path) else {
                failed = true
                continue
            }
            loaded.append((path, rules))
        }
        return failed ? nil : loaded
    }

    /// A usage error naming the first of `paths` that does not exist.
    static func checkExists(_ paths: [String]) throws(UsageError) {
        for path in paths where !FileManager.default.fileExists(atPath: path) {
            throw UsageError(message: "no file or directory '\(path)'")
        }
    }
}
