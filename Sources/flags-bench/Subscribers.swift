import FlagRules
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

// MARK: Subscribers held

/// `flags serve` started as a shell or a systemd unit starts it (a soft limit of 1,024
/// descriptors), holding `--subscribers` event-stream subscribers on raw sockets from this
/// process, 30 of which never read: how many it holds, its memory per subscriber, how long
/// an edit takes to reach every reading one, and the p99 of evaluations made meanwhile.
struct SubscriberFigures {
    var asked = 0
    var held = 0
    var refused = 0
    var megabytesBefore = Double.nan, megabytesAfter = Double.nan
    /// Seconds from the edit to every reading subscriber having it.
    var editSeconds = Double.nan
    /// The p99 of evaluations made from the edit until every subscriber had it.
    var evaluationP99Milliseconds = Double.nan
    var problem: String?

    var kilobytesPerSubscriber: Double { held > 0 ? (megabytesAfter - megabytesBefore) * 1_024 / Double(held) : .nan }
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
    var subscribers: [(fd: Int32, text: [UInt8])] = []
    defer { for s in subscribers { close(s.fd) } }
    let request = Array("GET /ofrep/v1/events HTTP/1.1\r\nHost: bench\r\n\r\n".utf8)
    for _ in 0..<options.subscribers {
        guard let fd = BenchConnection.open(port: server.port) else { break }
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress!, request.count, Int32(MSG_NOSIGNAL)) }
        subscribers.append((fd, []))
    }
    func readAll(within seconds: Double, until done: ([UInt8]) -> Bool, among indices: [Int]) -> Double? {
        let start = now()
        var left = indices.filter { !done(subscribers[$0].text) }
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while !left.isEmpty, Double(now() - start) / 1e9 < seconds {
            var fds = left.map { pollfd(fd: subscribers[$0].fd, events: Int16(POLLIN), revents: 0) }
            _ = poll(&fds, nfds_t(fds.count), 50)
            for (k, i) in left.enumerated() where fds[k].revents != 0 {
                let n = recv(subscribers[i].fd, &buffer, buffer.count, 0)
                if n > 0 { subscribers[i].text += buffer[..<n] } else { subscribers[i].text += Array("closed".utf8) }
            }
            left.removeAll { done(subscribers[$0].text) }
        }
        return left.isEmpty ? Double(now() - start) / 1e9 : nil
    }
    let headEnd: ([UInt8]) -> Bool = {
        String(decoding: $0, as: UTF8.self).contains("\r\n\r\n") || String(decoding: $0, as: UTF8.self).contains("closed")
    }
    _ = readAll(within: 60, until: headEnd, among: Array(subscribers.indices))
    let heldIndices = subscribers.indices.filter { String(decoding: subscribers[$0].text.prefix(12), as: UTF8.self) == "HTTP/1.1 200" }
    figures.held = heldIndices.count
    figures.refused =
        subscribers.indices.filter { String(decoding: subscribers[$0].text.prefix(12), as: UTF8.self) == "HTTP/1.1 503" }.count
    figures.megabytesAfter = server.residentMegabytes ?? .nan
    // Thirty never read again, with the smallest receive buffers.
    let idle = Set(heldIndices.suffix(30))
    for i in idle {
        var size: Int32 = 1
        setsockopt(subscribers[i].fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }
    let reading = heldIndices.filter { !idle.contains($0) }
    for i in reading { subscribers[i].text = [] }
    // The edit, and evaluations on one keep-alive connection until every reader has it.
    final class Latencies: @unchecked Sendable {
        let lock = NSLock()
        var values: [Double] = []
        var running = true
    }
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
    try? (rules + "\nvalue benchEdit: int = 1\n").write(to: file, atomically: true, encoding: .utf8)
    let reached = readAll(
        within: 30, until: { String(decoding: $0, as: UTF8.self).contains("refetchEvaluation") }, among: reading)
    latencies.lock.withLock { latencies.running = false }
    done.wait()
    // The edit is noticed within the file watch's quarter second: the time counts from the write.
    figures.editSeconds = reached ?? .nan
    let sorted = latencies.values.sorted()
    if !sorted.isEmpty { figures.evaluationP99Milliseconds = sorted[min(sorted.count - 1, sorted.count * 99 / 100)] }
    if reached == nil { figures.problem = "the edit did not reach every reading subscriber within 30 s" }
    return figures
}
