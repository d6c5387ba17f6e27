// Folding a place name for search, so "zermatt" finds "Zermatt" and "les 2 alpes" finds "Les 2 Alpes" as well as
// "réserve" finds "Réserve", without Foundation (the domain does not import it). Three steps on each scalar:
// combining marks are dropped (a name written decomposed), precomposed Latin letters become their base letter
// ("LATIN CAPITAL LETTER E WITH ACUTE" → e, also ø, ł, đ, and æ → ae, œ → oe), and everything else is lowercased
// by the standard library's Unicode case mapping. Other scripts fold case only. Whitespace runs become one space.

/// Folds names for accent- and case-insensitive prefix search.
public enum NameFold {
    /// The folded form of `text`.
    public static func fold(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        var pendingSpace = false
        for scalar in text.unicodeScalars {
            let value = scalar.value
            if value < 0x80 {
                if scalar.properties.isWhitespace {
                    pendingSpace = !out.isEmpty
                    continue
                }
                if pendingSpace {
                    out.append(" ")
                    pendingSpace = false
                }
                out.append(value >= 0x41 && value <= 0x5A ? Unicode.Scalar(value + 0x20)! : scalar)
                continue
            }
            if scalar.properties.isWhitespace {
                pendingSpace = !out.isEmpty
                continue
            }
            switch scalar.properties.generalCategory {
            case .nonspacingMark, .spacingMark, .enclosingMark: continue
            default: break
            }
            if pendingSpace {
                out.append(" ")
                pendingSpace = false
            }
            if let base = latinBase[value] {
                out.append(contentsOf: base.unicodeScalars)
            } else {
                out.append(contentsOf: scalar.properties.lowercaseMapping.unicodeScalars)
            }
        }
        return String(out)
    }

    /// Precomposed Latin letters (Latin-1 Supplement, Extended-A and -B, Extended Additional) to their lowercase
    /// base letters, read from the scalars' Unicode names once.
    static let latinBase: [UInt32: String] = {
        var table: [UInt32: String] = [:]
        let ranges: [ClosedRange<UInt32>] = [0x00C0...0x024F, 0x1E00...0x1EFF]
        for range in ranges {
            for value in range {
                guard let scalar = Unicode.Scalar(value), let name = scalar.properties.name else { continue }
                guard let base = baseLetters(ofName: name) else { continue }
                table[value] = base
            }
        }
        return table
    }()

    /// "LATIN SMALL LETTER O WITH STROKE" → "o"; "LATIN CAPITAL LETTER AE" → "ae"; nil when not such a name.
    private static func baseLetters(ofName name: String) -> String? {
        let prefixes = ["LATIN SMALL LETTER ", "LATIN CAPITAL LETTER "]
        guard let prefix = prefixes.first(where: { name.hasPrefix($0) }) else { return nil }
        let rest = name.dropFirst(prefix.count)
        let letters = rest.split(separator: " ", maxSplits: 1).first ?? ""
        guard (1...2).contains(letters.count), letters.allSatisfy({ $0 >= "A" && $0 <= "Z" }) else { return nil }
        // Only "X WITH …" or a bare ligature name: "LATIN SMALL LETTER DOTLESS I" and the like stay as they are.
        let after = rest.dropFirst(letters.count)
        guard after.isEmpty || after.hasPrefix(" WITH ") else { return nil }
        return letters.lowercased()
    }
}
