import FlagRules
import FlagRulesTooling
import Foundation

/// `flags diff OLD NEW`: the share of contexts whose resolutions a rules change moves.
enum DiffCommand {
    static let help = """
        usage: flags diff OLD NEW [--contexts FILE.jsonl] [--sample N] [--seed S] [--json]
                                  [--max-change PCT]

        Resolves every declaration of both files against the same contexts and prints, for
        each one whose resolutions change, the share of contexts that change and from what
        to what; then the declarations added and removed and the schema changes:

          checkout: 12.4 % of 10,000 contexts change
            control → oneStep  12.4 %
          added: flag newSearch
          schema: added plan: enum(free, pro)

        A resolution changes when its value (a variant's name) does; a different deciding
        rule with the same value is no change. Without --contexts, the contexts are
        generated from both files: every enum case, values on either side of every literal
        (numbers, versions, dates, prefixes, addresses at the edges of every block) and a
        fresh random id for every rollout and split unit, so that rollouts and splits are
        sampled in proportion. The same files and seed give the same figures.

        options:
          --contexts FILE   real contexts, one JSON object a line (blank lines skipped)
          --sample N        how many contexts to generate (default 10000); with --contexts,
                            a random sample of N of its lines
          --seed S          the seed of the generated or sampled contexts (default 0)
          --json            print the report as one JSON object
          --max-change PCT  exit 1 when a declaration changes for more than PCT percent of
                            the contexts (5, 5% or 0.5): a gate for CI
          --help            show this help

        exit status: 0 compared (within --max-change), 1 a file has errors or a declaration
        changes more than --max-change, 2 usage error (bad option, unreadable contexts)

        """

    /// The most contexts one run evaluates.
    static let maxSample = 1_000_000
    /// The largest contexts file read.
    static let maxContextsFileSize = 256 << 20

    static func run(_ arguments: [String]) throws(UsageError) -> Int32 {
        let parsed = try ParsedArguments(
            arguments,
            specs: [
                OptionSpec(name: "help", short: "h"), OptionSpec(name: "contexts", takesValue: true),
                OptionSpec(name: "sample", takesValue: true), OptionSpec(name: "seed", takesValue: true), OptionSpec(name: "json"),
                OptionSpec(name: "max-change", takesValue: true),
            ], command: "diff")
        if parsed.has("help") {
            Terminal.write(help)
            return 0
        }
        guard parsed.positionals.count == 2 else {
            throw UsageError(
                message: parsed.positionals.count < 2
                    ? "'diff' needs the old and the new file" : "'diff' compares two files, got \(parsed.positionals.count)",
                help: "flags diff old.flags new.flags")
        }
        if parsed.positionals.allSatisfy({ $0 == "-" }) {
            throw UsageError(message: "the old and the new rules cannot both come from standard input")
        }
        let sample = try parsed.value("sample").map { text throws(UsageError) -> Int in
            guard let n = Int(text), n >= 1, n <= maxSample else {
                throw UsageError(message: "--sample takes a count from 1 to \(maxSample), got '\(text)'", help: "--sample 10000")
            }
            return n
        }
        let seed = try parsed.value("seed").map { text throws(UsageError) -> UInt64 in
            guard let s = UInt64(text) else {
                throw UsageError(message: "--seed takes a whole number from 0, got '\(text)'", help: "--seed 7")
            }
            return s
        }
        let maxChange = try parsed.value("max-change").map { text throws(UsageError) -> Double in
            let digits = text.hasSuffix("%") ? String(text.dropLast()) : text
            guard let p = Double(digits), p.isFinite, p >= 0, p <= 100 else {
                throw UsageError(message: "--max-change takes a percentage from 0 to 100, got '\(text)'", help: "--max-change 5%")
            }
            return p
        }
        if let path = parsed.value("contexts"), path == "-", parsed.positionals.contains("-") {
            throw UsageError(message: "the rules and the contexts cannot both come from standard input")
        }
        let old = try Terminal.loadRules(parsed.positionals[0])
        let new = try Terminal.loadRules(parsed.positionals[1])
        guard let old, let new else { return 1 }

        let contexts: [EvaluationContext]
        if let path = parsed.value("contexts") {
            var all = try readContexts(path)
            guard !all.isEmpty else {
                throw UsageError(message: "\(path) holds no contexts", help: "write one JSON object a line: {\"userId\": \"u-1\"}")
            }
            if let sample, sample < all.count {
                var random = SeededGenerator(seed: seed ?? 0)
                all.shuffle(using: &random)
                all.removeSubrange(sample...)
            }
            contexts = all
        } else {
            contexts = ContextSampler([old, new]).contexts(count: sample ?? 10_000, seed: seed ?? 0)
        }
        let report = Impact.measure(from: old, to: new, contexts: contexts)
        Terminal.write(parsed.has("json") ? report.json.serialized(pretty: true) + "\n" : report.text)
        if let maxChange {
            let over = report.exceeding(percent: maxChange)
            for c in over {
                Terminal.writeError(
                    "flags: \(c.name) changes for \(ImpactReport.percent(report.share(c))) of the contexts, more than --max-change \(maxChange == maxChange.rounded() ? String(Int(maxChange)) : String(maxChange)) %\n"
                )
            }
            if !over.isEmpty { return 1 }
        }
        return 0
    }

    /// The contexts of a JSON Lines file, or an error naming the line that is not one.
    static func readContexts(_ path: String) throws(UsageError) -> [EvaluationContext] {
        let bytes: [UInt8]
        if path == "-" {
            bytes = try Terminal.read(path)
        } else {
            guard let handle = FileHandle(forReadingAtPath: path) else {
                throw UsageError(message: FileManager.default.fileExists(atPath: path) ? "cannot read \(path)" : "no such file: \(path)")
            }
            defer { try? handle.close() }
            let data = handle.readData(ofLength: maxContextsFileSize + 1)
            guard data.count <= maxContextsFileSize else {
                throw UsageError(
                    message: "\(path) is larger than \(maxContextsFileSize) bytes", help: "sample it first, or pass fewer lines")
            }
            bytes = Array(data)
        }
        var contexts: [EvaluationContext] = []
        var lineNumber = 0
        for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            let text = String(decoding: line, as: UTF8.self)
            if text.allSatisfy(\.isWhitespace) { continue }
            guard contexts.count < maxSample else {
                throw UsageError(message: "\(path) holds more than \(maxSample) contexts", help: "pass --sample N to draw fewer")
            }
            do {
                contexts.append(try EvaluationContext(json: text))
            } catch {
                throw UsageError(
                    message: "\(path):\(lineNumber): \(error.message)",
                    help: "each line of --contexts is one JSON object, such as {\"userId\": \"u-1\"}")
            }
        }
        return contexts
    }
}
