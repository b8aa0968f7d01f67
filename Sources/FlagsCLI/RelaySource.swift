import FlagRules
import FlagRulesServer
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What `flags serve --source URL` relays: the files another `flags serve` serves (its
/// `GET /rules`), each a store fetching `/rules/NAME` from it. The stores subscribe to
/// upstream's event stream (it names it in its rules' headers), so a relay passes an edit
/// on as soon as it has it, and keep their last good rules (on disk with a cache
/// directory) while upstream is down.
struct RelaySource {
    let base: URL
    let key: String?
    let cache: URL?

    struct Failure: Error {
        let message: String
    }

    /// Where the list of upstream's files is kept, for a start while upstream is down.
    var listFile: URL? { cache?.appendingPathComponent("FlagRules-relay-files.json") }

    var headers: [String: String] { key.map { ["Authorization": "Bearer \($0)"] } ?? [:] }

    /// A store for each file upstream serves, started from its cached rules when it has
    /// them. Fails when upstream cannot be reached and no list was kept.
    func stores() throws(Failure) -> [(String, FlagStore)] {
        let names: [String]
        switch list() {
        case .success(let listed):
            names = listed
        case .failure(let reason):
            guard let listFile, let data = FileManager.default.contents(atPath: listFile.path),
                case .array(let items)? = try? JSON.parse(bytes: Array(data))
            else {
                throw Failure(message: "cannot list \(base.absoluteString)/rules (\(reason)), and no --cache holds an earlier list")
            }
            ServeCommand.log("cannot list \(base.absoluteString)/rules (\(reason)); starting from the cache")
            names = items.compactMap { if case .string(let s) = $0 { return s } else { return nil } }
        }
        saveList(names)
        let stores = names.map { ($0, store($0)) }
        // Each store starts from its cache at once, or from upstream's first answer: the
        // relay listens once every file has rules, or after 10 s (a file still without
        // them is served as soon as they come).
        for (_, store) in stores { store.start() }
        let deadline = Date().addingTimeInterval(10)
        while stores.contains(where: { $0.1.rules == nil }), Date() < deadline { usleep(10_000) }
        for (name, store) in stores where store.rules == nil { ServeCommand.log("\(name): no rules from upstream yet") }
        return stores
    }

    /// A store of upstream's file `name`.
    func store(_ name: String) -> FlagStore {
        FlagStore(source: .url(fileURL(name), headers: headers), refresh: .seconds(30), cacheDirectory: cache)
    }

    /// Keeps the list of upstream's files, for a start while upstream is down.
    func saveList(_ names: [String]) {
        guard let listFile, let cache else { return }
        try? FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
        try? JSON.array(names.map { .string($0) }).serialized().write(to: listFile, atomically: true, encoding: .utf8)
    }

    /// `BASE/rules/NAME`, the name's path segments percent-encoded.
    func fileURL(_ name: String) -> URL {
        URL(string: base.absoluteString.trimmingSuffix("/") + PushProtocol.filePath(name))!
    }

    /// Upstream's served files, or why not.
    func list() -> Result<[String], Failure> {
        let url = URL(string: base.absoluteString.trimmingSuffix("/") + PushProtocol.listPath)!
        switch HTTPGet.body(url, headers: headers) {
        case .failure(let problem):
            return .failure(Failure(message: problem.message))
        case .success(let data):
            guard let names = PushProtocol.listedNames(Array(data)) else { return .failure(Failure(message: "not a list of files")) }
            return .success(names)
        }
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String { hasSuffix(suffix) ? String(dropLast(suffix.count)) : self }
}
