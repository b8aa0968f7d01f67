import Foundation
import Testing

/// `flags generate swift`: typed keys, deterministic, lint-clean, with clear errors.
@Suite(.serialized) struct GenerateCommandTests {
    @Test func writesTheSameBytesForTheSameFile() async throws {
        try await offThePool {
            let first = try flags(["generate", "swift", "examples/checkout.flags"])
            let second = try flags(["generate", "swift", "examples/checkout.flags"])
            #expect(first.status == 0 && first == second)
            #expect(first.stdout.contains("public enum CheckoutFlags {"))
            #expect(first.stdout.contains("public static let `checkout` = FlagRules.FlagKey<Self.`Checkout`>("))
            #expect(
                first.stdout.contains("public enum `Checkout`: Swift.String, FlagRules.FlagVariant, Swift.CaseIterable, Swift.Sendable {"))
            #expect(first.stdout.contains("value: \"freeShippingThreshold\", default: 50.0,"))
            #expect(first.stdout.contains("/// Free shipping from this cart total."))
        }
    }

    @Test func namespaceAccessAndOutputs() async throws {
        try await offThePool {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("flags-generate-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: dir) }
            let file = dir.appendingPathComponent("Keys.swift").path
            let one = try flags(["generate", "swift", "examples/app.flags", "-o", file, "--namespace", "Features", "--access", "internal"])
            #expect(one.status == 0 && one.stdout.isEmpty, "\(one)")
            let text = try String(contentsOfFile: file, encoding: .utf8)
            #expect(
                text.contains("\nenum Features {") && text.contains("    static let `darkMode` = FlagRules.FlagKey<Swift.Bool>(")
                    && !text.contains("public"))
            let many = try flags(["generate", "swift", "examples/app.flags", "examples/service.flags", "-o", dir.path])
            #expect(many.status == 0, "\(many)")
            #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("AppFlags.swift").path))
            #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("ServiceFlags.swift").path))
        }
    }

    @Test func theOutputPassesSwiftFormatLint() async throws {
        try await offThePool {
            let dir = packageRoot.appendingPathComponent(".build/generate-lint")
            try? FileManager.default.removeItem(at: dir)
            let generated = try flags([
                "generate", "swift", "examples/app.flags", "examples/checkout.flags", "examples/service.flags", "-o", dir.path,
            ])
            #expect(generated.status == 0)
            let swift = URL(fileURLWithPath: "/usr/bin/env")
            let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted().map { dir.appendingPathComponent($0).path }
            #expect(files.count == 3)
            let lint = try run(swift, ["swift", "format", "lint", "--strict"] + files)
            #expect(lint.status == 0 && lint.stderr.isEmpty, "\(lint)")
        }
    }

    @Test(arguments: [
        (["generate"], "flags: error: 'generate' needs a language"),
        (["generate", "kotlin", "examples/app.flags"], "flags: error: 'generate' writes 'swift', not 'kotlin'"),
        (["generate", "swift"], "flags: error: 'generate swift' needs a file"),
        (["generate", "swift", "examples/app.flags", "--access", "open"], "flags: error: --access is public or internal, not 'open'"),
        (
            ["generate", "swift", "examples/app.flags", "examples/service.flags", "--namespace", "X"],
            "flags: error: --namespace names one file's keys; 2 files were given"
        ),
        (["generate", "swift", "examples/app.flags", "--namespace", "9x"], "flags: error: --namespace '9x' is not a Swift type name"),
    ])
    func usageErrors(_ arguments: [String], _ message: String) async throws {
        try await offThePool {
            let run = try flags(arguments)
            #expect(run.status == 2)
            #expect(run.stderr.hasPrefix(message), "\(run)")
        }
    }

    @Test func collidingNamesAndBrokenRulesAreErrors() async throws {
        try await offThePool {
            let collide = try flags(["generate", "swift", "-"], stdin: "variant checkout [a, b]\nvalue Checkout: int = 1\n")
            #expect(collide.status == 1)
            #expect(collide.stderr.contains("'Checkout' (line 2) would be generated as 'Checkout'"), "\(collide)")
            let broken = try flags(["generate", "swift", "-"], stdin: "flag x { enabled when }")
            #expect(broken.status == 1 && broken.stdout.isEmpty && broken.stderr.contains("error:"))
        }
    }

    /// The build plugin's tool: the same keys as `flags generate swift`; what it refuses is
    /// said at its file, line and column, so that an editor shows it there.
    @Test func thePluginsToolWritesTheKeysAndSaysWhereItsErrorsAre() async throws {
        try await offThePool {
            let tool = flagsBinary.deletingLastPathComponent().appendingPathComponent("flags-keys")
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flags-keys-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let output = directory.appendingPathComponent("out/CheckoutFlags.swift")
            let written = try run(tool, ["examples/checkout.flags", output.path])
            #expect(written.status == 0, "\(written)")
            let generated = try flags(["generate", "swift", "examples/checkout.flags"])
            #expect(try String(contentsOf: output, encoding: .utf8) == generated.stdout)

            func refusal(_ text: [UInt8]) throws -> Run {
                let file = directory.appendingPathComponent("bad.flags")
                try Data(text).write(to: file)
                return try run(tool, [file.path, output.path])
            }
            let collide = try refusal(Array("flag ok\nvariant checkout [a, b]\nvalue Checkout: int = 1\n".utf8))
            #expect(collide.status == 1, "\(collide)")
            #expect(collide.stderr.contains("bad.flags:3:1: error: 'Checkout' (line 3) would be generated"), "\(collide)")
            let listed = try refusal(Array("variant v [a, b] = c\n".utf8))
            #expect(listed.status == 1 && listed.stderr.contains("bad.flags:1:20: error: 'c' is no variant of 'v'"), "\(listed)")
            let bytes = try refusal([0x66, 0x6C, 0x61, 0x67, 0x20, 0xFF, 0x0A])
            #expect(bytes.status == 1 && bytes.stderr.contains("bad.flags:1:6: error:"), "\(bytes)")
        }
    }
}
