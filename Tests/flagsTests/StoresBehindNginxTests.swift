import FlagRules
import Foundation
import Testing

/// Where nginx is installed (CI installs Debian's for `.ci/nginx`), if it is.
let nginxBinary: String? = ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx", "/opt/homebrew/bin/nginx"].first {
    FileManager.default.isExecutableFile(atPath: $0)
}

/// Skips where nginx is not installed, saying so.
let nginxInstalled: ConditionTrait = .enabled(if: nginxBinary != nil, "nginx is not installed (CI installs Debian's for .ci/nginx)")

/// Stores of an app (``FlagStore`` of a URL) behind Debian's nginx, configured as
/// ServingOverOFREP.md's "Behind a proxy or a CDN" says (its three `nginx` blocks are what
/// runs): one store through the documented configuration, one through a CDN that holds
/// `/rules/NAME` (its cache warmed with an old text), beside one store of the server itself.
/// The CDN's block holds an answer 60 s; here 30 s, so that the test waits half as long.
/// Every edit reaches the stores behind nginx within a second of the direct one, and for
/// 35 s after the last (past the stores' 30 s looks and the cache's 30 s) no store ever
/// holds an older text than one it held. `.ci/nginx` checks relays the same
/// way. Skipped where nginx is not installed.
@Suite(nginxInstalled, slowTests) struct StoresBehindNginxTests {
    /// A running nginx: its prefix directory and process.
    final class Nginx {
        let process = Process()
        let prefix: URL
        let port: Int

        init(_ name: String, upstream: Int, cdn: Bool, in work: URL) throws {
            prefix = work.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: prefix, withIntermediateDirectories: true)
            port = try Self.freePort()
            let doc = try String(
                contentsOf: packageRoot.appendingPathComponent("Sources/FlagRules/FlagRules.docc/ServingOverOFREP.md"), encoding: .utf8)
            let section = doc.components(separatedBy: "## Behind a proxy or a CDN\n").last!.components(separatedBy: "\n## ").first!
            let blocks = section.components(separatedBy: "```nginx\n").dropFirst().map { $0.components(separatedBy: "```").first! }
            try #require(blocks.count == 3, "the doc's nginx blocks")
            let mainContext = blocks[0]
            var text = blocks[1]
            for (pattern, replacement) in [
                (#"server 127\.0\.0\.1:\d+;"#, "server 127.0.0.1:\(upstream);"), (#"listen \d+;"#, "listen 127.0.0.1:\(port);"),
                (#"proxy_cache_path \S+"#, "proxy_cache_path \(prefix.path)/cache"),
            ] {
                let range = try #require(text.range(of: pattern, options: .regularExpression), "\(pattern) in the doc's block")
                text.replaceSubrange(range, with: replacement)
            }
            if cdn {
                let block = blocks[2].replacingOccurrences(
                    of: "proxy_cache_valid 200 60s;", with: "proxy_cache_valid 200 \(Self.cdnSeconds)s;")
                try #require(block != blocks[2], "the doc's CDN block keeps an answer 60 s")
                let end = try #require(text.range(of: "}", options: .backwards))
                text.replaceSubrange(end, with: "    " + block.replacingOccurrences(of: "\n", with: "\n    ") + "\n}")
            }
            let temporary = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map { "\($0)_temp_path \(prefix.path)/\($0);" }
            let config = """
                \(mainContext)
                error_log \(prefix.path)/error.log info;
                http {
                access_log off;
                \(temporary.joined(separator: "\n"))
                \(text)}

                """
            let path = prefix.appendingPathComponent("nginx.conf")
            try config.write(to: path, atomically: true, encoding: .utf8)
            process.executableURL = URL(fileURLWithPath: nginxBinary!)
            process.arguments = [
                "-p", prefix.path, "-e", "\(prefix.path)/error.log", "-c", path.path, "-g", "daemon off; pid \(prefix.path)/nginx.pid;",
            ]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try spawn(process)
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline, (try? TCPClient(port: port)) == nil { usleep(50_000) }
        }

        func stop() {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
        }

        /// How long the CDN keeps an answer here.
        static let cdnSeconds = 30

        static func freePort() throws -> Int {
            #if canImport(Darwin)
                let fd = socket(AF_INET, SOCK_STREAM, 0)
            #else
                let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            #endif
            defer { close(fd) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = 0
            inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
            }
            try #require(bound)
            return Int(UInt16(bigEndian: address.sin_port))
        }
    }

