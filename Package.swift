// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "FlagRules",
    products: [
        // What an app or a service embeds: the language, evaluation, the live store, typed
        // keys, overrides, exposures and the debug screen's model.
        .library(name: "FlagRules", targets: ["FlagRules"]),
        // Lints, coverage, impact, the formatter, the test runner and the key generator.
        .library(name: "FlagRulesTooling", targets: ["FlagRulesTooling"]),
        // The language server (`flags lsp`).
        .library(name: "FlagRulesLanguageServer", targets: ["FlagRulesLanguageServer"]),
        // OFREP over HTTP, with the served page and metrics (`flags serve`).
        .library(name: "FlagRulesServer", targets: ["FlagRulesServer"]),
        // Overrides as a Swift Testing trait, for an app's test targets.
        .library(name: "FlagRulesTesting", targets: ["FlagRulesTesting"]),
        .executable(name: "flags", targets: ["flags"]),
        .executable(name: "flags-bench", targets: ["flags-bench"]),
        .plugin(name: "FlagRulesPlugin", targets: ["FlagRulesPlugin"]),
    ],
    targets: [
        .target(name: "FlagRules", dependencies: ["FlagRulesSyntax", "FlagRulesAtomics"]),
        // The language's text: lexer, parser, syntax tree, diagnostics and versions. The
        // library re-exports it; the build plugin's tool reads declarations with it alone.
        .target(name: "FlagRulesSyntax"),
        // Inline atomic loads and stores (Swift's own atomics need macOS 15 and iOS 18).
        .target(name: "FlagRulesAtomics"),
        // The CLI's commands, as a library that tests import; `flags` is its main.
        .target(name: "FlagRulesTooling", dependencies: ["FlagRules", "FlagRulesKeys"]),
        // The typed keys' Swift source, from a file's declarations as written.
        .target(name: "FlagRulesKeys", dependencies: ["FlagRulesSyntax"]),
        .target(name: "FlagRulesLanguageServer", dependencies: ["FlagRules", "FlagRulesTooling"]),
        .target(name: "FlagRulesServer", dependencies: ["FlagRules", "FlagRulesTooling"]),
        .target(name: "FlagRulesTesting", dependencies: ["FlagRules"]),
        .target(name: "FlagsCLI", dependencies: ["FlagRules", "FlagRulesKeys", "FlagRulesTooling", "FlagRulesLanguageServer", "FlagRulesServer"]),
        .executableTarget(name: "flags", dependencies: ["FlagsCLI"]),
        // The plugin's tool: `flags generate swift` for one file, reading its declarations
        // with the language's syntax alone (an app's build compiles the rest of the library once).
        .executableTarget(name: "flags-keys", dependencies: ["FlagRulesKeys"]),
        // Generates typed keys from a target's .flags files on every build.
        .plugin(name: "FlagRulesPlugin", capability: .buildTool(), dependencies: ["flags-keys"], path: "Sources/FlagRulesPlugin"),
        // Counts heap allocations for the benchmark (glibc); linked into flags-bench only.
        .target(name: "MallocCounter"),
        // The machine's limit for one thread of HTTP (an epoll loop), beside which flags-bench
        // reads flags serve's requests a second; linked into flags-bench only.
        .target(name: "MinimalServer"),
        .executableTarget(
            name: "flags-bench",
            dependencies: ["FlagRules", "FlagRulesTooling", "FlagRulesLanguageServer", "FlagRulesServer", "MallocCounter", "MinimalServer"]),
        .testTarget(
            name: "FlagRulesTests",
            dependencies: ["FlagRules", "FlagRulesKeys", "FlagRulesTooling", "FlagRulesLanguageServer", "FlagRulesServer", "FlagRulesTesting"],
            exclude: ["Diagnostics/Golden"]),
        // Reads the keys the plugin generates from its keys.flags.
        .testTarget(
            name: "GeneratedKeysTests", dependencies: ["FlagRules", "FlagRulesTooling", "FlagRulesServer", "FlagRulesLanguageServer"],
            plugins: ["FlagRulesPlugin"]),
        // Runs the built `flags` and `flags-bench` binaries; no test binary links flags-bench
        // (nor so its counting allocator).
        .testTarget(
            name: "flagsTests", dependencies: ["FlagsCLI", "FlagRules", "FlagRulesKeys", "FlagRulesTooling", "FlagRulesLanguageServer", "FlagRulesServer"],
            exclude: ["Golden", "Fixtures"]),
    ]
)
