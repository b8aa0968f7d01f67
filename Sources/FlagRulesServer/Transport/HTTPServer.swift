import FlagRules
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A small HTTP/1.1 server on blocking sockets: one thread per connection (at most
/// `maxConnections`; more are answered 503), keep-alive and pipelining, a deadline for each
/// request's bytes (a slow or half-open client holds only its own thread), and a drain on
/// SIGTERM: the listener closes, requests in flight are answered, then the process ends.
package final class HTTPServer: @unchecked Sendable {
    package static let maxConnections = 2_048
    /// The longest a request may take to arrive once its first byte has.
    static let requestDeadline: TimeInterval = 10
    /// The longest a kept-alive connection may sit idle.
    static let idleTimeout: TimeInterval = 30
    /// The idle time a kept-alive connection gets while more than half the connections
    /// are taken (a fleet of stores, each keeping its fetch connection open between looks).
    static let busyIdleTimeout: TimeInterval = 2

    let service: OFREPService
    /// The listening socket: closed by `run()` once it stops accepting, never by `drain()`
    /// (a descriptor closed under a blocked `accept` could be reused by another file).
    package let listener: Int32
    /// The port listened on (the one given, or the one the system chose for 0).
    package let port: Int
    /// The event stream's subscribers, held by one thread.
    let hub: EventHub
    private let lock = NSLock()
    private var active = 0
    private var draining = false
    /// A descriptor kept open for the moment the process has no other: closed to accept a
    /// connection over the limit and answer it 503, then opened again.
    private var reserve: Int32 = -1

    /// The descriptors the process may hold (its soft limit, raised to the hard limit when
    /// the server starts) and the connections it takes at once: that limit less what the
    /// process keeps for its files and stores, and at most `maxConnections` requests and
    /// `EventHub.maxSubscribers` subscribers. A connection beyond is answered 503.
    package let descriptorLimit: Int
    package let capacity: Int
    /// Descriptors kept for the process's own use (rules files, stores' connections, logs).
    static let reservedDescriptors = 64

    package struct StartError: Error { package let message: String }

    package init(service: OFREPService, host: String, port: Int) throws(StartError) {
        self.service = service
        descriptorLimit = HTTPServer.raiseDescriptorLimit()
        capacity = max(2, min(HTTPServer.maxConnections + EventHub.maxSubscribers, descriptorLimit - HTTPServer.reservedDescriptors))
        // Subscribers never take the room requests need: an eighth of the capacity, at most
        // `maxConnections`, stays for them.
        hub = EventHub(served: service.served, limit: capacity - min(HTTPServer.maxConnections, max(1, capacity / 8)))
        reserve = open("/dev/null", O_RDONLY)
        #if canImport(Darwin)
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #else
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #endif
        guard fd >= 0 else { throw StartError(message: "cannot open a socket: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let numeric = host == "localhost" ? "127.0.0.1" : host
        guard inet_pton(AF_INET, numeric, &address.sin_addr) == 1 else {
            close(fd)
            throw StartError(message: "--host takes an IPv4 address such as 127.0.0.1 or 0.0.0.0, got '\(host)'")
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        // A fleet connects at once (a relay's restart, an edit's refetches): connections the
        // backlog cannot hold wait for the client's SYN to be sent again, 1 s, 3 s, 7 s… later.
        guard bound == 0, listen(fd, HTTPServer.backlog) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw StartError(message: "cannot listen on \(host):\(port): \(reason)")
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        self.port = Int(UInt16(bigEndian: actual.sin_port))
    }

    /// Connections waiting to be accepted (the system caps it at `net.core.somaxconn`).
    static let backlog: Int32 = 4_096

    /// Raises the soft limit on open descriptors to the hard limit (a shell or a systemd
    /// unit starts a process at 1,024, which a fleet of subscribers outgrows); the limit
    /// in force then.
    static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        #if canImport(Darwin)
            let resource = RLIMIT_NOFILE
            let most = rlim_t(OPEN_MAX)
        #else
            let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
            let most = rlim_t(1 << 20)
        #endif
        guard getrlimit(resource, &limit) == 0 else { return 1_024 }
        let wanted = min(limit.rlim_max, most)
        if limit.rlim_cur < wanted {
            var raised = limit
            raised.rlim_cur = wanted
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        return Int(min(limit.rlim_cur, most))
    }

    /// Answers a connection the server cannot take 503 and closes it.
    private func refuse(_ fd: Int32) {
        service.metrics.request(status: 503, seconds: 0)
        write(fd, HTTPResponse(status: 503, headers: [("Retry-After", "1")]).serialized(keepAlive: false))
        close(fd)
    }

    /// Accepts connections until ``drain()``; then waits (up to 10 s) for those in flight.
    package func run() {
        defer { close(listener) }
        while true {
            // The reserve descriptor, if it could not be had again after its last use.
            if reserve < 0 { reserve = open("/dev/null", O_RDONLY) }
            // Waits for a connection a fifth of a second at a time, so that a drain is seen
            // however the system treats a listener shut down under `accept`.
            var ready = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            let polled = poll(&ready, 1, 200)
            if isDraining { break }
            if polled <= 0 { continue }
            var peer = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let fd = withUnsafeMutablePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(listener, $0, &length) }
            }
            if fd < 0 {
                if isDraining { break }
                if errno == EMFILE || errno == ENFILE, reserve >= 0 {
                    // Out of descriptors: the reserve one takes the connection, to say so.
                    close(reserve)
                    let over = accept(listener, nil, nil)
                    if over >= 0 { refuse(over) }
                    reserve = open("/dev/null", O_RDONLY)
                } else if errno != EINTR {
                    usleep(10_000)
                }
                continue
            }
            var noDelay: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
            var buffer = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            var address = peer.sin_addr
            inet_ntop(AF_INET, &address, &buffer, socklen_t(buffer.count))
            let peerName = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let subscribers = hub.count
            let admitted: Bool = lock.withLock {
                guard active < HTTPServer.maxConnections, active + subscribers < capacity, !draining else { return false }
                active += 1
                return true
            }
            guard admitted else {
                refuse(fd)
                continue
            }
            let thread = Thread { [self] in
                // A connection that subscribed to the event stream is held by the hub.
                if !serve(fd, peer: peerName) { close(fd) }
                lock.withLock { active -= 1 }
            }
            thread.stackSize = 512 << 10
            thread.start()
        }
        hub.stop()
        let deadline = Date().addingTimeInterval(10)
        while lock.withLock({ active }) > 0, Date() < deadline { usleep(10_000) }
        if reserve >= 0 { close(reserve) }
    }

    package var isDraining: Bool { lock.withLock { draining } }

    /// Stops accepting; connections finish the request in hand and close.
    package func drain() {
        lock.withLock { draining = true }
        service.served.wake()
        shutdown(listener, Int32(SHUT_RDWR))
    }

    /// Reads requests from one connection and answers them, until the client closes, a
    /// deadline passes or the server drains. True when the connection subscribed to the
    /// event stream, which now holds it.
    private func serve(_ fd: Int32, peer: String) -> Bool {
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        // A client that stops reading gives up its connection after 10 s.
        var sendTimeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &sendTimeout, socklen_t(MemoryLayout<timeval>.size))
        var parser = HTTPRequestParser()
        var buffer = [UInt8](repeating: 0, count: 16_384)
        var lastActivity = Date()
        var requestStarted: Date?
        while true {
            let request: HTTPRequest?
            do {
                request = try parser.next()
            } catch {
                let response = HTTPResponse.json(error.status, .object([("errorDetails", .string(error.message))]))
                service.metrics.request(status: error.status, seconds: requestStarted.map { Date().timeIntervalSince($0) } ?? 0)
                write(fd, response.serialized(keepAlive: false))
                return false
            }
            if let request {
                requestStarted = nil
                if request.path == OFREPService.eventsPath, request.method == "GET" {
                    if let refusal = service.authorize(request) {
                        service.metrics.request(status: refusal.status, seconds: 0)
                        write(fd, refusal.serialized(keepAlive: false))
                        return false
                    }
                    service.metrics.request(status: 200, seconds: 0)
                    let file = request.query.first { $0.0 == "rules" }?.1
                    return hub.subscribe(
                        fd, lastEventID: request.header("Last-Event-ID"), file: file, holding: request.header("If-None-Match"),
                        heldGeneration: PushProtocol.generation(request.header(PushProtocol.generationHeader)))
                }
                let response = service.respond(request, peer: peer)
                let keepAlive = request.keepsAlive && !isDraining
                guard write(fd, response.serialized(keepAlive: keepAlive, headOnly: request.method == "HEAD")), keepAlive else {
                    return false
                }
                lastActivity = Date()
                continue
            }
            if isDraining, !parser.hasPartialRequest { return false }
            let n = recv(fd, &buffer, buffer.count, 0)
            let now = Date()
            // The request's deadline runs from its first byte, however its bytes trickle in.
            if let started = requestStarted, now.timeIntervalSince(started) > HTTPServer.requestDeadline {
                service.metrics.request(status: 408, seconds: now.timeIntervalSince(started))
                write(fd, HTTPResponse(status: 408).serialized(keepAlive: false))
                return false
            }
            if n > 0 {
                if requestStarted == nil { requestStarted = now }
                parser.append(buffer[0..<n])
                lastActivity = now
                continue
            }
            if n == 0 { return false }
            guard errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else { return false }
            let busy = lock.withLock { active > HTTPServer.maxConnections / 2 }
            let idle = busy ? HTTPServer.busyIdleTimeout : HTTPServer.idleTimeout
            if requestStarted == nil, now.timeIntervalSince(lastActivity) > idle { return false }
        }
    }

    /// Writes all of `bytes`; false when the client is gone.
    @discardableResult
    private func write(_ fd: Int32, _ bytes: [UInt8]) -> Bool { Socket.writeAll(fd, bytes) }
}
