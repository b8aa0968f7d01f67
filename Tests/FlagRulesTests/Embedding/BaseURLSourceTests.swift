import Foundation
import Testing

@testable import FlagRules

/// A store whose source is a server's base URL (`http://flags.internal:8016`): a
/// `flags serve` that serves one file names it at `/rules`, and the store reads (and
/// subscribes to) that file; one that serves several is a failure naming them; any other
/// server's base URL is read as it is.
@Suite struct BaseURLSourceTests {
    @Test func aBaseURLHasNoPathAndNoQuery() throws {
        for text in ["http://flags.internal:8016", "http://flags.internal:8016/", "https://example.com"] {
            #expect(RulesFetcher.isBase(try #require(URL(string: text))), "\(text)")
        }
        for text in ["http://flags.internal:8016/rules/app.flags", "http://x/?file=a", "http://x/app.flags", "file:///tmp/app.flags"] {
            #expect(!RulesFetcher.isBase(try #require(URL(string: text))), "\(text)")
        }
    }

    @Test func theListOfServedFilesIsRead() {
        #expect(RulesFetcher.servedFiles(Array(#"{"files": [{"name": "app.flags", "etag": "\"1\""}]}"#.utf8)) == ["app.flags"])
        #expect(RulesFetcher.servedFiles(Array(#"{"files": []}"#.utf8)) == [])
        // Anything else is not such a list.
        for body in [#"{"files": [{"etag": "1"}]}"#, #"{"files": "app.flags"}"#, "flag f = true", #"[]"#, ""] {
            #expect(RulesFetcher.servedFiles(Array(body.utf8)) == nil, "\(body)")
        }
    }

    @Test func oneServedFileIsNamedAndSeveralAreAFailure() throws {
        let root = "http://127.0.0.1:8016"
        #expect(try RulesFetcher.file(of: root, among: ["app.flags"]).get().absoluteString == "http://127.0.0.1:8016/rules/app.flags")
        // A name with a path keeps its slashes, each segment encoded (as the relay and the
        // server write it: PushProtocol.filePath).
        #expect(
            try RulesFetcher.file(of: root, among: ["sub dir/app;1.flags"]).get().absoluteString
                == "http://127.0.0.1:8016/rules/sub%20dir/app%3B1.flags")
        guard case .failure(let several) = RulesFetcher.file(of: root, among: ["a.flags", "b.flags"]),
            case .failure(let none) = RulesFetcher.file(of: root, among: [])
        else {
            Issue.record("several files, or none, named a file")
            return
        }
        #expect(
            several.reason
                == "http://127.0.0.1:8016 serves 2 files ('a.flags', 'b.flags'): name one, as http://127.0.0.1:8016/rules/a.flags")
        #expect(none.reason == "http://127.0.0.1:8016 serves no file yet" && !several.outage && !none.outage)
        let many = RulesFetcher.file(of: root, among: (1...7).map { "f\($0).flags" })
        guard case .failure(let seven) = many else {
            Issue.record("seven files named one")
            return
        }
        #expect(seven.reason.contains("serves 7 files ('f1.flags', 'f2.flags', 'f3.flags', 'f4.flags', 'f5.flags', …)"))
    }

    /// A server answering `/rules` as `flags serve` does, with `files` served.
    static func server(_ files: Locked<[String: String]>) throws -> TestHTTPServer {
        try TestHTTPServer { request in
            let served = files.withLock { $0 }
            if request.path == "/rules" {
                let list = served.keys.sorted().map { #"{"name": "\#($0)"}"# }.joined(separator: ", ")
                return .ok(#"{"files": [\#(list)]}"#)
            }
            let name = String(request.path.dropFirst("/rules/".count))
            guard request.path.hasPrefix("/rules/"), let text = served[name] else { return TestHTTPServer.Response(status: 404) }
            return .ok(text, etag: "\"\(text.hashValue)\"")
        }
    }

    @Test func theOneFileAFlagsServeServesIsReadAndFollowed() async throws {
        let files = Locked(["app.flags": version(1)])
        let server = try Self.server(files)
        let base = try #require(URL(string: "http://127.0.0.1:\(server.port)"))
        let store = FlagStore(source: .url(base), refresh: .milliseconds(20), timeout: .seconds(5))
        store.start()
        defer { store.stop() }
        #expect(try await store.ready(timeout: .seconds(30)).value("generation", in: [:], default: 0) == 1)
        #expect(server.requests.map(\.path).prefix(2) == ["/rules", "/rules/app.flags"])
        // Later looks go to the file alone.
        #expect(await eventually { server.requests.count >= 5 })
        #expect(server.requests.dropFirst().allSatisfy { $0.path == "/rules/app.flags" })

        // The file is renamed: its URL answers 404, and the next look lists again.
        files.withLock { $0 = ["renamed.flags": version(2)] }
        #expect(await eventually(10) { store.value("generation", default: 0) == 2 })
        #expect(server.requests.map(\.path).filter { $0 == "/rules" }.count >= 2)
    }

    @Test func aFlagsServeOfSeveralFilesIsAFailureNamingThem() async throws {
        let server = try Self.server(Locked(["a.flags": version(1), "b.flags": version(2)]))
        let base = try #require(URL(string: "http://127.0.0.1:\(server.port)/"))
        let log = EventLog()
        let store = FlagStore(source: .url(base), refresh: .milliseconds(20), timeout: .seconds(5))
        store.onEvent = log.record
        store.start()
        defer { store.stop() }
        let expected =
            "http://127.0.0.1:\(server.port) serves 2 files ('a.flags', 'b.flags'): name one, as http://127.0.0.1:\(server.port)/rules/a.flags"
        #expect(await eventually(10) { log.contains { if case .fetchFailed(expected, _) = $0 { return true } else { return false } } })
        #expect(store.rules == nil)
        #expect(!server.requests.contains { $0.path.hasPrefix("/rules/") })
    }

    @Test func anotherServersBaseURLIsReadAsItIs() async throws {
        let server = try TestHTTPServer { request in
            request.path == "/" ? .ok(version(3), etag: "\"3\"") : TestHTTPServer.Response(status: 404)
        }
        let base = try #require(URL(string: "http://127.0.0.1:\(server.port)/"))
        let store = FlagStore(source: .url(base), refresh: .milliseconds(20), timeout: .seconds(5))
        store.start()
        defer { store.stop() }
        #expect(try await store.ready(timeout: .seconds(30)).value("generation", in: [:], default: 0) == 3)
        #expect(server.requests.map(\.path).prefix(2) == ["/rules", "/"])
    }
}
