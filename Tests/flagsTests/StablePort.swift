import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A port for a server that a test stops and starts again on the same port: one below the
/// ephemeral ranges (32,768 and up on Linux, 49,152 and up on Apple platforms), which the
/// system never gives a client's socket, so no other test's connection takes it while the
/// server is down.
enum StablePort {
    static func next() throws -> Int {
        for _ in 0..<200 {
            let port = Int.random(in: 20_000..<32_000)
            if canBind(port) { return port }
        }
        throw StablePortError()
    }

    struct StablePortError: Error, CustomStringConvertible {
        var description: String { "no free port in 20000..<32000 after 200 tries" }
    }

    static func canBind(_ port: Int) -> Bool {
        #if canImport(Darwin)
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #else
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #endif
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
