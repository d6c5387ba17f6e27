// "Did you mean ...?" for misspelt keys and flags: the closest known name by edit distance, or a known key with the
// same last part (a right name in the wrong table). Only close matches are offered; a wild guess is worse than none.

enum Suggestion {
    /// The candidate closest to `word`, if it is close enough to be a likely typo.
    static func closest(to word: String, in candidates: [String]) -> String? {
        let lowered = word.lowercased()
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let distance = editDistance(lowered, candidate)
            if distance < (best?.distance ?? Int.max) { best = (candidate, distance) }
        }
        if let best, best.distance <= max(2, lowered.count / 4) { return best.candidate }
        // `port` at the top level or `[connections] port`: the same name in another table.
        let last = lowered.split(separator: ".").last.map(String.init) ?? lowered
        return candidates.first { $0.split(separator: ".").last.map(String.init) == last }
    }

    /// Levenshtein distance over Unicode scalars.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.unicodeScalars)
        let b = Array(b.unicodeScalars)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }

    /// " (did you mean 'x'?)" or "".
    static func clause(for word: String, in candidates: [String], display: (String) -> String = { $0 }) -> String {
        closest(to: word, in: candidates).map { " (did you mean '\(display($0))'?)" } ?? ""
    }
}
