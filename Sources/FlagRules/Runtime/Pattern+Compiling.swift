/// Reading a pattern's source into nodes, and the nodes into the matcher's program.
struct PatternParser {
    static let maxNesting = 64
    static let maxCount = 1000
    let s: [Unicode.Scalar]
    var i = 0
    var depth = 0
    /// The inline options in force where the parser stands.
    struct Options {
        var caseInsensitive = false
        var dotAll = false
        var multiline = false
    }
    var options = Options()

    init(_ scalars: [Unicode.Scalar]) { s = scalars }

    private func fail(_ message: String, at offset: Int? = nil) -> Pattern.SyntaxError {
        Pattern.SyntaxError(message: message, offset: offset ?? i)
    }

    mutating func parse() throws(Pattern.SyntaxError) -> PatternNode {
        let node = try parseAlternation()
        if i < s.count {
            throw fail(s[i] == ")" ? "unbalanced ')'" : "unexpected '\(s[i])'")
        }
        return node
    }

    private mutating func parseAlternation() throws(Pattern.SyntaxError) -> PatternNode {
        var branches = [try parseConcat()]
        while i < s.count, s[i] == "|" {
            i += 1
            branches.append(try parseConcat())
        }
        return branches.count == 1 ? branches[0] : .alternation(branches)
    }

    private mutating func parseConcat() throws(Pattern.SyntaxError) -> PatternNode {
        var items: [PatternNode] = []
        while i < s.count, s[i] != "|", s[i] != ")" {
            let atomStart = i
            var atom = applyingCase(try parseAtom())
            atom = try parseQuantifiers(atom, atomStart: atomStart)
            items.append(atom)
        }
        if items.isEmpty { return .empty }
        return items.count == 1 ? items[0] : .concat(items)
    }

    private mutating func parseQuantifiers(_ atom: PatternNode, atomStart: Int) throws(Pattern.SyntaxError) -> PatternNode {
        var atom = atom
        var quantified = false
        while i < s.count {
            var minimum = 0
            var maximum: Int? = nil
            switch s[i] {
            case "*": i += 1
            case "+": minimum = 1; i += 1
            case "?": maximum = 1; i += 1
            case "{":
                guard let (lo, hi) = try parseCounted() else { return atom }
                minimum = lo
                maximum = hi
            default:
                return atom
            }
            if quantified { throw fail("a quantifier cannot follow another quantifier", at: i - 1) }
            if case .assert = atom { throw fail("an anchor cannot be repeated", at: i - 1) }
            quantified = true
            if i < s.count, s[i] == "?" {
                i += 1  // lazy: the same answer for a yes/no match
            } else if i < s.count, s[i] == "+" {
                throw fail("possessive quantifiers are not supported (patterns run without backtracking)")
            }
            atom = .repetition(atom, min: minimum, max: maximum)
        }
        return atom
    }

    /// `{n}`, `{n,}`, `{n,m}`, `{,m}`; returns nil (and consumes nothing) when `{` is a literal.
    private mutating func parseCounted() throws(Pattern.SyntaxError) -> (Int, Int?)? {
        var j = i + 1
        func number() -> Int? {
            var v = 0
            let start = j
            while j < s.count, let d = s[j].properties.numericType == .decimal && s[j].isASCII ? Int(s[j].value - 0x30) : nil {
                v = min(v * 10 + d, 1_000_000)
                j += 1
            }
            return j > start ? v : nil
        }
        // `{,m}` is `{0,m}`, as in Swift's Regex; `{,}` stays literal.
        let lo: Int
        if let n = number() {
            lo = n
        } else if j < s.count, s[j] == ",", j + 1 < s.count, s[j + 1].isASCII, s[j + 1].properties.numericType == .decimal {
            lo = 0
        } else {
            return nil
        }
        var hi: Int? = lo
        if j < s.count, s[j] == "," {
            j += 1
            hi = number()
        }
        guard j < s.count, s[j] == "}" else { return nil }
        if lo > PatternParser.maxCount || (hi ?? 0) > PatternParser.maxCount {
            throw fail("repetition count above \(PatternParser.maxCount)")
        }
        if let hi, hi < lo { throw fail("repetition range {\(lo),\(hi)} is backwards") }
        i = j + 1
        return (lo, hi)
    }

