import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A small HTTP/1.1 server on 127.0.0.1 for the live store's tests: each request is
/// answered by `respond` on its own thread, then the connection is closed. It can stop and
/// start again on the same port (a server that goes away and comes back).
final class TestHTTPServer: @unchecked Sendable {
    struct Request: Sendable {
        let path: String
        /// Header names lowercased.
        let headers: [String: String]
    }

    struct Response: Sendable {
        var status = 200
        var headers: [String: String] = [:]
        var body: [UInt8] = []
        /// Waited before anything is sent.
        var delay: Double = 0

        static func ok(_ text: String, etag: String? = nil) -> Response {
            Response(status: 200, headers: etag.map { ["ETag": $0] } ?? [:], body: Array(text.utf8))
        }
    }

    private let respond: @Sendable (Request) -> Response
    private let state = NSLock()
    private var listener: Int32 = -1
    private var requestLog: [Request] = []
    private(set) var port: UInt16 = 0

    init(_ respond: @escaping @Sendable (Request) -> Response) throws {
        self.respond = respond
        signal(SIGPIPE, SIG_IGN)  // a client that hangs up mid-response is not a crash
        try start()
    }

    deinit { stop() }

    var url: URL { URL(string: "http://127.0.0.1:\(port)/app.flags")! }

    /// Every request so far, in order.
    var requests: [Request] { state.withLock { requestLog } }

    func start() throws {
        #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
        state.withLock { listener = fd }
        Thread.detachNewThread { [self] in acceptLoop(fd) }
    }

    /// Closes the listening socket: connections are refused until `start()`.
    func stop() {
        let fd = state.withLock {
            defer { listener = -1 }
            return listener
        }
        if fd >= 0 {
            shutdown(fd, Int32(SHUT_RDWR))
            close(fd)
        }
    }

    private func acceptLoop(_ fd: Int32) {
        while true {
            let client = accept(fd, nil, nil)
            guard client >= 0 else { return }
            Thread.detachNewThread { [self] in serve(client) }
        }
    }

    private func serve(_ client: Int32) {
        defer { close(client) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !received.contains(subsequence: [13, 10, 13, 10]) {
            let n = read(client, &buffer, buffer.count)
            guard n > 0 else { return }
            received += buffer[0..<n]
        }
        let head = String(decoding: received, as: UTF8.self).components(separatedBy: "\r\n")
        let path = head[0].split(separator: " ").dropFirst().first.map(String.init) ?? "/"
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let request = Request(path: path, headers: headers)
        state.withLock { requestLog.append(request) }
        let response = respond(request)
        if response.delay > 0 { Thread.sleep(forTimeInterval: response.delay) }
        var text = "HTTP/1.1 \(response.status) Status\r\nContent-Length: \(response.body.count)\r\nConnection: close\r\n"
        for (name, value) in response.headers { text += "\(name): \(value)\r\n" }
        let bytes = Array((text + "\r\n").utf8) + response.body
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
            guard n > 0 else { return }
            sent += n
        }
    }
}

extension Array where Element == UInt8 {
    fileprivate func contains(subsequence: [UInt8]) -> Bool {
        guard count >= subsequence.count else { return false }
        return (0...(count - subsequence.count)).contains { self[$0..<($0 + subsequence.count)].elementsEqual(subsequence) }
    }
}
