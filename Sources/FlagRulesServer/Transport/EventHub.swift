import FlagRules
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// OFREP's event stream (server-sent events, as open-feature/protocol's
/// `service/event-streams.yaml` describes them) for every subscriber: a connection that asks
/// for the stream is answered its headers and then held here, so that thousands of idle
/// subscribers cost a descriptor and a few bytes each. The hub is stepped by the server's
/// one loop (``step(ready:)``: its descriptors are in the same `poll` as the connections'),
/// or, made on its own, by a thread of its own.
///
/// Each new generation of the rules in force (``ServedRules``; a revert to an earlier text
/// is a new generation like any change) sends every subscriber
///
///     id: <generation>
///     event: message
///     retry: 1000
///     data: {"type":"refetchEvaluation","etag":"<generation>","lastModified":<unix seconds>}
///
/// and a comment (`: keep-alive`) goes every 15 s otherwise, so that proxies keep the
/// connection. A subscriber that asked for one served file's rules (`?rules=NAME`, what a
/// store fetching `/rules/NAME` is told to ask) also gets the file's new text when it
/// changes, before the `refetchEvaluation`:
///
///     event: message
///     data: {"type":"rulesChanged","file":"NAME","etag":"\"…\"","generation":<n>,"rules":"flag …"}
///
/// (an OFREP client ignores the type, as the protocol asks). Each subscriber is marked with
/// the generation it was told of and the file text it holds, and is sent only what is newer:
/// never a text older than one it was sent or said it holds. Such a stream's head says
/// `X-Flags-Rules: current`: when the request names the text its client holds
/// (`If-None-Match`, and its generation in `X-Flags-Generation`) and the file's text in
/// force is newer, that text is the first event, so a client that reconnects needs no fetch
/// to catch up; the head then says whether an update of the file stands rejected
/// (`rulesRejected`) or not (`rulesAccepted`). When an update of a file is rejected, every
/// subscriber gets
///
///     event: message
///     data: {"type":"rulesRejected","file":"NAME","message":"…","at":<unix seconds>}
///
/// while the file's last good rules stay served, and `{"type":"rulesAccepted",…}` once a
/// good text of it is in force again (a fix, or the last good text restored). A subscriber
/// that reconnects with `Last-Event-ID` naming another generation gets the refetch at once.
/// What a subscriber's socket will not take at once is kept and sent as it takes it (an
/// event of a large file on a slow link arrives whole); a subscriber whose socket is
/// closed, that holds back more than a mebibyte (or twice its largest event), or that has
/// held some back for 30 s, however slowly it reads, is dropped (it reconnects and catches
/// up). It waits for a change (a pipe it is woken by), for the sockets of those behind to
/// take more, and for the next keep-alive; nothing wakes it otherwise. The head says `X-Accel-Buffering: no`, so that nginx passes events on as they come.
final class EventHub: @unchecked Sendable {
    // Unchecked: `subscribers`, `behind`, `running` and `stopped` are read and written only
    // under `lock`.
    /// The most subscribers held at once; more are answered 503.
    static let maxSubscribers = 16_000
    static let keepAlive: TimeInterval = 15

    private let served: ServedRules
    /// Guards `subscribers`, `behind`, `running` and `stopped`; taken before the service's
    /// own lock.
    private let lock = NSLock()
    /// Held while subscribers' descriptors are written or closed, so that `stop` never closes
    /// one that a broadcast is writing (its number could be reused by then).
    private let writing = NSLock()
    private struct Subscriber {
        let fd: Int32
        /// The served file whose text it asked for, the ETag of the text it holds (sent, or
        /// named when it connected) and that text's generation.
        let file: String?
        var heldETag: String?
        var heldGeneration: Int
        /// The generation it has been told of (or that was in force when it subscribed).
        var seenGeneration: Int
        /// How many notices it has been told of (or were recorded when it subscribed).
        var seenNotices: Int
        /// Events its socket has not taken yet, oldest first (the first sent up to
        /// `pendingOffset`), and since when some have waited.
        var pending: [[UInt8]] = []
        var pendingOffset = 0
        var pendingSince: Date?
    }
    private var subscribers: [Subscriber] = []
    /// The subscribers with events pending, and since when: what the hub waits on (their
    /// sockets' room) and drops when too long behind, kept as `broadcast` leaves them so
    /// that a step need not walk every subscriber.
    private var behind: [Int32: Date] = [:]
    private var running = false
    private var stopped = false
    /// The longest a subscriber may hold events back before it is dropped.
    let maxBehind: TimeInterval
    /// Wakes the thread on a change of the rules or the notices.
    private let wakeUp = WakePipe()
    /// How many times the thread has woken (what a test reads to see it does not poll).
    private let wakeups = Locked(0)
    var wakeCount: Int { wakeups.withLock { $0 } }
    /// The most subscribers held at once here: `maxSubscribers`, or fewer when the process
    /// has fewer descriptors (room is left for requests).
    let limit: Int

