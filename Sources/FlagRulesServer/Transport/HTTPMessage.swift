import FlagRules
import Foundation

/// One HTTP/1.1 request, as `flags serve` reads it.
package struct HTTPRequest: Sendable {
    package var method: String
    /// The path, without the query.
    package var path: String
    /// The query's parameters, decoded, in order.
    package var query: [(String, String)]
    package var body: [UInt8]
    /// HTTP/1.0 (no keep-alive unless asked).
    package var isHTTP10 = false
    /// The header fields: as given to ``init(method:path:query:headers:body:)``, or, for a
    /// request read from the wire, the head's bytes and where each field's name and value
    /// lie in them (a field's text is made only when it is asked for).
    private var fields: Fields

    enum Fields: Sendable {
        case given([(String, String)])
        case read(head: [UInt8], ranges: [(name: Range<Int>, value: Range<Int>)])
    }

    /// Header fields in order; names as sent.
    package var headers: [(String, String)] {
        switch fields {
        case .given(let headers): return headers
        case .read(let head, let ranges):
            return ranges.map { (HTTPRequest.text(head, $0.name), HTTPRequest.text(head, $0.value)) }
        }
    }

    /// The first value of a header field (names compare without case).
    package func header(_ name: String) -> String? {
        switch fields {
        case .given(let headers): return headers.first { HTTPRequest.sameName($0.0, name) }?.1
        case .read(let head, let ranges):
            guard let field = ranges.first(where: { HTTPRequest.sameName(head[$0.name], name.utf8) }) else { return nil }
            return HTTPRequest.text(head, field.value)
        }
    }

    private static func text(_ head: [UInt8], _ range: Range<Int>) -> String { String(decoding: head[range], as: UTF8.self) }

    /// Whether two header names are the same, compared without case.
    static func sameName(_ a: String, _ b: String) -> Bool { sameName(a.utf8, b.utf8) }

    static func sameName(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { ($0 | 0x20) == ($1 | 0x20) }
    }

    /// Whether the connection stays open after the answer (`Connection: close`, or
    /// HTTP/1.0 without `Connection: keep-alive`, closes it).
    package var keepsAlive: Bool {
        let connection = header("Connection")
        return isHTTP10
            ? connection.map { HTTPRequest.sameName($0, "keep-alive") } ?? false
            : !(connection.map { HTTPRequest.sameName($0, "close") } ?? false)
    }

    package init(method: String, path: String, query: [(String, String)] = [], headers: [(String, String)] = [], body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.query = query
        self.fields = .given(headers)
        self.body = body
    }

    /// A request read from the wire: its fields lie in `head`.
    init(
        method: String, path: String, query: [(String, String)], head: [UInt8], fields: [(name: Range<Int>, value: Range<Int>)],
        isHTTP10: Bool
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.fields = .read(head: head, ranges: fields)
        self.body = []
        self.isHTTP10 = isHTTP10
    }
}

