import Foundation
import MinimalServer

/// `flags-bench --minimal-server`: the epoll loop of the `MinimalServer` target (C), the
/// limit of one thread of this machine for HTTP/1.1, which ``throughputFigures()`` starts
/// pinned to one core as it starts `flags serve`.
func runMinimalServer() -> Never {
    let status = minimal_server_run()
    FileHandle.standardError.write(Data("flags-bench: the minimal server cannot listen (it needs Linux's epoll)\n".utf8))
    exit(status)
}