    @Test func storesBehindNginxTakeEveryEditAndNeverGoBack() async throws {
        let directory = try PushTests.rulesDirectory("value n: int = 0\n")
        defer { try? FileManager.default.removeItem(at: directory) }
        let origin = try ServeProcess([directory.path])
        defer { _ = origin.stop() }
        let documented = try Nginx("nginx-a", upstream: origin.port, cdn: false, in: directory)
        defer { documented.stop() }
        let cdn = try Nginx("nginx-b", upstream: origin.port, cdn: true, in: directory)
        defer { cdn.stop() }
        // The CDN's cache holds the first text before any edit.
        let warm = try TCPClient(port: cdn.port)
        warm.send("GET /rules/app.flags HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let warmed = try warm.response()
        let warmedAt = Date()
        #expect(warmed.status == 200 && warmed.body == "value n: int = 0\n", "\(warmed.status) \(warmed.body)")
        let urls = [origin.port, documented.port, cdn.port].map { URL(string: "http://127.0.0.1:\($0)/rules/app.flags")! }
        let stores = urls.map { FlagStore(source: .url($0), refresh: .seconds(30)) }
        // The CDN's store is answered the cached old text at its looks, and ignores it.
        let ignored = Locked(0)
        stores[2].onEvent = { event in if case .olderRulesIgnored = event { ignored.withLock { $0 += 1 } } }
        for store in stores { store.start() }
        defer { for store in stores { store.stop() } }
        func held(_ store: FlagStore) -> Int? {
            if case .int(let n)? = store.rules?.evaluate("n", in: [:]).value { return n }
            return nil
        }
        func gap(_ a: Date?, _ b: Date?) -> Double? {
            guard let a, let b else { return nil }
            return a.timeIntervalSince(b)
        }
        // What each store has held, in order (sampled every 10 ms).
        var seen: [[Int]] = [[], [], []]
        func sample() {
            for (k, store) in stores.enumerated() { if let n = held(store), seen[k].last != n { seen[k].append(n) } }
        }
        var start = Date()
        while stores.contains(where: { held($0) != 0 }), Date().timeIntervalSince(start) < 60 {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(stores.allSatisfy { held($0) == 0 }, "the stores loaded")
        #expect(await PushTests.subscribed(stores), "the stores subscribed to the stream (through nginx)")
        let edits = 4
        for k in 1...edits {
            try "value n: int = \(k)\n".write(to: directory.appendingPathComponent("app.flags"), atomically: true, encoding: .utf8)
            start = Date()
            var direct: Date?
            var behind: [Date?] = [nil, nil]
            while Date().timeIntervalSince(start) < 15, direct == nil || behind.contains(where: { $0 == nil }) {
                sample()
                if direct == nil, held(stores[0]) == k { direct = Date() }
                for i in 0..<2 where behind[i] == nil && held(stores[i + 1]) == k { behind[i] = Date() }
                try await Task.sleep(for: .milliseconds(10))
            }
            for (i, name) in ["the documented nginx", "the CDN"].enumerated() {
                let late = gap(behind[i], direct)
                #expect(late.map { $0 < 1 } == true, "edit \(k): the store behind \(name) took it \(late ?? -1) s after the direct one")
            }
            print("edit \(k): behind nginx \(behind.map { gap($0, direct) ?? -1 }) s after the direct store")
            let pause = Date()
            while Date().timeIntervalSince(pause) < 2 {
                sample()
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        // A look of the CDN's store now (while its cache holds the first text, which the
        // store's own first fetch put there) is answered that old text.
        await stores[2].refreshNow()
        let age = Date().timeIntervalSince(warmedAt)
        // Past the stores' looks and the CDN's time: never an older text.
        start = Date()
        while Date().timeIntervalSince(start) < Double(Nginx.cdnSeconds + 5) {
            sample()
            try await Task.sleep(for: .milliseconds(50))
        }
        // (On a machine so loaded that the edits took the cache's whole time, its entry had
        // expired: said, and not checked.)
        if age < Double(Nginx.cdnSeconds - 5) {
            #expect(ignored.withLock { $0 } > 0, "the CDN never answered the store with its old text: its cache was not tested")
        } else {
            print("the CDN's entry was \(Int(age)) s old at the store's look: its old text was not checked")
        }
        for (k, history) in seen.enumerated() {
            #expect(history == Array(0...edits), "store \(k) held, in order, \(history)")
        }
    }
}