/// One HTTP/1.1 response.
package struct HTTPResponse: Sendable {
    package var status: Int
    package var headers: [(String, String)]
    /// Header lines already in their wire form (`Name: value\r\n` each), written after
    /// `headers`: what an answer sends every time is made once (a served file's validators).
    package var headerLines: [UInt8] = []
    package var body: [UInt8]

    package init(status: Int, headers: [(String, String)] = [], headerLines: [UInt8] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.headerLines = headerLines
        self.body = body
    }

    /// Header fields in their wire form, for ``headerLines``.
    package static func headerLines(_ fields: [(String, String)]) -> [UInt8] {
        Array(fields.map { "\($0): \($1)\r\n" }.joined().utf8)
    }

    /// A JSON response.
    package static func json(_ status: Int, _ value: JSON, headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")] + headers, body: value.serializedBytes())
    }

    /// `503` with the server's `Retry-After` (``PushProtocol/retryAfterSeconds``): no room,
    /// or no rules, yet.
    package static let busy = HTTPResponse(status: 503, headers: [("Retry-After", String(PushProtocol.retryAfterSeconds))])

    /// A plain-text response.
    package static func text(_ status: Int, _ text: String, type: String = "text/plain; charset=utf-8") -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", type)], body: Array(text.utf8))
    }

    /// The first value of a header field (in `headers`, or in `headerLines`).
    package func header(_ name: String) -> String? {
        if let value = headers.first(where: { HTTPRequest.sameName($0.0, name) })?.1 { return value }
        for line in headerLines.split(separator: 10) {
            let text = String(decoding: line.dropLast(line.last == 13 ? 1 : 0), as: UTF8.self)
            guard let colon = text.firstIndex(of: ":"), HTTPRequest.sameName(String(text[..<colon]), name) else { continue }
            return String(text[text.index(after: colon)...].drop { $0 == " " })
        }
        return nil
    }

    static let reasons: [Int: String] = [
        100: "Continue", 200: "OK", 204: "No Content", 304: "Not Modified", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden",
        404: "Not Found", 405: "Method Not Allowed", 408: "Request Timeout", 411: "Length Required", 413: "Content Too Large",
        415: "Unsupported Media Type", 417: "Expectation Failed", 429: "Too Many Requests", 431: "Request Header Fields Too Large",
        500: "Internal Server Error",
        501: "Not Implemented", 503: "Service Unavailable", 505: "HTTP Version Not Supported",
    ]

    /// Each status's line (`HTTP/1.1 200 OK\r\n`), made once.
    static let statusLines: [Int: [UInt8]] = Dictionary(
        uniqueKeysWithValues: reasons.map { ($0.key, Array("HTTP/1.1 \($0.key) \($0.value)\r\n".utf8)) })

    /// `statusLines[200]`, without the lookup.
    static let okLine = Array("HTTP/1.1 200 OK\r\n".utf8)

    /// The response as bytes on the wire (`Content-Length` added; no body for 304 and HEAD).
    package func serialized(keepAlive: Bool, headOnly: Bool = false) -> [UInt8] {
        var out: [UInt8] = []
        serialize(into: &out, keepAlive: keepAlive, headOnly: headOnly)
        return out
    }

    /// Appends the response's bytes on the wire to `out`.
    package func serialize(into out: inout [UInt8], keepAlive: Bool, headOnly: Bool = false) {
        let hasBody = status != 304 && status != 204
        // Room for the whole answer, grown as appending grows it (at least doubled): answers
        // queued one after another are not copied each time.
        let needed =
            128 + headers.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count + 4 } + headerLines.count
            + (hasBody && !headOnly ? body.count : 0)
        if out.capacity - out.count < needed { out.reserveCapacity(max(out.count + needed, 2 * out.capacity)) }
        func add(_ text: String) {
            // In place when the text is stored contiguously (every native string): appending a
            // string's UTF-8 view walks it byte by byte.
            if text.utf8.withContiguousStorageIfAvailable({ out.append(contentsOf: $0) }) == nil { out.append(contentsOf: text.utf8) }
        }
        if status == 200 {
            out.append(contentsOf: HTTPResponse.okLine)
        } else if let line = HTTPResponse.statusLines[status] {
            out.append(contentsOf: line)
        } else {
            add("HTTP/1.1 \(status) Status\r\n")
        }
        for (name, value) in headers {
            add(name)
            add(": ")
            add(value)
            out.append(13)
            out.append(10)
        }
        out.append(contentsOf: headerLines)
        if hasBody {
            add("Content-Length: ")
            ASCII.appendDecimal(body.count, to: &out)
            out.append(13)
            out.append(10)
        }
        if !keepAlive { add("Connection: close\r\n") }
        out.append(13)
        out.append(10)
        if hasBody && !headOnly { out.append(contentsOf: body) }
    }
}

