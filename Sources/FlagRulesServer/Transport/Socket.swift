import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the transport's parts (the HTTP server, the event hub) do with a socket alike.
enum Socket {
    /// Writes all of `bytes`; false when the peer is gone (or, on a socket that does not
    /// block, when its buffer is full).
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
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