    private mutating func parseAtom() throws(Pattern.SyntaxError) -> PatternNode {
        let c = s[i]
        switch c {
        case "(":
            depth += 1
            if depth > PatternParser.maxNesting { throw fail("pattern nested more than \(PatternParser.maxNesting) groups deep") }
            let open = i
            i += 1
            let saved = options
            if i < s.count, s[i] == "?" {
                i += 1
                guard i < s.count else { throw fail("unterminated group", at: open) }
                if "ism-".unicodeScalars.contains(s[i]) || (s[i].properties.isLowercase && s[i].isASCII && s[i] != "P") {
                    // Inline options: `(?i)` from here to the end of the group, `(?i:…)` for its own.
                    try parseOptions(open: open)
                    if s[i] == ")" {
                        i += 1
                        depth -= 1
                        return .empty
                    }
                    i += 1  // ':': the group below is read under the new options
                } else {
                    try parseGroupKind(open: open)
                }
            }
            let inner = try parseAlternation()
            guard i < s.count, s[i] == ")" else { throw fail("missing ')' for the group opened here", at: open) }
            i += 1
            depth -= 1
            options = saved
            return .concat([inner])  // read under its own options, not the outer ones
        case ")":
            throw fail("unbalanced ')'")
        case "*", "+", "?":
            throw fail("quantifier '\(c)' has nothing to repeat")
        case ".":
            i += 1
            return .any(includingNewline: options.dotAll)
        case "^":
            i += 1
            return .assert(options.multiline ? .lineStart : .start)
        case "$":
            i += 1
            return .assert(options.multiline ? .lineEnd : .end)
        case "[":
            // `[:alpha:]` standing alone is a POSIX class, as in Swift's Regex.
            if standsAlonePosix() { return .charClass(CharacterClass(items: [try parsePosix()])) }
            return .charClass(try parseClass())
        case "\\":
            return try parseEscape(inClass: false)
        default:
            i += 1
            return .scalar(c, folded: false)
        }
    }

    private mutating func parseEscape(inClass: Bool) throws(Pattern.SyntaxError) -> PatternNode {
        let start = i
        i += 1
        guard i < s.count else { throw fail("pattern ends with a lone '\\'", at: start) }
        let c = s[i]
        i += 1
        switch c {
        case "d": return .charClass(CharacterClass(items: [.digit(true)]))
        case "D": return .charClass(CharacterClass(items: [.digit(false)]))
        case "w": return .charClass(CharacterClass(items: [.word(true)]))
        case "W": return .charClass(CharacterClass(items: [.word(false)]))
        case "s": return .charClass(CharacterClass(items: [.space(true)]))
        case "S": return .charClass(CharacterClass(items: [.space(false)]))
        case "n": return .scalar("\n", folded: false)
        case "t": return .scalar("\t", folded: false)
        case "r": return .scalar("\r", folded: false)
        case "f": return .scalar("\u{0C}", folded: false)
        case "v":
            // Vertical whitespace, as in Swift's Regex: \n \u{0B} \u{0C} \r, NEL, LS and PS.
            return .charClass(CharacterClass(items: [.range("\n", "\r"), .range("\u{85}", "\u{85}"), .range("\u{2028}", "\u{2029}")]))
        case "0":
            // Other engines read '\0' and the digits after it as one octal escape.
            if i < s.count, s[i].isASCII, CharacterClass.isDigit(s[i]) {
                throw fail("'\\0' followed by a digit is ambiguous (an octal escape elsewhere); write '\\x00' or '\\u{…}'", at: start)
            }
            return .scalar("\u{0}", folded: false)
        case "b" where !inClass: return .assert(.wordBoundary)
        case "B" where !inClass: return .assert(.notWordBoundary)
        case "A" where !inClass: return .assert(.start)
        case "z" where !inClass, "Z" where !inClass: return .assert(.end)
        case "u", "x":
            guard i < s.count, s[i] == "{" else {
                if c == "x" {
                    // \xHH
                    guard i + 1 < s.count, s[i].properties.isASCIIHexDigit, s[i + 1].properties.isASCIIHexDigit,
                        let v = UInt32(String(String.UnicodeScalarView([s[i], s[i + 1]])), radix: 16), let scalar = Unicode.Scalar(v)
                    else { throw fail("expected two hex digits after '\\x'", at: start) }
                    i += 2
                    return .scalar(scalar, folded: false)
                }
                throw fail("expected '{' after '\\u'", at: start)
            }
            i += 1
            var hex = String.UnicodeScalarView()
            while i < s.count, s[i] != "}" { hex.append(s[i]); i += 1 }
            guard i < s.count, hex.count >= 1, hex.count <= 8, hex.allSatisfy(\.properties.isASCIIHexDigit),
                let v = UInt32(String(hex), radix: 16), let scalar = Unicode.Scalar(v)
            else { throw fail("invalid Unicode escape", at: start) }
            i += 1
            return .scalar(scalar, folded: false)
        case "1"..."9", "k", "g":
            throw fail("backreferences are not supported (patterns run without backtracking)", at: start)
        case "p", "P":
            throw fail("Unicode property classes '\\\(c){…}' are not supported", at: start)
        default:
            if c.isASCII, CharacterClass.isWord(c) {
                throw fail("unknown escape '\\\(c)'", at: start)
            }
            return .scalar(c, folded: false)
        }
    }

