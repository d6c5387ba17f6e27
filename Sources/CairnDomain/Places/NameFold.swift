// Folding a place name for search, so "zermatt" finds "Zermatt", "reserve" finds "Réserve", "ΣΙΦΝΟΣ" finds "Σίφνος"
// and "strasse" finds "Straße", without Foundation (the domain does not import it). Each scalar in turn:
// combining marks are dropped (a name written decomposed, and what a case mapping leaves, as İ → i + dot above);
// a letter with diacritics becomes its base letter, in Latin ("LATIN CAPITAL LETTER E WITH ACUTE" → e, also ø, ł,
// đ, and æ → ae, œ → oe), Greek (ά → α, ΐ → ι) and Cyrillic (ѐ → е, ӱ → у, and ё → е, which Russian often writes
// as е; й, ї and the other letters of their own stay); a few letters fold as case folding does rather than
// lowercasing (ß and ẞ → ss, final ς → σ, ſ → s, Turkish dotless ı → i so "diyarbakir" finds "Diyarbakır");
// full-width ASCII becomes ASCII; everything else is lowercased by the standard library's Unicode case mapping, so
// scripts without case (CJK, Arabic, …) are unchanged. Whitespace runs become one space.

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
            if isMark(scalar) { continue }
            if pendingSpace {
                out.append(" ")
                pendingSpace = false
            }
            if let folded = table[value] {
                out.append(contentsOf: folded.unicodeScalars)
            } else {
                for lower in scalar.properties.lowercaseMapping.unicodeScalars where !isMark(lower) {
                    out.append(lower)
                }
            }
        }
        return String(out)
    }

    @inline(__always)
    private static func isMark(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return true
        default: return false
        }
    }

    /// Scalars whose folded form is not simply their lowercase mapping, to that form; built once from the
    /// scalars' Unicode names and a few explicit letters.
    static let table: [UInt32: String] = {
        var table: [UInt32: String] = [:]
        for range: ClosedRange<UInt32> in [0x00C0...0x024F, 0x1E00...0x1EFF] {
            for value in range {
                guard let scalar = Unicode.Scalar(value), let name = scalar.properties.name else { continue }
                guard let base = latinBase(ofName: name) else { continue }
                table[value] = base
            }
        }
        // Greek and Cyrillic: "GREEK SMALL LETTER ALPHA WITH PSILI AND OXIA" → the letter named
        // "GREEK SMALL LETTER ALPHA", lowercased.
        let scripts: [ClosedRange<UInt32>] = [0x0370...0x03FF, 0x1F00...0x1FFF, 0x0400...0x052F]
        var byName: [String: Unicode.Scalar] = [:]
        for range in scripts {
            for value in range {
                guard let scalar = Unicode.Scalar(value), let name = scalar.properties.name else { continue }
                byName[name] = scalar
            }
        }
        for range in scripts {
            for value in range {
                guard let scalar = Unicode.Scalar(value), let name = scalar.properties.name,
                    let with = name.firstRange(of: " WITH "), let base = byName[String(name[..<with.lowerBound])]
                else { continue }
                table[value] = lowercased(base)
            }
        }
        let explicit: [UInt32: String] = [
            0x00DF: "ss", 0x1E9E: "ss",  // ß, ẞ
            0x0131: "i", 0x0130: "i",  // Turkish ı and İ
            0x017F: "s",  // ſ
            0x03C2: "σ",  // final sigma
            0x0451: "е", 0x0401: "е",  // ё, Ё
        ]
        table.merge(explicit) { _, new in new }
        // Full-width ASCII (U+FF01…U+FF5E) as ASCII.
        for value: UInt32 in 0xFF01...0xFF5E {
            table[value] = lowercased(Unicode.Scalar(value - 0xFEE0)!)
        }
        return table
    }()

    private static func lowercased(_ scalar: Unicode.Scalar) -> String {
        var out = String.UnicodeScalarView()
        for lower in scalar.properties.lowercaseMapping.unicodeScalars where !isMark(lower) { out.append(lower) }
        return String(out)
    }

    /// "LATIN SMALL LETTER O WITH STROKE" → "o"; "LATIN CAPITAL LETTER AE" → "ae"; nil when not such a name.
    private static func latinBase(ofName name: String) -> String? {
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