    /// What the hub has told of: the generation and the notices, and when the last
    /// keep-alive went. Read and written by whichever thread steps the hub.
    private struct Cursor {
        var generation: Int
        var notices: Int
        var lastKeepAlive = Date()
    }
    private let cursor: Locked<Cursor>
    /// Whether a server's loop steps the hub (``step(ready:)``); otherwise the hub runs a
    /// thread of its own from its first subscriber.
    let driven: Bool

    /// What the hub waits for next: its descriptors (the pipe it is woken by, the sockets of
    /// the subscribers behind) and when it must step even if none is ready.
    struct Wait {
        var descriptors: [pollfd]
        var deadline: Date
    }

    init(served: ServedRules, limit: Int = EventHub.maxSubscribers, maxBehind: TimeInterval = 30, driven: Bool = false) {
        self.served = served
        self.limit = max(1, min(limit, EventHub.maxSubscribers))
        self.maxBehind = maxBehind
        self.driven = driven
        let (now, notices) = served.current
        cursor = Locked(Cursor(generation: now.generation, notices: notices))
        served.onChange { [wakeUp] in wakeUp.poke() }
    }

    /// The most bytes a subscriber may hold back: a mebibyte, or twice its largest event.
    static func backlogLimit(_ pending: [[UInt8]]) -> Int {
        max(1 << 20, 2 * (pending.map(\.count).max() ?? 0))
    }

    /// How many subscribers are held.
    var count: Int { lock.withLock { subscribers.count } }

    /// The subscribers by the file they follow (`*`: every change).
    var countsByFile: [String: Int] {
        lock.withLock { subscribers.reduce(into: [:]) { counts, s in counts[s.file ?? "*", default: 0] += 1 } }
    }

    /// The refetch event for the generation of `snapshot`.
    static func event(refetch snapshot: ServedRules.Snapshot) -> String {
        PushProtocol.Event.refetch(version: snapshot.version, lastModified: Int(snapshot.since.timeIntervalSince1970)).text
    }

    /// What became of a connection handed to the hub.
    enum Admission: Equatable {
        /// Its head was written and it is held.
        case held
        /// The hub is full or stopped: it was answered 503.
        case refused
        /// Writing its head failed (the client is gone).
        case failed
    }

    /// Takes `fd`, whose request asked for the stream, as ``admit(_:lastEventID:file:holding:heldGeneration:)``
    /// does; false when it is not held (the caller closes `fd`).
    func subscribe(_ fd: Int32, lastEventID: String?, file: String? = nil, holding: String? = nil, heldGeneration: Int? = nil) -> Bool {
        admit(fd, lastEventID: lastEventID, file: file, holding: holding, heldGeneration: heldGeneration) == .held
    }

