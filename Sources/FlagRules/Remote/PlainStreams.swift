import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a plain stream reports to: its response's head, its body's bytes (de-chunked), and
/// its end. Called on the streams' thread, one stream's calls in order.
protocol PlainStreamReceiver: AnyObject, Sendable {
    /// The response's status and header fields (names lowercased); false to close it.
    func opened(_ stream: PlainStreams.Stream, status: Int, headers: [String: String]) -> Bool
    func received(_ stream: PlainStreams.Stream, _ bytes: [UInt8])
    /// The stream ended: `error` says why, nil when the server closed it.
    func ended(_ stream: PlainStreams.Stream, error: String?)
}

/// Long-lived `GET`s over plain `http://` (the event streams of `flags serve`), every one
/// of the process on one thread waiting in `poll`: a stream costs a socket and a few
/// hundred bytes, and an idle one costs nothing. (Foundation's `URLSession` on Linux keeps
/// a core busy for as long as a stream is open, and takes seconds to open a thousand; it
/// stays for `https://`.)
///
/// A stream that sends nothing for `idleLimit` (the server's keep-alive comes every 15 s)
/// ends as dead, and so does one whose connection or response head takes over 10 s. A body
/// sent in chunks (a proxy's) is de-chunked.
final class PlainStreams: @unchecked Sendable {
    // Unchecked: `streams` and the loop's state belong to the thread; `pending` and `closing`
    // are behind `lock`.
    static let shared = PlainStreams()

    /// One stream, to cancel it by.
    final class Stream: Sendable {
        let url: URL
        fileprivate let id: Int
        fileprivate init(url: URL, id: Int) {
            self.url = url
            self.id = id
        }
    }

    /// The longest a stream may stay silent before it is taken for dead.
    static let idleLimit: TimeInterval = 60
    /// The longest a connection and its response's head may take.
    static let openLimit: TimeInterval = 10
    /// The largest response head read.
    static let maxHead = 16 << 10

    private enum Phase {
        case connecting
        case sending([UInt8])
        case head([UInt8])
        case body
    }

    private struct Open {
        let stream: Stream
        let fd: Int32
        let receiver: any PlainStreamReceiver
        /// The request, sent once connected.
        let request: [UInt8]
        var phase = Phase.connecting
        var chunks: ChunkedDecoder?
        var lastActivity: Date
    }

    private let lock = NSLock()
    private var pending: [(Stream, Int32, [UInt8], any PlainStreamReceiver)] = []
    private var closing: Set<Int> = []
    private var nextID = 0
    private var running = false
    /// Wakes the thread: a stream to add or to close.
    private var wake: [Int32] = [-1, -1]
    /// The thread's own.
    private var streams: [Int: Open] = [:]

    private init() {}

    /// A stream of `url` (whose scheme is `http`), to open with ``open(_:headers:receiver:)``.
    func stream(_ url: URL) -> Stream {
        lock.withLock {
            nextID += 1
            return Stream(url: url, id: nextID)
        }
    }

    /// Opens `GET` of `stream`'s URL with `headers`; the receiver hears of it on the
    /// streams' thread. Resolving the host and connecting happen off the caller's thread.
    func open(_ stream: Stream, headers: [(String, String)], receiver: any PlainStreamReceiver) {
        let url = stream.url
        DispatchQueue.global().async { [self] in
            switch Self.connect(url) {
            case .failure(let failure):
                // Closed meanwhile: it hears nothing.
                if lock.withLock({ closing.remove(stream.id) }) == nil { receiver.ended(stream, error: failure.reason) }
            case .success(let fd):
                let request = Self.request(url, headers: headers)
                let added = lock.withLock { () -> Bool in
                    if closing.remove(stream.id) != nil { return false }
                    pending.append((stream, fd, request, receiver))
                    startIfNeeded()
                    return true
                }
                if added { poke() } else { Glue.close(fd) }
            }
        }
    }

