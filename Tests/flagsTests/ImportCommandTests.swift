import Foundation
import Testing

/// `flags import` from the terminal: its output, its notes on standard error, and its exit
/// statuses (0 exact, 1 a file that is not of the system, 2 usage, 3 something not imported).
struct ImportCommandTests {
    @Test func anExactImportExitsZeroAndPrintsAFileThatLoads() async throws {
        try await offThePool {
            let payload = #"{"features": {"dark-mode": {"defaultValue": false, "rules": [{"force": true, "coverage": 0.2}]}}}"#
            let result = try flags(["import", "-", "--from", "growthbook"], stdin: payload)
            #expect(result.status == 0, "\(result)")
            #expect(
                result.stdout.contains(#"flag darkMode = false {\#n  enabled when rollout(id, "dark-mode", growthbookV1) < 20%\#n}"#),
                "\(result)")
            #expect(
                result.stderr
                    == "<stdin>: features.dark-mode: renamed: 'dark-mode' is darkMode (a .flags name is letters, digits and '_')\n"
            )
            let checked = try flags(["check", "-"], stdin: result.stdout)
            #expect(checked.status == 0, "\(checked)")
        }
    }

    /// An Unleash variant of weight 0 that no override gives is no case of the import's
    /// `variant` (one no rule gives, which `check --strict` refuses), and a dependency on it
    /// never holds, as in Unleash.
    @Test func anImportPassesCheckStrict() async throws {
        try await offThePool {
            let payload = #"""
                {"version": 2, "features": [
                  {"name": "sizes", "enabled": true, "strategies": [],
                   "variants": [{"name": "small", "weight": 0, "payload": {"type": "string", "value": "s"}}, {"name": "large", "weight": 1000}]},
                  {"name": "child", "enabled": true, "strategies": [], "dependencies": [{"feature": "sizes", "variants": ["small"]}]}
                ]}
                """#
            let result = try flags(["import", "-", "--from", "unleash"], stdin: payload)
            #expect(result.status == 0 && result.stdout.contains("variant sizesVariant [disabled, large] = disabled"), "\(result)")
            let checked = try flags(["check", "--strict", "-"], stdin: result.stdout)
            #expect(checked.status == 0, "\(checked)")
            let child = try flags(["eval", "-", "child", "-c", "userId=u"], stdin: result.stdout)
            #expect(child.stdout.hasPrefix("child = false"), "\(child)")
        }
    }

    @Test func somethingNotImportedIsNamedAndExitsThree() async throws {
        try await offThePool {
            let payload =
                #"{"flags": {"a": {"state": "ENABLED", "variants": {"x": {"k": 1}}, "defaultVariant": "x"}, "b": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "on"}}}"#
            let result = try flags(["import", "-", "--from", "flagd"], stdin: payload)
            #expect(result.status == 3, "\(result)")
            #expect(result.stdout.contains("flag b = true"))
            #expect(result.stderr.contains("<stdin>: flags.a.variants: not imported: variants of JSON objects"), "\(result)")
        }
    }

    @Test(
        arguments: [
            (["import", "x.json"], 2, "flags: error: 'import' needs --from (growthbook, launchdarkly, flagd, unleash)"),
            (["import", "x.json", "--from", "launchdarkley"], 2, "did you mean 'launchdarkly'?"),
            (["import", "--from", "flagd"], 2, "'import' takes one file"),
            (["import", "missing.json", "--from", "flagd"], 2, "missing.json"),
        ] as [([String], Int32, String)])
    func usageErrors(_ arguments: [String], _ status: Int32, _ message: String) async throws {
        try await offThePool {
            let result = try flags(arguments)
            #expect(result.status == status, "\(result)")
            #expect(result.stderr.contains(message), "\(result)")
            #expect(result.stdout.isEmpty)
        }
    }

    @Test func aFileOfAnotherKindExitsOneNamingWhy() async throws {
        try await offThePool {
            let notJSON = try flags(["import", "-", "--from", "unleash"], stdin: "features: []")
            #expect(notJSON.status == 1 && notJSON.stderr.hasPrefix("flags: error: <stdin>:1:1 is not JSON: "), "\(notJSON)")
            #expect(notJSON.stdout.isEmpty)
            let other = try flags(["import", "-", "--from", "launchdarkly"], stdin: #"{"features": {}}"#)
            #expect(
                other.status == 3 && other.stderr.contains("features: not imported: LaunchDarkly's file data source reads only"), "\(other)"
            )
        }
    }
}
