import Foundation
import Testing

@testable import FlagRules
@testable import FlagRulesLanguageServer

/// The language server in process, driven by random sequences against a small model, and
/// its framing fuzzed.
@Suite struct LanguageServerModelTests {
    static let texts = [
        "flag a = true\n",
        "context { build: enum(debug, beta) }\nflag b { enabled when build == beta }\n",
        "context { build: enum(debug, beta) }\nflag b { enabled when biuld == beta }\n",
        "flag c {\n",
        "segment s = x == 1\n",
        "",
    ]

    static func message(_ method: String, _ params: JSON, id: Int? = nil) -> MessageReader.Message {
        var m: [(String, JSON)] = [("jsonrpc", .string("2.0")), ("method", .string(method)), ("params", params)]
        if let id { m.append(("id", .int(id))) }
        return .json(.object(m))
    }

    /// Open, change and close documents and ask for symbols, at random; after every step
    /// the server's answers and the diagnostics it publishes agree with a model that holds
    /// the open documents' texts.
    @Test(arguments: [1, 2, 3, 4])
    func randomSequencesAgreeWithTheModel(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let server = LanguageServer(today: { DateTime.parse("2026-11-25")! })
        _ = server.handle(Self.message("initialize", .object([("capabilities", .object([]))]), id: 0))
        var open: [String: String] = [:]
        var changed: [String] = []
        var closed: [String] = []
        var id = 1
        for _ in 0..<300 {
            let uri = "file:///d\(Int.random(in: 0..<3, using: &random)).flags"
            let text = Self.texts[Int.random(in: 0..<Self.texts.count, using: &random)]
            switch Int.random(in: 0..<5, using: &random) {
            case 0:
                _ = server.handle(
                    Self.message(
                        "textDocument/didOpen",
                        .object([("textDocument", .object([("uri", .string(uri)), ("version", .int(1)), ("text", .string(text))]))])))
                open[uri] = text
                if !changed.contains(uri) { changed.append(uri) }
                closed.removeAll { $0 == uri }
            case 1:
                _ = server.handle(
                    Self.message(
                        "textDocument/didChange",
                        .object([
                            ("textDocument", .object([("uri", .string(uri)), ("version", .int(2))])),
                            ("contentChanges", .array([.object([("text", .string(text))])])),
                        ])))
                if open[uri] != nil {
                    open[uri] = text
                    if !changed.contains(uri) { changed.append(uri) }
                }
            case 2:
                _ = server.handle(Self.message("textDocument/didClose", .object([("textDocument", .object([("uri", .string(uri))]))])))
                if open.removeValue(forKey: uri) != nil {
                    changed.removeAll { $0 == uri }
                    closed.append(uri)
                }
            case 3:
                id += 1
                let response = server.handle(
                    Self.message("textDocument/documentSymbol", .object([("textDocument", .object([("uri", .string(uri))]))]), id: id))
                #expect(response.count == 1)
                if open[uri] != nil {
                    #expect(response.first?["result"] != nil, "\(response)")
                } else {
                    #expect(response.first?["error"]?["code"] == .int(-32602))
                }
            default:
                #expect(server.hasPendingDiagnostics == !(changed.isEmpty && closed.isEmpty))
                let cleared = server.flushClosed()
                let published = server.flush()
                #expect(cleared.compactMap { $0["params"]?["uri"]?.string } == closed)
                #expect(cleared.allSatisfy { $0["params"]?["diagnostics"] == .array([]) })
                #expect(published.compactMap { $0["params"]?["uri"]?.string } == changed)
                for p in published {
                    let uri = try #require(p["params"]?["uri"]?.string)
                    let expected = DocumentAnalysis(text: open[uri] ?? "", name: uri, today: DateTime.parse("2026-11-25")!).diagnostics
                    #expect(p["params"]?["diagnostics"]?.elements?.compactMap { $0["code"]?.string } == expected.map(\.code))
                }
                changed = []
                closed = []
            }
        }
    }

    /// Messages framed and cut at random places come out whole and in order.
    @Test func framingSurvivesAnyChunking() throws {
        var random = SeededGenerator(seed: 7)
        let messages: [JSON] = (0..<50).map { i in
            .object([("id", .int(i)), ("text", .string(String(repeating: "é😀\r\n", count: i)))])
        }
        let bytes = messages.flatMap(MessageReader.frame)
        for _ in 0..<20 {
            var reader = MessageReader()
            var out: [JSON] = []
            var i = 0
            while i < bytes.count {
                let n = Int.random(in: 1...64, using: &random)
                reader.append(bytes[i..<min(i + n, bytes.count)])
                i += n
                while case .json(let m)? = try reader.next() { out.append(m) }
            }
            #expect(out == messages)
        }
    }

    /// Random bytes: a message, nothing yet, or a framing error; never a crash or a hang.
    @Test func randomBytesNeverCrashTheReader() {
        var random = SeededGenerator(seed: 11)
        let pieces: [[UInt8]] = [
            Array("Content-Length: 2\r\n\r\n{}".utf8), Array("Content-Length: -1\r\n\r\n".utf8), Array("\r\n\r\n".utf8),
            Array("Content-Type: x\r\n".utf8), Array("Content-Length: 99999999999\r\n\r\n".utf8), [0xFF, 0x00, 0x0A],
            Array("Content-Length: 5\r\n\r\n[1,2".utf8), Array("content-length:3\r\n\r\nnul".utf8),
        ]
        var outcomes = (messages: 0, malformed: 0, errors: 0)
        for _ in 0..<500 {
            var reader = MessageReader()
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                reader.append(pieces[Int.random(in: 0..<pieces.count, using: &random)])
            }
            do {
                var steps = 0
                while let m = try reader.next() {
                    steps += 1
                    if case .json = m { outcomes.messages += 1 } else { outcomes.malformed += 1 }
                    #expect(steps < 100)
                }
            } catch {
                outcomes.errors += 1
            }
        }
        #expect(outcomes.messages > 0 && outcomes.malformed > 0 && outcomes.errors > 0, "\(outcomes)")
        var oversized = MessageReader()
        oversized.append(Array(repeating: UInt8(ascii: "a"), count: MessageReader.maxHeaderBytes + 10))
        #expect(throws: MessageReader.FramingError.self) { try oversized.next() }
    }
}
