import FlagRulesKeys
import FlagRulesSyntax
import Foundation

// `flags-keys FILE OUTPUT`: the build plugin's tool. It writes the typed keys of one rules
// file (what `flags generate swift FILE --output OUTPUT` writes), reading the file's
// declarations with the language's syntax alone: an app's build compiles the lexer and the
// parser for it, and the rest of the library once, for the app. A syntax error, or a key
// with no type or default, fails the build at its line; the rules' types are checked by
// `flags check`, the language server, and the library when the rules load.
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
// Read as bytes: text that is no UTF-8 is the parser's error, at its line and column.
let bytes: [UInt8]
do {
    bytes = Array(try Data(contentsOf: input))
} catch {
    fail("\(input.path): error: cannot read it (\(error.localizedDescription))\n", status: 1)
}
let fileName = input.lastPathComponent
let source: String
do {
    let declarations = try KeyDeclaration.read(SourceText(bytes: bytes, name: input.path))
    source = try SwiftKeyGenerator(namespace: SwiftKeyGenerator.namespace(forFile: fileName), access: .public)
        .generate(declarations, fileName: fileName)
} catch let error as KeyDeclaration.ReadError {
    fail(error.description + "\n", status: 1)
} catch let error as SwiftKeyGenerator.GenerationError {
    // (At the declaration's line, so that an editor shows it there.)
    fail("\(input.path)\(error.line.map { ":\($0):1" } ?? ""): error: \(error.message)\n", status: 1)
} catch {
    fail("\(input.path): error: \(error)\n", status: 1)
}
if (try? String(contentsOf: output, encoding: .utf8)) != source {
    do {
        try FileManager.default.createDirectory(at: output.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(source.utf8).write(to: output, options: .atomic)
    } catch {
        fail("cannot write \(output.path): \(error.localizedDescription)\n", status: 1)
    }
}
