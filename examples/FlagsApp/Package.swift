// swift-tools-version:6.0
// An app that uses FlagRules as an app would: its rules file generates typed keys on every
// build (the FlagRules plugin), and a live store watches the file while the app runs.
import PackageDescription

let package = Package(
    name: "FlagsApp",
    dependencies: [.package(name: "FlagRules", path: "../..")],
    targets: [
        .executableTarget(
            name: "FlagsApp",
            dependencies: [.product(name: "FlagRules", package: "FlagRules")],
            resources: [.copy("shop.flags")],
            plugins: [.plugin(name: "FlagRulesPlugin", package: "FlagRules")])
    ]
)