    /// Closes `stream` (its receiver hears nothing more).
    func close(_ stream: Stream) {
        lock.withLock { _ = closing.insert(stream.id) }
        poke()
    }

    // MARK: Connecting

    /// A non-blocking socket connecting to `url`'s host and port (the connection completes
    /// on the thread), or why not.
    private struct ConnectFailure: Error {
        let reason: String
    }

    private static func connect(_ url: URL) -> Result<Int32, ConnectFailure> {
        guard let host = url.host, !host.isEmpty else { return .failure(ConnectFailure(reason: "\(url.absoluteString) names no host")) }
        let port = url.port ?? 80
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Darwin)
            hints.ai_socktype = SOCK_STREAM
        #else
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #endif
        var found: UnsafeMutablePointer<addrinfo>?
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let status = getaddrinfo(bare, String(port), &hints, &found)
        guard status == 0, let first = found else { return .failure(ConnectFailure(reason: "cannot resolve \(host): \(String(cString: gai_strerror(status)))")) }
        defer { freeaddrinfo(first) }
        var reason = "cannot connect to \(host):\(port)"
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let info = next {
            next = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            guard fd >= 0 else { continue }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            #if canImport(Darwin)
                var one: Int32 = 1
                setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
            #endif
            if Glue.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 || errno == EINPROGRESS { return .success(fd) }
            reason = "cannot connect to \(host):\(port): \(String(cString: strerror(errno)))"
            Glue.close(fd)
        }
        return .failure(ConnectFailure(reason: reason))
    }

    /// The request's bytes: `GET` with the given headers, `Host`, and no body.
    static func request(_ url: URL, headers: [(String, String)]) -> [UInt8] {
        var target = url.path.isEmpty ? "/" : url.path
        if let query = url.query { target += "?" + query }
        let name = url.host ?? ""
        let host = url.port.map { "\(name):\($0)" } ?? name
        var text = "GET \(target) HTTP/1.1\r\nHost: \(host)\r\n"
        for (name, value) in headers where !value.contains("\r") && !value.contains("\n") { text += "\(name): \(value)\r\n" }
        return Array((text + "\r\n").utf8)
    }

    // MARK: The thread

    private func startIfNeeded() {
        guard !running else { return }
        running = true
        var fds: [Int32] = [0, 0]
        _ = pipe(&fds)
        for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        wake = fds
        let thread = Thread { [self] in loop() }
        thread.stackSize = 256 << 10
        thread.name = "FlagRules.PlainStreams"
        thread.start()
    }

    private func poke() {
        let fd = lock.withLock { wake[1] }
        guard fd >= 0 else { return }
        var byte: UInt8 = 1
        _ = Glue.write(fd, &byte, 1)
    }

    private func loop() {
        let wakeFD = lock.withLock { wake[0] }
        var scratch = [UInt8](repeating: 0, count: 65_536)
        while true {
            let (added, closed) = lock.withLock { () -> ([(Stream, Int32, [UInt8], any PlainStreamReceiver)], Set<Int>) in
                defer {
                    pending = []
                    closing = []
                }
                return (pending, closing)
            }
            let now = Date()
            var unknown = closed
            for (stream, fd, request, receiver) in added {
                if unknown.remove(stream.id) != nil {
                    Glue.close(fd)
                    continue
                }
                streams[stream.id] = Open(stream: stream, fd: fd, receiver: receiver, request: request, lastActivity: now)
            }
            for id in closed {
                if let open = streams.removeValue(forKey: id) {
                    Glue.close(open.fd)
                    unknown.remove(id)
                }
            }
            // Closed while still connecting, off this thread: it is not added when it comes.
            if !unknown.isEmpty { lock.withLock { closing.formUnion(unknown) } }
            // Deadlines: opening, and silence once open.
            var timeout = 60_000.0
            for (id, open) in streams {
                var limit = PlainStreams.openLimit
                if case .body = open.phase { limit = PlainStreams.idleLimit }
                let left = limit - now.timeIntervalSince(open.lastActivity)
                if left <= 0 {
                    end(id, error: "nothing came within \(Int(limit)) s")
                    continue
                }
                timeout = min(timeout, left * 1_000)
            }
            var fds = [pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
            var ids: [Int] = [0]
            for (id, open) in streams {
                var events = Int16(POLLIN)
                switch open.phase {
                case .connecting, .sending: events = Int16(POLLOUT)
                default: break
                }
                fds.append(pollfd(fd: open.fd, events: events, revents: 0))
                ids.append(id)
            }
            _ = poll(&fds, nfds_t(fds.count), Int32(max(1, timeout.rounded(.up))))
            if fds[0].revents != 0 { while Glue.read(wakeFD, &scratch, scratch.count) > 0 {} }
            for (k, ready) in fds.enumerated().dropFirst() where ready.revents != 0 {
                step(ids[k], scratch: &scratch)
            }
        }
    }

    private func step(_ id: Int, scratch: inout [UInt8]) {
        guard var open = streams[id] else { return }
        switch open.phase {
        case .connecting:
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(open.fd, SOL_SOCKET, SO_ERROR, &error, &length)
            guard error == 0 else { return end(id, error: "cannot connect to \(open.stream.url.host ?? ""): \(String(cString: strerror(error)))") }
            open.phase = .sending(open.request)
            streams[id] = open
            step(id, scratch: &scratch)
        case .sending(let bytes):
            let n = bytes.withUnsafeBytes { Glue.send(open.fd, $0.baseAddress, bytes.count) }
            if n < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return }
                return end(id, error: "the request could not be sent: \(String(cString: strerror(errno)))")
            }
            open.phase = n == bytes.count ? .head([]) : .sending(Array(bytes[n...]))
            streams[id] = open
        case .head, .body:
            let n = Glue.read(open.fd, &scratch, scratch.count)
            if n == 0 { return end(id, error: nil) }
            if n < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return }
                return end(id, error: String(cString: strerror(errno)))
            }
            open.lastActivity = Date()
            streams[id] = open
            take(id, Array(scratch[..<n]))
        }
    }

    /// Bytes read from stream `id`: the head's, then the body's.
    private func take(_ id: Int, _ bytes: [UInt8]) {
        guard var open = streams[id] else { return }
        var body = bytes
        if case .head(let sofar) = open.phase {
            let head = sofar + bytes
            guard let end = ASCII.blankLine(in: head, from: 0, within: PlainStreams.maxHead) else {
                if head.count > PlainStreams.maxHead { return self.end(id, error: "the response's head is over 16 KiB") }
                open.phase = .head(head)
                streams[id] = open
                return
            }
            guard let (status, fields) = Self.parseHead(head[..<end]) else { return self.end(id, error: "not an HTTP response") }
            open.phase = .body
            if fields["transfer-encoding"]?.lowercased().contains("chunked") == true { open.chunks = ChunkedDecoder() }
            streams[id] = open
            guard open.receiver.opened(open.stream, status: status, headers: fields) else {
                return self.end(id, error: "HTTP \(status): not an event stream")
            }
            body = Array(head[(end + 4)...])
        }
        guard !body.isEmpty, var current = streams[id] else { return }
        if var decoder = current.chunks {
            let decoded: [UInt8]
            do {
                decoded = try decoder.feed(body)
            } catch {
                return end(id, error: "the response's chunks are malformed")
            }
            current.chunks = decoder
            streams[id] = current
            if !decoded.isEmpty { current.receiver.received(current.stream, decoded) }
            if decoder.isDone { end(id, error: nil) }
        } else {
            current.receiver.received(current.stream, body)
        }
    }

    private func end(_ id: Int, error: String?) {
        guard let open = streams.removeValue(forKey: id) else { return }
        Glue.close(open.fd)
        open.receiver.ended(open.stream, error: error)
    }

    /// The status and header fields (names lowercased) of a response head.
    static func parseHead(_ head: ArraySlice<UInt8>) -> (Int, [String: String])? {
        let lines = String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n")
        let first = lines[0].split(separator: " ", maxSplits: 2)
        guard first.count >= 2, first[0].hasPrefix("HTTP/1."), let status = Int(first[1]) else { return nil }
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (status, fields)
    }
}

