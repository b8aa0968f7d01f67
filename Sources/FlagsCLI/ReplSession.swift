import FlagRules
import FlagRulesTooling
import Foundation

/// What the REPL does with each line, independent of the terminal: expressions, names and
/// `:commands` in, results (stdout) and errors (stderr) out.
struct ReplSession {
    struct Output {
        var stdout = ""
        var stderr = ""
        var quit = false
    }

    static let commands = [":set", ":unset", ":context", ":load", ":reload", ":explain", ":list", ":help", ":quit"]

    static let help = """
        Type an expression (build == alpha and rollout(userId, "darkMode") < 20%) or a
        declaration's name to see its value.
          :set key=value    set a context attribute (typed by the file's schema), or a
                            field by its path: :set org.plan=team (or :set org.plan team)
          :unset key        remove it
          :context          show the context
          :load FILE        load rules from a file
          :reload           load the same file again
          :explain EXPR     every step of an expression or a declaration
          :list             the declarations
          :help             this help
          :quit             leave (or Ctrl-D)

        """

    var rules: RuleSet
    var path: String?
    var context = EvaluationContext()
    /// The lines read so far: an error names the line it came from (`<repl>:3:14`).
    var lineNumber = 0
    /// Whether any line has failed (a piped session then exits 1).
    var anyFailed = false
    /// Whether diagnostics are coloured (on a terminal, without `NO_COLOR`).
    var colored = false

    init(path: String?) throws(UsageError) {
        self.path = path
        rules = try ReplSession.emptyRules()
        if let path {
            var out = Output()
            load(path, into: &out)
            if !out.stderr.isEmpty {
                Terminal.writeError(out.stderr)
                throw UsageError(message: "cannot start the REPL with \(path)")
            }
        }
    }

    static func emptyRules() throws(UsageError) -> RuleSet {
        do {
            return try RuleSet(source: "", name: "<repl>")
        } catch {
            throw UsageError(message: "internal error: \(error)")
        }
    }

    /// Names to complete: commands, declarations, attributes, functions and `now`.
    var completions: [String] {
        var names = ReplSession.commands + rules.declarations.map(\.name) + Checker.functions + ["now"]
        names += rules.schema?.attributes.map(\.name) ?? context.entries.map(\.name)
        return Set(names).sorted()  // one order every time (a set's order can change from one to the next)
    }

    mutating func handle(_ input: String) -> Output {
        lineNumber += 1
        var out = handleLine(input)
        if !out.stderr.isEmpty {
            anyFailed = true
            // Messages of commands (`error: …`) name the line too.
            if out.stderr.hasPrefix("error: ") { out.stderr = "<repl>:\(lineNumber): " + out.stderr }
        }
        return out
    }

    private mutating func handleLine(_ input: String) -> Output {
        var out = Output()
        // The leading spaces stay, so that columns are the line's own.
        let raw = String(String(input.reversed()).drop { $0 == " " || $0 == "\t" }.reversed())
        let line = raw.trimmingCharacters(in: .whitespaces)
        if line.isEmpty { return out }
        guard line.hasPrefix(":") else {
            evaluate(raw, into: &out)
            return out
        }
        let command = String(line.prefix { $0 != " " })
        let argument = line.dropFirst(command.count).trimmingCharacters(in: .whitespaces)
        switch command {
        case ":set":
            // `key=value`, or `key value` (the key has no space).
            let separator = argument.firstIndex { $0 == "=" || $0 == " " }
            guard let eq = separator, eq != argument.startIndex else {
                out.stderr += "error: :set expects key=value, as in :set build=alpha or :set org.plan=team\n"
                break
            }
            let key = argument[..<eq].trimmingCharacters(in: .whitespaces)
            let text = argument[argument.index(after: eq)...].trimmingCharacters(in: .whitespaces)
            if Path.names(key).count > Path.maxNames {
                out.stderr += "error: a path has at most \(Path.maxNames) names\n"
                break
            }
            if let schema = rules.schema {
                do {
                    context.set(try schema.value(for: key, text: text), atPath: key)
                } catch {
                    out.stderr += "error: \(error.message)\n"
                }
            } else {
                context.set(Value.inferred(from: text), atPath: key)
            }
        case ":unset":
            let parts = Path.names(argument)
            if context[parts[0]]?.value(at: parts.dropFirst()) == nil {
                out.stderr += "error: '\(argument)' is not set\n"
            } else {
                context.set(nil, atPath: argument)
            }
        case ":context":
            if context.count == 0 {
                out.stdout += "(empty)\n"
            }
            for (k, v) in context.entries.sorted(by: { $0.name < $1.name }) { out.stdout += "\(k) = \(v)\n" }
        case ":load":
            guard !argument.isEmpty else {
                out.stderr += "error: :load needs a file\n"
                break
            }
            load(argument, into: &out)
        case ":reload":
            guard let path else {
                out.stderr += "error: no file is loaded; use :load FILE\n"
                break
            }
            load(path, into: &out)
        case ":explain":
            explain(argument, into: &out)
        case ":list":
            out.stdout += ListCommand.text(rules.declarations)
        case ":help":
            out.stdout += ReplSession.help
        case ":quit", ":q", ":exit":
            out.quit = true
        default:
            let suggestion = Suggestions.closest(to: command, in: ReplSession.commands).map { "; did you mean '\($0)'?" } ?? ""
            out.stderr += "error: unknown command '\(command)'\(suggestion)\n"
        }
        return out
    }

