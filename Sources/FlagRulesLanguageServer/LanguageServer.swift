import FlagRules
import FlagRulesTooling
import Foundation

/// A Language Server Protocol server for `.flags` files (`flags lsp`): JSON-RPC messages in,
/// messages out, with no I/O of its own. The transport feeds it each message with
/// ``handle(_:)`` and sends what it returns; when no message is waiting it calls
/// ``flush()``, which publishes the diagnostics of the documents changed since (so a burst
/// of keystrokes is checked once).
///
/// Every request on any text gets an answer: a half-typed document answers from what
/// parsed, and an empty result is an answer.
package final class LanguageServer {
    /// One open document.
    final class Document {
        let uri: String
        var text: String
        var version: Int?
        private var cached: DocumentAnalysis?
        /// Diagnostics published for the last `flags.runTest` of a test (by its title).
        var testFailures: [String: [JSON]] = [:]

        init(uri: String, text: String, version: Int?) {
            self.uri = uri
            self.text = text
            self.version = version
        }

        /// The analysis of the current text, worked out on first use after a change.
        func analysis(today: Date) -> DocumentAnalysis {
            if let cached { return cached }
            let made = DocumentAnalysis(text: text, name: Document.path(of: uri) ?? uri, today: today)
            cached = made
            return made
        }

        func replace(_ text: String, version: Int?) {
            self.text = text
            self.version = version
            cached = nil
            testFailures = [:]
        }

        /// The file path of a `file:` URI.
        static func path(of uri: String) -> String? {
            guard uri.hasPrefix("file://") else { return nil }
            return URL(string: uri)?.path ?? String(uri.dropFirst(7))
        }
    }

    /// The state of the protocol's lifecycle.
    package enum State: Sendable, Equatable {
        case starting, running, shuttingDown, exited(code: Int32)
    }

    package private(set) var state = State.starting
    var encoding = PositionEncoding.utf16
    var documents: [String: Document] = [:]
    /// Documents whose diagnostics are to be published at the next flush.
    private var dirty: [String] = []
    /// The day `@expires` and ramps are judged on (tests pin it).
    let today: () -> Date

    /// The most documents kept open at once.
    package static let maxDocuments = 1_000

    package init(today: @escaping () -> Date = { Date() }) {
        self.today = today
    }

    // MARK: Dispatch

    /// Handles one message; returns the messages to send (a response, notifications).
    package func handle(_ message: MessageReader.Message) -> [JSON] {
        guard case .json(let json) = message else {
            if case .malformed(let error) = message {
                return [LanguageServer.error(id: .null, code: -32700, "the message is not JSON: \(error)")]
            }
            return []
        }
        guard case .object = json, let method = json["method"]?.string else {
            // A response to a request of ours (none are sent) or something that is not a
            // message: only a request with an id can be answered.
            if let id = json["id"], json["method"] == nil, json["result"] == nil, json["error"] == nil {
                return [LanguageServer.error(id: id, code: -32600, "a request needs a method")]
            }
            return []
        }
        let id = json["id"]
        let params = json["params"] ?? .object([])
        if case .exited = state { return [] }
        if method == "exit" {
            state = .exited(code: state == .shuttingDown ? 0 : 1)
            return []
        }
        if state == .starting, method != "initialize" {
            return id.map { [LanguageServer.error(id: $0, code: -32002, "the server is not initialized")] } ?? []
        }
        if state == .shuttingDown {
            return id.map { [LanguageServer.error(id: $0, code: -32600, "the server is shutting down")] } ?? []
        }
        guard let id else {
            notification(method, params)
            return []
        }
        switch request(method, params) {
        case .success(let result): return [.object([("jsonrpc", .string("2.0")), ("id", id), ("result", result)])]
        case .failure(let e): return [LanguageServer.error(id: id, code: e.code, e.message)]
        }
    }

    /// Whether a flush has diagnostics to publish.
    package var hasPendingDiagnostics: Bool { !dirty.isEmpty || !closed.isEmpty }

    /// The diagnostics of every document changed since the last flush.
    package func flush() -> [JSON] {
        let uris = dirty
        dirty = []
        return uris.compactMap { uri in documents[uri].map(publishDiagnostics) }
    }

    struct RequestError: Error {
        let code: Int
        let message: String
    }

    private func request(_ method: String, _ params: JSON) -> Result<JSON, RequestError> {
        switch method {
        case "initialize": return .success(initialize(params))
        case "shutdown":
            state = .shuttingDown
            return .success(.null)
        default: break
        }
        guard let handler = LanguageServer.requests[method] else {
            return .failure(RequestError(code: -32601, message: "no method '\(method)'"))
        }
        let uri = params["textDocument"]?["uri"]?.string ?? params["command"].flatMap { _ in params["arguments"]?.elements?.first?.string }
        guard let uri, let document = documents[uri] else {
            if method == "workspace/executeCommand" || uri != nil {
                return .failure(RequestError(code: -32602, message: "no open document \(uri ?? "")"))
            }
            return .failure(RequestError(code: -32602, message: "the request names no document"))
        }
        return handler(self)(document, params)
    }

    typealias Handler = @Sendable (LanguageServer) -> (Document, JSON) -> Result<JSON, RequestError>

    static let requests: [String: Handler] = [
        "textDocument/hover": { s in { d, p in .success(s.hover(d, p)) } },
        "textDocument/definition": { s in { d, p in .success(s.definition(d, p)) } },
        "textDocument/references": { s in { d, p in .success(s.references(d, p)) } },
        "textDocument/prepareRename": { s in { d, p in .success(s.prepareRename(d, p)) } },
        "textDocument/rename": { s in { d, p in s.rename(d, p) } },
        "textDocument/documentSymbol": { s in { d, _ in .success(s.documentSymbols(d)) } },
        "textDocument/formatting": { s in { d, _ in .success(s.formatting(d)) } },
        "textDocument/completion": { s in { d, p in .success(s.completion(d, p)) } },
        "textDocument/codeAction": { s in { d, p in .success(s.codeActions(d, p)) } },
        "textDocument/semanticTokens/full": { s in { d, _ in .success(s.semanticTokens(d)) } },
        "textDocument/codeLens": { s in { d, _ in .success(s.codeLenses(d)) } },
        "textDocument/inlayHint": { s in { d, _ in .success(s.inlayHints(d)) } },
        "workspace/executeCommand": { s in { d, p in s.executeCommand(d, p) } },
    ]

    private func notification(_ method: String, _ params: JSON) {
        switch method {
        case "initialized": break
        case "textDocument/didOpen":
            guard let item = params["textDocument"], let uri = item["uri"]?.string, let text = item["text"]?.string else { return }
            if documents[uri] == nil, documents.count >= LanguageServer.maxDocuments { return }
            documents[uri] = Document(uri: uri, text: text, version: item["version"]?.integer)
            closed.removeAll { $0 == uri }
            markDirty(uri)
        case "textDocument/didChange":
            guard let uri = params["textDocument"]?["uri"]?.string, let document = documents[uri],
                let changes = params["contentChanges"]?.elements
            else { return }
            var text = document.text
            for change in changes {
                guard let new = change["text"]?.string else { continue }
                if let range = change["range"] {
                    text = LanguageServer.apply(new, at: range, to: text, encoding: encoding)
                } else {
                    text = new
                }
            }
            document.replace(text, version: params["textDocument"]?["version"]?.integer)
            markDirty(uri)
        case "textDocument/didClose":
            guard let uri = params["textDocument"]?["uri"]?.string else { return }
            if documents.removeValue(forKey: uri) != nil {
                dirty.removeAll { $0 == uri }
                if !closed.contains(uri) { closed.append(uri) }
            }
        default: break
        }
    }

    /// Documents closed since the last flush: their diagnostics are cleared.
    private var closed: [String] = []

    /// The notifications clearing the diagnostics of closed documents.
    package func flushClosed() -> [JSON] {
        defer { closed = [] }
        return closed.map { uri in
            LanguageServer.notification(
                "textDocument/publishDiagnostics", .object([("uri", .string(uri)), ("diagnostics", .array([]))]))
        }
    }

    private func markDirty(_ uri: String) {
        if !dirty.contains(uri) { dirty.append(uri) }
    }

    /// A test run changed what the document's diagnostics show.
    func markDirtyForTests(_ uri: String) { markDirty(uri) }

    /// `text` with an incremental change applied (a client that sends ranges anyway).
    static func apply(_ new: String, at range: JSON, to text: String, encoding: PositionEncoding) -> String {
        let analysis = SourceText(text, name: "")
        func offset(_ p: JSON?) -> Int {
            analysis.offset(line: p?["line"]?.integer ?? 0, character: p?["character"]?.integer ?? 0, encoding: encoding)
        }
        let a = offset(range["start"])
        let b = max(a, offset(range["end"]))
        var bytes = analysis.bytes
        bytes.replaceSubrange(a..<b, with: Array(new.utf8))
        return String(decoding: bytes, as: UTF8.self)
    }

    // MARK: Lifecycle

    private func initialize(_ params: JSON) -> JSON {
        state = .running
        let offered = params["capabilities"]?["general"]?["positionEncodings"]?.elements?.compactMap(\.string) ?? []
        encoding = offered.contains("utf-32") ? .utf32 : .utf16
        let capabilities: JSON = .object([
            ("positionEncoding", .string(encoding.rawValue)),
            ("textDocumentSync", .object([("openClose", .bool(true)), ("change", .int(1))])),
            ("hoverProvider", .bool(true)),
            ("definitionProvider", .bool(true)),
            ("referencesProvider", .bool(true)),
            ("renameProvider", .object([("prepareProvider", .bool(true))])),
            ("documentSymbolProvider", .bool(true)),
            ("documentFormattingProvider", .bool(true)),
            (
                "completionProvider",
                .object([("triggerCharacters", .array([" ", "[", ",", "(", ".", "{"].map(JSON.string)))])
            ),
            ("codeActionProvider", .object([("codeActionKinds", .array([.string("quickfix")]))])),
            (
                "semanticTokensProvider",
                .object([
                    (
                        "legend",
                        .object([
                            ("tokenTypes", .array(LanguageServer.tokenTypes.map(JSON.string))),
                            ("tokenModifiers", .array([.string("declaration"), .string("readonly")])),
                        ])
                    ),
                    ("full", .bool(true)),
                ])
            ),
            ("codeLensProvider", .object([("resolveProvider", .bool(false))])),
            ("inlayHintProvider", .bool(true)),
            ("executeCommandProvider", .object([("commands", .array([.string("flags.runTest")]))])),
        ])
        return .object([
            ("capabilities", capabilities),
            ("serverInfo", .object([("name", .string("flags")), ("version", .string("0.1.0"))])),
        ])
    }

    // MARK: Diagnostics

    private func publishDiagnostics(_ document: Document) -> JSON {
        let analysis = document.analysis(today: today())
        var items = analysis.diagnostics.map { lspDiagnostic($0, analysis, uri: document.uri) }
        for failures in document.testFailures.values { items += failures }
        var params: [(String, JSON)] = [("uri", .string(document.uri))]
        if let v = document.version { params.append(("version", .int(v))) }
        params.append(("diagnostics", .array(items)))
        return LanguageServer.notification("textDocument/publishDiagnostics", .object(params))
    }

    func lspDiagnostic(_ d: Diagnostic, _ analysis: DocumentAnalysis, uri: String) -> JSON {
        var message = d.message
        if let help = d.help { message += "\nhelp: \(help)" }
        var members: [(String, JSON)] = [
            ("range", analysis.range(d.range, encoding: encoding)),
            ("severity", .int(d.severity == .error ? 1 : 2)),
            ("code", .string(d.code)),
            ("source", .string("flags")),
            ("message", .string(message)),
        ]
        let related = d.notes.compactMap { note -> JSON? in
            guard let r = note.range else { return nil }
            return .object([
                ("location", .object([("uri", .string(uri)), ("range", analysis.range(r, encoding: encoding))])),
                ("message", .string(note.message)),
            ])
        }
        if !related.isEmpty { members.append(("relatedInformation", .array(related))) }
        return .object(members)
    }

    // MARK: Messages

    static func notification(_ method: String, _ params: JSON) -> JSON {
        .object([("jsonrpc", .string("2.0")), ("method", .string(method)), ("params", params)])
    }

    static func error(id: JSON, code: Int, _ message: String) -> JSON {
        .object([
            ("jsonrpc", .string("2.0")), ("id", id),
            ("error", .object([("code", .int(code)), ("message", .string(message))])),
        ])
    }

    /// The byte offset a request's `position` names in a document.
    func offset(_ params: JSON, in analysis: DocumentAnalysis) -> Int {
        analysis.offset(
            line: params["position"]?["line"]?.integer ?? 0, character: params["position"]?["character"]?.integer ?? 0,
            encoding: encoding)
    }

    func location(_ uri: String, _ r: SourceRange, _ analysis: DocumentAnalysis) -> JSON {
        .object([("uri", .string(uri)), ("range", analysis.range(r, encoding: encoding))])
    }
}
