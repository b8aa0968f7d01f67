import FlagRules
import FlagRulesTooling
import Foundation

// `flags-keys FILE OUTPUT`: the build plugin's tool. It writes the typed keys of one rules
// file (what `flags generate swift FILE --output OUTPUT` writes) and links only the library
// and its tooling, so that an app's build compiles no server, language server or CLI.
// An unchanged output is not rewritten, so that a build does not recompile it.

/// Writes `message` to standard error and exits with `status`.
func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data(message.utf8))
    exit(status)
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 2 else {
    fail("usage: flags-keys FILE.flags OUTPUT.swift (the FlagRules build plugin's tool; see 'flags generate swift')\n", status: 2)
}
let input = URL(fileURLWithPath: arguments[0]), output = URL(fileURLWithPath: arguments[1])
let rules: RuleSet
do {
    rules = try RuleSet(contentsOf: input)
} catch {
    fail(error.description.hasSuffix("\n") ? error.description : error.description + "\n", status: 1)
}
let fileName = input.lastPathComponent
let source: String
do {
    source = try SwiftKeyGenerator(namespace: SwiftKeyGenerator.namespace(forFile: fileName), access: .public)
        .generate(rules, fileName: fileName)
} catch {
    fail("\(input.path): error: \(error.message)\n", status: 1)
}
if (try? String(contentsOf: output, encoding: .utf8)) != source {
    do {
        try FileManager.default.createDirectory(at: output.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(source.utf8).write(to: output, options: .atomic)
    } catch {
        fail("cannot write \(output.path): \(error.localizedDescription)\n", status: 1)
    }
}
