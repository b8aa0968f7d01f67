import Foundation

/// The last good rules of a store's source, kept in one JSON file in the cache directory
/// and written atomically (a temporary file renamed over the old one), so that a crash
/// mid-write leaves the previous cache whole.
struct RulesCache: Sendable {
    /// What the file holds.
    struct Entry: Codable, Sendable {
        /// The layout's version: another one is ignored, not misread.
        var format = 1
        /// The source the rules came from: a cache of another source is ignored.
        var source: String
        var etag: String?
        var lastModified: String?
        var fetchedAt: Date
        var rules: String
        /// The generation its server gave the text, and the event stream it named.
        var generation: Int?
        var events: String?
    }

    let file: URL
    let source: RulesSource

    /// The cache of `source` in `directory`: one file a source, named by a stable hash
    /// of the source and, for a URL, the headers it is fetched with (FNV-1a, the same in
    /// every process), so stores of several sources, or of one URL fetched for two
    /// audiences, can share a directory. The headers themselves (an API key) are not
    /// written.
    init(directory: URL, source: RulesSource) {
        var identity = source.description
        if case .url(_, let headers) = source {
            for (name, value) in headers.sorted(by: { $0.key.lowercased() < $1.key.lowercased() }) {
                identity += "\n\(name.lowercased()): \(value)"
            }
        }
        let hash = FNV1a.hash(identity.utf8)
        self.file = directory.appendingPathComponent("FlagRules-" + String(hash, radix: 16) + ".json")
        self.source = source
    }

    /// The cached entry; nil when there is none yet, a reason when there is one that
    /// cannot be used.
    func read() -> Result<Entry, CacheProblem>? {
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            return .failure(CacheProblem("cannot read \(file.path): \((error as NSError).localizedDescription)"))
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        guard let entry = try? decoder.decode(Entry.self, from: data) else {
            return .failure(CacheProblem("\(file.path) is not a rules cache (corrupt or of another version)"))
        }
        guard entry.format == 1 else { return .failure(CacheProblem("\(file.path) has format \(entry.format), not 1")) }
        guard entry.source == source.description else {
            return .failure(CacheProblem("\(file.path) holds rules from \(entry.source), not \(source)"))
        }
        return .success(entry)
    }

    /// Writes `entry` atomically, creating the directory if needed.
    func write(_ entry: Entry) throws(CacheProblem) {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]
        do {
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try encoder.encode(entry).write(to: file, options: .atomic)
        } catch {
            throw CacheProblem("cannot write \(file.path): \((error as NSError).localizedDescription)")
        }
    }
}

/// Why a cache was not read or written.
struct CacheProblem: Error, Sendable {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}
