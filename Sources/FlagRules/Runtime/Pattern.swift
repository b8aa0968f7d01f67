/// A compiled `matches` pattern.
///
/// Patterns use Swift `Regex` syntax but run on a Thompson-NFA (Pike VM) matcher, so a
/// match costs at most O(pattern size × input length) and can never backtrack
/// catastrophically: `(a+)+$` against 5,000 `a`s and a `!` is linear. Features that need
/// backtracking (backreferences, lookaround, possessive quantifiers, atomic groups) are
/// rejected at load time with a diagnostic. A pattern matches anywhere in the string;
/// anchor it with `^`/`$` (`^` and `$` are the start and end of the whole string, or of
/// a line under `(?m)`; `\A` and `\z` are always the whole string's). Inline options
/// `(?i)` (case-insensitive), `(?s)` (`.` matches line breaks) and `(?m)` (multi-line
/// anchors) apply from where they stand to the end of their group, `(?i:…)` to its own
/// group, and `(?-i)` turns one off. Bracket classes take POSIX names: `[[:alpha:]]`.
package struct Pattern: Sendable, CustomStringConvertible {
    /// The most NFA instructions a pattern may compile to (counted repetitions expand).
    package static let maxProgramSize = 10_000

    /// Why a pattern does not compile.
    package struct SyntaxError: Error, Sendable, Equatable {
        /// What is wrong, in the words of a diagnostic.
        package let message: String
        /// The offset in Unicode scalars where it went wrong.
        package let offset: Int
    }

    /// The source of the pattern.
    package let source: String
    private let program: [Instruction]
    private let classes: [CharacterClass]

    /// Compiles a pattern; throws `SyntaxError` naming the problem.
    package init(_ source: String) throws(SyntaxError) {
        self.source = source
        var parser = PatternParser(Array(source.unicodeScalars))
        let node = try parser.parse()
        var compiler = PatternCompiler()
        try compiler.emit(node)
        compiler.program.append(.match)
        if compiler.program.count > Pattern.maxProgramSize {
            throw SyntaxError(
                message: "pattern is too large (more than \(Pattern.maxProgramSize) steps after expanding repetitions)", offset: 0)
        }
        program = compiler.program
        classes = compiler.classes
    }

    /// The pattern as written.
    package var description: String { source }

    /// Whether the pattern matches anywhere in `text`.
    package func matches(_ text: String) -> Bool {
        let input = Array(text.unicodeScalars)
        let size = program.count
        var current = ThreadList(capacity: size)
        var next = ThreadList(capacity: size)
        var stack: [Int] = []
        stack.reserveCapacity(16)
        var position = 0
        while true {
            let previous: Unicode.Scalar? = position > 0 ? input[position - 1] : nil
            let here: Unicode.Scalar? = position < input.count ? input[position] : nil
            // Unanchored search: a new thread may start at every position.
            if addThread(0, to: &current, stack: &stack, previous: previous, here: here, atStart: position == 0, atEnd: here == nil) {
                return true
            }
            guard let scalar = here else { return false }
            next.clear()
            let nextHere: Unicode.Scalar? = position + 1 < input.count ? input[position + 1] : nil
            for pc in current.dense.prefix(current.count) {
                let advances: Bool
                switch program[pc] {
                case .scalar(let s): advances = s == scalar
                case .foldedScalar(let s): advances = s == scalar || s == CharacterClass.fold(scalar)
                case .any: advances = !Pattern.isLineBreak(scalar)
                case .anyIncludingNewline: advances = true
                case .charClass(let index): advances = classes[index].contains(scalar)
                default: advances = false
                }
                if advances,
                    addThread(pc + 1, to: &next, stack: &stack, previous: scalar, here: nextHere, atStart: false, atEnd: nextHere == nil)
                {
                    return true
                }
            }
            swap(&current, &next)
            position += 1
        }
    }

    /// Follows empty transitions from `pc`; returns true when a match is reached.
    private func addThread(
        _ pc: Int, to list: inout ThreadList, stack: inout [Int],
        previous: Unicode.Scalar?, here: Unicode.Scalar?, atStart: Bool, atEnd: Bool
    ) -> Bool {
        stack.append(pc)
        while let pc = stack.popLast() {
            guard list.insert(pc) else { continue }
            switch program[pc] {
            case .match:
                stack.removeAll(keepingCapacity: true)
                return true
            case .jump(let target):
                stack.append(target)
            case .split(let first, let second):
                stack.append(second)
                stack.append(first)
            case .assert(let assertion):
                let holds: Bool
                switch assertion {
                case .start: holds = atStart
                case .end: holds = atEnd
                case .lineStart: holds = atStart || previous.map(Pattern.isLineBreak) == true
                case .lineEnd: holds = atEnd || here.map(Pattern.isLineBreak) == true
                case .wordBoundary, .notWordBoundary:
                    let before = previous.map(CharacterClass.isWord) ?? false
                    let after = here.map(CharacterClass.isWord) ?? false
                    holds = (before != after) == (assertion == .wordBoundary)
                }
                if holds { stack.append(pc + 1) }
            case .scalar, .foldedScalar, .any, .anyIncludingNewline, .charClass:
                break
            }
        }
        return false
    }
}

enum Instruction: Sendable {
    case scalar(Unicode.Scalar)
    /// A scalar matched case-insensitively (held folded).
    case foldedScalar(Unicode.Scalar)
    case any
    case anyIncludingNewline
    case charClass(Int)
    case split(Int, Int)
    case jump(Int)
    case assert(Assertion)
    case match
}

