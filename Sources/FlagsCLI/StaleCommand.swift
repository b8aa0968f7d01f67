import FlagRules
import FlagRulesTooling
import Foundation

/// `flags stale RULES... [--source DIR...]`: the declarations that are done, each with the
/// edit that removes it.
enum StaleCommand {
    static let help = """
        usage: flags stale FILE|DIR... [--source DIR...] [--metrics URL|FILE [--days N]]
                                       [--today YYYY-MM-DD] [--json]

        Lists the declarations that are done, each with why and the edit that removes it:
        expired (@expires has passed), @disabled, one value whatever the context (a flag
        without rules, or every rule giving the default), a rollout at 100% or 0%, a ramp
        that has ended; with --source, read by no code; with --metrics, served one value to
        everyone, or not evaluated at all, in the last N days. The edit names the lines to
        remove, the value to write where the declaration is read, and every reader: the
        declarations that read it and the code that does (as 'flags refs' finds it).

        options:
          --source DIR...  source code to search for reads: every argument after it up to
                           the next option (see 'flags refs')
          --metrics WHERE  the metrics of a 'flags serve' that serves these rules: its URL
                           (http://host:8016/metrics) or a file saved from it; judged only
                           when it has counted for the whole window
          --days N         the window --metrics judges (default 30)
          --metrics-key K  the API key the server asks for (X-API-Key)
          --today DATE     judge @expires, ramps and the window on this day (default: now)
          --json           print a JSON array, one object a declaration
          --help           show this help

        exit status: 0 listed (done declarations are not errors), 1 errors in the rules,
        2 usage error

        """

    static func run(_ arguments: [String]) throws(UsageError) -> Int32 {
        let parsed = try ParsedArguments(
            arguments,
            specs: [
                OptionSpec(name: "help", short: "h"), OptionSpec(name: "source", takesValue: true, repeatable: true, takesSeveral: true),
                OptionSpec(name: "today", takesValue: true), OptionSpec(name: "json"),
                OptionSpec(name: "metrics", takesValue: true), OptionSpec(name: "days", takesValue: true),
                OptionSpec(name: "metrics-key", takesValue: true),
            ], command: "stale")
        if parsed.has("help") {
            Terminal.write(help)
            return 0
        }
        guard !parsed.positionals.isEmpty else {
            throw UsageError(message: "'stale' needs a rules file", help: "flags stale examples/ --source Sources/")
        }
        var today = Date()
        if let text = parsed.value("today") {
            guard text.count == 10, let day = DateTime.parseDate(text) else {
                throw UsageError(message: "--today takes a day as YYYY-MM-DD, got '\(text)'")
            }
            today = day
        }
        var days = 30
        if let text = parsed.value("days") {
            guard let n = Int(text), (1...3_650).contains(n) else {
                throw UsageError(message: "--days takes a whole number of days from 1 to 3650, got '\(text)'")
            }
            guard parsed.value("metrics") != nil else { throw UsageError(message: "--days is the window of --metrics, which is missing") }
            days = n
        }
        let sources = parsed.all("source")
        try Terminal.checkExists(sources)
        var served: ServedValues?
        if let place = parsed.value("metrics") {
            guard let read = readMetrics(place, key: parsed.value("metrics-key")) else { return 1 }
            served = read
            // Metrics younger than the window judge nothing yet: say so, and from when.
            let windowStart = today.addingTimeInterval(-Double(days) * 86_400)
            if read.since > windowStart {
                let from = DateTime.format(read.since.addingTimeInterval(Double(days) * 86_400)).prefix(10)
                Terminal.writeError(
                    "flags: note: the metrics have counted since \(DateTime.format(read.since).prefix(10)), less than the \(days) days "
                        + "--days judges: no declaration is judged by them until \(from) (or give a shorter --days)\n")
            }
        }
        guard let loaded = try Terminal.loadAll(parsed.positionals) else { return 1 }
        var code: [CodeReference]?
        if !sources.isEmpty {
            code = RefsCommand.find(loaded, in: CodeScanner.files(under: sources)).declarations.flatMap(\.references)
        }
        let stale = loaded.flatMap { file, rules in
            rules.staleDeclarations(today: today, code: code, served: served, days: days).map { (file, $0) }
        }
        if parsed.has("json") {
            Terminal.write(JSON.array(stale.map(json)).serialized(pretty: true) + "\n")
        } else {
            for (file, s) in stale {
                Terminal.write("\(file):\(s.line): \(s.kind.rawValue) \(s.name)\n")
                for reason in s.reasons { Terminal.write("  - \(reason.detail)\n") }
                Terminal.write("  fix: \(s.fix)\n")
            }
            Terminal.write("\(stale.count) done declaration\(stale.count == 1 ? "" : "s")\n")
        }
        return 0
    }

    /// The served values in `place`, a metrics URL or a file; nil (the error written) when
    /// it cannot be read.
    static func readMetrics(_ place: String, key: String?) -> ServedValues? {
        let text: String
        if place.hasPrefix("http://") || place.hasPrefix("https://") {
            guard let url = URL(string: place) else {
                Terminal.writeError("error: --metrics: '\(place)' is not a URL\n")
                return nil
            }
            switch HTTPGet.text(url, headers: key.map { ["X-API-Key": $0] } ?? [:]) {
            case .success(let body): text = body
            case .failure(let problem):
                Terminal.writeError("error: --metrics: \(place): \(problem.message)\n")
                return nil
            }
        } else {
            guard let data = FileManager.default.contents(atPath: place) else {
                Terminal.writeError("error: --metrics: cannot read '\(place)' (give a file saved from GET /metrics, or its URL)\n")
                return nil
            }
            text = String(decoding: data, as: UTF8.self)
        }
        do {
            return try ServedValues(metrics: text)
        } catch {
            Terminal.writeError("error: --metrics: \(place): \(error.message)\n")
            return nil
        }
    }

    static func json(_ item: (file: String, stale: StaleDeclaration)) -> JSON {
        let s = item.stale
        var fix: [(String, JSON)] = [("removeLines", .array([.int(s.startLine), .int(s.endLine)]))]
        if let value = s.value { fix.append(("value", value.json)) }
        fix.append(
            (
                "readers",
                .array(s.readers.map { .object([("kind", .string($0.kind)), ("place", .string($0.place)), ("line", .int($0.line))]) })
            ))
        fix.append(("text", .string(s.fix)))
        return .object([
            ("name", .string(s.name)), ("kind", .string(s.kind.rawValue)), ("file", .string(item.file)), ("line", .int(s.line)),
            ("reasons", .array(s.reasons.map { .object([("code", .string($0.code)), ("detail", .string($0.detail))]) })),
            ("fix", .object(fix)),
        ])
    }
}
