import Foundation
import Testing

/// Grammar/flags.tmLanguage.json is valid JSON, every pattern compiles, and the patterns,
/// tried in order as an editor tries them, give sample tokens the scopes we intend.
@Suite struct TextMateGrammarTests {
    let grammar: [String: Any]

    init() throws {
        let data = try Data(contentsOf: packageRoot.appendingPathComponent("Grammar/flags.tmLanguage.json"))
        grammar = try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// Every rule of the grammar, includes resolved, in the order an editor tries them.
    var orderedRules: [[String: Any]] {
        let repository = grammar["repository"] as? [String: Any] ?? [:]
        func expand(_ patterns: [[String: Any]]) -> [[String: Any]] {
            patterns.flatMap { p -> [[String: Any]] in
                if let include = p["include"] as? String, include.hasPrefix("#"),
                    let rule = repository[String(include.dropFirst())] as? [String: Any]
                {
                    if let nested = rule["patterns"] as? [[String: Any]], rule["match"] == nil, rule["begin"] == nil {
                        return expand(nested)
                    }
                    return [rule]
                }
                return [p]
            }
        }
        return expand(grammar["patterns"] as? [[String: Any]] ?? [])
    }

    @Test func isValidAndEveryPatternCompiles() throws {
        #expect(grammar["scopeName"] as? String == "source.flags")
        #expect((grammar["fileTypes"] as? [String]) == ["flags"])
        var count = 0
        func visit(_ any: Any) {
            if let dict = any as? [String: Any] {
                for key in ["match", "begin", "end"] {
                    if let pattern = dict[key] as? String {
                        count += 1
                        #expect(throws: Never.self, "\(pattern)") { try NSRegularExpression(pattern: pattern) }
                    }
                }
                for (k, v) in dict where k != "match" && k != "begin" && k != "end" { visit(v) }
            } else if let array = any as? [Any] {
                array.forEach(visit)
            }
        }
        visit(grammar)
        #expect(count > 20)
    }

    /// The scope of the first rule that matches at the start of `text`.
    func scope(of text: String) throws -> String? {
        for rule in orderedRules {
            guard let pattern = (rule["match"] ?? rule["begin"]) as? String else { continue }
            let regex = try NSRegularExpression(pattern: pattern)
            let range = NSRange(text.startIndex..., in: text)
            if let m = regex.firstMatch(in: text, options: [.anchored], range: range) {
                if let name = rule["name"] as? String { return name }
                if let captures = rule["captures"] as? [String: [String: String]], m.numberOfRanges > 1 {
                    return captures["1"]?["name"]
                }
            }
        }
        return nil
    }

    @Test(arguments: [
        ("/// Dark mode.", "comment.line.documentation.flags"),
        ("# a comment", "comment.line.number-sign.flags"),
        (##"#"^qa\+"#"##, "string.quoted.other.raw.flags"),
        (#""Howdy""#, "string.quoted.double.flags"),
        ("@owner(\"x\")", "entity.other.attribute-name.flags"),
        ("flag darkMode {", "keyword.declaration.flags"),
        ("context {", "keyword.declaration.flags"),
        ("test \"t\" {", "keyword.declaration.flags"),
        ("when", "keyword.control.flags"),
        ("expect", "keyword.control.flags"),
        ("and", "keyword.operator.word.flags"),
        ("ends with", "keyword.operator.word.flags"),
        ("true", "constant.language.boolean.flags"),
        ("enabled", "constant.language.outcome.flags"),
        ("SPLIT", "constant.language.reason.flags"),
        ("rollout(userId)", "support.function.flags"),
        ("count(groups)", "support.function.flags"),
        ("lower(email)", "support.function.flags"),
        ("version(appVersion)", "support.function.flags"),
        ("`app-version`", "variable.other.quoted.flags"),
        (#"`a\`b`"#, "variable.other.quoted.flags"),
        ("ramp(\"2026-12-01\"", "support.function.flags"),
        ("contains any [", "keyword.operator.word.flags"),
        ("contains all [", "keyword.operator.word.flags"),
        ("ip", "storage.type.flags"),
        ("now", "variable.language.now.flags"),
        ("version", "storage.type.flags"),
        ("2.3.0", "constant.numeric.version.flags"),
        ("1.0.0-beta.2+build.5", "constant.numeric.version.flags"),
        ("20%", "constant.numeric.percentage.flags"),
        ("0.125%", "constant.numeric.percentage.flags"),
        ("2.5", "constant.numeric.float.flags"),
        ("42", "constant.numeric.integer.flags"),
        ("==", "keyword.operator.comparison.flags"),
        ("??", "keyword.operator.coalesce.flags"),
        ("userId", "variable.other.flags"),
        ("org.plan == team", "variable.other.path.flags"),
        ("org.billing.country", "variable.other.path.flags"),
        ("org.version", "variable.other.path.flags"),
    ])
    func scopes(_ text: String, _ expected: String) throws {
        #expect(try scope(of: text) == expected)
    }
}
