import Foundation

/// A connection of the ``HTTPServer``'s loop, and the answers it has queued.
extension HTTPServer {
    /// One connection: what was read of it, what waits to be written, its deadlines. A
    /// class, so that the loop changes it in place (a struct taken out of the table and
    /// changed would copy its buffers).
    final class Channel {
        let fd: Int32
        let peer: String
        var parser = HTTPRequestParser()
        /// Where the connection is in its life; see ``Phase``.
        var phase = Phase.open(requestStarted: nil)
        /// What waits to be written, and by when.
        var outbound = Outbound()
        /// When a byte last came, or the last answer was all written.
        var lastActivity: Date

        init(fd: Int32, peer: String, at now: Date) {
            self.fd = fd
            self.peer = peer
            lastActivity = now
        }

        /// A connection's phases. It begins `open`; a request it cannot keep reading after
        /// (an error, `Connection: close`, a drain, a `408`) makes it `closing`; a read of
        /// nothing makes an open one `halfClosed`; a request for the event stream makes it
        /// `subscribing`. Each ends once what waits is written: closed, or handed to the hub.
        enum Phase {
            /// Reading requests; `requestStarted`: when the one being read began (its first
            /// byte), nil between requests.
            case open(requestStarted: Date?)
            /// The client will send nothing more: what it asked is answered, then it closes.
            /// A request it left unfinished can never be finished, and is not answered.
            case halfClosed
            /// Closes once what waits is written.
            case closing
            /// A request for the event stream, handed to the hub once the answers before it
            /// are written.
            case subscribing(HTTPRequest)
        }

        /// When the request being read began, if one is.
        var requestStarted: Date? {
            if case .open(let started) = phase { return started }
            return nil
        }

        /// Whether it reads requests: open (a paused one reads none until its answers drain).
        var isOpen: Bool {
            if case .open = phase { return true }
            return false
        }

        var subscription: HTTPRequest? {
            if case .subscribing(let request) = phase { return request }
            return nil
        }
    }

    /// The answers a connection has queued: bytes, how many are written, and when what
    /// waits must be all written: from when it began to wait, the write deadline plus its
    /// size at the minimum rate (each answer queued behind adds its own size's time).
    /// Progress does not push it back.
    struct Outbound {
        var bytes: [UInt8] = []
        var written = 0
        var deadline: Date?

        var isEmpty: Bool { written >= bytes.count }
        /// The bytes waiting to be written.
        var count: Int { bytes.count - written }
    }
}
