import FlagRules
import Foundation

/// The forms of flagd's `fractional` the import rewrites before it writes a split.
extension FlagdImport {
    /// The index (in `fractional`'s arguments) and path of the one entry whose variant is
    /// `{"var": path}`; nil when there is none, or more than one.
    static func variableEntry(_ argument: JSON) -> (Int, String)? {
        guard let arguments = argument.elements else { return nil }
        let found = arguments.enumerated().compactMap { i, a -> (Int, String)? in
            guard let parts = a.elements, let first = parts.first, let path = variable(first) else { return nil }
            return (i, path)
        }
        return found.count == 1 ? found[0] : nil
    }

    /// A test that `path` holds a value flagd reads as the variant `name` (a string of
    /// that text; a whole number, a bool or a double whose text it is, as flagd-core's
    /// `str()`); nil when no value does.
    static func names(_ path: String, _ name: String) -> ImportedCondition? {
        var tests = ["\(path) == \(StringEscaping.quoted(name))"]
        if let n = Int(name), String(n) == name { tests.append("\(path) == \(n)") }
        if name == "true" || name == "false" { tests.append("\(path) == \(name)") }
        // (A double whose text it is, and that no whole number equals: flagd writes 1 as "1".)
        if Int(name) == nil, let d = Double(name), d.isFinite, d.rounded() != d, String(d) == name { tests.append("\(path) == \(name)") }
        return tests.count == 1 ? .atom(tests[0]) : .or(tests.map(ImportedCondition.atom))
    }

    /// `{"cat": [text, …, {"var": path}]}` as the path and the text before it (each literal as
    /// `cat` writes it, `{"var": "$flagd.flagKey"}` the flag's key): the unit and salt of a
    /// `flagdCat` split. Nil for another expression.
    static func catBucketing(_ json: JSON, key: String) -> (path: String, prefix: String)? {
        guard case .object(let members) = json, members.count == 1, members[0].0 == "cat", let parts = members[0].1.elements,
            let last = parts.last, let path = variable(last)
        else { return nil }
        var prefix = ""
        for part in parts.dropLast() {
            switch part {
            case .string(let s): prefix += s
            case .int(let n): prefix += VendorBucketing.catText(Value.int(n))
            case .double(let d): prefix += VendorBucketing.catText(Value.double(d))
            case .bool(let b): prefix += VendorBucketing.catText(Value.bool(b))
            case .object(let m) where m.count == 1 && m[0].0 == "var" && m[0].1.string == "$flagd.flagKey": prefix += key
            default: return nil
            }
        }
        return (path, prefix)
    }

    /// `{"fractional": […]}` with each entry's value replaced by `yes` where JsonLogic reads
    /// it as true and `no` where false; nil for another node, or an entry whose value is no
    /// scalar.
    static func fractionalChoosing(_ node: JSON, yes: String, no: String) -> JSON? {
        guard case .object(let members) = node, members.count == 1, members[0].0 == "fractional",
            let arguments = members[0].1.elements
        else { return nil }
        var rewritten: [JSON] = []
        for (i, argument) in arguments.enumerated() {
            guard var entry = argument.elements, let value = entry.first else {
                // (The first argument may be the bucketing value.)
                guard i == 0 else { return nil }
                rewritten.append(argument)
                continue
            }
            let truthy: Bool
            switch value {
            case .null: truthy = false
            case .bool(let b): truthy = b
            case .int(let n): truthy = n != 0
            case .double(let d): truthy = d != 0 && !d.isNaN
            case .string(let s): truthy = !s.isEmpty
            default: return nil
            }
            entry[0] = .string(truthy ? yes : no)
            rewritten.append(.array(entry))
        }
        return .object([("fractional", .array(rewritten))])
    }

    /// `fractional`'s arguments with an entry whose variant or weight is an `if` (or `?:`)
    /// with an else as that `if` over copies of the fractional, each with the branch's value
    /// in the entry's place; nil when no entry has one.
    static func branchingEntry(_ argument: JSON) -> JSON? {
        guard let entries = argument.elements else { return nil }
        for (i, entry) in entries.enumerated() {
            guard let parts = entry.elements else { continue }
            for (j, part) in parts.enumerated() {
                guard case .object(let members) = part, members.count == 1, ["if", "?:"].contains(members[0].0),
                    let branches = members[0].1.elements, branches.count >= 3, branches.count % 2 == 1
                else { continue }
                func with(_ value: JSON) -> JSON {
                    var entry = parts
                    entry[j] = value
                    var copy = entries
                    copy[i] = .array(entry)
                    return .object([("fractional", .array(copy))])
                }
                var chain: [JSON] = []
                for k in stride(from: 0, to: branches.count - 1, by: 2) { chain += [branches[k], with(branches[k + 1])] }
                chain.append(with(branches[branches.count - 1]))
                return .object([("if", .array(chain))])
            }
        }
        return nil
    }
}