/// Reads HTTP/1.1 requests from a connection's bytes, one after another (keep-alive and
/// pipelining), within limits: a request line and header block of at most
/// `maxHeaderBytes`, at most `maxHeaders` fields, a body of at most `maxBodyBytes` given by
/// `Content-Length`.
///
/// Framing is read as RFC 9112 asks of a server that a proxy may stand in front of: a
/// request is refused (and its connection closed) when its framing could be read two ways.
/// Lines end with CRLF; a bare CR or LF is a `400` as soon as it arrives. `Content-Length`
/// is digits, the same in every field. `Transfer-Encoding` beside `Content-Length`, or
/// other than one field saying `chunked`, is a `400`; a chunked body is a `501` (send
/// `Content-Length`). `Expect: 100-continue` is answered `100 Continue` (``takeContinue()``)
/// once the head has come and the body has not; another expectation is a `417`.
package struct HTTPRequestParser: Sendable {
    package static let maxHeaderBytes = 16 << 10
    package static let maxHeaders = 100
    package static let maxBodyBytes = 1 << 20
    /// Up to this capacity, the read buffer is shared with the request read from it.
    static let sharedBufferBytes = 4_096

    /// Why a request cannot be read: the status to answer with before closing.
    package struct Failure: Error, Sendable, Equatable {
        package let status: Int
        package let message: String
    }

    private var buffer: [UInt8] = []
    /// Where the next request starts; the bytes before it were read.
    private var start = 0
    /// Where the search for the end of the next request's head resumes: bytes before it
    /// hold no blank line, and are not searched again when more arrive.
    private var searched = 0
    /// Where the request began whose `100 Continue` was last asked for (each request's is
    /// asked for once).
    private var continued: Int?
    /// Whether a `100 Continue` waits to be sent.
    private var continuePending = false

    package init() {}

    package mutating func append(_ bytes: [UInt8]) { append(bytes[...]) }

    package mutating func append(_ bytes: ArraySlice<UInt8>) {
        // Requests read are let go once they are half the buffer (pipelined requests do not
        // pile up until the last is read).
        if start > 0, start * 2 >= buffer.count {
            buffer.removeFirst(start)
            searched = max(0, searched - start)
            continued = continued.map { $0 - start }
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Whether part of a request has arrived.
    package var hasPartialRequest: Bool { start < buffer.count }

    /// Whether a `100 Continue` is to be sent now: a request that sent
    /// `Expect: 100-continue` has its head read and waits for its body. True once a request.
    package mutating func takeContinue() -> Bool {
        defer { continuePending = false }
        return continuePending
    }

    /// The next whole request; nil until more bytes arrive.
    package mutating func next() throws(Failure) -> HTTPRequest? {
        // Blank lines before a request are allowed (RFC 9112 §2.2).
        while start + 1 < buffer.count, buffer[start] == 13, buffer[start + 1] == 10 { start += 2 }
        guard let end = headerEnd() else {
            // A bare LF, or a CR that is not followed by LF, is refused as it arrives, not left
            // to time out (a CR at the end waits for the byte after it).
            let from = max(start, searched)
            if buffer[from...].indices.contains(where: { i in
                (buffer[i] == 10 && (i == start || buffer[i - 1] != 13)) || (buffer[i] == 13 && i + 1 < buffer.count && buffer[i + 1] != 10)
            }) {
                throw Failure(status: 400, message: "a line of the request ends with a bare CR or LF; end lines with CRLF")
            }
            // The last three bytes may begin the blank line.
            searched = max(start, buffer.count - 3)
            if buffer.count - start > HTTPRequestParser.maxHeaderBytes {
                throw Failure(status: 431, message: "the request's header block is over \(HTTPRequestParser.maxHeaderBytes) bytes")
            }
            return nil
        }
        // A small buffer is shared with the request, its fields found at their place in it
        // (no copy of the head; the buffer is next changed once the request is answered); a
        // large one, which a request held for an event stream would keep, is not.
        let shared = buffer.capacity <= HTTPRequestParser.sharedBufferBytes ? buffer : nil
        var (request, length) = try buffer.withUnsafeBufferPointer { bytes throws(Failure) in
            try HTTPRequestParser.parseHead(UnsafeBufferPointer(rebasing: bytes[start..<end]), in: shared, at: start)
        }
        let bodyStart = end + 4
        guard buffer.count - bodyStart >= length else {
            if continued != start, !request.isHTTP10, request.header("Expect") != nil {
                continued = start
                continuePending = true
            }
            return nil
        }
        request.body = Array(buffer[bodyStart..<(bodyStart + length)])
        start = bodyStart + length
        searched = start
        return request
    }

    /// The request line and header fields (a header block without its blank line), and the
    /// body's length; read as bytes in one pass, each field's name and value made a string
    /// once.
    /// `source`: the bytes `head` lies in from `offset` on, kept as the request's (its
    /// fields' places shifted by `offset`); nil: the head is copied.
    private static func parseHead(_ head: UnsafeBufferPointer<UInt8>, in source: [UInt8]?, at offset: Int) throws(Failure) -> (
        HTTPRequest, Int
    ) {
        let space: UInt8 = 32, tab: UInt8 = 9, cr: UInt8 = 13, lf: UInt8 = 10, colon: UInt8 = 58
        guard let base = head.baseAddress, !head.isEmpty else {
            throw Failure(status: 400, message: "the request line is not 'METHOD /path HTTP/1.1'")
        }
        func text(_ range: Range<Int>) -> String { String(decoding: UnsafeBufferPointer(rebasing: head[range]), as: UTF8.self) }
        func bytes(_ range: Range<Int>, are wanted: StaticString) -> Bool {
            guard range.count == wanted.utf8CodeUnitCount else { return false }
            return memcmp(base + range.lowerBound, wanted.utf8Start, range.count) == 0
        }
        // The first `byte` in `range`, found by memchr (a head is mostly other bytes).
        func find(_ byte: UInt8, in range: Range<Int>) -> Int? {
            guard !range.isEmpty, let found = memchr(base + range.lowerBound, Int32(byte), range.count) else { return nil }
            return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
        }
        // Lines end at CRLF; a bare CR or LF anywhere is refused first (RFC 9112 §2.2), as
        // `next()` refuses it when it arrives before the head's end: every LF follows a CR,
        // and every CR comes before an LF.
        var at = 0
        while let i = find(lf, in: at..<head.count) {
            guard i > 0, head[i - 1] == cr else { throw Failure(status: 400, message: "a line of the request holds a bare CR or LF") }
            at = i + 1
        }
        at = 0
        while let i = find(cr, in: at..<head.count) {
            guard i + 1 < head.count, head[i + 1] == lf else {
                throw Failure(status: 400, message: "a line of the request holds a bare CR or LF")
            }
            at = i + 2
        }
        // Where the line starting at `from` ends: at its CRLF, or the block's end.
        func lineEnd(from: Int) -> Int { find(cr, in: from..<head.count) ?? head.count }
        // The request line: METHOD SP target SP version, with no third space.
        let first = 0..<lineEnd(from: 0)
        guard let space0 = find(space, in: first), let space1 = find(space, in: space0 + 1..<first.upperBound),
            find(space, in: space1 + 1..<first.upperBound) == nil, space0 > 0,
            head[0..<space0].allSatisfy({ $0 >= 65 && $0 <= 90 }),
            space1 > space0 + 1, head[space0 + 1] == 47 || (space1 == space0 + 2 && head[space0 + 1] == 42)
        else { throw Failure(status: 400, message: "the request line is not 'METHOD /path HTTP/1.1'") }
        let versionRange = space1 + 1..<first.upperBound
        let isHTTP10 = bytes(versionRange, are: "HTTP/1.0")
        guard isHTTP10 || bytes(versionRange, are: "HTTP/1.1") else { throw Failure(status: 505, message: "only HTTP/1.1 is served") }
        var fields: [(name: Range<Int>, value: Range<Int>)] = []
        fields.reserveCapacity(8)
        var length: Int?
        var transferEncodings: [String] = []
        var expectations: [String] = []
        var lineStart = first.upperBound + 2
        while lineStart <= head.count, first.upperBound < head.count {
            let line = lineStart..<lineEnd(from: lineStart)
            lineStart = line.upperBound + 2
            guard fields.count < HTTPRequestParser.maxHeaders else {
                throw Failure(status: 431, message: "more than \(HTTPRequestParser.maxHeaders) header fields")
            }
            // The name: up to the first colon, with no space or tab in it.
            var c = line.lowerBound
            while c < line.upperBound, head[c] != colon, head[c] != space, head[c] != tab { c += 1 }
            guard c < line.upperBound, c > line.lowerBound, head[c] == colon else {
                throw Failure(status: 400, message: "a header line is not 'Name: value'")
            }
            var valueStart = c + 1
            var valueEnd = line.upperBound
            while valueStart < valueEnd, head[valueStart] == space || head[valueStart] == tab { valueStart += 1 }
            while valueEnd > valueStart, head[valueEnd - 1] == space || head[valueEnd - 1] == tab { valueEnd -= 1 }
            let nameRange = line.lowerBound..<c
            func named(_ wanted: StaticString) -> Bool {
                guard nameRange.count == wanted.utf8CodeUnitCount else { return false }
                let bytes = wanted.utf8Start
                for i in 0..<nameRange.count where head[nameRange.lowerBound + i] | 0x20 != bytes[i] { return false }
                return true
            }
            if named("content-length") {
                // Digits only, and the same count in every Content-Length field.
                guard valueEnd > valueStart, valueEnd - valueStart <= 18, head[valueStart..<valueEnd].allSatisfy({ $0 >= 48 && $0 <= 57 })
                else { throw Failure(status: 400, message: "Content-Length is not one count") }
                let n = head[valueStart..<valueEnd].reduce(0) { $0 * 10 + Int($1 - 48) }
                guard length == nil || length == n else { throw Failure(status: 400, message: "Content-Length is not one count") }
                length = n
            } else if named("transfer-encoding") {
                transferEncodings.append(text(valueStart..<valueEnd).lowercased())
            } else if named("expect") {
                expectations.append(text(valueStart..<valueEnd).lowercased())
            }
            fields.append((nameRange, valueStart..<valueEnd))
        }
        if !transferEncodings.isEmpty {
            guard length == nil else {
                throw Failure(status: 400, message: "a request has Transfer-Encoding or Content-Length, not both")
            }
            guard transferEncodings == ["chunked"] else {
                throw Failure(status: 400, message: "Transfer-Encoding other than one 'chunked' is refused")
            }
            throw Failure(status: 501, message: "chunked request bodies are not read; send Content-Length")
        }
        if expectations.contains(where: { $0 != "100-continue" }), !isHTTP10 {
            throw Failure(status: 417, message: "the only expectation met is 100-continue")
        }
        if let length, length > HTTPRequestParser.maxBodyBytes {
            throw Failure(status: 413, message: "the body is over \(HTTPRequestParser.maxBodyBytes) bytes")
        }
        // The common methods as literals (no string made and checked).
        let method = bytes(0..<space0, are: "POST") ? "POST" : bytes(0..<space0, are: "GET") ? "GET" : text(0..<space0)
        // The target: a path, and a query after `?`; each decoded only when it holds an escape.
        let targetRange = space0 + 1..<space1
        let question = find(UInt8(ascii: "?"), in: targetRange) ?? targetRange.upperBound
        let rawPath = text(targetRange.lowerBound..<question)
        let path =
            find(UInt8(ascii: "%"), in: targetRange.lowerBound..<question) != nil ? rawPath.removingPercentEncoding ?? rawPath : rawPath
        var query: [(String, String)] = []
        if question < targetRange.upperBound {
            query = text(question + 1..<targetRange.upperBound).split(separator: "&").map { pair in
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let decode = { (s: Substring) in s.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(s) }
                return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
            }
        }
        let request: HTTPRequest
        if let source {
            for i in fields.indices {
                let (name, value) = fields[i]
                fields[i] = (name.lowerBound + offset..<name.upperBound + offset, value.lowerBound + offset..<value.upperBound + offset)
            }
            request = HTTPRequest(method: method, path: path, query: query, head: source, fields: fields, isHTTP10: isHTTP10)
        } else {
            request = HTTPRequest(method: method, path: path, query: query, head: Array(head), fields: fields, isHTTP10: isHTTP10)
        }
        return (request, length ?? 0)
    }

    private func headerEnd() -> Int? {
        let from = max(start, searched)
        return ASCII.blankLine(in: buffer, from: from, within: HTTPRequestParser.maxHeaderBytes - (from - start))
    }

    /// The bytes held (what was read and not yet let go, and what waits), for tests.
    var heldBytes: Int { buffer.count }
}
