import FlagRules
import FlagRulesLanguageServer
import Foundation
import Testing

/// An editor's side of `flags lsp`: spawns the server and talks to it over its stdio with
/// Content-Length framing, as VS Code or Neovim does.
final class LSPClient {
    let process = Process()
    private let input: FileHandle
    private let output: FileHandle
    private var reader = MessageReader()
    private var nextID = 1
    /// Notifications received and not yet taken, in order.
    private(set) var notifications: [JSON] = []

    init(encodings: [String]? = nil, initialize: Bool = true) throws {
        process.executableURL = flagsBinary
        process.arguments = ["lsp"]
        process.currentDirectoryURL = packageRoot
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        input = stdin.fileHandleForWriting
        output = stdout.fileHandleForReading
        try spawn(process)
        // A watchdog: a server that stops answering fails the test rather than hanging it.
        let process = self.process
        DispatchQueue.global().asyncAfter(deadline: .now() + 120) { if process.isRunning { process.terminate() } }
        if initialize {
            var capabilities: [(String, JSON)] = []
            if let encodings { capabilities.append(("general", .object([("positionEncodings", .array(encodings.map(JSON.string)))]))) }
            _ = try request("initialize", .object([("capabilities", .object(capabilities))]))
            notify("initialized", .object([]))
        }
    }

    func send(_ message: JSON) {
        input.write(Data(MessageReader.frame(message)))
    }

    /// Writes bytes as they are (a malformed message).
    func sendRaw(_ bytes: [UInt8]) {
        input.write(Data(bytes))
    }

    func notify(_ method: String, _ params: JSON) {
        send(.object([("jsonrpc", .string("2.0")), ("method", .string(method)), ("params", params)]))
    }

    /// Sends a request and reads until its response; returns the response (with `result`
    /// or `error`).
    func request(_ method: String, _ params: JSON = .object([])) throws -> JSON {
        let id = nextID
        nextID += 1
        send(.object([("jsonrpc", .string("2.0")), ("id", .int(id)), ("method", .string(method)), ("params", params)]))
        return try receive { $0["id"] == .int(id) }
    }

    /// The result of a request (failing the test on an error response).
    func result(_ method: String, _ params: JSON) throws -> JSON {
        let response = try request(method, params)
        #expect(response["error"] == nil, "\(method): \(response)")
        return response["result"] ?? .null
    }

    /// The next notification with this method (taken from those already received first).
    func notification(_ method: String) throws -> JSON {
        if let i = notifications.firstIndex(where: { $0["method"]?.string == method }) {
            return notifications.remove(at: i)
        }
        return try receive { $0["method"]?.string == method }
    }

    /// The next message (response or notification) that `wanted` accepts.
    func message(_ wanted: (JSON) -> Bool) throws -> JSON { try receive(wanted) }

    private func receive(_ wanted: (JSON) -> Bool) throws -> JSON {
        while true {
            if case .json(let message)? = try reader.next() {
                if wanted(message) { return message }
                if message["method"] != nil { notifications.append(message) }
                continue
            }
            let data = output.availableData
            guard !data.isEmpty else { throw LSPClientError.closed }
            reader.append(data)
        }
    }

    /// Closes the input and waits for the server to exit; returns its status.
    func finish() -> Int32 {
        try? input.close()
        process.waitUntilExit()
        return process.terminationStatus
    }

    enum LSPClientError: Error { case closed }

    // Helpers for documents.

    func open(_ uri: String, _ text: String, version: Int = 1) {
        notify(
            "textDocument/didOpen",
            .object([
                (
                    "textDocument",
                    .object([("uri", .string(uri)), ("languageId", .string("flags")), ("version", .int(version)), ("text", .string(text))])
                )
            ]))
    }

    func change(_ uri: String, _ text: String, version: Int) {
        notify(
            "textDocument/didChange",
            .object([
                ("textDocument", .object([("uri", .string(uri)), ("version", .int(version))])),
                ("contentChanges", .array([.object([("text", .string(text))])])),
            ]))
    }

    /// The diagnostics of the next publication for `uri`.
    func diagnostics(_ uri: String) throws -> [JSON] {
        while true {
            let n = try notification("textDocument/publishDiagnostics")
            if n["params"]?["uri"]?.string == uri { return n["params"]?["diagnostics"]?.elements ?? [] }
        }
    }
}

