/// "Did you mean" suggestions by edit distance.
package enum Suggestions {
    /// The candidate closest to `name` within an edit distance of 2 (1 for names of 3
    /// characters, 0 for shorter ones),
    /// or nil. A candidate that differs only in letter case always wins.
    package static func closest<S: Sequence>(to name: String, in candidates: S) -> String? where S.Element == String {
        let lowered = name.lowercased()
        var best: (distance: Int, name: String)?
        let limit = name.count <= 2 ? 0 : name.count == 3 ? 1 : 2
        for candidate in candidates where candidate != name {
            let d = candidate.lowercased() == lowered ? 0 : distance(name, candidate)
            guard d <= limit else { continue }
            if best == nil || d < best!.distance || (d == best!.distance && candidate < best!.name) {
                best = (d, candidate)
            }
        }
        return best?.name
    }

    /// The optimal-string-alignment distance (insertions, deletions, substitutions and
    /// swaps of neighbours each cost 1), stopping early past 3.
    package static func distance(_ a: String, _ b: String) -> Int {
        let x = Array(a.unicodeScalars), y = Array(b.unicodeScalars)
        if abs(x.count - y.count) > 3 { return 4 }
        if x.isEmpty { return y.count }
        if y.isEmpty { return x.count }
        var prev2 = [Int](repeating: 0, count: y.count + 1)
        var prev = Array(0...y.count)
        var cur = [Int](repeating: 0, count: y.count + 1)
        for i in 1...x.count {
            cur[0] = i
            for j in 1...y.count {
                let cost = x[i - 1] == y[j - 1] ? 0 : 1
                var v = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
                if i > 1, j > 1, x[i - 1] == y[j - 2], x[i - 2] == y[j - 1] { v = min(v, prev2[j - 2] + 1) }
                cur[j] = v
            }
            (prev2, prev, cur) = (prev, cur, prev2)
        }
        return prev[y.count]
    }
}
