// libFuzzer target: the request parser of `flags serve`. Each input is read two ways.
// As a byte stream: read whole and in pieces (cut where the input's own bytes say) it must
// give the same requests and the same failure, every request's body is its Content-Length,
// none carries Transfer-Encoding, and the bytes held stay bounded. As a program: its bytes
// choose requests (methods, paths, header fields among them framing that a proxy could read
// another way, bodies), which are written to the wire and read back; a model says what each
// must give: the request as written, or the failure RFC 9112 asks for (400 for
// Transfer-Encoding beside Content-Length or other than one `chunked`, 501 for a chunked
// body, 400 for two counts, 417 for an unknown expectation), after which nothing is read.
import Foundation

/// One input, 0 when it is done with it (a finding traps); called by `FuzzMain.swift`.
func httpFuzzTest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    httpStreamFuzz(bytes)
    httpModelFuzz(bytes)
    return 0
}

/// What a parser gives for a stream fed in `pieces`: each request as text, then the
/// failure's status (nil while it waits for more).
private func readRequests(_ pieces: [ArraySlice<UInt8>]) -> (requests: [String], failure: Int?, held: Int) {
    var parser = HTTPRequestParser()
    var requests: [String] = []
    var held = 0
    for piece in pieces {
        parser.append(piece)
        held = max(held, parser.heldBytes)
        do {
            while let r = try parser.next() {
                let length = r.header("Content-Length").flatMap { Int($0) } ?? 0
                if r.body.count != length { fatalError("a body of \(r.body.count) bytes for Content-Length \(length)") }
                if r.header("Transfer-Encoding") != nil { fatalError("a request with Transfer-Encoding was read") }
                for (name, value) in r.headers where (name + value).utf8.contains(where: { $0 == 13 || $0 == 10 }) {
                    fatalError("a header field holds a CR or LF: \(name): \(value)")
                }
                requests.append("\(r.method) \(r.path) \(r.query) \(r.headers) \(r.body)")
            }
        } catch {
            return (requests, error.status, held)
        }
    }
    return (requests, nil, held)
}

func httpStreamFuzz(_ bytes: [UInt8]) {
    let whole = readRequests([bytes[...]])
    // Cuts where the input says: each byte's low bits are the length of the next piece.
    var pieces: [ArraySlice<UInt8>] = []
    var at = 0
    var k = 0
    while at < bytes.count {
        let length = 1 + Int(bytes[k % bytes.count] & 7)
        pieces.append(bytes[at..<min(bytes.count, at + length)])
        at += length
        k += 1
    }
    let cut = readRequests(pieces)
    if cut.requests != whole.requests || cut.failure != whole.failure {
        fatalError("pieces and the whole disagree: \(cut) vs \(whole) for \(bytes)")
    }
    let bound = HTTPRequestParser.maxHeaderBytes + HTTPRequestParser.maxBodyBytes + bytes.count / 2 + 16
    if cut.held > bound { fatalError("\(cut.held) bytes held for \(bytes.count) given") }
}

/// Requests chosen by the input's bytes, written to the wire, read back against a model.
func httpModelFuzz(_ bytes: [UInt8]) {
    var input = bytes[...]
    func take(_ n: Int) -> Int {
        guard let b = input.popFirst() else { return 0 }
        return Int(b) % n
    }
    let methods = ["GET", "POST", "HEAD", "PUT", "OPTIONS"]
    let pathChars = Array("abcXYZ09-_.~/")
    let framing: [[(String, String)]] = [
        [], [], [], [("Transfer-Encoding", "chunked")], [("Transfer-Encoding", "chunked"), ("Transfer-Encoding", "identity")],
        [("transfer-encoding", "identity")], [("Transfer-Encoding", "gzip, chunked")], [("Expect", "100-continue")],
        [("Expect", "something")], [("Content-Length", "3")], [("X-A", "b")], [("Connection", "close")],
    ]
    var wire: [UInt8] = []
    var expected: [String] = []
    var failure: Int?
    while !input.isEmpty, failure == nil, expected.count < 32 {
        let method = methods[take(methods.count)]
        let path = "/" + String((0..<take(12)).map { _ in pathChars[take(pathChars.count)] })
        let body = Array(repeating: UInt8(ascii: "x"), count: take(6))
        var headers: [(String, String)] = [("Host", "h")]
        for _ in 0..<take(3) { headers += framing[take(framing.count)] }
        let counts = headers.filter { HTTPRequest.sameName($0.0, "Content-Length") }.map(\.1)
        let givesCount = take(2) == 0 || !body.isEmpty
        if givesCount { headers.append(("Content-Length", String(body.count))) }
        // The model.
        let encodings = headers.filter { HTTPRequest.sameName($0.0, "Transfer-Encoding") }.map { $0.1.lowercased() }
        let allCounts = counts + (givesCount ? [String(body.count)] : [])
        if !encodings.isEmpty {
            failure = !allCounts.isEmpty || encodings != ["chunked"] ? 400 : 501
        } else if Set(allCounts).count > 1 {
            failure = 400
        } else if headers.contains(where: { HTTPRequest.sameName($0.0, "Expect") && $0.1 != "100-continue" }) {
            failure = 417
        }
        let length = allCounts.first.flatMap { Int($0) } ?? 0
        let sent = Array(body.prefix(length)) + Array(repeating: UInt8(ascii: "x"), count: max(0, length - body.count))
        wire += Array("\(method) \(path) HTTP/1.1\r\n".utf8)
        for (name, value) in headers { wire += Array("\(name): \(value)\r\n".utf8) }
        wire += Array("\r\n".utf8) + sent
        if failure == nil { expected.append("\(method) \(path) [] \(headers) \(sent)") }
    }
    let read = readRequests([wire[...]])
    if read.requests != expected || read.failure != failure {
        fatalError(
            "the model and the parser disagree on \(String(decoding: wire, as: UTF8.self).debugDescription): \(read) vs \(expected), \(failure.map(String.init) ?? "no failure")"
        )
    }
}