    /// Takes `fd`, whose request asked for the stream: writes the response's head (and the
    /// current event when `lastEventID` names another generation) and holds it. When the
    /// stream is full or stopped it answers 503 (``Admission/refused``); when the write
    /// fails, ``Admission/failed``: either way the caller closes `fd`.
    ///
    /// `holding` and `heldGeneration`: the ETag and generation of the text the client
    /// holds (`If-None-Match`, `X-Flags-Generation`). The head is written and the
    /// subscriber added under one lock, with what is in force read there too, so a change
    /// made once the head is out always reaches it and one already in force is not sent
    /// twice.
    func admit(_ fd: Int32, lastEventID: String?, file: String? = nil, holding: String? = nil, heldGeneration: Int? = nil) -> Admission {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        #if canImport(Darwin)
            var one: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        let admitted = lock.withLock { () -> Admission in
            guard !stopped, subscribers.count < limit else { return .refused }
            let (now, notices) = served.current
            if !running, !driven {
                running = true
                let thread = Thread { [self] in loop() }
                thread.stackSize = 256 << 10
                thread.start()
            }
            let requested = file
            let file = file.flatMap { name in now.files.first { $0.name == name } }
            // The text in force, when the client holds another, older one (or names none:
            // it fetches). A text the socket cannot take at once is not sent, and the head
            // does not say the stream starts from it: the client fetches.
            var catchUp: String?
            if let file, let holding, !OFREPService.matches(holding, file.etag), file.generation > heldGeneration ?? 0 {
                catchUp = Self.event(rulesOf: file)
            }
            let startsCurrent = file != nil && catchUp.map { Self.fitsAtOnce($0.utf8.count + 1_024, fd) } != false
            var head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
            head += "X-Accel-Buffering: no\r\nConnection: keep-alive\r\n"
            head += startsCurrent ? "\(PushProtocol.rulesHeader): current\r\n\r\n" + (catchUp ?? "") : "\r\n"
            if let file {
                let rejection = served.rejection(of: file.name)
                let state: PushProtocol.Event =
                    rejection.map { .rulesRejected(file: $0.file, message: $0.message, at: Int($0.at.timeIntervalSince1970)) }
                    ?? .rulesAccepted(file: file.name, etag: file.etag, generation: file.generation)
                head += state.text
            }
            if let lastEventID, lastEventID != now.version { head += Self.event(refetch: now) }
            guard Socket.writeAll(fd, Array(head.utf8)) else { return .failed }
            // The text it holds now, or fetches on connecting, is the one in force now (or
            // the newer one it named).
            let held = file.map { f in (heldGeneration ?? 0) > f.generation ? (holding, heldGeneration!) : (f.etag, f.generation) }
            // Marked with the name it asked for, served yet or not: a file served later (a
            // relay still loading, a rename) reaches it as any change does.
            subscribers.append(
                Subscriber(
                    fd: fd, file: requested, heldETag: held?.0 ?? holding, heldGeneration: held?.1 ?? heldGeneration ?? 0,
                    seenGeneration: now.generation, seenNotices: notices))
            return .held
        }
        if admitted == .refused {
            _ = Socket.writeAll(fd, HTTPResponse.busy.serialized(keepAlive: false))
        }
        return admitted
    }

    /// Closes every subscriber's connection and ends the thread (a driven hub's is closed
    /// by its server once it stops stepping it).
    func stop() {
        // Under `writing` first: a broadcast under way closes the subscribers it drops, and
        // the list read after it no longer holds them (a descriptor is closed once).
        writing.withLock {
            let held = lock.withLock { () -> [Subscriber] in
                stopped = true
                behind = [:]
                defer { subscribers = [] }
                return subscribers
            }
            for subscriber in held { close(subscriber.fd) }
        }
        // The thread closes its pipe as it ends; with no thread, it is closed here (a driven
        // hub's, by its server: ``closePipe()``).
        if !lock.withLock({ running }), !driven { wakeUp.close() }
        served.wake()
    }

    /// Closes the wake-up pipe of a driven hub, once its server no longer polls it.
    func closePipe() { wakeUp.close() }

    /// The hub's own thread (when no server drives it): steps it until it stops.
    private func loop() {
        var ready: [pollfd] = []
        while !lock.withLock({ stopped }) {
            let wait = step(ready: ready)
            var descriptors = wait.descriptors
            let timeout = Int32(max(1, min(60_000, (wait.deadline.timeIntervalSinceNow * 1_000).rounded(.up))))
            _ = poll(&descriptors, nfds_t(descriptors.count), timeout)
            ready = descriptors
        }
        wakeUp.close()
    }

