/// What a store's event stream hands it, taken in order and one at a time: a text waiting
/// to be taken is replaced by a newer one (the newest wins: an older one is never taken
/// after it), and asks for a fetch are merged into one. It holds at most one text and one
/// fetch, however fast the stream talks.
final class PushInbox: Sendable {
    enum Work: Sendable, Equatable {
        case rules(text: [UInt8], etag: String, generation: Int?)
        case fetch
    }

    private struct State {
        var text: Work?
        var fetch = false
        /// Whether a taker is draining the inbox.
        var taking = false
    }

    private let state = Locked(State())

    /// Adds `work`; true when nobody is taking, and the caller must start (then call
    /// ``next()`` until it gives nil).
    func add(_ work: Work) -> Bool {
        state.withLock { s in
            switch work {
            case .rules(_, _, let generation):
                // A text older than the one waiting (by generation) is dropped.
                if case .rules(_, _, let waiting?)? = s.text, let generation, generation < waiting { break }
                s.text = work
            case .fetch:
                s.fetch = true
            }
            defer { s.taking = true }
            return !s.taking
        }
    }

    /// The next thing to take (a text before a fetch); nil when there is none, and the
    /// taker stops.
    func next() -> Work? {
        state.withLock { s in
            if let text = s.text {
                s.text = nil
                return text
            }
            if s.fetch {
                s.fetch = false
                return .fetch
            }
            s.taking = false
            return nil
        }
    }

    /// The taker stops (its store stopped): what waits is dropped.
    func abandon() {
        state.withLock { $0 = State() }
    }

    /// What waits, for tests.
    var waiting: (text: Work?, fetch: Bool) { state.withLock { ($0.text, $0.fetch) } }
}
