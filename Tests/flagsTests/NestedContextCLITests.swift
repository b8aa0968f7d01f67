import Foundation
import Testing

/// Paths from the command line: `-c org.plan=team`, nested `--context-json`, `--explain`
/// saying why a path is absent, the REPL's `:set org.plan team`, and `flags diff` over a
/// rollout by an object's id (`examples/accounts.flags`).
@Suite struct NestedContextCLITests {
    @Test func fieldsGivenByPath() async throws {
        try await offThePool {
            let run = try flags(["eval", "examples/accounts.flags", "-c", "org.plan=team", "-c", "org.seats=12", "-c", "org.id=acme"])
            #expect(
                run
                    == Run(
                        status: 0,
                        stdout: """
                            teamFeatures = true  (TARGETING_MATCH, rule 1, line 20)
                            euInvoices = false  (DEFAULT)
                            assistant = off  (DEFAULT)
                            inviteLimit = 5  (DEFAULT)

                            """, stderr: ""))
            // A whole object as JSON, and the same object from --context-json.
            let whole = try flags(["eval", "examples/accounts.flags", "-c", #"org={"plan": "team", "seats": 12, "id": "acme"}"#])
            #expect(whole.stdout == run.stdout)
            let json = try flags(
                ["eval", "examples/accounts.flags", "--context-json", "-"], stdin: #"{"org": {"plan": "team", "seats": 12, "id": "acme"}}"#)
            #expect(json.stdout == run.stdout && json.status == 0)
        }
    }

    @Test(arguments: [
        (["-c", "org.plann=team"], "flags: error: 'org' declares no field 'plann'; did you mean 'plan'?\n"),
        (["-c", "org.seats=many"], "flags: error: attribute 'org.seats' expects an int, got 'many'\n"),
        (["-c", "org.plan.name=x"], "flags: error: 'org.plan' is enum(free, team, enterprise), not an object: it has no field 'name'\n"),
        (
            ["-c", "org=3"],
            "flags: error: attribute 'org' expects an object, got '3'; write a JSON object, as in '{\"plan\": \"team\"}', or give its fields one by one, as in org.field=value\n"
        ),
    ])
    func badPaths(_ arguments: [String], _ stderr: String) async throws {
        try await offThePool { () throws in
            #expect(try flags(["eval", "examples/accounts.flags"] + arguments) == Run(status: 2, stdout: "", stderr: stderr))
        }
    }

    @Test func nestedJSONIsChecked() async throws {
        try await offThePool {
            let unknown = try flags(
                ["eval", "examples/accounts.flags", "--context-json", "-", "teamFeatures"], stdin: #"{"org": {"plan": "team", "sets": 12}}"#
            )
            #expect(
                unknown
                    == Run(
                        status: 0, stdout: "teamFeatures = false  (DEFAULT)\n",
                        stderr: "flags: warning: <stdin>: unknown attribute 'org.sets'; did you mean 'org.seats'?; no rule reads it\n"))
            let mistyped = try flags(
                ["eval", "examples/accounts.flags", "--context-json", "-", "teamFeatures"], stdin: #"{"org": "acme"}"#)
            #expect(mistyped.status == 0 && mistyped.stdout == "teamFeatures = false  (DEFAULT)\n")
            #expect(
                mistyped.stderr
                    == "flags: warning: <stdin>: attribute 'org' expects an object (with fields id, plan, seats, billing), got \"acme\"; it is evaluated as unknown, as a service would read it\n"
            )
        }
    }

    /// A key is a name, dots and all: `{"org.plan": "team"}` is read by no rule, as in the
    /// library and OFREP, and the warning says how to give the field.
    @Test func aDottedKeyIsANameWithAWarning() async throws {
        try await offThePool {
            let dotted = try flags(
                ["eval", "examples/accounts.flags", "--json", "--context-json", "-", "teamFeatures"],
                stdin: #"{"org.plan": "team", "org": {"plan": "free", "seats": 12}}"#)
            #expect(dotted.status == 0)
            #expect(dotted.stdout.contains(#""teamFeatures": {"value": false, "reason": "DEFAULT"}"#), "\(dotted)")
            #expect(
                dotted.stderr
                    == "flags: warning: <stdin>: unknown attribute 'org.plan': a key is a name, not a path; give the field inside its object, as {\"org\": {\"plan\": …}}; no rule reads it\n"
            )
            let lines = try flags(
                ["eval", "examples/accounts.flags", "--json", "--contexts", "-", "teamFeatures"],
                stdin: "{\"org.plan\": \"team\", \"org.seats\": 12}\n{\"org\": {\"plan\": \"team\", \"seats\": 12}}\n")
            #expect(lines.stdout.split(separator: "\n").map { $0.contains(#""value": true"#) } == [false, true], "\(lines)")
            #expect(
                lines.stderr.split(separator: "\n").count == 2 && lines.stderr.contains("<stdin>:1: unknown attribute 'org.seats'"),
                "\(lines)")
        }
    }