    /// One step: sends what the sockets that became writable (`ready`, as `poll` left
    /// them) now take, drops those behind too long, tells every subscriber of a new
    /// generation or notice, sends the keep-alive when it is due; returns what to wait for
    /// next. Nothing wakes the hub but its pipe, a socket of one behind, or that deadline.
    func step(ready: [pollfd]) -> Wait {
        wakeups.withLock { $0 += 1 }
        wakeUp.drain()
        guard !lock.withLock({ stopped }) else { return Wait(descriptors: [], deadline: .distantFuture) }
        let pipe = wakeUp.readEnd
        let hangUp = Int16(POLLIN | POLLHUP | POLLERR)
        let hungUp = Set(ready.filter { $0.fd != pipe && $0.revents & hangUp != 0 }.map(\.fd))
        let writable = Set(ready.filter { $0.fd != pipe && $0.revents & Int16(POLLOUT) != 0 }.map(\.fd))
        let stepped = Date()
        let overdue = Set(lock.withLock { self.behind }.filter { stepped.timeIntervalSince($0.value) > maxBehind }.keys)
        if !hungUp.isEmpty { broadcast(only: hungUp, checkingHangUps: true) { _ in [] } }
        if !writable.isEmpty || !overdue.isEmpty { broadcast(only: writable.union(overdue)) { _ in [] } }
        var at = cursor.withLock { $0 }
        let (now, count) = served.current
        if count > at.notices {
            let recorded = served.notices(after: at.notices, through: count)
            at.notices = count
            let inForce = Dictionary(now.files.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
            broadcast { subscriber in
                // A file's subscriber hears of that file only; one of every change, of all.
                let untold = recorded.filter {
                    $0.number > subscriber.seenNotices && (subscriber.file == nil || subscriber.file == $0.file)
                }
                subscriber.seenNotices = max(subscriber.seenNotices, count)
                return untold.isEmpty ? [] : [Array(untold.map { Self.event(notice: $0, inForce: inForce[$0.file]) }.joined().utf8)]
            }
        }
        if now.generation > at.generation {
            at.generation = now.generation
            broadcastChange(now)
        }
        if Date().timeIntervalSince(at.lastKeepAlive) >= EventHub.keepAlive {
            sendKeepAlive()
            at.lastKeepAlive = Date()
        }
        cursor.withLock { $0 = at }
        // Wait for a change, for a socket behind to take more, for one behind too long to be
        // dropped, or for the next keep-alive.
        // Every subscriber is watched for its hang-up (a subscriber sends nothing after its
        // request: readable means closed), so that one gone frees its place at once.
        let (waiting, held) = lock.withLock { (behind, subscribers.map(\.fd)) }
        var deadline = at.lastKeepAlive.addingTimeInterval(EventHub.keepAlive)
        for since in waiting.values { deadline = min(deadline, since.addingTimeInterval(maxBehind)) }
        var descriptors = [pollfd(fd: pipe, events: Int16(POLLIN), revents: 0)]
        descriptors.reserveCapacity(held.count + 1)
        for fd in held {
            descriptors.append(pollfd(fd: fd, events: Int16(POLLIN) | (waiting[fd] != nil ? Int16(POLLOUT) : 0), revents: 0))
        }
        return Wait(descriptors: descriptors, deadline: deadline)
    }

    /// Tells every subscriber of the generation `now` (a file's newer text first to those
    /// that asked for it).
    private func broadcastChange(_ now: ServedRules.Snapshot) {
        var files: [String: (file: ServedRules.File, event: [UInt8])] = [:]
        for file in now.files { files[file.name] = (file, Array(Self.event(rulesOf: file).utf8)) }
        let event = Array(Self.event(refetch: now).utf8)
        broadcast { subscriber in
            // One that subscribed after this generation came in force was told of it.
            guard subscriber.seenGeneration < now.generation else { return [] }
            subscriber.seenGeneration = now.generation
            var out: [[UInt8]] = []
            if let name = subscriber.file, let (file, text) = files[name], file.generation > subscriber.heldGeneration {
                if file.etag != subscriber.heldETag { out.append(text) }
                subscriber.heldETag = file.etag
                subscriber.heldGeneration = file.generation
            }
            out.append(event)
            return out
        }
    }

    /// Whether `count` bytes fit the send buffer of `fd`, a connection with nothing queued
    /// yet: half the size the system reports (which counts its bookkeeping too).
    static func fitsAtOnce(_ count: Int, _ fd: Int32) -> Bool {
        var size: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, &length) == 0 else { return false }
        return count <= Int(size) / 2
    }

    /// The event carrying a served file's text.
    static func event(rulesOf file: ServedRules.File) -> String {
        PushProtocol.Event.rulesChanged(
            file: file.name, etag: file.etag, generation: file.generation, rules: String(decoding: file.rules.source.bytes, as: UTF8.self)
        ).text
    }

    /// The event telling of a rejected update or of its clearing (the page shows them; a
    /// store following the file reports them; an OFREP client ignores the types): the
    /// clearing names the text in force, its etag and generation.
    static func event(notice: ServedRules.Notice, inForce: ServedRules.File?) -> String {
        switch notice {
        case .rejected(let r):
            return PushProtocol.Event.rulesRejected(file: r.file, message: r.message, at: Int(r.at.timeIntervalSince1970)).text
        case .accepted(let file, _):
            return PushProtocol.Event.rulesAccepted(file: file, etag: inForce?.etag ?? "", generation: inForce?.generation).text
        }
    }

