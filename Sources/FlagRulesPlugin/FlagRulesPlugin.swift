import Foundation
import PackagePlugin

/// Generates the typed keys of each `.flags` file of a target on every build (what `flags
/// generate swift` writes), so that the target's code reads typed keys (`AppFlags.darkMode`)
/// that never drift from its rules file. Declare the files as resources too to ship them as
/// the app's bundled rules. Its tool, `flags-keys`, links only the library and its tooling.
@main
struct FlagRulesPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let tool = try context.tool(named: "flags-keys")
        return target.sourceFiles(withSuffix: "flags").map { file in
            let base = file.url.deletingPathExtension().lastPathComponent
            let output = context.pluginWorkDirectoryURL.appendingPathComponent(base + "+FlagKeys.swift")
            return .buildCommand(
                displayName: "Generating typed flag keys from \(file.url.lastPathComponent)",
                executable: tool.url,
                arguments: [file.url.path, output.path],
                inputFiles: [file.url],
                outputFiles: [output])
        }
    }
}
