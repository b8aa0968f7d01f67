import FlagRules
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

// MARK: Push through a relay
//
// An origin `flags serve DIR`, a relay `flags serve --source ORIGIN`, and 1,000 stores in
// this process subscribed to the relay, each polling only every ten minutes: an edit of
// the origin's file reaches each store through the origin's file watch, the relay's
// subscription and refetch, and each store's subscription and refetch. Then 10,000 idle
// subscribers on raw sockets (the relay's memory before and after, from /proc), an edit
// with them attached, and the origin stopped (the stores keep their rules).

struct RelayFigures {
    var stores = 0
    /// Seconds from starting the stores to every one holding the rules and subscribed.
    var secondsToSubscribe = Double.nan
    /// Seconds from the edit to each store holding it, over every edit.
    var p50 = Double.nan, p99 = Double.nan, maximum = Double.nan
    var idleSubscribers = 0
    var relayMegabytesBefore = Double.nan, relayMegabytesAfter = Double.nan
    /// The p99 of the edit made with the idle subscribers attached.
    var p99WithIdle = Double.nan
    /// Stores that kept their rules after the origin stopped.
    var keptAfterOriginStopped = 0
    /// Why the figures could not be taken (the stores did not all load and subscribe).
    var problem: String?
}

/// A `flags serve` process and the port it listens on.
final class ServeChild {
    let process = Process()
    let port: Int

    /// `softDescriptorLimit`: the soft limit it starts with (a shell's `ulimit -Sn`).
    init?(_ arguments: [String], softDescriptorLimit: Int? = nil) {
        let flags = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("flags")
        guard FileManager.default.isExecutableFile(atPath: flags.path) else { return nil }
        if let softDescriptorLimit {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments =
                ["-c", "ulimit -Sn \(softDescriptorLimit) && exec \"$0\" \"$@\"", flags.path, "serve", "--port", "0"] + arguments
        } else {
            process.executableURL = flags
            process.arguments = ["serve", "--port", "0"] + arguments
        }
        let errors = Pipe()
        process.standardError = errors
        guard (try? process.run()) != nil else { return nil }
        var text = ""
        while !text.contains("listening on") {
            let data = errors.fileHandleForReading.availableData
            if data.isEmpty { return nil }
            text += String(decoding: data, as: UTF8.self)
        }
        let address = text[(text.range(of: "listening on http://")?.upperBound ?? text.startIndex)...]
        guard let port = Int(address.drop { $0 != ":" }.dropFirst().prefix { $0.isNumber }) else { return nil }
        self.port = port
    }

    /// The process's resident memory, in MB (Linux's /proc; nil elsewhere).
    var residentMegabytes: Double? {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return nil }
        return kilobytes / 1024
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}

func relayFigures() -> RelayFigures? {
    guard options.only == nil || options.only == "relay" else { return nil }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flags-bench-relay-\(getpid())")
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("app.flags")
    func write(_ version: Int) {
        try? "flag f { enabled when \(version % 2 == 0 ? "false" : "true") }\nvalue v: int = \(version)\n".write(
            to: file, atomically: true, encoding: .utf8)
    }
    write(0)
    guard let origin = ServeChild([directory.path]) else { return nil }
    defer { origin.stop() }
    guard let relay = ServeChild(["--source", "http://127.0.0.1:\(origin.port)"]) else { return nil }
    defer { relay.stop() }
    // flags serve DIR names a file by its path in DIR.
    guard let url = URL(string: "http://127.0.0.1:\(relay.port)" + PushProtocol.filePath("app.flags")) else { return nil }
    var figures = RelayFigures()
    let stores = (0..<options.relayStores).map { _ in FlagStore(source: .url(url), refresh: .seconds(600)) }
    figures.stores = stores.count
    let started = now()
    for store in stores { store.start() }
    defer { for store in stores { store.stop() } }
    func version(_ store: FlagStore) -> Int? { store.rules?.evaluate("v", in: [:]).value.intValue }
    func waitUntil(_ seconds: Double, _ condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if condition() { return true }
            usleep(5_000)
        }
        return condition()
    }
    guard waitUntil(60, { stores.allSatisfy { version($0) == 0 && $0.isSubscribed } }) else {
        let ready = stores.filter { version($0) == 0 && $0.isSubscribed }.count
        figures.problem = "only \(ready) of \(stores.count) stores loaded and subscribed within 60 s"
        return figures
    }
    figures.secondsToSubscribe = Double(now() - started) / 1e9
    // Each subscription's first connection makes a conditional fetch: let those end.
    usleep(10_000_000)
    /// One edit: the seconds until each store holds it.
    func edit(_ to: Int) -> [Double] {
        let start = now()
        write(to)
        var seen = [Double](repeating: .nan, count: stores.count)
        var left = stores.count
        let deadline = start + 30_000_000_000
        while left > 0, now() < deadline {
            for (k, store) in stores.enumerated() where seen[k].isNaN && version(store) == to {
                seen[k] = Double(now() - start) / 1e9
                left -= 1
            }
            usleep(1_000)
        }
        return seen.map { $0.isNaN ? 30 : $0 }
    }
    func percentile(_ xs: [Double], _ p: Double) -> Double {
        let sorted = xs.sorted()
        return sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }
    var times: [Double] = []
    for k in 1...5 {
        times += edit(k)
        usleep(300_000)  // the origin's file watch sees one edit at a time
    }
    figures.p50 = percentile(times, 0.5)
    figures.p99 = percentile(times, 0.99)
    figures.maximum = times.max() ?? .nan

    // Idle subscribers: raw connections that ask for the stream and never read.
    figures.relayMegabytesBefore = relay.residentMegabytes ?? .nan
    var sockets: [Int32] = []
    for _ in 0..<options.idleSubscribers {
        guard let fd = BenchConnection.open(port: relay.port) else { break }
        let request = Array("GET /ofrep/v1/events HTTP/1.1\r\nHost: bench\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, request.count, Int32(MSG_NOSIGNAL)) }
        sockets.append(fd)
    }
    defer { for fd in sockets { close(fd) } }
    figures.idleSubscribers = sockets.count
    _ = waitUntil(10, { (relay.residentMegabytes ?? 0) > 0 })
    usleep(2_000_000)  // the relay takes them in
    figures.relayMegabytesAfter = relay.residentMegabytes ?? .nan
    figures.p99WithIdle = percentile(edit(6), 0.99)

    // The origin goes away: every store keeps the rules it held.
    let held = stores.map(version)
    origin.stop()
    usleep(1_500_000)
    figures.keptAfterOriginStopped = zip(stores, held).filter { store, held in held != nil && version(store) == held }.count
    return figures
}
