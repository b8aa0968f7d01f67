// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "FlagRules",
    products: [
        .library(name: "FlagRules", targets: ["FlagRules"]),
        .executable(name: "flags", targets: ["flags"]),
        .executable(name: "flags-bench", targets: ["flags-bench"]),
        .plugin(name: "FlagRulesPlugin", targets: ["FlagRulesPlugin"]),
    ],
    targets: [
        .target(name: "FlagRules", dependencies: ["FlagRulesAtomics"]),
        // Inline atomic loads and stores (Swift's own atomics need macOS 15 and iOS 18).
        .target(name: "FlagRulesAtomics"),
        // The CLI's commands, as a library that tests import; `flags` is its main.
        .target(name: "FlagsCLI", dependencies: ["FlagRules"]),
        .executableTarget(name: "flags", dependencies: ["FlagsCLI"]),
        // Generates typed keys from a target's .flags files on every build (`flags generate swift`).
        .plugin(name: "FlagRulesPlugin", capability: .buildTool(), dependencies: ["flags"], path: "Sources/FlagRulesPlugin"),
        // Counts heap allocations for the benchmark (glibc); linked into flags-bench only.
        .target(name: "MallocCounter"),
        .executableTarget(name: "flags-bench", dependencies: ["FlagRules", "MallocCounter"]),
        .testTarget(name: "FlagRulesTests", dependencies: ["FlagRules"], exclude: ["Diagnostics/Golden"]),
        // Reads the keys the plugin generates from its keys.flags.
        .testTarget(name: "GeneratedKeysTests", dependencies: ["FlagRules"], plugins: ["FlagRulesPlugin"]),
        // Runs the built `flags` and `flags-bench` binaries; no test binary links flags-bench
        // (nor so its counting allocator).
        .testTarget(name: "flagsTests", dependencies: ["FlagsCLI", "FlagRules"], exclude: ["Golden", "Fixtures"]),
    ]
)
