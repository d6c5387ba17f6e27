// Folding a place name for search, so "zermatt" finds "Zermatt", "reserve" finds "Réserve", "ΣΙΦΝΟΣ" finds "Σίφνος"
// and "strasse" finds "Straße", without Foundation (the domain does not import it). Each scalar in turn:
// combining marks are dropped (a name written decomposed, and what a case mapping leaves, as İ → i + dot above);
// a letter with diacritics becomes its base letter, in Latin ("LATIN CAPITAL LETTER E WITH ACUTE" → e, also ø, ł,
// đ, and æ → ae, œ → oe), Greek (ά → α, ΐ → ι) and Cyrillic (ѐ → е, ӱ → у, and ё → е, which Russian often writes
// as е; й, ї and the other letters of their own stay, also when written decomposed: и + breve is put back to й,
// and kana with a separate voicing mark to the voiced kana, so NFC and NFD spellings fold alike); a few letters
// fold as case folding does rather than lowercasing (ß and ẞ → ss, final ς → σ, ſ → s, Turkish dotless ı → i so
// "diyarbakir" finds "Diyarbakır"); full-width ASCII becomes ASCII; everything else is lowercased by the standard
// library's Unicode case mapping, so scripts without case (CJK, Arabic, …) are unchanged. Whitespace runs become one
// space.

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
            if isMark(scalar) {
                // A letter of its own written decomposed (и + breve) is put back together, so it folds as its
                // precomposed form does; any other mark is dropped.
                if let base = out.last, let letter = composed[UInt64(base.value) << 32 | UInt64(value)] {
                    out.removeLast()
                    out.append(letter)
                }
                continue
            }
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

    /// Letters that stay letters of their own (not in `table`) but are canonically a base letter and a mark, keyed by
    /// the lowercase base's value shifted left 32 bits or'ed with the mark's: what a name written decomposed (NFD)
    /// must be put back to, so it folds like the same name precomposed (NFC).
    static let composed: [UInt64: Unicode.Scalar] = {
        var pairs: [(base: UInt32, mark: UInt32, letter: UInt32)] = [
            (0x0438, 0x0306, 0x0439),  // и + breve → й
            (0x0443, 0x0306, 0x045E),  // у + breve → ў
            (0x0456, 0x0308, 0x0457),  // і + diaeresis → ї
            (0x0433, 0x0301, 0x0453),  // г + acute → ѓ
            (0x043A, 0x0301, 0x045C),  // к + acute → ќ
        ]
        // Kana with the (semi-)voiced sound mark: か + ゙ → が, は + ゚ → ぱ, in hiragana and katakana (+0x60).
        let voiced: [UInt32] =
            [0x304B, 0x304D, 0x304F, 0x3051, 0x3053, 0x3055, 0x3057, 0x3059, 0x305B, 0x305D, 0x305F, 0x3061]
            + [0x3064, 0x3066, 0x3068, 0x306F, 0x3072, 0x3075, 0x3078, 0x307B]
        for base in voiced {
            pairs.append((base, 0x3099, base + 1))
            pairs.append((base + 0x60, 0x3099, base + 0x61))
        }
        for base: UInt32 in [0x306F, 0x3072, 0x3075, 0x3078, 0x307B] {
            pairs.append((base, 0x309A, base + 2))
            pairs.append((base + 0x60, 0x309A, base + 0x62))
        }
        pairs += [
            (0x3046, 0x3099, 0x3094), (0x30A6, 0x3099, 0x30F4),  // う, ウ
            (0x309D, 0x3099, 0x309E), (0x30FD, 0x3099, 0x30FE),  // ゝ, ヽ
            (0x30EF, 0x3099, 0x30F7), (0x30F0, 0x3099, 0x30F8), (0x30F1, 0x3099, 0x30F9), (0x30F2, 0x3099, 0x30FA),
        ]
        var composed: [UInt64: Unicode.Scalar] = [:]
        for pair in pairs { composed[UInt64(pair.base) << 32 | UInt64(pair.mark)] = Unicode.Scalar(pair.letter)! }
        return composed
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
