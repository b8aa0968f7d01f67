// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "FlagRules",
    products: [
        .library(name: "FlagRules", targets: ["FlagRules"]),
        .executable(name: "flags", targets: ["flags"]),
        .executable(name: "flags-bench", targets: ["flags-bench"]),
    ],
    targets: [
        .target(name: "FlagRules", dependencies: ["FlagRulesAtomics"]),
        // Two inline atomic functions (Swift's own atomics need macOS 15 and iOS 18).
        .target(name: "FlagRulesAtomics"),
        .executableTarget(name: "flags", dependencies: ["FlagRules"]),
        // Counts heap allocations for the benchmark (glibc); linked into flags-bench only.
        .target(name: "MallocCounter"),
        .executableTarget(name: "flags-bench", dependencies: ["FlagRules", "MallocCounter"]),
        .testTarget(name: "FlagRulesTests", dependencies: ["FlagRules"], exclude: ["Diagnostics/Golden"]),
        // Runs the built `flags` and `flags-bench` binaries; no test binary links flags-bench
        // (nor so its counting allocator).
        .testTarget(name: "flagsTests", dependencies: ["flags", "FlagRules"], exclude: ["Golden", "Fixtures"]),
    ]
)