    @Test func explainSaysWhyAPathIsAbsent() async throws {
        try await offThePool {
            let run = try flags(["eval", "examples/accounts.flags", "-c", "org.id=org-3", "--explain", "euInvoices"])
            #expect(run.status == 0)
            #expect(
                run.stdout.contains("org.billing.country in [\"FR\", \"DE\", \"NL\"] → unknown  (org has no field billing)"),
                "\(run.stdout)")
            #expect(run.stdout.contains("rollout(org.id) → 96.213%  (key \"euInvoices:org-3\")"), "\(run.stdout)")
            let dynamic = try flags(
                ["eval", "-", "-c", "org=acme", "--explain", "f"], stdin: "flag f { enabled when org.plan == \"team\" }\n")
            #expect(dynamic.stdout.contains("(org is \"acme\" (string), not an object)"), "\(dynamic)")
        }
    }

    @Test func theREPLSetsAndUnsetsPaths() async throws {
        try await offThePool {
            let script = """
                :set org.plan team
                :set org.seats=12
                teamFeatures
                :context
                org.seats >= 10
                :unset org.plan
                teamFeatures
                :unset org.plan

                """
            let run = try flags(["repl", "examples/accounts.flags"], stdin: script)
            #expect(
                run
                    == Run(
                        status: 1,
                        stdout: """
                            teamFeatures = true  (TARGETING_MATCH, rule 1, line 20)
                            org = { plan: "team", seats: 12 }
                            true
                            teamFeatures = false  (DEFAULT)

                            """,
                        stderr: "<repl>:8: error: 'org.plan' is not set\n"))
        }
    }

    @Test func diffMeasuresARolloutByAnObjectsId() async throws {
        try await offThePool {
            let source = try String(contentsOfFile: "examples/accounts.flags", encoding: .utf8)
            let wider = FileManager.default.temporaryDirectory.appendingPathComponent("accounts-\(UUID().uuidString).flags")
            try source.replacingOccurrences(of: "rollout(org.id) < 50%", with: "rollout(org.id) < 60%").write(
                to: wider, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: wider) }
            let run = try flags(["diff", "examples/accounts.flags", wider.path, "--json"])
            #expect(run.status == 0)
            let report = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
            let changed = (report?["declarations"] as? [[String: Any]])?.filter { ($0["changed"] as? Int ?? 0) > 0 }
            #expect(changed?.map { $0["name"] as? String } == ["euInvoices"], "\(run.stdout)")
            let share = changed?.first?["share"] as? Double ?? 0
            // A tenth of organisations move, of those the sample bills in the EU.
            #expect(share > 0.02 && share < 0.1, "\(run.stdout)")
        }
    }

    /// A field added to an object is the schema change `flags diff` names, not the object.
    @Test func diffNamesAFieldAddedToAnObject() async throws {
        try await offThePool {
            let source = try String(contentsOfFile: "examples/accounts.flags", encoding: .utf8)
            let wider = FileManager.default.temporaryDirectory.appendingPathComponent("accounts-\(UUID().uuidString).flags")
            try source.replacingOccurrences(of: "vatExempt : bool }", with: "vatExempt : bool, vatId : string }")
                .write(to: wider, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: wider) }
            let run = try flags(["diff", "examples/accounts.flags", wider.path])
            let schemaLines = run.stdout.split(separator: "\n").filter { $0.hasPrefix("schema:") }
            #expect(schemaLines == ["schema: added org.billing.vatId: string"], "\(run)")
        }
    }
}
