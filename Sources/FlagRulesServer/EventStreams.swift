import FlagRules
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// OFREP's event stream (server-sent events, as open-feature/protocol's
/// `service/event-streams.yaml` describes them) for every subscriber, from one thread: a
/// connection that asks for the stream is answered its headers and then held here, not by a
/// thread of its own, so that thousands of idle subscribers cost a descriptor and a few
/// bytes each.
///
/// Each change of the rules in force sends every subscriber
///
///     id: <version>
///     event: message
///     retry: 1000
///     data: {"type":"refetchEvaluation","etag":"<version>","lastModified":<unix seconds>}
///
/// and a comment (`: keep-alive`) goes every 15 s otherwise, so that proxies keep the
/// connection. A subscriber that reconnects with `Last-Event-ID` naming an older version
/// gets the event at once. A subscriber whose socket is closed or will not take more
/// bytes is dropped (it reconnects and refetches).
final class EventStreams: @unchecked Sendable {
    // Unchecked: `subscribers` and `thread` are read and written only under `lock`.
    /// The most subscribers held at once; more are answered 503.
    static let maxSubscribers = 16_000
    static let keepAlive: TimeInterval = 15

    private let service: OFREPService
    private let lock = NSLock()
    private var subscribers: [Int32] = []
    private var running = false
    private var stopped = false

    init(service: OFREPService) {
        self.service = service
    }

    /// How many subscribers are held.
    var count: Int { lock.withLock { subscribers.count } }

    /// The event for `version`, in force since `since`.
    static func event(version: String, since: Date) -> String {
        let data = JSON.object([
            ("type", .string("refetchEvaluation")), ("etag", .string(version)), ("lastModified", .int(Int(since.timeIntervalSince1970))),
        ])
        return "id: \(version)\nevent: message\nretry: 1000\ndata: \(data.serialized())\n\n"
    }

    /// Takes `fd`, whose request asked for the stream: writes the response's head (and the
    /// current event when `lastEventID` names another version) and holds it. False when
    /// the stream is full, stopped, or the write fails: the caller closes `fd`.
    func subscribe(_ fd: Int32, lastEventID: String?) -> Bool {
        let admitted = lock.withLock { () -> Bool in
            guard !stopped, subscribers.count < EventStreams.maxSubscribers else { return false }
            if !running {
                running = true
                let thread = Thread { [self] in loop() }
                thread.stackSize = 256 << 10
                thread.start()
            }
            return true
        }
        guard admitted else {
            _ = Self.write(fd, HTTPResponse(status: 503, headers: [("Retry-After", "5")]).serialized(keepAlive: false))
            return false
        }
        var head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: keep-alive\r\n\r\n"
        let (version, since) = service.versionAndSince
        if let lastEventID, lastEventID != version { head += Self.event(version: version, since: since) }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        #if canImport(Darwin)
            var one: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        guard Self.write(fd, Array(head.utf8)) else { return false }
        return lock.withLock {
            guard !stopped else { return false }
            subscribers.append(fd)
            return true
        }
    }

    /// Closes every subscriber's connection and ends the thread.
    func stop() {
        let held = lock.withLock { () -> [Int32] in
            stopped = true
            defer { subscribers = [] }
            return subscribers
        }
        for fd in held { close(fd) }
        service.wakeEventStreams()
    }

    private func loop() {
        var version = service.version
        while true {
            let next = service.waitForChange(from: version, timeout: EventStreams.keepAlive)
            if lock.withLock({ stopped }) { return }
            let message: String
            if next != version {
                version = next
                message = Self.event(version: next, since: service.versionAndSince.since)
            } else {
                message = ": keep-alive\n\n"
            }
            broadcast(Array(message.utf8))
        }
    }

    /// Writes `bytes` to every subscriber; drops those that have closed or will not take them.
    private func broadcast(_ bytes: [UInt8]) {
        let held = lock.withLock { subscribers }
        var dropped = Set<Int32>()
        var scratch = [UInt8](repeating: 0, count: 512)
        for fd in held {
            // A subscriber sends nothing after its request: readable means closed (or talking
            // out of turn, which is read and ignored).
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&ready, 1, 0) > 0 {
                let n = recv(fd, &scratch, scratch.count, 0)
                if n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                    || ready.revents & Int16(POLLHUP | POLLERR) != 0
                {
                    dropped.insert(fd)
                    continue
                }
            }
            if !Self.write(fd, bytes) { dropped.insert(fd) }
        }
        guard !dropped.isEmpty else { return }
        lock.withLock { subscribers.removeAll { dropped.contains($0) } }
        for fd in dropped { close(fd) }
    }

    /// Writes all of `bytes` without blocking; false when the peer is gone or its buffer is
    /// full.
    static func write(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            #if canImport(Darwin)
                let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + sent, bytes.count - sent, 0) }
            #else
                let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            #endif
            if n <= 0 {
                if n < 0, errno == EINTR { continue }
                return false
            }
            sent += n
        }
        return true
    }
}
