import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Starts `process`, as `process.run()` does, but so that the child inherits no descriptor
/// of the tests beside it. Foundation's `Process.run()` on Linux closes in the child the
/// descriptors from 3 up to the highest one open when it looks (in `/proc/self/fd`): one
/// that another thread opens between that look and the spawn (a pipe to another test's
/// child, a socket of an in-process server) is inherited, and stays open as long as this
/// child lives. The other test, reading its child's output to the end, then waits for this
/// child (a `flags lsp` lives until its test ends); a server's connection the test expects
/// closed stays open; its port stays taken. Tests that run programs run beside the others,
/// off the cooperative pool, so it happens. A descriptor held open well above those the
/// tests use makes every look cover them all.
func spawn(_ process: Process) throws {
    #if os(Linux)
        _ = highDescriptor
    #endif
    try process.run()
}

#if os(Linux)
    /// `/dev/null`, held open at descriptor 4,095 (or the highest the limit allows), if it
    /// is not taken already (then that one does as well).
    private let highDescriptor: Int32 = {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return -1 }
        let fd = Int32(min(limit.rlim_cur, 4_096)) - 1
        guard fcntl(fd, F_GETFD) == -1 else { return fd }
        let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer { close(null) }
        guard dup2(null, fd) == fd else { return -1 }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        return fd
    }()
#endif