    private mutating func parseClass() throws(Pattern.SyntaxError) -> CharacterClass {
        let open = i
        i += 1
        var cls = CharacterClass()
        if i < s.count, s[i] == "^" { cls.negated = true; i += 1 }
        var first = true
        while i < s.count, s[i] != "]" || first {
            first = false
            if s[i] == "[", i + 1 < s.count, s[i + 1] == ":" {
                cls.items.append(try parsePosix())
                continue
            }
            if s[i] == "[" {
                throw fail("nested character classes are not supported; write '\\[' for the character", at: i)
            }
            if i + 1 < s.count, s[i] == s[i + 1], s[i] == "&" || s[i] == "~" || s[i] == "-" {
                throw fail("class set operations ('&&', '--', '~~') are not supported", at: i)
            }
            var lo: Unicode.Scalar
            if s[i] == "\\" {
                switch try parseEscape(inClass: true) {
                case .scalar(let scalar, _): lo = scalar
                case .charClass(let inner): cls.items += inner.items; continue
                default: throw fail("invalid escape in a character class")
                }
            } else {
                lo = s[i]
                i += 1
            }
            if i + 1 < s.count, s[i] == "-", s[i + 1] != "]" {
                i += 1
                var hi: Unicode.Scalar
                if s[i] == "\\" {
                    guard case .scalar(let scalar, _) = try parseEscape(inClass: true) else {
                        throw fail("a range cannot end in a class escape")
                    }
                    hi = scalar
                } else {
                    hi = s[i]
                    i += 1
                }
                if hi < lo { throw fail("character range '\(lo)-\(hi)' is backwards") }
                cls.items.append(.range(lo, hi))
            } else {
                cls.items.append(.range(lo, lo))
            }
        }
        guard i < s.count else { throw fail("missing ']' for the class opened here", at: open) }
        i += 1
        return cls
    }

    /// After `(?` that does not set options: a non-capturing or named group (the parser
    /// then stands at its body), or a refusal naming what is not supported.
    private mutating func parseGroupKind(open: Int) throws(Pattern.SyntaxError) {
        switch s[i] {
        case ":": i += 1
        case "<" where i + 1 < s.count && (s[i + 1] == "=" || s[i + 1] == "!"),
            "=", "!":
            throw fail("lookaround is not supported (patterns run without backtracking)", at: open)
        case "<", "P", "'":
            // named group: (?<name>...), (?P<name>...), (?'name'...)
            if s[i] == "P" {
                i += 1
                guard i < s.count, s[i] == "<" else { throw fail("a named group is written (?P<name>…)", at: open) }
            }
            let close: Unicode.Scalar = s[i] == "'" ? "'" : ">"
            i += 1
            while i < s.count, s[i] != close { i += 1 }
            guard i < s.count else { throw fail("unterminated group name", at: open) }
            i += 1
        case ">":
            throw fail("atomic groups are not supported (patterns run without backtracking)", at: open)
        default:
            throw fail("unsupported group syntax '(?\(s[i])'; the inline options are i, s and m", at: open)
        }
    }

