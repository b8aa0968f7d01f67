// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "FlagRules",
    products: [
        .library(name: "FlagRules", targets: ["FlagRules"]),
        .executable(name: "flags", targets: ["flags"]),
    ],
    targets: [
        .target(name: "FlagRules"),
        .executableTarget(name: "flags", dependencies: ["FlagRules"]),
        .testTarget(name: "FlagRulesTests", dependencies: ["FlagRules"], exclude: ["Diagnostics/Golden"]),
        .testTarget(name: "flagsTests", dependencies: ["flags", "FlagRules"], exclude: ["Golden", "Fixtures"]),
    ]
)
