import Foundation
import Testing

@testable import FlagRules
@testable import FlagRulesTooling

/// The package root, from this file's path.
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

func exampleFiles() throws -> [URL] {
    try FileManager.default.contentsOfDirectory(at: packageRoot.appendingPathComponent("examples"), includingPropertiesForKeys: nil)
        .filter { $0.pathExtension == "flags" }
        .sorted { $0.lastPathComponent < $1.lastPathComponent }
}

@Suite struct ExamplesTests {
    @Test func everyExampleLoadsWithoutErrors() throws {
        let files = try exampleFiles()
        #expect(files.map(\.lastPathComponent).contains("app.flags"))
        #expect(files.map(\.lastPathComponent).contains("checkout.flags"))
        #expect(files.map(\.lastPathComponent).contains("service.flags"))
        for file in files {
            #expect(throws: Never.self, "\(file.lastPathComponent)") { try RuleSet(contentsOf: file) }
        }
    }

    /// `isEnabled` (a flag's rules answering only whether it is on) agrees with `evaluate`
    /// (the full outcome) for every flag of every example, over contexts that reach each
    /// rule, with dictionary and prepared contexts.
    @Test func isEnabledAgreesWithEvaluate() throws {
        var contexts: [EvaluationContext] = [[:]]
        for build in ["debug", "alpha", "beta", "release"] {
            for user in 0..<40 {
                contexts.append([
                    "build": .string(build), "userId": .string("user-\(user)"), "appVersion": .string("2.\(user % 6).0"),
                    "country": .string(user % 3 == 0 ? "US" : "FR"),
                    "email": .string(user % 5 == 0 ? "a@example.com" : "b@mail.test"),
                    "plan": .string(user % 2 == 0 ? "pro" : "free"), "region": "eu-west-1", "age": .int(user),
                ])
            }
        }
        var flags = 0
        for file in try exampleFiles() {
            let rules = try RuleSet(contentsOf: file)
            for d in rules.declarations where d.kind == .flag {
                flags += 1
                let handle = rules.handle(d.name)
                var expectedAll: [Bool] = []
                for context in contexts {
                    let expected = rules.evaluate(d.name, in: context).value == .bool(true)
                    #expect(rules.isEnabled(d.name, in: context) == expected, "\(d.name) \(context)")
                    #expect(rules.isEnabled(handle, in: rules.prepare(context)) == expected, "\(d.name) \(context)")
                    expectedAll.append(expected)
                }
                #expect(rules.isEnabled(handle, in: contexts.map(rules.prepare)) == expectedAll, "\(d.name), in a batch")
            }
        }
        #expect(flags >= 5)
    }

    @Test func appFollowsTheBuildPipeline() throws {
        let rules = try RuleSet(contentsOf: packageRoot.appendingPathComponent("examples/app.flags"))
        #expect(rules.isEnabled("darkMode", in: ["build": "debug"]))
        #expect(rules.isEnabled("newMediaPicker", in: ["build": "alpha", "appVersion": "2.4.0"]))
        #expect(!rules.isEnabled("newMediaPicker", in: ["build": "alpha", "appVersion": "2.2.0"]))
        #expect(rules.evaluate("raccoonImages", in: ["build": "debug"]).reason == .disabled)
        #expect(rules.value("apiBaseURL", in: ["build": "alpha"], default: "") == "https://canary.example.com")
        #expect(rules.value("apiBaseURL", in: ["build": "release"], default: "") == "https://api.example.com")
        // A fifth of beta testers get dark mode.
        var on = 0
        for i in 0..<10_000 where rules.isEnabled("darkMode", in: ["build": "beta", "userId": .string("u\(i)")]) { on += 1 }
        #expect(on > 1_850 && on < 2_150)
    }

    @Test func checkoutSplitsOnlyWhereTargeted() throws {
        let rules = try RuleSet(contentsOf: packageRoot.appendingPathComponent("examples/checkout.flags"))
        #expect(rules.evaluate("checkout", in: ["userId": "user-3", "country": "US"]).reason == .split)
        #expect(rules.variant("checkout", in: ["userId": "user-3", "country": "US"]) == "twoStep")
        #expect(rules.variant("checkout", in: ["userId": "user-3", "country": "DE"]) == "control")
        #expect(rules.variant("checkout", in: ["email": "qa+abc@example.org", "country": "DE"]) == "oneStep")
        #expect(rules.isEnabled("expressPay", in: ["email": "me@example.com", "platform": "ios"]))
        #expect(!rules.isEnabled("expressPay", in: ["email": "me@example.com", "platform": "web"]))
        #expect(rules.value("freeShippingThreshold", in: ["plan": "pro"], default: -1.0) == 0.0)
    }

