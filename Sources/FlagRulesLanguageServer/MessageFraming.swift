import FlagRules
import FlagRulesTooling
import Foundation

/// The Language Server Protocol's framing of JSON-RPC messages on a byte stream: a header
/// block (`Content-Length: N`, optionally `Content-Type`, each line ending in CRLF) and an
/// empty line, then N bytes of JSON.
package struct MessageReader: Sendable {
    /// The largest header block read before giving up on the stream.
    package static let maxHeaderBytes = 8 << 10
    /// The largest message body accepted.
    package static let maxBodyBytes = 64 << 20

    /// Why the stream cannot be read further: its framing is broken.
    package struct FramingError: Error, Sendable, Equatable, CustomStringConvertible {
        package let message: String
        package var description: String { message }
    }

    /// What one message was.
    package enum Message: Sendable {
        /// A well-framed JSON value.
        case json(JSON)
        /// A well-framed body that is not JSON (answered with a parse error).
        case malformed(JSON.ParseError)
    }

    private var buffer: [UInt8] = []
    private var start = 0

    package init() {}

    /// Adds bytes read from the stream.
    package mutating func append(_ bytes: some Sequence<UInt8>) {
        if start > 0, start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Whether a whole message may be waiting (some bytes are buffered).
    package var hasBufferedBytes: Bool { start < buffer.count }

    /// The next complete message, or nil until more bytes arrive. Throws when the framing
    /// is broken (no Content-Length, a header block or body beyond the limits).
    package mutating func next() throws(FramingError) -> Message? {
        guard let headerEnd = findHeaderEnd() else {
            if buffer.count - start > MessageReader.maxHeaderBytes {
                throw FramingError(message: "no end of the header block in \(MessageReader.maxHeaderBytes) bytes")
            }
            return nil
        }
        let header = String(decoding: buffer[start..<headerEnd], as: UTF8.self)
        var length: Int?
        for line in header.split(separator: "\r\n", omittingEmptySubsequences: true) {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { throw FramingError(message: "a header line without ':': \(line.prefix(80))") }
            if parts[0].lowercased() == "content-length" {
                guard let n = Int(parts[1].trimmingCharacters(in: .whitespaces)), n >= 0 else {
                    throw FramingError(message: "Content-Length is not a count: \(parts[1].prefix(40))")
                }
                length = n
            }
        }
        guard let length else { throw FramingError(message: "a message without Content-Length") }
        guard length <= MessageReader.maxBodyBytes else {
            throw FramingError(message: "a message of \(length) bytes; the limit is \(MessageReader.maxBodyBytes)")
        }
        let bodyStart = headerEnd + 4
        guard buffer.count - bodyStart >= length else { return nil }
        let body = Array(buffer[bodyStart..<(bodyStart + length)])
        start = bodyStart + length
        if start > 1 << 20 {
            buffer.removeSubrange(0..<start)
            start = 0
        }
        do {
            return .json(try JSON.parse(bytes: body))
        } catch {
            return .malformed(error)
        }
    }

    /// The index of the `\r\n\r\n` ending the header block.
    private func findHeaderEnd() -> Int? {
        ASCII.blankLine(in: buffer, from: start, within: MessageReader.maxHeaderBytes)
    }

    /// A message framed for the stream.
    package static func frame(_ message: JSON) -> [UInt8] {
        let body = Array(message.serialized().utf8)
        return Array("Content-Length: \(body.count)\r\n\r\n".utf8) + body
    }
}
