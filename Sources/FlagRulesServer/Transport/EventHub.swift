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
/// Telling is queuing: each subscriber's events wait in its own queue (an event's bytes
/// are shared, not copied, among the subscribers it goes to), and a step writes queued
/// events for at most ``writeBudget`` (2 ms), round-robin, each subscriber at most
/// ``writeShare`` bytes (256 KiB) in its turn before the next one's, so that a large file pushed to
/// thousands of subscribers (or a keep-alive sweep) never holds the server's loop for more
/// than a few milliseconds between its requests: the next step comes at once while writes
/// are left. What a subscriber's socket will not take waits until `poll` says it takes more
/// (an event of a large file on a slow link arrives whole); a subscriber whose socket is
/// closed (every subscriber is watched for its hang-up), that holds back more than a
/// mebibyte (or twice its largest event), or whose socket has held some back for 30 s
/// (from the first turn it took less than it was given), however slowly it reads, is
/// dropped (it reconnects and catches up). It waits for a change (a
/// pipe it is woken by), for the sockets of those behind to take more, and for the next
/// keep-alive; nothing wakes it otherwise. The head says `X-Accel-Buffering: no`, so that
/// nginx passes events on as they come.
final class EventHub: @unchecked Sendable {
    // Unchecked: `subscribers`, `ready`, `running` and `stopped` are read and written only
    // under `lock`.
    /// The most subscribers held at once; more are answered 503.
    static let maxSubscribers = 16_000
    static let keepAlive = PushProtocol.keepAliveInterval
    /// The longest a step writes queued events for before it returns to the server's loop
    /// (it writes one share at least): 2 ms, unless a test asks for another.
    let writeBudget: TimeInterval
    /// The most bytes a subscriber is given in its turn before the next one's: 256 KiB,
    /// unless a test asks for another.
    let writeShare: Int

    private let served: ServedRules
    /// Guards `subscribers`, `ready`, `running` and `stopped`, and is held while
    /// subscribers' descriptors are written or closed (so that `stop` never closes one being
    /// written, whose number could be reused by then); taken before the service's own lock.
    private let lock = NSLock()
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
        /// `pendingOffset`).
        var pending: [[UInt8]] = []
        var pendingOffset = 0
        /// Since when its socket has held events back: from the first turn it took less than
        /// it was given, until one in which it takes all (its own slowness, not the time its
        /// events waited for their turn).
        var blockedSince: Date?
        /// Whether its socket took less than it was given (it waits for `POLLOUT`).
        var full = false

