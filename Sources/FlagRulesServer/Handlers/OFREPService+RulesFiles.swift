import FlagRules
import FlagRulesTooling
import Foundation

/// The served files, as a relay or a subscribed store fetches them: `/rules` and
/// `/rules/NAME`, with their validators.
extension OFREPService {
    // MARK: Rules files (what a relay or a subscribed store fetches)

    /// How a cache may keep `/rules` and `/rules/NAME`: a shared cache (a CDN, nginx's
    /// `proxy_cache`) for a second and then revalidates with `If-None-Match` (a 304 costs
    /// no body); a client's own cache revalidates each time. A `no-cache` would keep
    /// nginx from caching at all, and every look would download the whole file.
    static let cacheControl = "max-age=0, s-maxage=1, must-revalidate"

    /// The served files' names, ETags and generations, with an ETag of its own.
    func rulesList(_ request: HTTPRequest) -> HTTPResponse {
        let state = served.snapshot
        let list = state.listing
        let date = [("Date", OFREPService.currentDate())]
        if OFREPService.isNotModified(request, etag: list.etag, modified: state.since) {
            return HTTPResponse(status: 304, headers: date, headerLines: list.validatorLines)
        }
        return HTTPResponse(status: 200, headers: date, headerLines: list.answerLines, body: list.body)
    }

    /// One served file's text, with its ETag, generation and modification time (`304`
    /// when `If-None-Match` names it) and the event-stream header; `503` with `Retry-After`
    /// for a file served without rules yet (a relay's before upstream answers), which a
    /// store asks again for within a second or two.
    func rulesFile(_ name: String, _ request: HTTPRequest) -> HTTPResponse {
        let files = served.snapshot.files
        guard let file = files.first(where: { $0.name == name }) else {
            if awaitedFiles.withLock({ $0.contains(name) }) {
                return .json(
                    503, .object([("errorDetails", .string("'\(name)' has no rules yet; ask again in a second"))]),
                    headers: HTTPResponse.busy.headers)
            }
            let suggestion = Suggestions.closest(to: name, in: files.map(\.name)).map { "; did you mean '\($0)'?" } ?? ""
            return .json(404, .object([("errorDetails", .string("no served file '\(name)'\(suggestion)"))]))
        }
        // The stream a store of this file subscribes to carries the file's new text (its
        // header lines, the validators among them, were made when it came in force).
        let date = [("Date", OFREPService.currentDate())]
        if OFREPService.isNotModified(request, etag: file.etag, modified: file.modified) {
            return HTTPResponse(status: 304, headers: date, headerLines: file.validatorLines)
        }
        return HTTPResponse(status: 200, headers: date, headerLines: file.answerLines, body: file.rules.source.bytes)
    }

    /// The `Date` header's value now: made once a second.
    static func currentDate() -> String {
        let now = Date()
        let second = Int(now.timeIntervalSince1970.rounded(.down))
        return lastDate.withLock { last in
            if last.second != second { last = (second, HTTPDate.format(now)) }
            return last.text
        }
    }
    private static let lastDate = Locked((second: Int.min, text: ""))

    /// Whether a `GET` with these validators is answered `304`: `If-None-Match` names
    /// `etag`, or, without one, `If-Modified-Since` is not before `modified`.
    static func isNotModified(_ request: HTTPRequest, etag: String, modified: Date) -> Bool {
        if let match = request.header("If-None-Match") { return matches(match, etag) }
        if let since = request.header("If-Modified-Since").flatMap(HTTPDate.parse) {
            return modified.timeIntervalSince1970.rounded(.down) <= since.timeIntervalSince1970
        }
        return false
    }

    /// Whether an `If-None-Match` list names `etag`: `*`, or a tag equal to it by the weak
    /// comparison (RFC 9110 §13.1.2: a proxy that compresses a body weakens its ETag to
    /// `W/"…"`).
    static func matches(_ list: String, _ etag: String) -> Bool {
        list.utf8.split(separator: UInt8(ascii: ",")).contains { item in
            var tag = item.drop { $0 == 0x20 || $0 == 0x09 }
            while let last = tag.last, last == 0x20 || last == 0x09 { tag = tag.dropLast() }
            if tag.elementsEqual("*".utf8) { return true }
            if tag.starts(with: "W/".utf8) { tag = tag.dropFirst(2) }
            return tag.elementsEqual(etag.utf8)
        }
    }
}
