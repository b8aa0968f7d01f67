import FlagRules
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A small HTTP/1.1 server: one thread, waiting in `poll`, holds the listener and every
/// connection (at most ``Limits/connections``; more are answered 503) on non-blocking
/// sockets. Each connection is a channel: the bytes read and parsed (keep-alive and
/// pipelining), the answers not yet written (sent as its socket takes them, when `poll` says
/// it can), and its deadlines: a request must arrive within 10 s of its first byte (`408`,
/// however it trickles), what waits to be written must be taken within 10 s of when it began
/// to wait plus its size at 64 KiB a second (a client that stops reading, or reads a byte at a
/// time, is closed), and an idle connection closes after 30 s (2 s while more than half the
/// connections are taken). While more than 256 KiB of a connection's answers wait, its
/// further requests are left unread (a client that pipelines and never reads fills its own
/// send buffer, not the server's memory). A request is answered on the thread (an evaluation
/// takes microseconds); one for the event stream hands its connection to the ``EventHub``,
/// which the same loop steps: its subscribers' sockets and its wake-up pipe are in the same
/// `poll`. On SIGTERM (``drain()``) it stops accepting, answers the requests in flight, then
/// returns.
package final class HTTPServer: @unchecked Sendable {
    /// The limits a server keeps. The defaults are what `flags serve` runs with (and what
    /// the OFREP article's Limits section says); a test asks for smaller ones.
    package struct Limits: Sendable {
        /// The most connections making requests at once; more are answered 503.
        package var connections = 2_048
        /// The most event-stream subscribers held at once (fewer when the process has fewer
        /// descriptors); more are answered 503.
        package var subscribers = EventHub.maxSubscribers
        /// The longest a request may take to arrive once its first byte has (`408` after).
        package var request: TimeInterval = 10
        /// The longest what waits to be written may wait, from when it began to wait, before
        /// the time its size takes at `minimumRate`; the connection closes after.
        package var write: TimeInterval = 10
        /// The slowest a client may take its answers, in bytes a second.
        package var minimumRate = 64 << 10
        /// The longest a kept-alive connection may sit idle.
        package var idle: TimeInterval = 30
        /// The idle time a kept-alive connection gets while more than half of `connections`
        /// are taken (a fleet of stores, each keeping its fetch connection open between looks).
        package var busyIdle: TimeInterval = 2
        /// The bytes of answers a connection may have waiting before its further requests are
        /// left unread (until they drain below it).
        package var queuedAnswers = 256 << 10
        /// The longest an event-stream subscriber may hold events back before it is dropped.
        package var subscriberBehind: TimeInterval = 30
        /// The send buffer each connection's socket gets (`SO_SNDBUF`); nil: the system's
        /// (which, on loopback, grows to megabytes).
        package var sendBuffer: Int?

        /// The defaults, or those given.
        package init(
            connections: Int = 2_048, subscribers: Int = EventHub.maxSubscribers, request: TimeInterval = 10,
            write: TimeInterval = 10, minimumRate: Int = 64 << 10, idle: TimeInterval = 30, busyIdle: TimeInterval = 2,
            queuedAnswers: Int = 256 << 10, subscriberBehind: TimeInterval = 30, sendBuffer: Int? = nil
        ) {
            self.connections = connections
            self.subscribers = subscribers
            self.request = request
            self.write = write
            self.minimumRate = minimumRate
            self.idle = idle
            self.busyIdle = busyIdle
            self.queuedAnswers = queuedAnswers
            self.subscriberBehind = subscriberBehind
            self.sendBuffer = sendBuffer
        }

        /// The deadline of `bytes` that begin to wait at `start`.
        func writeDeadline(of bytes: Int, from start: Date) -> Date {
            start.addingTimeInterval(write + Double(bytes) / Double(max(1, minimumRate)))
        }
    }

    let service: OFREPService
    /// The listening socket: closed by `run()` once it stops accepting, never by `drain()`
    /// (a descriptor closed under a blocked `accept` could be reused by another file).
    package let listener: Int32
    /// The port listened on (the one given, or the one the system chose for 0).
    package let port: Int
    /// The event stream's subscribers, held by one thread.
    let hub: EventHub
    private let lock = NSLock()
    private var draining = false
    /// Wakes the thread in `poll`: a drain, or a change the hub is to tell (the one pipe of
    /// the loop, the hub's too).
    private let wakeUp: WakePipe
    let limits: Limits
    /// The most bytes of answers any connection has had waiting at once (what a test reads
    /// to see that a client that does not read costs the server a bounded amount).
    private let mostQueued = Locked(0)
    /// `mostQueued` as the loop's thread last set it (read without the lock).
    private var largestQueueSeen = 0
    package var largestQueue: Int { mostQueued.withLock { $0 } }
    /// The connections held now (set at each turn of the loop), for the metrics.
    private let openConnections = Locked(0)
    /// A descriptor kept open for the moment the process has no other: closed to accept a
    /// connection over the limit and answer it 503, then opened again.
    private var reserve: Int32 = -1

    /// The descriptors the process may hold (its soft limit, raised to the hard limit when
    /// the server starts) and the connections it takes at once: that limit less what the
    /// process keeps for its files and stores, and at most ``Limits/connections`` requests
    /// and ``Limits/subscribers`` subscribers. A connection beyond is answered 503.
    package let descriptorLimit: Int
    package let capacity: Int
    /// Descriptors kept for the process's own use (rules files, stores' connections, logs).
    static let reservedDescriptors = 64

    package struct StartError: Error { package let message: String }

    package init(service: OFREPService, host: String, port: Int, limits: Limits = Limits()) throws(StartError) {
        self.service = service
        self.limits = limits
        descriptorLimit = HTTPServer.raiseDescriptorLimit()
        capacity = max(2, min(limits.connections + limits.subscribers, descriptorLimit - HTTPServer.reservedDescriptors))
        let pipe = WakePipe()
        wakeUp = pipe
        // Subscribers never take the room requests need: an eighth of the capacity, at most
        // `limits.connections`, stays for them.
        hub = EventHub(
            served: service.served, limit: min(limits.subscribers, capacity - min(limits.connections, max(1, capacity / 8))),
            maxBehind: limits.subscriberBehind, driven: true, wakeUp: pipe)
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
        service.reportTransport { [hub, openConnections] in
            OFREPService.TransportLoad(connections: openConnections.withLock { $0 }, subscribers: hub.countsByFile)
        }
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
        write(fd, HTTPResponse.busy.serialized(keepAlive: false))
        close(fd)
    }

    /// Whether a channel's further requests are left unread: its answers waiting fill the
    /// bound (the requests wait in the socket, then in the client's send buffer).
    private func isPaused(_ channel: Channel) -> Bool { channel.outbound.count >= limits.queuedAnswers }

    /// Serves connections until ``drain()``; then answers those in flight (up to 10 s) and
    /// returns.
    package func run() {
        _ = fcntl(listener, F_SETFL, fcntl(listener, F_GETFL) | O_NONBLOCK)
        var channels: [Int32: Channel] = [:]
        var drainStarted: Date?
        var scratch = [UInt8](repeating: 0, count: 65_536)
        var fds: [pollfd] = []
        // What the hub waits for, as its last step left it.
        var hubWait = hub.step(ready: [])
        defer {
            for fd in channels.keys { close(fd) }
            hub.stop()
            hub.closePipe()
            close(listener)
            if reserve >= 0 { close(reserve) }
            wakeUp.close()
        }
        while true {
            let now = Date()
            if isDraining, drainStarted == nil {
                drainStarted = now
                // Idle connections close now; the others once their request is answered.
                for (fd, channel) in channels where !channel.parser.hasPartialRequest && channel.outbound.isEmpty {
                    close(fd)
                    channels[fd] = nil
                }
            }
            if let started = drainStarted, channels.isEmpty || now.timeIntervalSince(started) > 10 { return }
            openConnections.withLock { $0 = channels.count }
            // The reserve descriptor, if it could not be had again after its last use.
            if reserve < 0 { reserve = open("/dev/null", O_RDONLY) }
            // What to wait for, and until when.
            var deadline = now.addingTimeInterval(60)
            let idle = channels.count > limits.connections / 2 ? limits.busyIdle : limits.idle
            fds.removeAll(keepingCapacity: true)
            fds.append(pollfd(fd: wakeUp.readEnd, events: Int16(POLLIN), revents: 0))
            if drainStarted == nil {
                var listens = true
                if reserve < 0, let retry = acceptRetry, now < retry {
                    listens = false
                    deadline = min(deadline, retry)
                }
                fds.append(pollfd(fd: listener, events: listens ? Int16(POLLIN) : 0, revents: 0))
            }
            for (fd, channel) in channels {
                var events: Int16 = 0
                let paused = isPaused(channel)
                if channel.isOpen, !paused { events |= Int16(POLLIN) }
                if !channel.outbound.isEmpty { events |= Int16(POLLOUT) }
                fds.append(pollfd(fd: fd, events: events, revents: 0))
                if let started = channel.requestStarted, !paused {
                    deadline = min(deadline, started.addingTimeInterval(limits.request))
                }
                if let due = channel.outbound.deadline { deadline = min(deadline, due) }
                if channel.requestStarted == nil, channel.outbound.isEmpty {
                    deadline = min(deadline, channel.lastActivity.addingTimeInterval(idle))
                }
            }
            if drainStarted != nil { deadline = min(deadline, now.addingTimeInterval(0.1)) }
            deadline = min(deadline, hubWait.deadline)
            let serverCount = fds.count
            fds += hubWait.descriptors
            // Writes the hub left for its next step: a look at the sockets, not a wait.
            let wait =
                hubWait.writesLeft ? 0 : Int32(max(1, min(60_000, (deadline.timeIntervalSince(now) * 1_000).rounded(.up))))
            _ = poll(&fds, nfds_t(fds.count), wait)
            // The pipe is read only when a poke left something in it (not a read that
            // fails at every turn).
            if fds[0].revents & Int16(POLLIN) != 0 { wakeUp.drain() }
            // The event hub's step first: subscribers that hung up free their places before
            // newcomers are counted; then what became writable, changes to tell, keep-alives.
            hubWait = hub.step(ready: Array(fds[serverCount...]))
            for ready in fds[1..<serverCount] where ready.revents != 0 {
                if ready.fd == listener {
                    acceptWaiting(into: &channels)
                } else if let channel = channels[ready.fd] {
                    if ready.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0, channel.isOpen, !read(channel, &scratch) {
                        close(channel.fd)
                        channels[ready.fd] = nil
                        continue
                    }
                    if !advance(channel) { channels[ready.fd] = nil }
                }
            }
            // Deadlines, whatever each client did or did not send.
            let later = Date()
            for (fd, channel) in channels {
                // A paused channel's requests wait on the server, not the client: its write
                // deadline runs instead.
                if let started = channel.requestStarted, !isPaused(channel), later.timeIntervalSince(started) > limits.request {
                    service.metrics.request(status: 408, seconds: later.timeIntervalSince(started))
                    queue(HTTPResponse(status: 408), keepAlive: false, on: channel)
                    if !advance(channel) { channels[fd] = nil }
                } else if let due = channel.outbound.deadline, later > due {
                    // It stopped reading its answers, or takes them too slowly.
                    close(fd)
                    channels[fd] = nil
                } else if channel.requestStarted == nil, channel.outbound.isEmpty, channel.subscription == nil,
                    later.timeIntervalSince(channel.lastActivity) > idle
                {
                    close(fd)
                    channels[fd] = nil
                }
            }
        }
    }

    /// When the listener is looked at again after an accept failed for want of a
    /// descriptor while the reserve one could not be had (once a second, not at every turn:
    /// a connection waiting would wake each `poll` at once).
    private var acceptRetry: Date?

    /// Accepts every connection waiting: each a channel, or answered 503 when the server is
    /// full (or has no descriptor left: the reserve one takes it).
    private func acceptWaiting(into channels: inout [Int32: Channel]) {
        acceptRetry = nil
        while true {
            var peer = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let fd = withUnsafeMutablePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(listener, $0, &length) }
            }
            if fd < 0 {
                if errno == EMFILE || errno == ENFILE {
                    guard reserve >= 0 else {
                        acceptRetry = Date().addingTimeInterval(1)
                        return
                    }
                    close(reserve)
                    let over = accept(listener, nil, nil)
                    if over >= 0 { refuse(over) }
                    reserve = open("/dev/null", O_RDONLY)
                    continue
                }
                return  // EAGAIN: none left waiting (or an error: tried again at the next wake)
            }
            guard channels.count < limits.connections, channels.count + hub.count < capacity else {
                refuse(fd)
                continue
            }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            if let size = limits.sendBuffer {
                var size = Int32(clamping: size)
                setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            }
            var noDelay: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
            #if canImport(Darwin)
                var one: Int32 = 1
                setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
            #endif
            var buffer = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            var address = peer.sin_addr
            inet_ntop(AF_INET, &address, &buffer, socklen_t(buffer.count))
            let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            channels[fd] = Channel(fd: fd, peer: name, at: Date())
        }
    }

    /// Reads what an open channel's socket holds (one read's worth, so that no client holds
    /// the thread); false when the connection is gone.
    private func read(_ channel: Channel, _ scratch: inout [UInt8]) -> Bool {
        let n = recv(channel.fd, &scratch, scratch.count, 0)
        if n > 0 {
            let now = Date()
            if case .open(nil) = channel.phase { channel.phase = .open(requestStarted: now) }
            channel.parser.append(scratch[0..<n])
            channel.lastActivity = now
            return true
        }
        if n == 0 {
            channel.phase = .halfClosed
            return true
        }
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR
    }

    /// Answers the whole requests a channel holds (while its answers waiting are under the
    /// bound), writes what its socket takes, and goes on while the socket takes all; ends
    /// its phase once what waits is written (closed, or handed to the hub). False when the
    /// channel is done with.
    private func advance(_ channel: Channel) -> Bool {
        while true {
            let wasPaused = isPaused(channel)
            let answered = answerWhole(channel)
            // Write what the socket takes.
            while !channel.outbound.isEmpty {
                let count = channel.outbound.count
                let start = channel.outbound.written
                let n = channel.outbound.bytes.withUnsafeBytes { Socket.transmit(channel.fd, $0.baseAddress! + start, count) }
                if n > 0 {
                    channel.outbound.written += n
                    continue
                }
                if n < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                    // What was written is let go once it is half the buffer: a client that
                    // reads as it pipelines never lets the queue empty.
                    if channel.outbound.written >= 64 << 10, channel.outbound.written * 2 >= channel.outbound.bytes.count {
                        channel.outbound.bytes.removeFirst(channel.outbound.written)
                        channel.outbound.written = 0
                    }
                    return true
                }
                close(channel.fd)
                return false
            }
            if !channel.outbound.bytes.isEmpty {
                channel.outbound.bytes.removeAll(keepingCapacity: true)
                channel.outbound.written = 0
                channel.outbound.deadline = nil
                channel.lastActivity = Date()
            }
            // All written: requests left unanswered while the answers were over the bound are
            // answered now (a closing or subscribing channel answers no more).
            switch channel.phase {
            case .closing, .subscribing: break
            case .open, .halfClosed: if answered > 0 || wasPaused { continue }
            }
            break
        }
        switch channel.phase {
        case .open:
            if isDraining, !channel.parser.hasPartialRequest {
                close(channel.fd)
                return false
            }
            return true
        case .halfClosed, .closing:
            close(channel.fd)
            return false
        case .subscribing(let subscription):
            let file = subscription.query.first { $0.0 == PushProtocol.fileQueryKey }?.1
            let admission = hub.admit(
                channel.fd, lastEventID: subscription.header("Last-Event-ID"), file: file, holding: subscription.header("If-None-Match"),
                heldGeneration: PushProtocol.generation(subscription.header(PushProtocol.generationHeader)))
            // The status sent: the stream's head, or 503 when the hub is full.
            service.metrics.request(status: admission == .refused ? 503 : 200, seconds: 0)
            if admission != .held { close(channel.fd) }
            return false
        }
    }

    /// Answers the whole requests a channel holds, up to an event-stream request (kept for
    /// the hub) or an answer that closes, while its answers waiting are under the bound;
    /// how many it answered. A half-closed channel's whole requests are answered too.
    private func answerWhole(_ channel: Channel) -> Int {
        var answered = 0
        while !isPaused(channel) {
            switch channel.phase {
            case .open, .halfClosed: break
            case .closing, .subscribing: return answered
            }
            let request: HTTPRequest?
            do {
                request = try channel.parser.next()
            } catch {
                service.metrics.request(status: error.status, seconds: channel.requestStarted.map { Date().timeIntervalSince($0) } ?? 0)
                queue(.json(error.status, .object([("errorDetails", .string(error.message))])), keepAlive: false, on: channel)
                return answered + 1
            }
            guard let request else {
                // A client that asked to be told to send its body is told now.
                if channel.parser.takeContinue() { queue(raw: HTTPServer.continueLine, on: channel) }
                break
            }
            answered += 1
            if channel.isOpen {
                channel.phase = .open(requestStarted: channel.parser.hasPartialRequest ? Date() : nil)
            }
            if request.path == OFREPService.eventsPath, request.method == "GET" {
                if let refusal = service.authorize(request) {
                    service.metrics.request(status: refusal.status, seconds: 0)
                    queue(refusal, keepAlive: false, on: channel)
                } else {
                    channel.phase = .subscribing(request)
                }
                break
            }
            let response = service.respond(request, peer: channel.peer)
            queue(response, keepAlive: request.keepsAlive && !isDraining, headOnly: request.method == "HEAD", on: channel)
        }
        return answered
    }

    /// The interim answer to `Expect: 100-continue`.
    static let continueLine = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    /// Queues `response` on the channel, written straight into what waits (closing after it
    /// unless `keepAlive`).
    private func queue(_ response: HTTPResponse, keepAlive: Bool, headOnly: Bool = false, on channel: Channel) {
        let before = channel.outbound.bytes.count
        let waiting = !channel.outbound.isEmpty
        response.serialize(into: &channel.outbound.bytes, keepAlive: keepAlive, headOnly: headOnly)
        queued(channel.outbound.bytes.count - before, behind: waiting, on: channel)
        if !keepAlive { channel.phase = .closing }
    }

    /// Queues bytes on the channel.
    private func queue(raw bytes: [UInt8], on channel: Channel) {
        let waiting = !channel.outbound.isEmpty
        channel.outbound.bytes += bytes
        queued(bytes.count, behind: waiting, on: channel)
    }

    /// Accounts for `count` bytes just queued (behind others still waiting, or not): their
    /// time at the minimum rate is added to the write deadline, which starts now when
    /// nothing was waiting.
    private func queued(_ count: Int, behind waiting: Bool, on channel: Channel) {
        if let due = channel.outbound.deadline, waiting {
            channel.outbound.deadline = due.addingTimeInterval(Double(count) / Double(max(1, limits.minimumRate)))
        } else {
            channel.outbound.deadline = limits.writeDeadline(of: count, from: Date())
        }
        let queued = channel.outbound.count
        if queued > largestQueueSeen {
            largestQueueSeen = queued
            mostQueued.withLock { $0 = max($0, queued) }
        }
    }

    package var isDraining: Bool { lock.withLock { draining } }

    /// Stops accepting; connections finish the request in hand and close. Safe from any
    /// thread (a signal handler's queue).
    package func drain() {
        lock.withLock { draining = true }
        service.served.wake()
        wakeUp.poke()
    }

    /// Writes all of `bytes`; false when the client is gone.
    @discardableResult
    private func write(_ fd: Int32, _ bytes: [UInt8]) -> Bool { Socket.writeAll(fd, bytes) }
}
