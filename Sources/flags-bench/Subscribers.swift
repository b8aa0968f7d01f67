import FlagRules
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

// MARK: Subscribers held

/// `flags serve` started as a shell or a systemd unit starts it (a soft limit of 1,024
/// descriptors), holding `--subscribers` event-stream subscribers of its file's text
/// (`?rules=app.flags`, as stores subscribe) on raw sockets from this process, 30 of which
/// never read: how many it holds, its memory per subscriber, how long an edit takes to
/// reach every reading one, and the p99 of evaluations made meanwhile; then the same for an
/// edit that makes the file 360 KB, which the server pushes whole to every subscriber:
/// evaluations' p99 and slowest while it does, and when the last reading subscriber had it.
struct SubscriberFigures {
    var asked = 0
    var held = 0
    var refused = 0
    var megabytesBefore = Double.nan, megabytesAfter = Double.nan
    /// Seconds from the edit to every reading subscriber having it.
    var editSeconds = Double.nan
    /// The p99 of evaluations made from the edit until every subscriber had it.
    var evaluationP99Milliseconds = Double.nan
    /// The same for the 360 KB text, and the slowest evaluation meanwhile.
    var largeEditBytes = 0
    var largeEditSeconds = Double.nan
    var largeEvaluationP99Milliseconds = Double.nan
    var largeEvaluationMaxMilliseconds = Double.nan
    var problem: String?

    var kilobytesPerSubscriber: Double { held > 0 ? (megabytesAfter - megabytesBefore) * 1_024 / Double(held) : .nan }
}

/// What one subscriber was sent: its head, the bytes since, and whether a text was seen.
private struct Received {
    var head: [UInt8] = []
    var bytes = 0
    /// The last bytes read, for a text cut between two reads.
    var tail: [UInt8] = []
    var found = false

    /// Takes `chunk`, looking for `pattern` in it (with the tail before it).
    mutating func take(_ chunk: ArraySlice<UInt8>, looking pattern: [UInt8]) {
        bytes += chunk.count
        if head.count < 512 { head += chunk.prefix(512 - head.count) }
        let window = tail + chunk
        if !found, window.count >= pattern.count {
            found = (0...(window.count - pattern.count)).contains { i in
                window[window.startIndex + i] == pattern[0]
                    && window[(window.startIndex + i)..<(window.startIndex + i + pattern.count)].elementsEqual(pattern)
            }
        }
        tail = Array(window.suffix(pattern.count))
    }

    var headText: String { String(decoding: head, as: UTF8.self) }
}

