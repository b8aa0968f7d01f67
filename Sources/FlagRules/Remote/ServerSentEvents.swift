/// A reader of a server-sent event stream (the WHATWG `text/event-stream` format): bytes in,
/// complete events out. Lines end with LF, CR or CR LF; a blank line ends an event; `data`
/// lines are joined with newlines; a line starting with `:` is a comment; `id` is kept
/// across events (what `Last-Event-ID` sends on reconnecting); `retry` sets the reconnection
/// delay. A line longer than `lineLimit`, or an event whose data is, is an error: the
/// stream is dropped rather than held without bound.
struct ServerSentEvents: Sendable {
    struct Event: Sendable, Equatable {
        var type = "message"
        var data = ""
        var id: String?
    }

    enum Failure: Error, Equatable {
        case lineTooLong(Int)
    }

    static let maxLineBytes = 65_536

    /// The longest line read; a longer one is an error.
    let lineLimit: Int

    private var line: [UInt8] = []
    private var sawCR = false
    private var data: [String] = []
    /// The bytes of `data` so far: an event's data is bounded by `lineLimit` too.
    private var dataBytes = 0
    private var type = ""
    private var hasData = false
    /// The last event id seen (kept across events, as the format says).
    private(set) var lastEventID: String?
    /// The last `retry` field, in milliseconds.
    private(set) var retryMilliseconds: Int?

    /// A reader for a new connection; `lastEventID` is the last id of the one before.
    init(lastEventID: String? = nil, lineLimit: Int = ServerSentEvents.maxLineBytes) {
        self.lastEventID = lastEventID
        self.lineLimit = lineLimit
    }

    /// Reads `bytes`; the events they complete, in order.
    mutating func feed(_ bytes: some Sequence<UInt8>) throws(Failure) -> [Event] {
        var events: [Event] = []
        for b in bytes {
            if sawCR {
                sawCR = false
                if b == 10 { continue }  // the LF of a CR LF
            }
            if b == 10 || b == 13 {
                sawCR = b == 13
                if let event = try endLine() { events.append(event) }
                continue
            }
            guard line.count < lineLimit else { throw .lineTooLong(lineLimit) }
            line.append(b)
        }
        return events
    }

    private mutating func endLine() throws(Failure) -> Event? {
        defer { line.removeAll(keepingCapacity: true) }
        guard !line.isEmpty else {
            // A blank line dispatches the event, when it has data.
            defer {
                data = []
                dataBytes = 0
                type = ""
                hasData = false
            }
            guard hasData else { return nil }
            return Event(type: type.isEmpty ? "message" : type, data: data.joined(separator: "\n"), id: lastEventID)
        }
        if line[0] == 58 { return nil }  // ':' — a comment
        var field: [UInt8] = line
        var value: [UInt8] = []
        if let colon = line.firstIndex(of: 58) {
            field = Array(line[..<colon])
            var start = colon + 1
            if start < line.count, line[start] == 32 { start += 1 }
            value = Array(line[start...])
        }
        let text = String(decoding: value, as: UTF8.self)
        switch String(decoding: field, as: UTF8.self) {
        case "data":
            // Each line counts its newline: endless empty `data:` lines are bounded too.
            dataBytes += value.count + 1
            guard dataBytes <= lineLimit else { throw .lineTooLong(lineLimit) }
            data.append(text)
            hasData = true
        case "event": type = text
        case "id": if !value.contains(0) { lastEventID = text }
        case "retry": if !value.isEmpty, value.allSatisfy({ $0 >= 48 && $0 <= 57 }), value.count <= 9 { retryMilliseconds = Int(text) }
        default: break
        }
        return nil
    }
}