/// A body sent with `Transfer-Encoding: chunked`, de-chunked as its bytes come, in pieces
/// of any size (RFC 9112 §7.1): each chunk's size in hex (extensions ignored), its data and
/// CRLF, until a chunk of size 0 and the trailer's blank line.
struct ChunkedDecoder: Sendable {
    struct Malformed: Error {}

    private enum State: Equatable {
        case size([UInt8])
        case data(Int)
        case dataEnd(Int)
        case trailer([UInt8])
        case done
    }

    private var state = State.size([])
    /// Whether the last chunk and its trailer have come.
    var isDone: Bool { state == .done }

    mutating func feed(_ bytes: [UInt8]) throws(Malformed) -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            switch state {
            case .size(var line):
                let byte = bytes[i]
                i += 1
                if byte == 10 {
                    if line.last == 13 { line.removeLast() }
                    let digits = line.prefix { $0 != 59 && $0 != 32 && $0 != 9 }
                    guard !digits.isEmpty, digits.count <= 15, let size = Int(String(decoding: digits, as: UTF8.self), radix: 16)
                    else { throw Malformed() }
                    state = size == 0 ? .trailer([]) : .data(size)
                } else {
                    guard line.count < 1_024 else { throw Malformed() }
                    line.append(byte)
                    state = .size(line)
                }
            case .data(let left):
                let n = min(left, bytes.count - i)
                out += bytes[i..<(i + n)]
                i += n
                state = n == left ? .dataEnd(2) : .data(left - n)
            case .dataEnd(let left):
                let expected: UInt8 = left == 2 ? 13 : 10
                guard bytes[i] == expected else { throw Malformed() }
                i += 1
                state = left == 2 ? .dataEnd(1) : .size([])
            case .trailer(var line):
                let byte = bytes[i]
                i += 1
                if byte == 10 {
                    if line.isEmpty || line == [13] {
                        state = .done
                    } else {
                        state = .trailer([])
                    }
                } else {
                    guard line.count < 1_024 else { throw Malformed() }
                    line.append(byte)
                    state = .trailer(line)
                }
            case .done:
                return out
            }
        }
        return out
    }
}

