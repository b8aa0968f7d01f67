import FlagRules
import Foundation

/// The rules a server has in force, in one ordered history: the files served, the
/// generation of the whole (a number that only goes up, see ``PushProtocol``), and the
/// notices the event stream sends (an update rejected, a rejection cleared). Installs are
/// made one at a time; waiters (the event hub) wake on a new generation or a new notice.
package final class ServedRules: Sendable {
    /// One served file.
    package struct File: Sendable {
        package let name: String
        package let rules: RuleSet
        /// When its text came in force: here, or upstream for a relayed file.
        package fileprivate(set) var generation: Int
        /// The ETag of its text, as `GET /rules/NAME` and the event stream give it: its
        /// content's hash, the same on any host.
        package let etag: String
        /// The event stream a store of the file subscribes to (``PushProtocol/streamPath(file:)``).
        package let streamPath: String
        /// When its text came in force here (`Last-Modified`): never later than this host's
        /// clock, though a generation kept from before a restart may be.
        package fileprivate(set) var modified = Date()
        /// The header lines of `GET /rules/NAME`'s `304` (its validators, the event stream and
        /// the generation), made once its generation and time are known.
        package fileprivate(set) var validatorLines: [UInt8] = []
        /// Those of its `200`: the same and the text's type.
        package fileprivate(set) var answerLines: [UInt8] = []
        /// Its declarations' metadata, in source order (what OFREP answers read).
        package let declarations: [DeclarationInfo]
        /// What an OFREP answer writes of each declaration whatever it resolves to, in the
        /// same order, made once.
        package let answerParts: [AnswerParts]

        /// The bytes of an OFREP answer that depend on its declaration alone.
        package struct AnswerParts: Sendable {
            /// `{"key": "NAME"`.
            package let head: [UInt8]
            /// `, "owner": "OWNER"` in the metadata, or nothing.
            package let owner: [UInt8]

            init(_ info: DeclarationInfo) {
                var head = Array(#"{"key": "#.utf8)
                JSON.writeString(info.name, to: &head)
                self.head = head
                var owner: [UInt8] = []
                if let name = info.owner {
                    owner = Array(#", "owner": "#.utf8)
                    JSON.writeString(name, to: &owner)
                }
                self.owner = owner
            }
        }
        /// A file to serve; `generation`: the one upstream gave its text (0: none).
        package init(name: String, rules: RuleSet, generation: Int = 0) {
            self.name = name
            self.rules = rules
            declarations = rules.declarations
            answerParts = declarations.map(AnswerParts.init)
            self.generation = generation
            etag = "\"\(rules.contentVersion)\""
            streamPath = PushProtocol.streamPath(file: name)
            makeLines()
        }

        /// Makes the header lines of its answers from what it is now.
        fileprivate mutating func makeLines() {
            let fields = [
                ("ETag", etag), ("Last-Modified", HTTPDate.format(modified)), ("Cache-Control", OFREPService.cacheControl),
                (OFREPService.eventsHeader, streamPath), (PushProtocol.generationHeader, String(generation)),
            ]
            validatorLines = HTTPResponse.headerLines(fields)
            answerLines = validatorLines + HTTPResponse.headerLines([("Content-Type", "text/plain; charset=utf-8")])
        }
    }

    /// What is in force at one instant.
    ///
    /// A class, so that each request takes it with one reference: its fields are set while
    /// it is made, before it is put in force, and never after (safe to share).
    package final class Snapshot: @unchecked Sendable {
        package fileprivate(set) var files: [File] = []
        /// Every flag, variant and value: where it is served from. The first file wins a
        /// name.
        package fileprivate(set) var index: [String: Position] = [:]
        /// The served names in order (files in order, declarations in order).
        package fileprivate(set) var names: [String] = []
        /// Where each of ``names`` is declared, in the same order.
        package fileprivate(set) var positions: [Position] = []
        /// Goes up with every change of the files served or of their texts.
        package fileprivate(set) var generation = 0
        /// When `generation` came in force (the event stream's `lastModified`).
        package fileprivate(set) var since = Date()
        /// `GET /rules`: the list's body, its ETag, and the header lines of its `304` and
        /// `200`, made when the snapshot comes in force.
        package fileprivate(set) var listing = Listing()
        /// The attributes the files' rules read, and `targetingKey`: an OFREP body's names
        /// found here are read without being made and hashed.
        package fileprivate(set) var knownAttributes = KnownAttributes.none
        /// The generation as the protocol writes it (event ids, `metadata.version`).
        package var version: String { String(generation) }

        /// Where a served name is declared: its file's position in ``files``, and its
        /// position in that file's ``File/declarations``.
        package struct Position: Sendable, Equatable {
            package let file: Int
            package let declaration: Int
        }

        /// The list of served files as `GET /rules` answers it.
        package struct Listing: Sendable {
            package fileprivate(set) var body: [UInt8] = []
            package fileprivate(set) var etag = ""
            package fileprivate(set) var validatorLines: [UInt8] = []
            package fileprivate(set) var answerLines: [UInt8] = []
        }

        /// Nothing in force.
        init() { makeListing() }

        /// Makes ``listing`` from the files and time in force.
        fileprivate func makeListing() {
            contentVersion = Snapshot.contentVersion(of: files)
            let text = PushProtocol.list(files.map { .init(name: $0.name, etag: $0.etag, generation: $0.generation) }).serialized()
            listing.body = Array(text.utf8)
            listing.etag = "\"\(OFREPService.hash(text))\""
            let fields = [
                ("ETag", listing.etag), ("Last-Modified", HTTPDate.format(since)), ("Cache-Control", OFREPService.cacheControl),
                (OFREPService.eventsHeader, OFREPService.eventsPath),
            ]
            listing.validatorLines = HTTPResponse.headerLines(fields)
            listing.answerLines = listing.validatorLines + HTTPResponse.headerLines([("Content-Type", "application/json")])
        }
        /// A hash of every file's text: the same rules give the same one on any host (the
        /// bulk evaluation's ETag is made of it, so that instances behind one load balancer
        /// answer each other's `If-None-Match`). Made with ``listing``.
        package fileprivate(set) var contentVersion = ""

        /// ``contentVersion`` of `files`.
        static func contentVersion(of files: [File]) -> String {
            var hash = FNV1a.offsetBasis
            for file in files { hash = FNV1a.hash(file.rules.contentVersion.utf8, from: hash) }
            return String(hash, radix: 36)
        }
    }

    /// A name two files declare: served from `servedFrom`, not from `alsoIn`.
    package struct Conflict: Sendable, Equatable {
        package let name: String
        package let servedFrom: String
        package let alsoIn: String
    }

    /// An update of a served file that was rejected while its last good rules stay served.
    package struct Rejection: Sendable, Equatable {
        package let file: String
        /// The rejection as the store logged it (the first error, with its place).
        package let message: String
        package let at: Date
        /// Its position among every notice recorded (1 for the first).
        package let number: Int
    }

    /// What the event stream tells besides changes of the rules: every subscriber of all
    /// changes, and those of the file it is about.
    package enum Notice: Sendable, Equatable {
        case rejected(Rejection)
        /// The rejection of `file` no longer stands (a good text of it is in force).
        case accepted(file: String, number: Int)

        package var number: Int {
            switch self {
            case .rejected(let r): return r.number
            case .accepted(_, let number): return number
            }
        }

        /// The file it is about, by the name it is served under.
        package var file: String {
            switch self {
            case .rejected(let r): return r.file
            case .accepted(let file, _): return file
            }
        }
    }

    private struct Notices {
        var standing: [Rejection] = []
        var latest: [Notice] = []
        var count = 0
        /// How many of the latest are kept for the event hub to send.
        static let kept = 256

        mutating func append(_ notice: Notice) {
            latest.append(notice)
            if latest.count > Self.kept { latest.removeFirst(latest.count - Self.kept) }
        }
    }

    private struct State {
        var now = Snapshot()
        var notices = Notices()
    }

    private let state = Locked(State())
    /// Installs one at a time: each reads what it installs inside (see ``install(_:)``).
    private let installing = NSLock()
    /// Waiters for the next generation or notice.
    private let changed = NSCondition()
    /// Called on every change (the event hub's wake-up).
    private let observers = Locked<[@Sendable () -> Void]>([])

    /// `generationFloor`: the generation the server served last before it started (read
    /// back from where it kept it): every generation from now on is above it, whatever the
    /// clock says.
    package init(generationFloor: Int = 0) {
        if generationFloor > 0 { state.withLock { $0.now.generation = generationFloor } }
    }

    /// What is in force now.
    package var snapshot: Snapshot { state.withLock { $0.now } }

    /// Puts in force the files `read` gives, reading them only once every install before
    /// has finished: of two callers racing, the later reads (and leaves in force) what the
    /// stores hold by then, never the older. Returns the names two files declare.
    @discardableResult
    package func install(_ read: () -> [File]) -> [Conflict] {
        installing.lock()
        defer { installing.unlock() }
        return put(read())
    }

    /// Puts `files` in force (see ``install(_:)``).
    @discardableResult
    package func install(_ files: [File]) -> [Conflict] { install { files } }

    private func put(_ files: [File]) -> [Conflict] {
        var conflicts: [Conflict] = []
        let next = Snapshot()
        for (i, file) in files.enumerated() {
            for (k, d) in file.declarations.enumerated() where d.kind != .segment {
                if let first = next.index[d.name] {
                    conflicts.append(Conflict(name: d.name, servedFrom: files[first.file].name, alsoIn: file.name))
                    continue
                }
                let position = Snapshot.Position(file: i, declaration: k)
                next.index[d.name] = position
                next.names.append(d.name)
                next.positions.append(position)
            }
        }
        next.knownAttributes = KnownAttributes(["targetingKey"] + files.flatMap(\.rules.attributesRead))
        let changed = state.withLock { s -> Bool in
            let before = s.now
            let changed =
                files.map(\.name) != before.files.map(\.name)
                || zip(files, before.files).contains { $0.rules.contentVersion != $1.rules.contentVersion }
            next.generation = changed ? PushProtocol.generation(after: before.generation) : before.generation
            next.since = changed ? Date() : before.since
            next.files = files.map { file in
                var file = file
                let old = before.files.first { $0.name == file.name }
                if let old, old.rules.contentVersion == file.rules.contentVersion {
                    file.generation = max(old.generation, file.generation)
                    file.modified = old.modified
                } else if file.generation <= (old?.generation ?? 0) {
                    // A new text, with no generation from upstream (or an older one than
                    // the text it replaces): it comes in force now, and after the one it
                    // replaces whatever this host's clock says.
                    file.generation = max(next.generation, (old?.generation ?? 0) + 1)
                }
                file.makeLines()
                return file
            }
            next.makeListing()
            s.now = next
            return changed
        }
        if changed { wake() }
        return conflicts
    }

    // MARK: Notices

    /// Records that an update of `file` was rejected (its last good rules stay served).
    package func reject(file: String, message: String) {
        // A message's first 2,000 characters: a stream's head that carries it stays small.
        let message = message.count > 2_000 ? String(message.prefix(2_000)) + "…" : message
        state.withLock { s in
            s.notices.count += 1
            let rejection = Rejection(file: file, message: message, at: Date(), number: s.notices.count)
            s.notices.standing.removeAll { $0.file == file }
            s.notices.standing.append(rejection)
            s.notices.append(Notice.rejected(rejection))
        }
        wake()
    }

    /// Clears the rejection of `file`, if one stands (a good text of it is in force, or it
    /// is no longer served): subscribers are told.
    package func accept(file: String) {
        let cleared = state.withLock { s -> Bool in
            guard s.notices.standing.contains(where: { $0.file == file }) else { return false }
            s.notices.standing.removeAll { $0.file == file }
            s.notices.count += 1
            s.notices.append(Notice.accepted(file: file, number: s.notices.count))
            return true
        }
        if cleared { wake() }
    }

    /// The rejections standing, oldest first, and how many notices were ever recorded.
    package var standing: (rejections: [Rejection], notices: Int) { state.withLock { ($0.notices.standing, $0.notices.count) } }

    /// The standing rejection of `file`, if any.
    package func rejection(of file: String) -> Rejection? { state.withLock { s in s.notices.standing.first { $0.file == file } } }

    /// The notices recorded after the first `count`, up to `through`, oldest first (the
    /// latest 256 at most).
    package func notices(after count: Int, through last: Int = .max) -> [Notice] {
        state.withLock { s in s.notices.latest.filter { $0.number > count && $0.number <= last } }
    }

    /// What is in force, and how many notices were recorded, at one instant.
    package var current: (snapshot: Snapshot, notices: Int) { state.withLock { ($0.now, $0.notices.count) } }

    // MARK: Waiting

    /// Blocks until the generation is past `generation`, a notice is recorded after the
    /// first `notices`, `timeout` passes or ``wake()`` is called; returns the generation and
    /// the count of notices then.
    package func waitForChange(from generation: Int, notices: Int, timeout: TimeInterval) -> (generation: Int, notices: Int) {
        let deadline = Date().addingTimeInterval(timeout)
        changed.lock()
        defer { changed.unlock() }
        let read = { self.state.withLock { ($0.now.generation, $0.notices.count) } }
        let now = read()
        if now.0 <= generation, now.1 <= notices { _ = changed.wait(until: deadline) }
        return read()
    }

    /// Wakes every waiter (a change, or the server is draining).
    package func wake() {
        changed.lock()
        changed.broadcast()
        changed.unlock()
        for observer in observers.withLock({ $0 }) { observer() }
    }

    /// Calls `observer` on every change from now on (and on ``wake()``).
    package func onChange(_ observer: @escaping @Sendable () -> Void) {
        observers.withLock { $0.append(observer) }
    }
}
