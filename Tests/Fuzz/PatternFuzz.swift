// libFuzzer target: patterns (`matches`). Any bytes are a pattern; one that compiles is
// matched against inputs drawn from the same bytes, and where Swift's Regex accepts the
// same pattern the two must agree. A match slower than `slowMatch` (twice) is a finding:
// the heaviest pattern found (`((|){222}|){22}x`, near the 10,000-step limit) takes about
// 0.6 s over the longest subject (1,000 scalars) with AddressSanitizer, and only a match
// that is not linear comes near it. Ten subjects an input stay under libFuzzer's 10 s.
// Built with the library's sources and the other
// targets as one module: Tests/Fuzz/run.sh.
import Foundation

/// One input, 0 when it is done with it (a finding traps); called by `FuzzMain.swift`.
func patternFuzzTest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // The first line is the pattern, the rest are subjects.
    let text = String(decoding: bytes, as: UTF8.self)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    guard let source = lines.first, source.unicodeScalars.count <= 200 else { return 0 }
    let pattern: Pattern
    do {
        pattern = try Pattern(source)
    } catch {
        return 0
    }
    let subjects = Array(lines.dropFirst().prefix(8)) + ["", source]
    // Patterns match Unicode scalars, not characters: "\r\n" is two scalars here.
    let reference = try? Regex(source).matchingSemantics(.unicodeScalar)
    for subject in subjects where subject.unicodeScalars.count <= 1_000 {
        var start = DispatchTime.now().uptimeNanoseconds
        let ours = pattern.matches(subject)
        var elapsed = DispatchTime.now().uptimeNanoseconds - start
        if elapsed > PatternFuzz.slowMatch {
            // Timed again before it counts: a busy machine can stall one match.
            start = DispatchTime.now().uptimeNanoseconds
            _ = pattern.matches(subject)
            elapsed = DispatchTime.now().uptimeNanoseconds - start
        }
        if elapsed > PatternFuzz.slowMatch {
            fatalError("slow match: \(elapsed / 1_000_000) ms for pattern \(source.debugDescription) on \(subject.debugDescription)")
        }
        if let reference, PatternFuzz.comparable(source), PatternFuzz.comparable(subject: subject, pattern: source) {
            let theirs = (try? reference.firstMatch(in: subject)) != nil
            if ours != theirs {
                fatalError(
                    "disagreement with Regex: pattern \(source.debugDescription) on \(subject.debugDescription): ours \(ours), Regex \(theirs)"
                )
            }
        }
    }
    return 0
}

enum PatternFuzz {
    /// Five seconds, in nanoseconds.
    static let slowMatch: UInt64 = 5_000_000_000

    /// Subjects on which the engines' classes agree: any, unless the pattern has a class
    /// escape (`\w`, `\s`, `\d` and their negations), whose Unicode meaning beyond ASCII
    /// is Swift's own; then ASCII ones without "\r\n" (which Regex's `\D` takes as one
    /// scalar even when matching scalars: `^\D\D$` does not match it).
    static func comparable(subject: String, pattern: String) -> Bool {
        let classEscape = ["\\w", "\\W", "\\s", "\\S", "\\d", "\\D"].contains { pattern.contains($0) }
        let scalars = Array(subject.unicodeScalars)
        let crlf = zip(scalars, scalars.dropFirst()).contains { $0 == "\r" && $1 == "\n" }
        return !classEscape || (scalars.allSatisfy(\.isASCII) && !crlf)
    }

    /// Patterns whose meaning is the same in both engines: ASCII, without the features
    /// whose semantics differ on purpose (case-insensitivity's Unicode folding, `\b`), and
    /// without a repeated group, on which Swift's Regex (a backtracking engine) can take
    /// exponential time: `(|)Int(|){32}In` did not finish in 100 s. Nor with `--`, `&&` or
    /// `~~`, which Regex reads in a class as set operations (`[0'--9]` is `[0']` less `[9]`
    /// there; here, as in RE2, `'--` is a range).
    static func comparable(_ source: String) -> Bool {
        let scalars = Array(source.unicodeScalars)
        let repeatedGroup = zip(scalars, scalars.dropFirst()).contains { $0 == ")" && "*+?{".unicodeScalars.contains($1) }
        // Case-insensitivity anywhere: `(?i)`, `(?mi)`, `(?s-i:…)`.
        let caseless = source.range(of: #"\(\?[ism]*i"#, options: .regularExpression) != nil
        return !repeatedGroup && source.unicodeScalars.allSatisfy { $0.isASCII && $0.value >= 0x20 } && !caseless
            && !source.contains("\\b")
            && !source.contains("\\B") && !source.contains("\\X") && !source.contains("\\R") && !source.contains("\\N")
            && !(source.contains("{") && source.contains(" "))
            && !["--", "&&", "~~"].contains { source.contains($0) }
    }
}