    /// Loads a file; on errors the previous rules stay.
    mutating func load(_ file: String, into out: inout Output) {
        let bytes: [UInt8]
        do {
            bytes = try Terminal.read(file)
        } catch {
            out.stderr += "error: \(error.message)\n"
            return
        }
        let source = SourceText(bytes: bytes, name: file)
        do {
            rules = try RuleSet(source: source, today: Date())
            path = file
            out.stdout += "loaded \(file) (\(rules.declarations.count) declarations)\n"
        } catch {
            out.stderr += DiagnosticRenderer(colored: colored).render(error.diagnostics, in: source)
        }
    }

    func evaluate(_ line: String, into out: inout Output) {
        let name = line.trimmingCharacters(in: .whitespaces)
        if rules.declarations.contains(where: { $0.name == name }) {
            out.stdout += rules.evaluate(name, in: context).summary(name: name) + "\n"
            return
        }
        do {
            out.stdout += try rules.evaluate(expression: line, in: context, name: "<repl>", line: lineNumber).text + "\n"
        } catch {
            out.stderr += DiagnosticRenderer(colored: colored).render(error.diagnostics, in: error.source)
        }
    }

    func explain(_ argument: String, into out: inout Output) {
        guard !argument.isEmpty else {
            out.stderr += "error: :explain needs an expression or a declaration's name\n"
            return
        }
        if let explanation = rules.explain(argument, in: context) {
            out.stdout += explanation.text
            return
        }
        do {
            let result = try rules.evaluate(expression: argument, in: context, name: "<repl>", line: lineNumber)
            var text = ""
            func render(_ t: ExpressionTrace, _ indent: Int) {
                text += String(repeating: " ", count: indent) + "\(t.text) → \(t.result)"
                if let note = t.note, t.result != "absent" { text += "  (\(note))" }
                text += "\n"
                for c in t.children { render(c, indent + 2) }
            }
            render(result.trace, 0)
            out.stdout += text
        } catch {
            out.stderr += DiagnosticRenderer(colored: colored).render(error.diagnostics, in: error.source)
        }
    }

    /// What Tab completes the word before the cursor with, given the text before it: an
    /// enum's cases (or a variant's variants) after `==`, `!=`, `in [` or `:set name=`, an
    /// enum list's cases after `contains` or `contains any [` / `contains all [`; names and
    /// commands elsewhere.
    func completions(before text: String) -> [String] {
        if let cases = casesExpected(before: text) { return cases }
        return completions
    }

    /// The cases a case position before the cursor expects, if it is one.
    func casesExpected(before text: String) -> [String]? {
        var chars = Substring(text)
        // The word being typed (a path's dots with it).
        while let last = chars.last, last.isLetter || last.isNumber || last == "_" || last == "." { chars.removeLast() }
        let head = String(chars)
        func cases(of name: String) -> [String]? {
            if case .enumeration(let cases)? = rules.schema?[name]?.type { return cases }
            return rules.declarations.first { $0.name == name && $0.kind == .variant }?.variants
        }
        func elementCases(of name: String) -> [String]? {
            if case .list(.enumeration(let cases))? = rules.schema?[name]?.type { return cases }
            return nil
        }
        func lastName(_ s: Substring) -> String? {
            let trimmed = s.reversed().drop { $0 == " " }.reversed()
            let name = String(trimmed.reversed().prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." }.reversed())
            return name.isEmpty ? nil : name
        }
        // `:set build=`
        let trimmedHead = head.trimmingCharacters(in: .whitespaces)
        if trimmedHead.hasPrefix(":set "), trimmedHead.hasSuffix("=") {
            return cases(of: String(trimmedHead.dropFirst(5).dropLast()).trimmingCharacters(in: .whitespaces))
        }
        let spaced = Substring(head.reversed().drop { $0 == " " }.reversed())
        // `build ==`, `build !=`
        if spaced.hasSuffix("==") || spaced.hasSuffix("!=") {
            return lastName(spaced.dropLast(2)).flatMap(cases(of:))
        }
        // `roles contains `
        if spaced.hasSuffix(" contains") {
            return lastName(spaced.dropLast(9)).flatMap(elementCases(of:))
        }
        // `build in [debug, `, `roles contains any [admin, `
        if let open = spaced.lastIndex(of: "["), !spaced[open...].contains("]") {
            var before = spaced[..<open]
            before = Substring(before.reversed().drop { $0 == " " }.reversed())
            for word in [" contains any", " contains all"] where before.hasSuffix(word) {
                return lastName(before.dropLast(word.count)).flatMap(elementCases(of:))
            }
            guard before.hasSuffix(" in") || before.hasSuffix("\tin") else { return nil }
            before = before.dropLast(2)
            before = Substring(before.reversed().drop { $0 == " " }.reversed())
            if before.hasSuffix(" not") { before = before.dropLast(4) }
            return lastName(before).flatMap(cases(of:))
        }
        return nil
    }
}