    /// Hands each subscriber (of `only`, when given) the events `eventsFor` gives it (after what it has pending)
    /// and sends what its socket takes (`checkingHangUps`: each is looked at, events or not). A subscriber that hung up, that has held events back
    /// for `maxBehind`, or that holds back more than ``backlogLimit(_:)``, is dropped (it
    /// reconnects and catches up). Returns whether any subscriber still has events pending.
    @discardableResult
    private func broadcast(only: Set<Int32>? = nil, checkingHangUps: Bool = false, _ eventsFor: (inout Subscriber) -> [[UInt8]]) -> Bool {
        writing.lock()
        defer { writing.unlock() }
        let held = lock.withLock { stopped ? [] : subscribers }.filter { only?.contains($0.fd) ?? true }
        var dropped = Set<Int32>()
        var kept: [Int32: Subscriber] = [:]
        var scratch = [UInt8](repeating: 0, count: 512)
        let now = Date()
        for var subscriber in held {
            let messages = eventsFor(&subscriber)
            guard !messages.isEmpty || !subscriber.pending.isEmpty || checkingHangUps else { continue }
            let fd = subscriber.fd
            // A subscriber sends nothing after its request: readable means closed (or talking
            // out of turn, which is read and ignored).
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&ready, 1, 0) > 0 {
                let n = recv(fd, &scratch, scratch.count, 0)
                if n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                    || ready.revents & Int16(POLLHUP | POLLERR) != 0
                {
                    dropped.insert(fd)
                    continue
                }
            }
            subscriber.pending += messages
            guard let sent = Self.flush(&subscriber) else {
                dropped.insert(fd)
                continue
            }
            _ = sent
            if subscriber.pending.isEmpty {
                subscriber.pendingSince = nil
            } else if subscriber.pendingSince == nil {
                subscriber.pendingSince = now
            }
            // Behind too long (however slowly it reads), or holding back too much.
            let backlog = subscriber.pending.reduce(0) { $0 + $1.count } - subscriber.pendingOffset
            if let since = subscriber.pendingSince,
                now.timeIntervalSince(since) > maxBehind || backlog > Self.backlogLimit(subscriber.pending)
            {
                dropped.insert(fd)
                continue
            }
            kept[fd] = subscriber
        }
        lock.withLock {
            subscribers.removeAll { dropped.contains($0.fd) }
            // Only those held here were written to; one that subscribed meanwhile keeps its own marks.
            for k in subscribers.indices { if let updated = kept[subscribers[k].fd] { subscribers[k] = updated } }
            for fd in dropped { behind[fd] = nil }
            for (fd, subscriber) in kept { behind[fd] = subscriber.pendingSince }
        }
        for fd in dropped { close(fd) }
        return kept.values.contains { !$0.pending.isEmpty }
    }

    /// Sends `subscriber`'s pending events until its socket is full or they are all sent;
    /// the bytes sent, or nil when the peer is gone.
    private static func flush(_ subscriber: inout Subscriber) -> Int? {
        var sent = 0
        while let first = subscriber.pending.first {
            let offset = subscriber.pendingOffset
            #if canImport(Darwin)
                let n = first.withUnsafeBytes { send(subscriber.fd, $0.baseAddress! + offset, first.count - offset, 0) }
            #else
                let n = first.withUnsafeBytes { send(subscriber.fd, $0.baseAddress! + offset, first.count - offset, Int32(MSG_NOSIGNAL)) }
            #endif
            if n > 0 {
                sent += n
                subscriber.pendingOffset += n
                if subscriber.pendingOffset == first.count {
                    subscriber.pending.removeFirst()
                    subscriber.pendingOffset = 0
                }
            } else if n < 0, errno == EINTR {
                continue
            } else {
                return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? sent : nil
            }
        }
        return sent
    }

    /// A comment to every subscriber, so that proxies keep idle connections.
    private func sendKeepAlive() {
        let comment = Array(": keep-alive\n\n".utf8)
        broadcast { _ in [comment] }
    }

}

/// A pipe that wakes a thread waiting in `poll`: any thread pokes it; the waiting thread
/// drains it. Closed once, after which a poke does nothing (its descriptors may be another
/// file's by then).
final class WakePipe: @unchecked Sendable {
    // Unchecked: `fds` and `open` are read and written under `lock`.
    private let lock = NSLock()
    private var fds: [Int32] = [-1, -1]
    private var open = true

    init() {
        var made: [Int32] = [-1, -1]
        if pipe(&made) == 0 {
            for fd in made { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
            fds = made
        }
    }

    /// The end to wait on.
    var readEnd: Int32 { lock.withLock { fds[0] } }

    func poke() {
        lock.withLock {
            guard open, fds[1] >= 0 else { return }
            var byte: UInt8 = 1
            _ = write(fds[1], &byte, 1)
        }
    }

    /// Reads what pokes left.
    func drain() {
        let fd = readEnd
        guard fd >= 0 else { return }
        var bytes = [UInt8](repeating: 0, count: 256)
        while read(fd, &bytes, bytes.count) > 0 {}
    }

    func close() {
        lock.withLock {
            guard open else { return }
            open = false
            for fd in fds where fd >= 0 { closeDescriptor(fd) }
        }
    }

    deinit { close() }
}