/// The C calls whose Swift names the methods above shadow.
private enum Glue {
    static func connect(_ fd: Int32, _ address: UnsafePointer<sockaddr>!, _ length: socklen_t) -> Int32 {
        #if canImport(Darwin)
            Darwin.connect(fd, address, length)
        #elseif canImport(Glibc)
            Glibc.connect(fd, address, length)
        #else
            Musl.connect(fd, address, length)
        #endif
    }
    static func close(_ fd: Int32) {
        #if canImport(Darwin)
            _ = Darwin.close(fd)
        #elseif canImport(Glibc)
            _ = Glibc.close(fd)
        #else
            _ = Musl.close(fd)
        #endif
    }
    static func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
        #if canImport(Darwin)
            Darwin.read(fd, buffer, count)
        #elseif canImport(Glibc)
            Glibc.read(fd, buffer, count)
        #else
            Musl.read(fd, buffer, count)
        #endif
    }
    static func write(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Darwin)
            Darwin.write(fd, buffer, count)
        #elseif canImport(Glibc)
            Glibc.write(fd, buffer, count)
        #else
            Musl.write(fd, buffer, count)
        #endif
    }
    static func send(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
        #if canImport(Darwin)
            Darwin.send(fd, buffer, count, 0)
        #elseif canImport(Glibc)
            Glibc.send(fd, buffer, count, Int32(MSG_NOSIGNAL))
        #else
            Musl.send(fd, buffer, count, Int32(MSG_NOSIGNAL))
        #endif
    }
}
