// swift-tools-version:6.0
// A service that embeds the evaluator and nothing else: it depends on the FlagRules library
// alone, so neither the tools, the language server nor the OFREP server is compiled.
import PackageDescription

let package = Package(
    name: "FlagsService",
    dependencies: [.package(name: "FlagRules", path: "../..")],
    targets: [
        .executableTarget(name: "FlagsService", dependencies: [.product(name: "FlagRules", package: "FlagRules")])
    ]
)
