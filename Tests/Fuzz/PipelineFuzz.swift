// libFuzzer target: the whole pipeline. Any bytes are loaded as a rules file; when they
// compile, every declaration is evaluated against contexts drawn from the input (the plain
// and prepared paths must agree, and so must the explainer), and the file is formatted and
// loaded again (formatting is idempotent and keeps every resolution).
// Built with the library's sources and the other
// targets as one module: Tests/Fuzz/run.sh.
import Foundation

/// One input, 0 when it is done with it (a finding traps); called by `FuzzMain.swift`.
func pipelineFuzzTest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let source = SourceText(bytes: bytes, name: "fuzz.flags")
    let today = Date(timeIntervalSince1970: 1_800_000_000)
    let rules: RuleSet
    do {
        rules = try RuleSet(source: source, today: today)
    } catch {
        precondition(!error.errors.isEmpty, "a failed load without an error")
        precondition(error.errors.count <= Diagnostic.errorLimit + 1, "more errors than the limit")
        return 0
    }
    let contexts = PipelineFuzz.contexts(for: rules, from: bytes)
    let names = rules.declarations.map(\.name)
    var resolutions: [[Resolution]] = []
    for context in contexts {
        let prepared = rules.prepare(context)
        var row: [Resolution] = []
        for name in names {
            let plain = rules.evaluate(name, in: context)
            let handle = rules.handle(name)
            if handle.index < 0 { fatalError("no declaration for \(name)") }
            let fast = rules.evaluate(handle, in: prepared)
            if plain != fast { fatalError("plain and prepared disagree on \(name) in \(context): \(plain) vs \(fast)") }
            row.append(plain)
        }
        if let first = names.first, let explained = rules.explain(first, in: context)?.resolution, explained != row[0] {
            fatalError("the explainer disagrees on \(first) in \(context): \(explained) vs \(row[0])")
        }
        resolutions.append(row)
    }
    let formatted: String
    do {
        formatted = try FlagsFormatter.format(source)
    } catch {
        fatalError("a file that loads does not format: \(error)")
    }
    guard
        let again = try? RuleSet(source: SourceText(formatted, name: "formatted.flags"), today: Date(timeIntervalSince1970: 1_800_000_000))
    else {
        fatalError("the formatted file does not load:\n\(formatted)")
    }
    if (try? FlagsFormatter.format(formatted)) != formatted { fatalError("formatting is not idempotent:\n\(formatted)") }
    for (k, context) in contexts.enumerated() {
        for (n, name) in names.enumerated() where again.evaluate(name, in: context) != resolutions[k][n] {
            // Rule lines move when formatting; compare without them.
            var a = again.evaluate(name, in: context), b = resolutions[k][n]
            a.line = nil
            b.line = nil
            if a != b { fatalError("formatting changed \(name) in \(context): \(b) became \(a)") }
        }
    }
    return 0
}

enum PipelineFuzz {
    /// A few contexts for the rule set's attributes (the schema's, fields by their paths,
    /// else the names and paths the input spells), with values drawn from the input's
    /// bytes: a path's value goes into its objects (or replaces a value that is not one).
    static func contexts(for rules: RuleSet, from bytes: [UInt8]) -> [EvaluationContext] {
        let names = rules.schema?.attributes.map(\.name) ?? words(in: bytes)
        var seed = UInt64(bytes.count)
        for b in bytes.prefix(64) { seed = seed &* 31 &+ UInt64(b) }
        var contexts: [EvaluationContext] = [[:]]
        for _ in 0..<3 {
            var c = EvaluationContext()
            for name in names.prefix(16) {
                seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let pick = Int(seed >> 33)
                let words = self.words(in: bytes)
                switch pick % 10 {
                case 0: continue
                case 7:
                    c.set(.list((0..<(pick % 4)).map { k in .string(words.isEmpty ? "x" : words[(pick + k) % words.count]) }), atPath: name)
                case 8: c.set(.list((0..<(pick % 4)).map { k in .int(pick % 7 + k) }), atPath: name)
                case 9: c.set(.string(["10.1.2.3", "::ffff:10.1.2.3", "2001:db8::1", "010.1.1.1", "::1"][pick % 5]), atPath: name)
                case 1: c.set(.int(pick % 200 - 100), atPath: name)
                case 2: c.set(.double(Double(pick % 1000) / 10), atPath: name)
                case 3: c.set(.bool(pick % 2 == 0), atPath: name)
                case 4: c.set(.string(words.isEmpty ? "x" : words[pick % words.count]), atPath: name)
                case 5: c.set(.string("\(pick % 4).\(pick % 11).\(pick % 3)"), atPath: name)
                default: c.set(.string("2026-0\(1 + pick % 9)-1\(pick % 10)"), atPath: name)
                }
            }
            contexts.append(c)
        }
        return contexts
    }

    /// The identifiers the input spells, in order, without repeats.
    static func words(in bytes: [UInt8]) -> [String] {
        var out: [String] = []
        var seen = Set<String>()
        var current: [UInt8] = []
        for b in bytes + [0x20] {
            // A dot joins the names of a path (`org.plan`); a word ends at any other byte.
            let isWord =
                (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || (b >= 0x30 && b <= 0x39) || b == 0x5F
                || (b == 0x2E && !current.isEmpty)
            if isWord {
                current.append(b)
            } else if !current.isEmpty {
                let w = String(decoding: current, as: UTF8.self)
                if seen.insert(w).inserted { out.append(w) }
                current = []
                if out.count >= 32 { break }
            }
        }
        return out
    }
}