/// `{ textDocument: { uri }, position: { line, character } }`.
func at(_ uri: String, _ line: Int, _ character: Int, _ extra: [(String, JSON)] = []) -> JSON {
    .object(
        [
            ("textDocument", .object([("uri", .string(uri))])),
            ("position", .object([("line", .int(line)), ("character", .int(character))])),
        ] + extra)
}

func document(_ uri: String) -> JSON { .object([("textDocument", .object([("uri", .string(uri))]))]) }

func range(_ l0: Int, _ c0: Int, _ l1: Int, _ c1: Int) -> JSON {
    .object([
        ("start", .object([("line", .int(l0)), ("character", .int(c0))])),
        ("end", .object([("line", .int(l1)), ("character", .int(c1))])),
    ])
}

@Suite(.serialized) struct LanguageServerTests {
    static let uri = "file:///tmp/flags-lsp-test/rules.flags"

    static let rules = """
        context {
          build  : enum(debug, beta, release)
          userId : string
        }

        /// Dark mode for beta testers.
        @owner("ios") @expires("2099-01-01")
        flag darkMode { enabled when build == beta and rollout(userId) < 20% }

        variant banner [none, small] = none {
          small when darkMode
        }

        test "beta" {
          given { build: beta, userId: "u" }
          expect banner == none
        }

        """

    @Test func theLifecycleFollowsTheProtocol() async throws {
        try await offThePool {
            let early = try LSPClient(initialize: false)
            let refused = try early.request("textDocument/hover", at(Self.uri, 0, 0))
            #expect(refused["error"]?["code"] == .int(-32002))
            let initialized = try early.request("initialize", .object([("capabilities", .object([]))]))
            let capabilities = try #require(initialized["result"]?["capabilities"])
            #expect(capabilities["positionEncoding"] == .string("utf-16"))
            #expect(capabilities["textDocumentSync"]?["change"] == .int(1))
            #expect(try early.request("no/such/method")["error"]?["code"] == .int(-32601))
            #expect(try early.request("shutdown") == .object([("jsonrpc", .string("2.0")), ("id", .int(4)), ("result", .null)]))
            #expect(try early.request("textDocument/hover", at(Self.uri, 0, 0))["error"]?["code"] == .int(-32600))
            early.notify("exit", .null)
            #expect(early.finish() == 0)

            // Exit without shutdown is status 1; so is the input ending.
            let abrupt = try LSPClient()
            abrupt.notify("exit", .null)
            #expect(abrupt.finish() == 1)
            #expect(try LSPClient().finish() == 1)

            let offered = try LSPClient(initialize: false)
            let answer = try offered.request(
                "initialize",
                .object([("capabilities", .object([("general", .object([("positionEncodings", .array([.string("utf-32")]))]))]))]))
            #expect(answer["result"]?["capabilities"]?["positionEncoding"] == .string("utf-32"))
        }
    }

    @Test func malformedMessagesAreAnsweredNotFatal() async throws {
        try await offThePool {
            let client = try LSPClient()
            // A body that is not JSON: a parse error with a null id, and the server goes on.
            let body = Array("{\"jsonrpc\": \"2.0\", \"id\": 9, ".utf8)
            client.sendRaw(Array("Content-Length: \(body.count)\r\n\r\n".utf8) + body)
            let parseError = try client.message { $0["error"]?["code"] == .int(-32700) }
            #expect(parseError["id"] == .null)
            // Not a message, or a request of a document never opened.
            client.send(.string("not a request"))
            let error = try client.request("textDocument/hover", at("file:///nowhere.flags", 0, 0))
            #expect(error["error"]?["code"] == .int(-32602))
            #expect(try client.request("shutdown")["result"] == .null)
        }
    }