    /// `i`, `s`, `m`, then optionally `-` and the ones to turn off, up to `)` or `:`; sets
    /// them in `options` and leaves the parser at the `)` or `:`.
    private mutating func parseOptions(open: Int) throws(Pattern.SyntaxError) {
        var on = true
        while i < s.count, s[i] != ")", s[i] != ":" {
            switch s[i] {
            case "i": options.caseInsensitive = on
            case "s": options.dotAll = on
            case "m": options.multiline = on
            case "-" where on: on = false
            default: throw fail("unsupported inline option '\(s[i])'; the options are i, s and m", at: i)
            }
            i += 1
        }
        guard i < s.count else { throw fail("unterminated inline options", at: open) }
    }

    /// Whether the parser stands at `[:name:]` or `[:^name:]` written whole (letters
    /// between the colons).
    private func standsAlonePosix() -> Bool {
        guard i + 1 < s.count, s[i + 1] == ":" else { return false }
        var j = i + 2
        if j < s.count, s[j] == "^" { j += 1 }
        let nameStart = j
        while j < s.count, s[j].isASCII, s[j].properties.isAlphabetic { j += 1 }
        return j > nameStart && j + 1 < s.count && s[j] == ":" && s[j + 1] == "]"
    }

    /// `[:name:]` or `[:^name:]` inside a bracket class.
    private mutating func parsePosix() throws(Pattern.SyntaxError) -> CharacterClass.Item {
        let start = i
        i += 2
        let positive = !(i < s.count && s[i] == "^")
        if !positive { i += 1 }
        var name = String.UnicodeScalarView()
        while i < s.count, s[i] != ":", s[i] != "]" { name.append(s[i]); i += 1 }
        guard i + 1 < s.count, s[i] == ":", s[i + 1] == "]" else { throw fail("a POSIX class is written [:name:]", at: start) }
        i += 2
        guard let posix = CharacterClass.Posix(rawValue: String(name)) else {
            let names = CharacterClass.Posix.allCases.map(\.rawValue).joined(separator: ", ")
            throw fail("unknown POSIX class '[:\(String(name)):]'; the classes are \(names)", at: start)
        }
        return .posix(posix, positive)
    }

    /// `node` as the options in force read it: a scalar or a class matched regardless of
    /// case under `(?i)`.
    private func applyingCase(_ node: PatternNode) -> PatternNode {
        guard options.caseInsensitive else { return node }
        switch node {
        case .scalar(let c, _): return .scalar(c, folded: true)
        case .charClass(var cls):
            cls.caseInsensitive = true
            return .charClass(cls)
        default: return node
        }
    }
}

struct PatternCompiler {
    var program: [Instruction] = []
    var classes: [CharacterClass] = []

    mutating func emit(_ node: PatternNode) throws(Pattern.SyntaxError) {
        if program.count > Pattern.maxProgramSize {
            throw Pattern.SyntaxError(
                message: "pattern is too large (more than \(Pattern.maxProgramSize) steps after expanding repetitions)", offset: 0)
        }
        switch node {
        case .empty: break
        case .scalar(let s, let folded): program.append(folded ? .foldedScalar(CharacterClass.fold(s)) : .scalar(s))
        case .any(let all): program.append(all ? .anyIncludingNewline : .any)
        case .charClass(let c):
            classes.append(c)
            program.append(.charClass(classes.count - 1))
        case .assert(let a): program.append(.assert(a))
        case .concat(let items):
            for item in items { try emit(item) }
        case .alternation(let branches):
            var jumps: [Int] = []
            for (k, branch) in branches.enumerated() {
                if k < branches.count - 1 {
                    let split = program.count
                    program.append(.split(split + 1, 0))
                    try emit(branch)
                    jumps.append(program.count)
                    program.append(.jump(0))
                    program[split] = .split(split + 1, program.count)
                } else {
                    try emit(branch)
                }
            }
            for j in jumps { program[j] = .jump(program.count) }
        case .repetition(let inner, let minimum, let maximum):
            for _ in 0..<minimum { try emit(inner) }
            if let maximum {
                var splits: [Int] = []
                for _ in minimum..<maximum {
                    splits.append(program.count)
                    program.append(.split(program.count + 1, 0))
                    try emit(inner)
                }
                for sp in splits { program[sp] = .split(sp + 1, program.count) }
            } else {
                let loop = program.count
                program.append(.split(loop + 1, 0))
                try emit(inner)
                program.append(.jump(loop))
                program[loop] = .split(loop + 1, program.count)
            }
        }
    }
}
