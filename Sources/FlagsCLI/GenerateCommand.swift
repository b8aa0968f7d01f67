import FlagRules
import FlagRulesKeys
import FlagRulesTooling
import Foundation

/// `flags generate swift FILE... [-o OUT] [--namespace NAME] [--access public|internal]`.
enum GenerateCommand {
    static let help = """
        usage: flags generate swift FILE... [-o OUT] [--namespace NAME] [--access public|internal]

        Writes Swift with one typed key per declaration, so that code never spells a flag's
        name or repeats its default: FlagKey<Bool> for flags, a String-backed enum and its
        key for each variant, FlagKey<Int|Double|String|Bool> for values, each with its doc
        comment, and allKeys for validating fetched rules. The same file gives the same
        bytes. The FlagRules build plugin runs this on every build.

        Each file's keys are in an enum named after it (app.flags: AppFlags).

        options:
          -o, --output OUT   write to OUT: a .swift file (one input), else a directory that
                             gets NAME.swift for each input; without it, print
          --namespace NAME   the enum's name (one input only)
          --access LEVEL     public (the default) or internal
          --help             show this help

        exit status: 0 written, 1 errors in the rules, 2 usage error

        """

    static func run(_ arguments: [String]) throws(UsageError) -> Int32 {
        let parsed = try ParsedArguments(
            arguments,
            specs: [
                OptionSpec(name: "help", short: "h"), OptionSpec(name: "output", short: "o", takesValue: true),
                OptionSpec(name: "namespace", takesValue: true), OptionSpec(name: "access", takesValue: true),
            ], command: "generate")
        if parsed.has("help") {
            Terminal.write(help)
            return 0
        }
        guard let language = parsed.positionals.first else {
            throw UsageError(message: "'generate' needs a language", help: "flags generate swift examples/app.flags")
        }
        guard language == "swift" else {
            throw UsageError(message: "'generate' writes 'swift', not '\(language)'", help: "flags generate swift examples/app.flags")
        }
        let files = Array(parsed.positionals.dropFirst())
        guard !files.isEmpty else { throw UsageError(message: "'generate swift' needs a file", help: "flags generate swift app.flags") }
        let accessName = parsed.value("access") ?? "public"
        guard let access = SwiftKeyGenerator.Access(rawValue: accessName) else {
            throw UsageError(message: "--access is public or internal, not '\(accessName)'", help: nil)
        }
        if parsed.value("namespace") != nil, files.count > 1 {
            throw UsageError(message: "--namespace names one file's keys; \(files.count) files were given", help: nil)
        }
        if let namespace = parsed.value("namespace"), !isIdentifier(namespace) {
            throw UsageError(message: "--namespace '\(namespace)' is not a Swift type name", help: "--namespace AppFlags")
        }
        let output = parsed.value("output")
        let toDirectory = output.map { !$0.hasSuffix(".swift") || files.count > 1 } ?? false
        if let output {
            let directory = toDirectory ? output : URL(fileURLWithPath: output).deletingLastPathComponent().path
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw UsageError(message: "cannot create directory \(directory): \(error.localizedDescription)", help: nil)
            }
        }
        var failed = false
        var printed = ""
        for file in files {
            guard let rules = try Terminal.loadRules(file) else {
                failed = true
                continue
            }
            let fileName = file == "-" ? "<stdin>" : URL(fileURLWithPath: file).lastPathComponent
            let namespace = parsed.value("namespace") ?? SwiftKeyGenerator.namespace(forFile: fileName == "<stdin>" ? "rules" : fileName)
            let source: String
            do {
                source = try SwiftKeyGenerator(namespace: namespace, access: access)
                    .generate(rules.declarations.compactMap(KeyDeclaration.init), fileName: fileName)
            } catch {
                Terminal.writeError("\(file): error: \(error.message)\n")
                failed = true
                continue
            }
            guard let output else {
                printed += (printed.isEmpty ? "" : "\n") + source
                continue
            }
            let path = toDirectory ? URL(fileURLWithPath: output).appendingPathComponent(namespace + ".swift").path : output
            // Unchanged output is not rewritten, so that a build does not recompile it.
            if (try? String(contentsOfFile: path, encoding: .utf8)) == source { continue }
            do {
                try Data(source.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            } catch {
                throw UsageError(message: "cannot write \(path): \(error.localizedDescription)", help: nil)
            }
        }
        if !printed.isEmpty { Terminal.write(printed) }
        return failed ? 1 : 0
    }

    static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first == "_" || (first.isASCII && first.properties.isAlphabetic) else {
            return false
        }
        return name.unicodeScalars.allSatisfy { $0 == "_" || ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) }
    }
}
