import Foundation

/// What `flags serve`, a relay and a store say to each other beyond OFREP, written once:
/// the paths, the headers, the `/rules` list, the events a stream carries and how a file's
/// name goes into a URL.
///
/// **Generations.** Every text a server puts in force has a generation: a number that only
/// goes up on that server (the microseconds since 1970 when it came in force, or one more
/// than the last, if the clock says less). A relay serves each file under the generation
/// its upstream gave it. A served text carries its generation (the `X-Flags-Generation`
/// header, the `generation` of an event and of the list), and a store or a relay never
/// puts in force a text older than the one it holds, whoever answered: a cache that still
/// holds an older text, an event that arrived late.
package enum PushProtocol {
    /// Where the list of served files is served (`/rules/NAME` serves one).
    package static let listPath = "/rules"
    /// The query key of a stream that carries one file's text (`?rules=NAME`).
    package static let fileQueryKey = "rules"
    /// Where the event stream is served.
    package static let eventsPath = "/ofrep/v1/events"
    /// The header a served rules file names its event stream with (a store subscribes).
    package static let eventsHeader = "X-Flags-Events"
    /// The header of a `?rules=NAME` stream that starts from the text in force.
    package static let rulesHeader = "X-Flags-Rules"
    /// The header carrying the generation of a served text.
    package static let generationHeader = "X-Flags-Generation"
    /// The `Retry-After` of every `503` a server answers for want of room or of rules (a
    /// connection over the limit, a full event hub, a file with no rules yet): a second,
    /// which a client spreads up to half as long again (``ErrorAnswers``).
    package static let retryAfterSeconds = 1

    /// The head of an event stream's answer: a stream proxies neither cache nor buffer
    /// (`X-Accel-Buffering: no` for nginx); `startsCurrent`: it starts from the text in
    /// force (`X-Flags-Rules: current`).
    package static func streamHead(startsCurrent: Bool) -> String {
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
            + "X-Accel-Buffering: no\r\nConnection: keep-alive\r\n"
            + (startsCurrent ? "\(rulesHeader): current\r\n" : "") + "\r\n"
    }

    /// The comment an idle stream is sent every ``keepAliveInterval``, so that proxies keep
    /// the connection.
    package static let keepAliveComment = ": keep-alive\n\n"
    package static let keepAliveInterval: TimeInterval = 15

    /// `/rules/NAME`, each of the name's path segments percent-encoded (its slashes kept).
    package static func filePath(_ name: String) -> String {
        let segments = name.split(separator: "/", omittingEmptySubsequences: false).map { segment in
            String(segment).addingPercentEncoding(withAllowedCharacters: pathSegment) ?? String(segment)
        }
        return listPath + "/" + segments.joined(separator: "/")
    }

    /// The stream a store of file `name` subscribes to: it carries the file's text.
    package static func streamPath(file name: String) -> String {
        eventsPath + "?" + fileQueryKey + "=" + (name.addingPercentEncoding(withAllowedCharacters: queryValue) ?? name)
    }

    private static let pathSegment = CharacterSet.urlPathAllowed.subtracting(CharacterSet(charactersIn: "/?#;%"))
    private static let queryValue = CharacterSet.urlQueryAllowed.subtracting(CharacterSet(charactersIn: "&=+#%"))

    /// The next generation after `last`, at `now`.
    package static func generation(after last: Int, at now: Date = Date()) -> Int {
        max(last + 1, Int(now.timeIntervalSince1970 * 1_000_000))
    }

    /// A generation read from a header or an event; nil unless a positive integer.
    package static func generation(_ text: String?) -> Int? {
        guard let text, let n = Int(text.trimmingCharacters(in: .whitespaces)), n > 0 else { return nil }
        return n
    }

    /// Whether two entity tags name the same text by the weak comparison (RFC 9110
    /// §13.1.2: a proxy that compresses a body weakens its tag to `W/"…"`).
    package static func sameETag(_ a: String, _ b: String) -> Bool {
        func opaque(_ tag: String) -> Substring {
            let tag = tag.trimmingCharacters(in: .whitespaces)
            return tag.hasPrefix("W/") ? tag.dropFirst(2) : Substring(tag)
        }
        return opaque(a) == opaque(b)
    }

    // MARK: The /rules list

    /// One entry of the `/rules` list.
    package struct ListedFile: Sendable, Equatable {
        package let name: String
        package let etag: String
        package let generation: Int
        package init(name: String, etag: String, generation: Int) {
            self.name = name
            self.etag = etag
            self.generation = generation
        }
    }

    /// `{"files": [{"name": …, "etag": …, "generation": …}, …]}`.
    package static func list(_ files: [ListedFile]) -> JSON {
        .object([
            (
                "files",
                .array(
                    files.map {
                        .object([("name", .string($0.name)), ("etag", .string($0.etag)), ("generation", .int($0.generation))])
                    })
            )
        ])
    }

    /// The names a `/rules` list holds; nil for any other body.
    package static func listedNames(_ body: [UInt8]) -> [String]? {
        guard let files = (try? JSON.parse(bytes: body))?["files"]?.elements else { return nil }
        let names = files.compactMap { $0["name"]?.string }
        return names.count == files.count ? names : nil
    }

    // MARK: Events

    /// An event of the stream, as `flags serve` sends it and a store reads it.
    package enum Event: Sendable, Equatable {
        /// OFREP's: the rules in force changed (any file's); `version` is the generation.
        case refetch(version: String, lastModified: Int)
        /// A file's new text, sent first to the subscribers of that file.
        case rulesChanged(file: String, etag: String, generation: Int?, rules: String)
        /// An update of a file was rejected; its last good rules stay served.
        case rulesRejected(file: String, message: String, at: Int)
        /// The file's rejection no longer stands: a good text (a fix, or the last good one
        /// again) is in force. A stream's head also says it, with the generation of the text
        /// in force: a client holding that same text takes its generation (after a revert,
        /// the text it held is in force again under a newer one).
        case rulesAccepted(file: String, etag: String, generation: Int? = nil)

        /// The event's JSON.
        package var json: JSON {
            switch self {
            case .refetch(let version, let lastModified):
                return .object([("type", .string("refetchEvaluation")), ("etag", .string(version)), ("lastModified", .int(lastModified))])
            case .rulesChanged(let file, let etag, let generation, let rules):
                var members: [(String, JSON)] = [("type", .string("rulesChanged")), ("file", .string(file)), ("etag", .string(etag))]
                if let generation { members.append(("generation", .int(generation))) }
                members.append(("rules", .string(rules)))
                return .object(members)
            case .rulesRejected(let file, let message, let at):
                return .object([
                    ("type", .string("rulesRejected")), ("file", .string(file)), ("message", .string(message)), ("at", .int(at)),
                ])
            case .rulesAccepted(let file, let etag, let generation):
                var members: [(String, JSON)] = [("type", .string("rulesAccepted")), ("file", .string(file)), ("etag", .string(etag))]
                if let generation { members.append(("generation", .int(generation))) }
                return .object(members)
            }
        }

        /// The event as the stream carries it (`id` for the refetch, OFREP's event name).
        package var text: String {
            var text = ""
            if case .refetch(let version, _) = self { text = "id: \(version)\n" }
            text += "event: message\n"
            if case .refetch = self { text += "retry: 1000\n" }
            return text + "data: \(json.serialized())\n\n"
        }

        /// The event a `data` field holds; nil for an unknown type or a malformed one (an
        /// OFREP client ignores those, as the protocol asks).
        package init?(data: String) {
            guard let json = try? JSON.parse(data) else { return nil }
            let string = { (key: String) in json[key]?.string }
            switch string("type") {
            case "refetchEvaluation":
                self = .refetch(version: string("etag") ?? "", lastModified: json["lastModified"]?.integer ?? 0)
            case "rulesChanged":
                guard let file = string("file"), let etag = string("etag"), let rules = string("rules") else { return nil }
                self = .rulesChanged(file: file, etag: etag, generation: json["generation"]?.integer, rules: rules)
            case "rulesRejected":
                guard let file = string("file"), let message = string("message") else { return nil }
                self = .rulesRejected(file: file, message: message, at: json["at"]?.integer ?? 0)
            case "rulesAccepted":
                guard let file = string("file") else { return nil }
                self = .rulesAccepted(file: file, etag: string("etag") ?? "", generation: json["generation"]?.integer)
            default:
                return nil
            }
        }
    }
}