enum Assertion: Sendable, Equatable {
    case start, end, wordBoundary, notWordBoundary
    /// `^` and `$` under `(?m)`: at the string's ends or next to a line break.
    case lineStart, lineEnd
}

/// A sparse set of program counters (Briggs & Torczon), cleared in O(1).
private struct ThreadList {
    var dense: [Int]
    var sparse: [Int]
    var count = 0

    init(capacity: Int) {
        dense = Array(repeating: 0, count: capacity)
        sparse = Array(repeating: 0, count: capacity)
    }

    mutating func insert(_ pc: Int) -> Bool {
        let i = sparse[pc]
        if i < count, dense[i] == pc { return false }
        sparse[pc] = count
        dense[count] = pc
        count += 1
        return true
    }

    mutating func clear() { count = 0 }
}

struct CharacterClass: Sendable {
    enum Item: Sendable {
        case range(Unicode.Scalar, Unicode.Scalar)
        case digit(Bool), word(Bool), space(Bool)
        /// A POSIX class (`[:alpha:]`), or its negation (`[:^alpha:]`).
        case posix(Posix, Bool)
    }

    /// The POSIX classes a bracket class takes, with Unicode meanings as Swift's `Regex`
    /// gives them.
    enum Posix: String, Sendable, CaseIterable {
        case alpha, digit, alnum, upper, lower, space, punct, xdigit, word, blank, cntrl

        func contains(_ s: Unicode.Scalar) -> Bool {
            let p = s.properties
            switch self {
            case .alpha: return p.isAlphabetic
            case .digit: return CharacterClass.isDigit(s)
            case .alnum: return p.isAlphabetic || CharacterClass.isDigit(s)
            case .upper: return p.isUppercase
            case .lower: return p.isLowercase
            case .space: return p.isWhitespace
            case .punct:
                switch p.generalCategory {
                case .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation, .initialPunctuation,
                    .finalPunctuation, .otherPunctuation:
                    return true
                default: return false
                }
            case .xdigit: return p.isHexDigit
            case .word: return CharacterClass.isWord(s)
            case .blank: return s == "\t" || p.generalCategory == .spaceSeparator
            case .cntrl: return p.generalCategory == .control
            }
        }
    }

    var items: [Item] = []
    var negated = false
    /// Whether it was written under `(?i)`.
    var caseInsensitive = false

    static func fold(_ s: Unicode.Scalar) -> Unicode.Scalar {
        if s.isASCII {
            if s.value >= 0x41 && s.value <= 0x5A { return Unicode.Scalar(s.value + 32) ?? s }
            return s
        }
        let lower = s.properties.lowercaseMapping.unicodeScalars
        return lower.count == 1 ? lower.first ?? s : s
    }

    static func isDigit(_ s: Unicode.Scalar) -> Bool {
        if s.isASCII { return s.value >= 0x30 && s.value <= 0x39 }
        return s.properties.numericType == .decimal
    }

    static func isWord(_ s: Unicode.Scalar) -> Bool {
        if s.isASCII {
            let v = s.value
            return (v >= 0x30 && v <= 0x39) || (v >= 0x41 && v <= 0x5A) || (v >= 0x61 && v <= 0x7A) || v == 0x5F
        }
        return s.properties.isAlphabetic || s.properties.numericType == .decimal || s.properties.generalCategory == .nonspacingMark
    }

    static func isSpace(_ s: Unicode.Scalar) -> Bool {
        if s.isASCII { return s == " " || (s.value >= 0x09 && s.value <= 0x0D) }
        return s.properties.isWhitespace
    }

    func contains(_ s: Unicode.Scalar) -> Bool {
        var found = matchesItems(s)
        // Under `(?i)` a scalar's other case may fall in a range; properties (`\w`,
        // `[:upper:]`) are read as they are, as Swift's Regex reads them.
        if !found, self.caseInsensitive {
            let lower = CharacterClass.fold(s)
            found = matchesItems(lower, rangesOnly: true)
            if !found, s.isASCII, s.value >= 0x61, s.value <= 0x7A, let upper = Unicode.Scalar(s.value - 32) {
                found = matchesItems(upper, rangesOnly: true)
            }
        }
        return found != negated
    }

    private func matchesItems(_ s: Unicode.Scalar, rangesOnly: Bool = false) -> Bool {
        for item in items {
            switch item {
            case .range(let lo, let hi): if s >= lo && s <= hi { return true }
            case _ where rangesOnly: continue
            case .digit(let positive): if CharacterClass.isDigit(s) == positive { return true }
            case .word(let positive): if CharacterClass.isWord(s) == positive { return true }
            case .space(let positive): if CharacterClass.isSpace(s) == positive { return true }
            case .posix(let posix, let positive): if posix.contains(s) == positive { return true }
            }
        }
        return false
    }
}

indirect enum PatternNode {
    case empty
    /// A scalar; `folded`: matched case-insensitively.
    case scalar(Unicode.Scalar, folded: Bool)
    case any(includingNewline: Bool)
    case charClass(CharacterClass)
    case concat([PatternNode])
    case alternation([PatternNode])
    case repetition(PatternNode, min: Int, max: Int?)
    case assert(Assertion)
}

extension Pattern {
    /// The scalars `.` does not match without `(?s)`, as in Swift's `Regex`: line feed,
    /// carriage return, vertical tab, form feed, next line, line and paragraph separators.
    @inline(__always)
    static func isLineBreak(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x0A...0x0D, 0x85, 0x2028, 0x2029: return true
        default: return false
        }
    }
}
