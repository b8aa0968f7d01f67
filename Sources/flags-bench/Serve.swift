import FlagRules
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

// MARK: flags serve

/// `flags serve examples/app.flags` under load from this process: the requests a second
/// that two keep-alive connections get through (each sending its next request once the
/// last is answered), then the 99th percentile of the latency at half that rate.
struct ServeFigures {
    var requestsPerSecond = 0.0
    var p99Milliseconds = 0.0
    var halfRate = 0.0
}

/// One keep-alive connection to the server, sending one OFREP request at a time.
final class BenchConnection {
    let fd: Int32
    let request: [UInt8]
    var buffer = [UInt8](repeating: 0, count: 65_536)

    /// A socket connected to the local port, or nil.
    static func open(port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let ok = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard ok == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    init?(port: Int) {
        guard let fd = BenchConnection.open(port: port) else { return nil }
        self.fd = fd
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        let body = #"{"context": {"targetingKey": "user-42", "build": "beta", "appVersion": "2.4.0"}}"#
        self.request = Array(
            "POST /ofrep/v1/evaluate/flags/newMediaPicker HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
                .utf8)
    }

    deinit { close(fd) }

    /// Sends the request and reads its whole response; false when the server is gone.
    func roundTrip() -> Bool {
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress!, request.count, Int32(MSG_NOSIGNAL)) }) == request.count else {
            return false
        }
        var have = 0
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + have, $0.count - have, 0) }
            if n <= 0 { return false }
            have += n
            // The answer is small: done once the header block and its Content-Length are in.
            if let end = (0..<max(0, have - 3)).first(where: {
                buffer[$0] == 13 && buffer[$0 + 1] == 10 && buffer[$0 + 2] == 13 && buffer[$0 + 3] == 10
            }) {
                let head = String(decoding: buffer[0..<end], as: UTF8.self)
                let length =
                    head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
                if have >= end + 4 + length { return true }
            }
        }
    }
}

func serveFigures() -> ServeFigures? {
    guard options.only == nil || options.only == "serve" else { return nil }
    let flags = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("flags")
    guard FileManager.default.isExecutableFile(atPath: flags.path), FileManager.default.fileExists(atPath: "examples/app.flags") else {
        return nil
    }
    let process = Process()
    process.executableURL = flags
    process.arguments = ["serve", "examples/app.flags", "--port", "0"]
    let errors = Pipe()
    process.standardError = errors
    guard (try? process.run()) != nil else { return nil }
    defer {
        process.terminate()
        process.waitUntilExit()
    }
    var text = ""
    while !text.contains("listening on") {
        let data = errors.fileHandleForReading.availableData
        if data.isEmpty { return nil }
        text += String(decoding: data, as: UTF8.self)
    }
    guard let port = text.split(separator: ":").last.flatMap({ Int($0.prefix { $0.isNumber }) }) else { return nil }
    var figures = ServeFigures()
    // Throughput: two connections, each on its own thread, for two seconds after a warm-up.
    let seconds = 2.0
    final class Counts: @unchecked Sendable {
        let lock = NSLock()
        var total = 0
        func add(_ n: Int) { lock.withLock { total += n } }
    }
    let counts = Counts()
    let group = DispatchGroup()
    for _ in 0..<2 {
        group.enter()
        Thread {
            defer { group.leave() }
            guard let connection = BenchConnection(port: port) else { return }
            for _ in 0..<500 { _ = connection.roundTrip() }
            let end = now() + UInt64(seconds * 1e9)
            var n = 0
            while now() < end, connection.roundTrip() { n += 1 }
            counts.add(n)
        }.start()
    }
    group.wait()
    figures.requestsPerSecond = Double(counts.total) / seconds
    // Latency at half that rate, one connection pacing its requests.
    figures.halfRate = figures.requestsPerSecond / 2
    guard let connection = BenchConnection(port: port), figures.halfRate > 0 else { return figures }
    let interval = 1e9 / figures.halfRate
    var latencies: [Double] = []
    var next = Double(now())
    let end = next + seconds * 1e9
    while next < end {
        while Double(now()) < next {}
        let t0 = now()
        guard connection.roundTrip() else { break }
        latencies.append(Double(now() - t0) / 1e6)
        next += interval
    }
    latencies.sort()
    figures.p99Milliseconds = latencies.isEmpty ? .nan : latencies[min(latencies.count - 1, Int(Double(latencies.count) * 0.99))]
    return figures
}