    @Test func diagnosticsFollowEveryChangeAndClearWhenFixed() async throws {
        try await offThePool {
            let client = try LSPClient()
            let broken = Self.rules.replacingOccurrences(of: "build == beta and", with: "biuld == beta and")
            client.open(Self.uri, broken)
            let found = try client.diagnostics(Self.uri)
            #expect(
                found == [
                    .object([
                        ("range", range(7, 29, 7, 34)), ("severity", .int(1)), ("code", .string("unknown-name")),
                        ("source", .string("flags")), ("message", .string("unknown name 'biuld'; did you mean 'build'?")),
                    ])
                ])
            // The quick fix for the "did you mean".
            let actions = try client.result(
                "textDocument/codeAction",
                .object([
                    ("textDocument", .object([("uri", .string(Self.uri))])), ("range", range(7, 30, 7, 30)),
                    ("context", .object([("diagnostics", .array(found))])),
                ]))
            #expect(actions.elements?.count == 1)
            #expect(actions.elements?.first?["title"] == .string("replace 'biuld' with 'build'"))
            #expect(
                actions.elements?.first?["edit"]
                    == .object([
                        (
                            "changes",
                            .object([(Self.uri, .array([.object([("range", range(7, 29, 7, 34)), ("newText", .string("build"))])]))])
                        )
                    ]))
            client.change(Self.uri, Self.rules, version: 2)
            #expect(try client.diagnostics(Self.uri) == [])
            // A duplicate: the other place as related information.
            client.change(Self.uri, Self.rules + "flag darkMode = true\n", version: 3)
            let duplicate = try #require(try client.diagnostics(Self.uri).first)
            #expect(duplicate["code"] == .string("duplicate-name"))
            #expect(duplicate["relatedInformation"]?.elements?.first?["location"]?["range"] == range(7, 5, 7, 13))
            // Lints are warnings with their codes.
            client.change(Self.uri, Self.rules + "segment unused = build == debug\n", version: 4)
            let lint = try #require(try client.diagnostics(Self.uri).first)
            #expect(lint["code"] == .string("FR106") && lint["severity"] == .int(2))
            // Closing clears them.
            client.notify("textDocument/didClose", document(Self.uri))
            #expect(try client.diagnostics(Self.uri) == [])
        }
    }

    @Test func hoverDescribesDeclarationsAttributesAndBucketing() async throws {
        try await offThePool {
            let client = try LSPClient()
            client.open(Self.uri, Self.rules)
            func hover(_ line: Int, _ character: Int) throws -> String? {
                try client.result("textDocument/hover", at(Self.uri, line, character))["contents"]?["value"]?.string
            }
            #expect(
                try hover(10, 14)
                    == "```flags\nflag darkMode = false\n```\n\n1 rule · owner: ios · expires: 2099-01-01\n\nDark mode for beta testers.")
            #expect(try hover(7, 31) == "```flags\nbuild: enum(debug, beta, release)\n```\ncontext attribute")
            #expect(try hover(7, 52)?.hasPrefix("`rollout(unit[, \"salt\"])`: the unit's bucket") == true)
            #expect(try hover(9, 9)?.hasPrefix("```flags\nvariant banner [none, small] = none\n```") == true)
            #expect(try client.result("textDocument/hover", at(Self.uri, 4, 0)) == .null)
        }
    }

    /// Hover on `any`, `all` and `fallback` gives their help.
    @Test func hoverExplainsQuantifiersAndFallback() async throws {
        try await offThePool {
            let client = try LSPClient()
            client.open(Self.uri, "flag f {\n  fallback when any(tags) == \"x\" or all(tags) == \"y\"\n}\n")
            func hover(_ line: Int, _ character: Int) throws -> String? {
                try client.result("textDocument/hover", at(Self.uri, line, character))["contents"]?["value"]?.string
            }
            #expect(try hover(1, 3)?.hasPrefix("`fallback`: a rule (or a split's entry) giving the caller's default") == true)
            #expect(try hover(1, 17)?.hasPrefix("`any(list) OP x`: the comparison tried on each element") == true)
            #expect(try hover(1, 38)?.hasPrefix("`all(list) OP x`") == true)
        }
    }

    @Test func completionKnowsWhereItIs() async throws {
        try await offThePool {
            let client = try LSPClient()
            let text = """
                context {
                  build  : enum(debug, beta, release)
                  userId : string
                  groups : [enum(qa, staff)]
                }
                flag f { enabled when build == beta }
                variant v [a, b] = a {
                  b when build in [debug, beta]
                }
                test "t" {
                  given { build: beta }
                  expect v == b
                }

                """
            client.open(Self.uri, text)
            func labels(_ line: Int, _ character: Int) throws -> [String] {
                try client.result("textDocument/completion", at(Self.uri, line, character))["items"]?.elements?.compactMap {
                    $0["label"]?.string
                } ?? []
            }
            #expect(try labels(13, 0) == ["flag", "variant", "value", "segment", "context", "test"])
            #expect(try labels(5, 31) == ["debug", "beta", "release"])
            #expect(try labels(7, 19) == ["debug", "beta", "release"])
            #expect(try labels(7, 26) == ["debug", "beta", "release"])
            #expect(try labels(7, 2) == ["a", "b", "split", "fallback"])
            #expect(
                try labels(5, 22) == [
                    "build", "userId", "groups", "v", "has", "rollout", "count", "lower", "version", "datetime", "ramp", "any", "all",
                    "now", "not",
                ])
            #expect(try labels(10, 10) == ["build", "userId", "groups", "now"])
            #expect(try labels(10, 17) == ["debug", "beta", "release"])
            #expect(try labels(11, 9) == ["f", "v", "not"])
            #expect(try labels(11, 14) == ["a", "b"])
            #expect(try labels(11, 2) == ["given", "expect"])
            #expect(try labels(2, 11) == ["string", "int", "double", "bool", "version", "datetime", "ip", "enum"])
        }
    }

    /// Through the process, as an editor types: the cursor at the end of each line, with
    /// the document changed keystroke by keystroke as Neovim sends it (a full-text change
    /// each time), completion asked after each.
    @Test func completionAtTheEndOfALineWhileTyping() async throws {
        try await offThePool {
            let client = try LSPClient()
            let schema = """
                context {
                  tier   : enum(free, pro, premium)
                  groups : [enum(qa, staff)]
                }
                flag other = true

                """
            let tiers = ["free", "pro", "premium"]
            let expression = [
                "tier", "groups", "other", "has", "rollout", "count", "lower", "version", "datetime", "ramp", "any", "all", "now", "not",
            ]
            let cases: [(String, [String])] = [
                ("flag f {\n  enabled when ", expression), ("flag f {\n  enabled when tier == ", tiers),
                ("flag f {\n  enabled when tier in [", tiers), ("flag f {\n  enabled when other and ", expression),
                ("flag f {\n  enabled when rollout(", expression), ("flag f {\n  enabled when groups contains any [", ["qa", "staff"]),
                ("test \"t\" {\n  expect ", ["other", "not"]), ("test \"t\" {\n  given { tier: ", tiers),
                ("context {\n  plan : ", ["string", "int", "double", "bool", "version", "datetime", "ip", "enum"]),
            ]
            var version = 1
            client.open(Self.uri, schema)
            for (typed, expected) in cases {
                let text = schema + typed
                // Typed a character at a time: each prefix sent as the whole text.
                for count in (text.count - 3)...text.count {
                    version += 1
                    client.change(Self.uri, String(text.prefix(count)) + "\n}\n", version: version)
                }
                let line = text.split(separator: "\n", omittingEmptySubsequences: false).count - 1
                let character = text.split(separator: "\n", omittingEmptySubsequences: false).last!.utf16.count
                let labels = try client.result("textDocument/completion", at(Self.uri, line, character))["items"]?.elements?.compactMap {
                    $0["label"]?.string
                }
                #expect(labels == expected, "\(typed)‸")
            }
        }
    }

    @Test func definitionReferencesAndRenameCoverTestsToo() async throws {
        try await offThePool {
            let client = try LSPClient()
            client.open(Self.uri, Self.rules)
            let definition = try client.result("textDocument/definition", at(Self.uri, 10, 15))
            #expect(definition == .object([("uri", .string(Self.uri)), ("range", range(7, 5, 7, 13))]))
            let attribute = try client.result("textDocument/definition", at(Self.uri, 14, 12))
            #expect(attribute["range"] == range(1, 2, 1, 7))
            let references = try client.result(
                "textDocument/references", at(Self.uri, 1, 3, [("context", .object([("includeDeclaration", .bool(true))]))]))
            #expect(references.elements?.compactMap { $0["range"] } == [range(1, 2, 1, 7), range(7, 29, 7, 34), range(14, 10, 14, 15)])
            #expect(try client.result("textDocument/prepareRename", at(Self.uri, 9, 10)) == range(9, 8, 9, 14))
            let rename = try client.result("textDocument/rename", at(Self.uri, 9, 10, [("newName", .string("promo"))]))
            #expect(
                rename["changes"]?[Self.uri]?.elements?.compactMap { $0["range"] } == [range(9, 8, 9, 14), range(15, 9, 15, 15)])
            let taken = try client.request("textDocument/rename", at(Self.uri, 9, 10, [("newName", .string("darkMode"))]))
            #expect(taken["error"]?["message"] == .string("'darkMode' is already declared in this file"))
            let invalid = try client.request("textDocument/rename", at(Self.uri, 9, 10, [("newName", .string("a.b"))]))
            #expect(invalid["error"]?["code"] == .int(-32602))
            #expect(try client.result("textDocument/prepareRename", at(Self.uri, 4, 0)) == .null)
        }
    }

    @Test func theOutlineFormattingAndSemanticTokens() async throws {
        try await offThePool {
            let client = try LSPClient()
            let text = "context { on: bool }\nflag  f {enabled when on}\n"
            client.open(Self.uri, text)
            let symbols = try client.result("textDocument/documentSymbol", document(Self.uri))
            #expect(symbols.elements?.compactMap { $0["name"]?.string } == ["context", "f"])
            #expect(symbols.elements?.first?["children"]?.elements?.first?["detail"] == .string("bool"))
            let formatting = try client.result(
                "textDocument/formatting",
                .object([
                    ("textDocument", .object([("uri", .string(Self.uri))])),
                    ("options", .object([("tabSize", .int(2)), ("insertSpaces", .bool(true))])),
                ]))
            #expect(
                formatting
                    == .array([
                        .object([
                            ("range", range(0, 0, 2, 0)), ("newText", .string("context {\n  on : bool\n}\nflag f { enabled when on }\n")),
                        ])
                    ]))
            let tokens = try client.result("textDocument/semanticTokens/full", document(Self.uri))
            // context(keyword) on(property, declaration) bool(type) / flag(keyword) f(variable,
            // declaration) enabled(keyword) when(keyword) on(property)
            #expect(
                tokens["data"]?.elements?.compactMap(\.integer) == [
                    0, 0, 7, 0, 0, 0, 10, 2, 2, 1, 0, 4, 4, 8, 0, 1, 0, 4, 0, 0, 0, 6, 1, 1, 1, 0, 3, 7, 0, 0, 0, 8, 4, 0, 0, 0, 5, 2, 2, 0,
                ])
        }
    }

    @Test func lensesRunTestsAndShowValuesForTheSidecarContext() async throws {
        try await offThePool {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flags-lsp-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            try #"{"build": "beta", "userId": "u"}"#.write(
                to: directory.appendingPathComponent(".flags-context.json"), atomically: true, encoding: .utf8)
            let uri = directory.appendingPathComponent("rules.flags").absoluteString
            let client = try LSPClient()
            client.open(uri, Self.rules)
            _ = try client.diagnostics(uri)
            let lenses = try client.result("textDocument/codeLens", document(uri))
            #expect(
                lenses.elements?.compactMap { $0["command"]?["title"]?.string } == [
                    "= true  (TARGETING_MATCH, rule 1, line 8)", "= small  (TARGETING_MATCH, rule 1, line 11)", "▶ run test",
                ])
            let run = try client.result(
                "workspace/executeCommand",
                .object([("command", .string("flags.runTest")), ("arguments", .array([.string(uri), .string("beta")]))]))
            #expect(run["passed"] == .bool(false))
            #expect(run["failures"]?.elements?.first?["actual"] == .string("banner = small  (TARGETING_MATCH, rule 1, line 11)"))
            let failed = try client.diagnostics(uri)
            #expect(failed.map { $0["code"] } == [.string("test-failed")])
            #expect(failed.first?["range"] == range(15, 2, 15, 23))
            let after = try client.result("textDocument/codeLens", document(uri))
            #expect(after.elements?.last?["command"]?["title"] == .string("✗ failed: run again"))
        }
    }

    @Test func inlayHintsShowARampsValueNow() async throws {
        try await offThePool {
            let client = try LSPClient()
            client.open(
                Self.uri,
                """
                context { userId: string }
                flag f { enabled when rollout(userId) < ramp("2020-01-01", "2020-02-01", 5%, 50%) }  # flags:ignore FR109
                flag g { enabled when rollout(userId) < ramp("2090-01-01", "2090-02-01", 5%, 50%) }

                """)
            let hints = try client.result(
                "textDocument/inlayHint", .object([("textDocument", .object([("uri", .string(Self.uri))])), ("range", range(0, 0, 4, 0))]))
            #expect(hints.elements?.compactMap { $0["label"]?.string } == [" = 50.0% now", " = 5.0% now"])
            #expect(hints.elements?.first?["position"] == .object([("line", .int(1)), ("character", .int(81))]))
        }
    }

    /// Positions count UTF-16 code units by default, Unicode scalars when the client asks.
    @Test func positionsCountTheNegotiatedUnits() async throws {
        try await offThePool {
            let text = "context { nev: string }\nflag f { enabled when nev == \"😀\" or nev == \"b\" and nevv }\n"
            for (encodings, start) in [(nil, 52), (["utf-32"], 51)] as [([String]?, Int)] {
                let client = try LSPClient(encodings: encodings)
                client.open(Self.uri, text)
                let d = try #require(try client.diagnostics(Self.uri).first)
                #expect(d["range"] == range(1, start, 1, start + 4), "\(encodings ?? [])")
                let hover = try client.result("textDocument/hover", at(Self.uri, 1, start - 14))
                #expect(hover["range"] == range(1, start - 15, 1, start - 12))
            }
        }
    }

    @Test func aHalfTypedDocumentAnswersEveryRequest() async throws {
        try await offThePool {
            let client = try LSPClient()
            let text =
                "context { build: enum(debug, beta)\nflag f { enabled when build == \nvariant v [a, b] = a {\n  b when\ntest \"x\" { given { build: "
            client.open(Self.uri, text)
            #expect(!(try client.diagnostics(Self.uri)).isEmpty)
            for method in [
                "textDocument/hover", "textDocument/completion", "textDocument/definition", "textDocument/references",
                "textDocument/documentSymbol", "textDocument/formatting", "textDocument/semanticTokens/full", "textDocument/codeLens",
                "textDocument/inlayHint", "textDocument/prepareRename",
            ] {
                for (line, character) in [(0, 0), (1, 30), (3, 7), (4, 25), (9, 99)] {
                    let response = try client.request(method, at(Self.uri, line, character))
                    #expect(response["result"] != nil, "\(method) \(line):\(character): \(response)")
                }
            }
        }
    }

    /// Random edits and requests at random positions of the examples: every request gets
    /// its answer and the server stays up.
    @Test(slowTests) func randomEditsAndRequestsAreAllAnswered() throws {
        var random = SeededGenerator(seed: 2026)
        let client = try LSPClient()
        let methods = [
            "textDocument/hover", "textDocument/completion", "textDocument/definition", "textDocument/references",
            "textDocument/documentSymbol", "textDocument/formatting", "textDocument/semanticTokens/full", "textDocument/codeLens",
            "textDocument/inlayHint", "textDocument/prepareRename", "textDocument/codeAction",
        ]
        let files = ["app", "checkout", "service", "targeting"]
        var version = 1
        for file in files {
            var text = try String(contentsOf: packageRoot.appendingPathComponent("examples/\(file).flags"), encoding: .utf8)
            let uri = "file:///fuzz/\(file).flags"
            client.open(uri, text)
            for _ in 0..<60 {
                var scalars = Array(text.unicodeScalars)
                let start = Int.random(in: 0...scalars.count, using: &random)
                let length = Int.random(in: 0...min(12, scalars.count - start), using: &random)
                let pieces = ["", "{", "}", "\"", "when ", "[", "]", "==", "😀", "\n", "split(", "rollout(userId) < 5%", "#", "given {"]
                scalars.replaceSubrange(
                    start..<(start + length), with: pieces[Int.random(in: 0..<pieces.count, using: &random)].unicodeScalars)
                text = String(String.UnicodeScalarView(scalars))
                version += 1
                client.change(uri, text, version: version)
                let method = methods[Int.random(in: 0..<methods.count, using: &random)]
                let line = Int.random(in: 0...80, using: &random)
                let character = Int.random(in: 0...60, using: &random)
                var params = at(uri, line, character, [("newName", .string("renamed"))])
                if method == "textDocument/codeAction" {
                    params = .object([
                        ("textDocument", .object([("uri", .string(uri))])), ("range", range(line, 0, line, character)),
                        ("context", .object([("diagnostics", .array([]))])),
                    ])
                }
                let response = try client.request(method, params)
                #expect(response["result"] != nil, "\(method) at \(line):\(character) of \(file): \(response)")
            }
        }
        #expect(try client.request("shutdown")["result"] == .null)
        client.notify("exit", .null)
        #expect(client.finish() == 0)
    }
}
