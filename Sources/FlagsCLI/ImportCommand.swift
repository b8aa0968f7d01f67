import FlagRules
import FlagRulesTooling
import Foundation

/// `flags import FILE --from growthbook|launchdarkly|flagd|unleash`: another flag system's
/// file as an equivalent `.flags` file on standard output.
enum ImportCommand {
    static let help = """
        usage: flags import FILE|- --from growthbook|launchdarkly|flagd|unleash

        Prints an equivalent .flags file, formatted, on standard output: flags, variants and
        values with their defaults, targeting, segments, prerequisites, rollouts and
        experiment splits, bucketed as the other system buckets so that every user keeps
        their bucket. What cannot be expressed is named on standard error with its place in
        the file and the reason; nothing is left out silently. Keys that are not .flags
        names are renamed, and said so.

          growthbook     GrowthBook's SDK payload ({"features": …})
          launchdarkly   LaunchDarkly's flags and segments as its SDKs' file data source reads them
          flagd          flagd's flag definition ({"flags": …, "$evaluators": …})
          unleash        Unleash's client features payload ({"features": […], "segments": […]})

        options:
          --from SYSTEM   the system the file comes from (required)
          --help          show this help

        exit status: 0 imported exactly (renames and notes on stderr are still worth a
        read: a renamed key is asked for by its new name), 1 the file is not JSON or not of
        that system, 2 usage error (a file that cannot be read included), 3 imported, but
        something was left out or imported with another meaning ("not imported" on stderr)

        """

    static func run(_ arguments: [String]) throws(UsageError) -> Int32 {
        let parsed = try ParsedArguments(
            arguments, specs: [OptionSpec(name: "help", short: "h"), OptionSpec(name: "from", takesValue: true)], command: "import")
        if parsed.has("help") {
            Terminal.write(help)
            return 0
        }
        let systems = ImportFormat.allCases.map(\.rawValue).joined(separator: ", ")
        guard let system = parsed.value("from") else {
            throw UsageError(message: "'import' needs --from (\(systems))", help: "flags import flags.json --from launchdarkly")
        }
        guard let format = ImportFormat(rawValue: system) else {
            let near = Suggestions.closest(to: system, in: ImportFormat.allCases.map(\.rawValue)).map { "; did you mean '\($0)'?" } ?? ""
            throw UsageError(message: "--from '\(system)' is not a system flags imports from (\(systems))\(near)")
        }
        guard parsed.positionals.count == 1, let path = parsed.positionals.first else {
            throw UsageError(message: "'import' takes one file ('-' for standard input)", help: "flags import flags.json --from \(system)")
        }
        let bytes = try Terminal.read(path)
        let name = path == "-" ? "<stdin>" : path
        do {
            let result = try FlagsImport.run(bytes, from: format, name: name)
            Terminal.write(result.text)
            for note in result.notes { Terminal.writeError("\(name): \(note)\n") }
            return result.isExact ? 0 : 3
        } catch {
            Terminal.writeError("flags: error: \(error.message)\n")
            return 1
        }
    }
}
