import Foundation

/// One HTTP/1.1 request, as `flags serve` reads it.
package struct HTTPRequest: Sendable {
    package var method: String
    /// The path, without the query.
    package var path: String
    /// The query's parameters, decoded, in order.
    package var query: [(String, String)]
    /// Header fields in order; names as sent.
    package var headers: [(String, String)]
    package var body: [UInt8]
    /// HTTP/1.0 (no keep-alive unless asked).
    package var isHTTP10 = false

    /// The first value of a header field (names compare without case).
    package func header(_ name: String) -> String? {
        headers.first { HTTPRequest.sameName($0.0, name) }?.1
    }

    /// Header names equal but for ASCII case.
    static func sameName(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && zip(a.utf8, b.utf8).allSatisfy { ($0 | 0x20) == ($1 | 0x20) }
    }

    /// Whether the connection stays open after the response.
    package var keepsAlive: Bool {
        let connection = header("Connection")?.lowercased()
        return isHTTP10 ? connection == "keep-alive" : connection != "close"
    }

    package init(method: String, path: String, query: [(String, String)] = [], headers: [(String, String)] = [], body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }
}

/// One HTTP/1.1 response.
package struct HTTPResponse: Sendable {
    package var status: Int
    package var headers: [(String, String)]
    package var body: [UInt8]

    package init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON response.
    package static func json(_ status: Int, _ value: JSON, headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")] + headers, body: Array(value.serialized().utf8))
    }

    /// A plain-text response.
    package static func text(_ status: Int, _ text: String, type: String = "text/plain; charset=utf-8") -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", type)], body: Array(text.utf8))
    }

    /// The first value of a header field.
    package func header(_ name: String) -> String? {
        headers.first { HTTPRequest.sameName($0.0, name) }?.1
    }

    static let reasons: [Int: String] = [
        200: "OK", 204: "No Content", 304: "Not Modified", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden",
        404: "Not Found", 405: "Method Not Allowed", 408: "Request Timeout", 411: "Length Required", 413: "Content Too Large",
        415: "Unsupported Media Type", 429: "Too Many Requests", 431: "Request Header Fields Too Large", 500: "Internal Server Error",
        501: "Not Implemented", 503: "Service Unavailable", 505: "HTTP Version Not Supported",
    ]

    /// The response as bytes on the wire (`Content-Length` added; no body for 304 and HEAD).
    package func serialized(keepAlive: Bool, headOnly: Bool = false) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(HTTPResponse.reasons[status] ?? "Status")\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        let hasBody = status != 304 && status != 204
        if hasBody { head += "Content-Length: \(body.count)\r\n" }
        if !keepAlive { head += "Connection: close\r\n" }
        head += "\r\n"
        return Array(head.utf8) + (hasBody && !headOnly ? body : [])
    }
}

/// Reads HTTP/1.1 requests from a connection's bytes, one after another (keep-alive and
/// pipelining), within limits: a request line and header block of at most
/// `maxHeaderBytes`, at most `maxHeaders` fields, a body of at most `maxBodyBytes` given by
/// `Content-Length` (chunked bodies are refused).
package struct HTTPRequestParser: Sendable {
    package static let maxHeaderBytes = 16 << 10
    package static let maxHeaders = 100
    package static let maxBodyBytes = 1 << 20

    /// Why a request cannot be read: the status to answer with before closing.
    package struct Failure: Error, Sendable, Equatable {
        package let status: Int
        package let message: String
    }

    private var buffer: [UInt8] = []
    private var start = 0

    package init() {}

    package mutating func append(_ bytes: some Sequence<UInt8>) {
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Whether part of a request has arrived.
    package var hasPartialRequest: Bool { start < buffer.count }

    /// The next whole request; nil until more bytes arrive.
    package mutating func next() throws(Failure) -> HTTPRequest? {
        // Blank lines before a request are allowed (RFC 9112 §2.2).
        while start + 1 < buffer.count, buffer[start] == 13, buffer[start + 1] == 10 { start += 2 }
        guard let end = headerEnd() else {
            if buffer.count - start > HTTPRequestParser.maxHeaderBytes {
                throw Failure(status: 431, message: "the request's header block is over \(HTTPRequestParser.maxHeaderBytes) bytes")
            }
            return nil
        }
        let head = String(decoding: buffer[start..<end], as: UTF8.self)
        var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        let requestLine = lines.removeFirst().split(separator: " ", omittingEmptySubsequences: false)
        guard requestLine.count == 3, !requestLine[0].isEmpty, requestLine[0].allSatisfy({ $0.isASCII && $0.isUppercase }),
            requestLine[1].hasPrefix("/") || requestLine[1] == "*"
        else { throw Failure(status: 400, message: "the request line is not 'METHOD /path HTTP/1.1'") }
        guard requestLine[2] == "HTTP/1.1" || requestLine[2] == "HTTP/1.0" else {
            throw Failure(status: 505, message: "only HTTP/1.1 is served")
        }
        guard lines.count <= HTTPRequestParser.maxHeaders else {
            throw Failure(status: 431, message: "more than \(HTTPRequestParser.maxHeaders) header fields")
        }
        var headers: [(String, String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex,
                !line[..<colon].contains(where: { $0 == " " || $0 == "\t" })
            else { throw Failure(status: 400, message: "a header line is not 'Name: value'") }
            let value = line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
            headers.append((String(line[..<colon]), String(value.reversed().drop { $0 == " " || $0 == "\t" }.reversed())))
        }
        var request = HTTPRequest(method: String(requestLine[0]), path: "", headers: headers)
        request.isHTTP10 = requestLine[2] == "HTTP/1.0"
        let target = String(requestLine[1])
        if let q = target.firstIndex(of: "?") {
            let path = String(target[..<q])
            request.path = path.contains("%") ? path.removingPercentEncoding ?? path : path
            request.query = target[target.index(after: q)...].split(separator: "&").map { pair in
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let decode = { (s: Substring) in s.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(s) }
                return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
            }
        } else {
            request.path = target.contains("%") ? target.removingPercentEncoding ?? target : target
        }
        if let encoding = request.header("Transfer-Encoding"), encoding.lowercased() != "identity" {
            throw Failure(status: 501, message: "chunked request bodies are not read; send Content-Length")
        }
        let lengths = headers.filter { HTTPRequest.sameName($0.0, "Content-Length") }.map(\.1)
        var length = 0
        if let text = lengths.first {
            guard Set(lengths).count == 1, let n = Int(text), n >= 0, text.allSatisfy(\.isASCII) else {
                throw Failure(status: 400, message: "Content-Length is not one count")
            }
            guard n <= HTTPRequestParser.maxBodyBytes else {
                throw Failure(status: 413, message: "the body is over \(HTTPRequestParser.maxBodyBytes) bytes")
            }
            length = n
        }
        let bodyStart = end + 4
        guard buffer.count - bodyStart >= length else { return nil }
        request.body = Array(buffer[bodyStart..<(bodyStart + length)])
        start = bodyStart + length
        return request
    }

    private func headerEnd() -> Int? {
        MessageReader.blankLine(in: buffer, from: start, within: HTTPRequestParser.maxHeaderBytes)
    }
}