        /// The bytes it holds back.
        var backlog: Int { pending.reduce(0) { $0 + $1.count } - pendingOffset }
    }
    /// The subscribers, by descriptor.
    private var subscribers: [Int32: Subscriber] = [:]
    /// The subscribers with events queued whose sockets take more, in the order they are
    /// written (one that used its share goes to the back): `ready[readyStart...]`.
    private var ready: [Int32] = []
    private var readyStart = 0
    private var running = false
    private var stopped = false
    /// The longest a subscriber may hold events back before it is dropped.
    let maxBehind: TimeInterval
    /// Wakes the thread on a change of the rules or the notices: the server's own pipe when
    /// a server drives the hub (one pipe in its `poll`), else the hub's.
    private let wakeUp: WakePipe
    /// Whether the pipe is the server's (which polls and closes it).
    private let sharesPipe: Bool
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

    /// What the hub waits for next: its descriptors (the pipe it is woken by, every
    /// subscriber's socket for its hang-up, and for room those whose socket is full) and
    /// when it must step even if none is ready; `writesLeft`: queued events are left to
    /// write, and the next step should come at once.
    struct Wait {
        var descriptors: [pollfd]
        var deadline: Date
        var writesLeft = false
    }

    init(
        served: ServedRules, limit: Int = EventHub.maxSubscribers, maxBehind: TimeInterval = 30, driven: Bool = false,
        writeBudget: TimeInterval = 0.002, writeShare: Int = 256 << 10, wakeUp: WakePipe? = nil
    ) {
        self.served = served
        self.wakeUp = wakeUp ?? WakePipe()
        sharesPipe = wakeUp != nil
        self.writeBudget = writeBudget
        self.writeShare = max(1, writeShare)
        self.limit = max(1, min(limit, EventHub.maxSubscribers))
        self.maxBehind = maxBehind
        self.driven = driven
        let (now, notices) = served.current
        cursor = Locked(Cursor(generation: now.generation, notices: notices))
        served.onChange { [wakeUp = self.wakeUp] in wakeUp.poke() }
    }

    /// The most bytes a subscriber may hold back: a mebibyte, or twice its largest event.
    static func backlogLimit(_ pending: [[UInt8]]) -> Int {
        max(1 << 20, 2 * (pending.map(\.count).max() ?? 0))
    }

    /// How many subscribers are held.
    var count: Int { lock.withLock { subscribers.count } }

    /// The bytes every subscriber holds back, in all (what a test reads).
    var queuedBytes: Int { lock.withLock { subscribers.values.reduce(0) { $0 + $1.backlog } } }

    /// The subscribers by the file they follow (`*`: every change).
    var countsByFile: [String: Int] {
        lock.withLock { subscribers.values.reduce(into: [:]) { counts, s in counts[s.file ?? "*", default: 0] += 1 } }
    }

    /// The refetch event for the generation of `snapshot`.
    static func event(refetch snapshot: ServedRules.Snapshot) -> String {
        PushProtocol.Event.refetch(version: snapshot.version, lastModified: Int(snapshot.since.timeIntervalSince1970)).text
    }

    /// What became of a connection handed to the hub.
    enum Admission: Equatable {
        /// Its head was written (or queued, what its socket did not take at once) and it is held.
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
        var headLeft = false
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
            var head = PushProtocol.streamHead(startsCurrent: startsCurrent) + (startsCurrent ? catchUp ?? "" : "")
            if let file {
                let rejection = served.rejection(of: file.name)
                let state: PushProtocol.Event =
                    rejection.map { .rulesRejected(file: $0.file, message: $0.message, at: Int($0.at.timeIntervalSince1970)) }
                    ?? .rulesAccepted(file: file.name, etag: file.etag, generation: file.generation)
                head += state.text
            }
            if let lastEventID, lastEventID != now.version { head += Self.event(refetch: now) }
            // What the socket does not take at once (its buffer holds answers pipelined
            // before the request) is queued, as any event is, and written as it drains.
            let bytes = Array(head.utf8)
            let sent = bytes.withUnsafeBytes { Socket.transmit(fd, $0.baseAddress!, bytes.count) }
            if sent < 0, errno != EAGAIN, errno != EWOULDBLOCK { return .failed }
            // The text it holds now, or fetches on connecting, is the one in force now (or
            // the newer one it named).
            let held = file.map { f in (heldGeneration ?? 0) > f.generation ? (holding, heldGeneration!) : (f.etag, f.generation) }
            // Marked with the name it asked for, served yet or not: a file served later (a
            // relay still loading, a rename) reaches it as any change does.
            var subscriber = Subscriber(
                fd: fd, file: requested, heldETag: held?.0 ?? holding, heldGeneration: held?.1 ?? heldGeneration ?? 0,
                seenGeneration: now.generation, seenNotices: notices)
            if max(0, sent) < bytes.count {
                headLeft = true
                subscriber.pending = [bytes]
                subscriber.pendingOffset = max(0, sent)
                subscriber.full = true
                subscriber.blockedSince = Date()
            }
            subscribers[fd] = subscriber
            return .held
        }
        // A head left to write: the loop's next `poll` is to watch the socket for room (the
        // descriptors it waits on were listed before this subscriber came).
        if headLeft { wakeUp.poke() }
        if admitted == .refused {
            _ = Socket.writeAll(fd, HTTPResponse.busy.serialized(keepAlive: false))
        }
        return admitted
    }

    /// Closes every subscriber's connection and ends the thread (a driven hub's is closed
    /// by its server once it stops stepping it).
    func stop() {
        // Under the lock: a step under way closes the subscribers it drops, and the list read
        // after it no longer holds them (a descriptor is closed once).
        lock.withLock {
            stopped = true
            for fd in subscribers.keys { close(fd) }
            subscribers = [:]
            ready = []
            readyStart = 0
        }
        // The thread closes its pipe as it ends; with no thread, it is closed here (a driven
        // hub's, by its server: ``closePipe()``).
        if !lock.withLock({ running }), !driven { wakeUp.close() }
        served.wake()
    }

    /// Closes the wake-up pipe of a driven hub, once its server no longer polls it.
    func closePipe() { if !sharesPipe { wakeUp.close() } }

    /// The hub's own thread (when no server drives it): steps it until it stops.
    private func loop() {
        var ready: [pollfd] = []
        while !lock.withLock({ stopped }) {
            let wait = step(ready: ready)
            var descriptors = wait.descriptors
            let timeout = wait.writesLeft ? 0 : Int32(max(1, min(60_000, (wait.deadline.timeIntervalSinceNow * 1_000).rounded(.up))))
            _ = poll(&descriptors, nfds_t(descriptors.count), timeout)
            ready = descriptors
        }
        wakeUp.close()
    }

    /// One step: drops the subscribers that hung up, queues for writing those whose
    /// sockets took more (`ready`, as `poll` left the descriptors), drops those behind too
    /// long, queues a new generation's or notice's events for every subscriber and the
    /// keep-alive when it is due, then writes for at most ``writeBudget``; returns what to
    /// wait for next. Nothing wakes the hub but its pipe, a subscriber's socket, or that
    /// deadline.
    func step(ready polled: [pollfd]) -> Wait {
        wakeups.withLock { $0 += 1 }
        // A driven hub's pipe is its server's, which reads it when it was poked.
        if !driven { wakeUp.drain() }
        guard !lock.withLock({ stopped }) else { return Wait(descriptors: [], deadline: .distantFuture) }
        let pipe = wakeUp.readEnd
        let hangUp = Int16(POLLIN | POLLHUP | POLLERR)
        let hungUp = polled.filter { $0.fd != pipe && $0.revents & hangUp != 0 }.map(\.fd)
        let writable = polled.filter { $0.fd != pipe && $0.revents & Int16(POLLOUT) != 0 }.map(\.fd)
        let stepped = Date()
        lock.withLock {
            for fd in hungUp where subscribers[fd] != nil && Self.hasHungUp(fd) { drop(fd) }
            for fd in writable where subscribers[fd]?.full == true {
                subscribers[fd]?.full = false
                ready.append(fd)
            }
            for (fd, subscriber) in subscribers {
                if let since = subscriber.blockedSince, stepped.timeIntervalSince(since) > maxBehind { drop(fd) }
            }
        }
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
        let writesLeft = writeQueued(for: writeBudget)
        // Wait for a change, for a full socket to take more, for one behind too long to be
        // dropped, or for the next keep-alive. Every subscriber is watched for its hang-up (a
        // subscriber sends nothing after its request: readable means closed), so that one
        // gone frees its place at once.
        var deadline = at.lastKeepAlive.addingTimeInterval(EventHub.keepAlive)
        // The server polls its pipe itself.
        var descriptors = sharesPipe ? [] : [pollfd(fd: pipe, events: Int16(POLLIN), revents: 0)]
        lock.withLock {
            descriptors.reserveCapacity(subscribers.count + 1)
            for (fd, subscriber) in subscribers {
                descriptors.append(pollfd(fd: fd, events: Int16(POLLIN) | (subscriber.full ? Int16(POLLOUT) : 0), revents: 0))
                if let since = subscriber.blockedSince { deadline = min(deadline, since.addingTimeInterval(maxBehind)) }
            }
        }
        return Wait(descriptors: descriptors, deadline: deadline, writesLeft: writesLeft)
    }

    /// Whether a subscriber whose socket is readable has hung up (a subscriber sends
    /// nothing after its request: what it does send is read and ignored).
    private static func hasHungUp(_ fd: Int32) -> Bool {
        var scratch = [UInt8](repeating: 0, count: 512)
        let n = recv(fd, &scratch, scratch.count, 0)
        return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
    }

    /// Closes and forgets a subscriber (under `lock`).
    private func drop(_ fd: Int32) {
        guard subscribers.removeValue(forKey: fd) != nil else { return }
        close(fd)
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

    /// Queues for each subscriber the events `eventsFor` gives it, behind what it holds back
    /// already: nothing is written here (``writeQueued(for:)`` writes). A subscriber that
    /// would then hold back more than ``backlogLimit(_:)`` is dropped (it reconnects and
    /// catches up).
    private func broadcast(_ eventsFor: (inout Subscriber) -> [[UInt8]]) {
        lock.withLock {
            guard !stopped else { return }
            for fd in Array(subscribers.keys) {
                guard var subscriber = subscribers[fd] else { continue }
                let messages = eventsFor(&subscriber)
                let wasIdle = subscriber.pending.isEmpty
                subscriber.pending += messages
                if wasIdle, !subscriber.pending.isEmpty, !subscriber.full { ready.append(fd) }
                subscribers[fd] = subscriber
                if subscriber.backlog > Self.backlogLimit(subscriber.pending) { drop(fd) }
            }
        }
    }

    /// Writes queued events for at most `budget` seconds (one share at least): the subscribers in `ready` in
    /// turn, each up to ``writeShare`` bytes (one given its share and not done goes to the
    /// back). A socket that takes less than it is given waits for `poll` to say it takes
    /// more; a peer gone is dropped. Returns whether writes are left for the next step.
    private func writeQueued(for budget: TimeInterval) -> Bool {
        lock.withLock {
            let start = DispatchTime.now().uptimeNanoseconds
            let limit = UInt64(budget * 1e9)
            var first = true
            while readyStart < ready.count, first || DispatchTime.now().uptimeNanoseconds - start < limit {
                first = false
                let fd = ready[readyStart]
                readyStart += 1
                guard var subscriber = subscribers[fd], !subscriber.full, !subscriber.pending.isEmpty else { continue }
                switch Self.flush(&subscriber, upTo: writeShare) {
                case .gone:
                    drop(fd)
                    continue
                case .full:
                    subscriber.full = true
                    if subscriber.blockedSince == nil { subscriber.blockedSince = Date() }
                case .sent:
                    subscriber.blockedSince = nil
                    if !subscriber.pending.isEmpty { ready.append(fd) }
                }
                subscribers[fd] = subscriber
            }
            // The queue's front, once consumed, is let go.
            if readyStart == ready.count {
                ready.removeAll(keepingCapacity: true)
                readyStart = 0
            } else if readyStart > 4_096, readyStart * 2 > ready.count {
                ready.removeFirst(readyStart)
                readyStart = 0
            }
            return readyStart < ready.count
        }
    }

    /// What a flush came to.
    private enum Flushed { case sent, full, gone }

    /// Sends `subscriber`'s pending events, at most `share` bytes: `.sent` when it sent
    /// them all or its share, `.full` when its socket took less than it was given, `.gone`
    /// when the peer is.
    private static func flush(_ subscriber: inout Subscriber, upTo share: Int) -> Flushed {
        var sent = 0
        while let first = subscriber.pending.first, sent < share {
            let offset = subscriber.pendingOffset
            let count = min(first.count - offset, share - sent)
            let n = first.withUnsafeBytes { Socket.transmit(subscriber.fd, $0.baseAddress! + offset, count) }
            if n > 0 {
                sent += n
                subscriber.pendingOffset += n
                if subscriber.pendingOffset == first.count {
                    subscriber.pending.removeFirst()
                    subscriber.pendingOffset = 0
                }
                if n < count { return .full }
            } else {
                return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? .full : .gone
            }
        }
        return .sent
    }

    /// A comment to every subscriber, so that proxies keep idle connections.
    private func sendKeepAlive() {
        let comment = Array(PushProtocol.keepAliveComment.utf8)
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
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 256) { bytes in
            while read(fd, bytes.baseAddress, bytes.count) > 0 {}
        }
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