    @Test func serviceLaunchesOnSchedule() throws {
        let rules = try RuleSet(contentsOf: packageRoot.appendingPathComponent("examples/service.flags"))
        let before: EvaluationContext = ["now": "2026-12-01T08:59:59Z", "region": "euWest", "tier": "free"]
        let after: EvaluationContext = ["now": "2026-12-01T09:00:00Z", "region": "euWest", "tier": "free"]
        #expect(!rules.isEnabled("newSearchIndex", in: before))
        #expect(rules.isEnabled("newSearchIndex", in: after))
        #expect(!rules.isEnabled("newSearchIndex", in: ["now": "2027-01-01", "region": "apSouth"]))
        #expect(rules.value("searchBackend", in: after, default: "") == "vespa")
        #expect(rules.value("searchTimeoutMs", in: after, default: 0) == 400)
        #expect(rules.value("searchTimeoutMs", in: ["seats": 800], default: 0) == 1500)
        #expect(rules.isEnabled("rateLimitBypass", in: ["tier": "enterprise", "tenant": "acme"]))
        #expect(!rules.isEnabled("rateLimitBypass", in: ["tier": "enterprise"]))
    }

    /// The targeting example uses every list, case, network and ramp form in a real rule.
    @Test func targetingReadsListsCaseNetworksAndRamps() throws {
        let url = packageRoot.appendingPathComponent("examples/targeting.flags")
        let text = try String(contentsOf: url, encoding: .utf8)
        for form in ["[string]", "[enum(", ": ip", "contains \"", "contains any [", "contains all [", "count(", "lower(", "ramp("] {
            #expect(text.contains(form), "targeting.flags uses \(form)")
        }
        let rules = try RuleSet(contentsOf: url)
        #expect(rules.isEnabled("betaProgram", in: ["groups": ["beta-testers"]]))
        #expect(rules.isEnabled("betaProgram", in: ["roles": ["editor"], "clientIP": "10.1.1.1"]))
        #expect(!rules.isEnabled("betaProgram", in: ["roles": ["editor"], "clientIP": "11.1.1.1"]))
        #expect(rules.evaluate("betaProgram", in: ["roles": ["editor"], "clientIP": "not-an-ip"]).reason == .default)
        #expect(rules.value("workspaceLimit", in: ["groups": ["a", "b"]], default: 0) == 6)
        // The ramp lets in about 5% before its window and about 50% after it.
        func share(_ now: Value) -> Int {
            (0..<2000).filter { rules.isEnabled("newEditor", in: ["userId": .string("u\($0)"), "now": now]) }.count
        }
        #expect((60...140).contains(share("2026-11-01")))
        #expect((900...1100).contains(share("2027-07-01")))
        let results = rules.runTests()
        #expect(results.count == 11 && results.allSatisfy { $0.passed })
    }
}

@Suite struct GrammarTests {
    let grammar: String

    init() throws {
        grammar = try String(contentsOf: packageRoot.appendingPathComponent("Grammar/flags.ebnf"), encoding: .utf8)
    }

    /// Every ```flags block inside the grammar's comments.
    var codeBlocks: [String] {
        var blocks: [String] = []
        var current: [String]?
        for line in grammar.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```flags") { current = []; continue }
            if line.hasPrefix("```"), let block = current { blocks.append(block.joined(separator: "\n")); current = nil; continue }
            current?.append(String(line))
        }
        return blocks
    }

    @Test func everyCodeBlockInTheGrammarParsesAndChecks() throws {
        let blocks = codeBlocks
        #expect(blocks.count >= 4)
        for block in blocks {
            #expect(throws: Never.self, "\(block)") { try RuleSet(source: block, name: "grammar") }
        }
    }

    /// The productions, with comments and terminals removed.
    var productions: [String: String] {
        var text = grammar
        while let open = text.range(of: "(*"), let close = text.range(of: "*)", range: open.upperBound..<text.endIndex) {
            text.removeSubrange(open.lowerBound..<close.upperBound)
        }
        var result: [String: String] = [:]
        for statement in text.split(separator: ";").map({ $0.trimmingCharacters(in: .whitespacesAndNewlines) }) where !statement.isEmpty {
            guard let eq = statement.range(of: " = ") ?? statement.range(of: "=") else { continue }
            let name = statement[..<eq.lowerBound].trimmingCharacters(in: .whitespaces)
            result[name] = String(statement[eq.upperBound...])
        }
        return result
    }

    static func references(in body: String) -> Set<String> {
        var names = Set<String>()
        var i = body.startIndex
        var word = ""
        var quote: Character?
        while i < body.endIndex {
            let c = body[i]
            if let q = quote {
                if c == q { quote = nil }
            } else if c == "\"" || c == "'" || c == "?" {
                quote = c
            } else if c.isLetter || c == "_" || (c.isNumber && !word.isEmpty) {
                word.append(c)
            } else {
                if !word.isEmpty { names.insert(word); word = "" }
            }
            i = body.index(after: i)
        }
        if !word.isEmpty { names.insert(word) }
        return names
    }

    @Test func everyProductionIsDefinedAndUsed() {
        let productions = self.productions
        #expect(productions.count > 30)
        var used = Set<String>()
        for (name, body) in productions {
            for reference in GrammarTests.references(in: body) {
                used.insert(reference)
                #expect(productions[reference] != nil, "'\(name)' refers to undefined '\(reference)'")
            }
        }
        for name in productions.keys where name != "file" && name != "reserved" {
            #expect(used.contains(name), "'\(name)' is never used")
        }
    }
}