func subscriberFigures() -> SubscriberFigures? {
    guard options.only == nil || options.only == "subscribers" else { return nil }
    guard let rules = try? String(contentsOfFile: "examples/app.flags", encoding: .utf8) else { return nil }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flags-bench-subscribers-\(getpid())")
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("app.flags")
    try? rules.write(to: file, atomically: true, encoding: .utf8)
    guard let server = ServeChild([directory.path], softDescriptorLimit: 1_024) else { return nil }
    defer { server.stop() }
    var figures = SubscriberFigures()
    figures.asked = options.subscribers
    figures.megabytesBefore = server.residentMegabytes ?? .nan
    // Connect every subscriber, then read their heads.
    var subscribers: [(fd: Int32, received: Received)] = []
    defer { for s in subscribers { close(s.fd) } }
    let request = Array("GET /ofrep/v1/events?rules=app.flags HTTP/1.1\r\nHost: bench\r\n\r\n".utf8)
    for _ in 0..<options.subscribers {
        guard let fd = BenchConnection.open(port: server.port) else { break }
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress!, request.count, Int32(MSG_NOSIGNAL)) }
        subscribers.append((fd, Received()))
    }
    /// Reads every subscriber of `indices` until each has seen `pattern` (or its head, for
    /// an empty one); the seconds it took, or nil after `seconds`.
    func readAll(within seconds: Double, until pattern: String, among indices: [Int]) -> Double? {
        let start = now()
        let bytes = Array(pattern.utf8)
        var left = indices.filter { !subscribers[$0].received.found }
        var buffer = [UInt8](repeating: 0, count: 262_144)
        while !left.isEmpty, Double(now() - start) / 1e9 < seconds {
            var fds = left.map { pollfd(fd: subscribers[$0].fd, events: Int16(POLLIN), revents: 0) }
            _ = poll(&fds, nfds_t(fds.count), 50)
            for (k, i) in left.enumerated() where fds[k].revents != 0 {
                let n = recv(subscribers[i].fd, &buffer, buffer.count, 0)
                if n > 0 {
                    subscribers[i].received.take(buffer[..<n], looking: bytes)
                } else {
                    subscribers[i].received.found = true  // closed: nothing more comes
                }
            }
            left.removeAll { subscribers[$0].received.found }
        }
        return left.isEmpty ? Double(now() - start) / 1e9 : nil
    }
    _ = readAll(within: 60, until: "\r\n\r\n", among: Array(subscribers.indices))
    let heldIndices = subscribers.indices.filter { subscribers[$0].received.headText.hasPrefix("HTTP/1.1 200") }
    figures.held = heldIndices.count
    figures.refused = subscribers.indices.filter { subscribers[$0].received.headText.hasPrefix("HTTP/1.1 503") }.count
    figures.megabytesAfter = server.residentMegabytes ?? .nan
    // Thirty never read again, with the smallest receive buffers.
    let idle = Set(heldIndices.suffix(30))
    for i in idle {
        var size: Int32 = 1
        setsockopt(subscribers[i].fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }
    let reading = heldIndices.filter { !idle.contains($0) }
    // An edit, and evaluations on one keep-alive connection until every reader has it.
    final class Latencies: @unchecked Sendable {
        let lock = NSLock()
        var values: [Double] = []
        var running = true
    }
    func edit(to text: String, marker: String) -> (seconds: Double?, latencies: [Double]) {
        for i in reading { subscribers[i].received = Received(head: subscribers[i].received.head) }
        let latencies = Latencies()
        let done = DispatchSemaphore(value: 0)
        let port = server.port
        Thread {
            defer { done.signal() }
            guard let connection = BenchConnection(port: port) else { return }
            while latencies.lock.withLock({ latencies.running }) {
                let t0 = now()
                guard connection.roundTrip() else { return }
                latencies.lock.withLock { latencies.values.append(Double(now() - t0) / 1e6) }
            }
        }.start()
        try? text.write(to: file, atomically: true, encoding: .utf8)
        // The pushed text ends with the marker's declaration; the time counts from the write
        // (the file watch looks every quarter second, and waits for the file to settle).
        let reached = readAll(within: 60, until: marker, among: reading)
        latencies.lock.withLock { latencies.running = false }
        done.wait()
        return (reached, latencies.values.sorted())
    }
    func p99(_ sorted: [Double]) -> Double { sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, sorted.count * 99 / 100)] }
    let small = edit(to: rules + "\nvalue benchEdit: int = 1\n", marker: "benchEdit: int = 1")
    figures.editSeconds = small.seconds ?? .nan
    figures.evaluationP99Milliseconds = p99(small.latencies)
    if small.seconds == nil { figures.problem = "the edit did not reach every reading subscriber within 60 s" }
    // 360 KB: the file with values appended.
    var large = rules + "\n"
    var k = 0
    while large.utf8.count < 360_000 {
        large += "value benchLarge\(k): string = \"\(String(repeating: "x", count: 40))\"\n"
        k += 1
    }
    large += "value benchEdit: int = 2\n"
    figures.largeEditBytes = large.utf8.count
    let big = edit(to: large, marker: "benchEdit: int = 2")
    figures.largeEditSeconds = big.seconds ?? .nan
    figures.largeEvaluationP99Milliseconds = p99(big.latencies)
    figures.largeEvaluationMaxMilliseconds = big.latencies.last ?? .nan
    if big.seconds == nil, figures.problem == nil {
        figures.problem = "the 360 KB edit did not reach every reading subscriber within 60 s"
    }
    return figures
}
