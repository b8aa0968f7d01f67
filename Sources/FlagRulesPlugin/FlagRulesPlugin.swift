import Foundation
import PackagePlugin

/// Runs `flags generate swift` over each `.flags` file of a target on every build, so that
/// the target's code reads typed keys (`AppFlags.darkMode`) that never drift from its
/// rules file. Declare the files as resources too to ship them as the app's bundled rules.
@main
struct FlagRulesPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let flags = try context.tool(named: "flags")
        return target.sourceFiles(withSuffix: "flags").map { file in
            let base = file.url.deletingPathExtension().lastPathComponent
            let output = context.pluginWorkDirectoryURL.appendingPathComponent(base + "+FlagKeys.swift")
            return .buildCommand(
                displayName: "Generating typed flag keys from \(file.url.lastPathComponent)",
                executable: flags.url,
                arguments: ["generate", "swift", file.url.path, "--output", output.path],
                inputFiles: [file.url],
                outputFiles: [output])
        }
    }
}
