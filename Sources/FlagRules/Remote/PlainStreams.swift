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
        /// The head so far, and how far it was searched for its end.
        case head([UInt8], searched: Int)
        case body
    }

    /// One address a host name resolved to.
    fileprivate struct Address: Sendable {
        let family: Int32
        let type: Int32
        let proto: Int32
        let bytes: [UInt8]
    }

    private struct Open {
        let stream: Stream
        var fd: Int32
        let receiver: any PlainStreamReceiver
        /// The request, sent once connected.
        let request: [UInt8]
        /// The host's other addresses, tried in turn when a connection fails.
        var others: [Address]
        var phase = Phase.connecting
        var chunks: ChunkedDecoder?
        /// When the connection was begun (its head is due within `openLimit` of it), and
        /// when a byte last came.
        let openedAt: Date
        var lastActivity: Date
    }

    private let lock = NSLock()
    private var pending: [(Stream, Int32, [Address], [UInt8], any PlainStreamReceiver)] = []
    private var closing: Set<Int> = []
    /// Streams being resolved and connected off the thread.
    private var connecting: Set<Int> = []
    /// Where host names are resolved (a lookup blocks its thread): a few at a time.
    private let resolving: OperationQueue = {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 8
        queue.name = "FlagRules.PlainStreams.resolving"
        return queue
    }()
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
        lock.withLock { _ = connecting.insert(stream.id) }
        resolving.addOperation { [self] in
            let made = Self.request(url, headers: headers).flatMap { request in Self.connect(url).map { (request, $0) } }
            switch made {
            case .failure(let failure):
                // Closed meanwhile: it hears nothing.
                let closed = lock.withLock { () -> Bool in
                    connecting.remove(stream.id)
                    return closing.remove(stream.id) != nil
                }
                if !closed { receiver.ended(stream, error: failure.reason) }
            case .success(let (request, (fd, others))):
                let added = lock.withLock { () -> Bool in
                    connecting.remove(stream.id)
                    if closing.remove(stream.id) != nil { return false }
                    pending.append((stream, fd, others, request, receiver))
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
    fileprivate struct ConnectFailure: Error {
        let reason: String
    }

    private static func connect(_ url: URL) -> Result<(Int32, [Address]), ConnectFailure> {
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
        guard status == 0, let first = found else {
            return .failure(ConnectFailure(reason: "cannot resolve \(host): \(String(cString: gai_strerror(status)))"))
        }
        var addresses: [Address] = []
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let info = next {
            next = info.pointee.ai_next
            guard let address = info.pointee.ai_addr else { continue }
            let bytes = Array(UnsafeRawBufferPointer(start: address, count: Int(info.pointee.ai_addrlen)))
            addresses.append(
                Address(family: info.pointee.ai_family, type: info.pointee.ai_socktype, proto: info.pointee.ai_protocol, bytes: bytes))
        }
        freeaddrinfo(first)
        var reason = "cannot connect to \(host):\(port)"
        while !addresses.isEmpty {
            let address = addresses.removeFirst()
            switch begin(address) {
            case .success(let fd): return .success((fd, addresses))
            case .failure(let failure): reason = "cannot connect to \(host):\(port): \(failure.reason)"
            }
        }
        return .failure(ConnectFailure(reason: reason))
    }

    /// A non-blocking socket connecting to `address` (the connection completes later).
    fileprivate static func begin(_ address: Address) -> Result<Int32, ConnectFailure> {
        let fd = socket(address.family, address.type, address.proto)
        guard fd >= 0 else { return .failure(ConnectFailure(reason: String(cString: strerror(errno)))) }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        #if canImport(Darwin)
            var one: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        let status = address.bytes.withUnsafeBytes { raw in
            Glue.connect(fd, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(address.bytes.count))
        }
        if status == 0 || errno == EINPROGRESS { return .success(fd) }
        let reason = String(cString: strerror(errno))
        Glue.close(fd)
        return .failure(ConnectFailure(reason: reason))
    }

    /// The request's bytes: `GET` with the given headers, `Host`, and no body; a failure
    /// when the target or a header would not make one request (a line break, a space, a
    /// control character: what a hostile `X-Flags-Events` could hold).
    fileprivate static func request(_ url: URL, headers: [(String, String)]) -> Result<[UInt8], ConnectFailure> {
        let parts = URLComponents(url: url, resolvingAgainstBaseURL: false)
        var target = parts?.percentEncodedPath ?? ""
        if target.isEmpty { target = "/" }
        if let query = parts?.percentEncodedQuery { target += "?" + query }
        let isPlain = { (text: String) in text.utf8.allSatisfy { $0 > 32 && $0 < 127 } }
        guard isPlain(target), target.hasPrefix("/") else { return .failure(ConnectFailure(reason: "'\(target)' is not a request target")) }
        let name = url.host ?? ""
        let host = url.port.map { "\(name):\($0)" } ?? name
        guard isPlain(host) else { return .failure(ConnectFailure(reason: "'\(host)' is not a host")) }
        var text = "GET \(target) HTTP/1.1\r\nHost: \(host)\r\n"
        for (field, value) in headers {
            guard isPlain(field), !field.contains(":"), value.utf8.allSatisfy({ $0 >= 32 && $0 != 127 || $0 == 9 }) else {
                return .failure(ConnectFailure(reason: "the header '\(field)' cannot be sent"))
            }
            text += "\(field): \(value)\r\n"
        }
        return .success(Array((text + "\r\n").utf8))
    }

    /// The request's bytes (`request(_:headers:)`), for tests: nil when it cannot be made.
    static func requestBytes(_ url: URL, headers: [(String, String)]) -> [UInt8]? { try? request(url, headers: headers).get() }

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
            let (added, closed) = lock.withLock { () -> ([(Stream, Int32, [Address], [UInt8], any PlainStreamReceiver)], Set<Int>) in
                defer {
                    pending = []
                    closing = []
                }
                return (pending, closing)
            }
            let now = Date()
            var unknown = closed
            for (stream, fd, others, request, receiver) in added {
                if unknown.remove(stream.id) != nil {
                    Glue.close(fd)
                    continue
                }
                streams[stream.id] = Open(
                    stream: stream, fd: fd, receiver: receiver, request: request, others: others, openedAt: now, lastActivity: now)
            }
            for id in closed {
                if let open = streams.removeValue(forKey: id) {
                    Glue.close(open.fd)
                    unknown.remove(id)
                }
            }
            // Closed while still connecting, off this thread: it is not added when it comes.
            // (Another, ended already, is forgotten.)
            if !unknown.isEmpty { lock.withLock { closing.formUnion(unknown.intersection(connecting)) } }
            // Deadlines: opening, and silence once open.
            var timeout = 60_000.0
            for (id, open) in streams {
                // Opening: from its start, however its bytes trickle; open: since the last byte.
                var (limit, since) = (PlainStreams.openLimit, open.openedAt)
                if case .body = open.phase { (limit, since) = (PlainStreams.idleLimit, open.lastActivity) }
                let left = limit - now.timeIntervalSince(since)
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
            guard error == 0 else {
                // The host's next address, if it has one.
                Glue.close(open.fd)
                while !open.others.isEmpty {
                    if case .success(let fd) = Self.begin(open.others.removeFirst()) {
                        open.fd = fd
                        streams[id] = open
                        return
                    }
                }
                open.fd = -1
                streams[id] = open
                return end(id, error: "cannot connect to \(open.stream.url.host ?? ""): \(String(cString: strerror(error)))")
            }
            open.phase = .sending(open.request)
            streams[id] = open
            step(id, scratch: &scratch)
        case .sending(let bytes):
            let n = bytes.withUnsafeBytes { Glue.send(open.fd, $0.baseAddress, bytes.count) }
            if n < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return }
                return end(id, error: "the request could not be sent: \(String(cString: strerror(errno)))")
            }
            open.phase = n == bytes.count ? .head([], searched: 0) : .sending(Array(bytes[n...]))
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
        if case .head(let sofar, let searched) = open.phase {
            let head = sofar + bytes
            guard let end = ASCII.blankLine(in: head, from: searched, within: PlainStreams.maxHead - searched) else {
                if head.count > PlainStreams.maxHead { return self.end(id, error: "the response's head is over 16 KiB") }
                // The last three bytes may begin the blank line.
                open.phase = .head(head, searched: max(0, head.count - 3))
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
        if open.fd >= 0 { Glue.close(open.fd) }
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

    private static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case 48...57: return Int(byte - 48)
        case 65...70: return Int(byte - 55)
        case 97...102: return Int(byte - 87)
        default: return nil
        }
    }

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
                    // Hex digits only (`Int(_:radix:)` would take a sign).
                    guard !digits.isEmpty, digits.count <= 15 else { throw Malformed() }
                    var size = 0
                    for digit in digits {
                        guard let value = Self.hexValue(digit) else { throw Malformed() }
                        size = size * 16 + value
                    }
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
    static func close(_ fd: Int32) { closeDescriptor(fd) }
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

/// `close(2)`, for types with a `close()` of their own.
package func closeDescriptor(_ fd: Int32) {
    #if canImport(Darwin)
        _ = Darwin.close(fd)
    #elseif canImport(Glibc)
        _ = Glibc.close(fd)
    #else
        _ = Musl.close(fd)
    #endif
}
