import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the transport's parts (the HTTP server, the event hub) do with a socket alike: the
/// one place a socket is written.
enum Socket {
    /// Sends up to `count` bytes from `base` without raising SIGPIPE (`MSG_NOSIGNAL`; on
    /// Darwin each socket is set `SO_NOSIGPIPE` when accepted), again when a signal
    /// interrupted it: the bytes sent, or -1 with `errno` set (`EAGAIN` when a socket that
    /// does not block is full).
    static func transmit(_ fd: Int32, _ base: UnsafeRawPointer, _ count: Int) -> Int {
        while true {
            #if canImport(Darwin)
                let n = send(fd, base, count, 0)
            #else
                let n = send(fd, base, count, Int32(MSG_NOSIGNAL))
            #endif
            if n < 0, errno == EINTR { continue }
            return n
        }
    }

    /// Writes all of `bytes`; false when the peer is gone (or, on a socket that does not
    /// block, when its buffer is full).
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { transmit(fd, $0.baseAddress! + sent, bytes.count - sent) }
            if n <= 0 { return false }
            sent += n
        }
        return true
    }
}
