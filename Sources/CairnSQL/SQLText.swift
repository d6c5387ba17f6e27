// Text the statements build from a caller's words, and the one folding names are searched by.
import Foundation

/// Helpers for text in statements.
public enum SQLText {
    /// LIKE's wildcards escaped with a backslash (the statements say `ESCAPE '\'`). Scalar by scalar: a wildcard
    /// that follows a prepended or combining mark is one Character with it, and comparing Characters would leave it
    /// unescaped.
    public static func escapeLike(_ text: String) -> String {
        var out = ""
        for ch in text.unicodeScalars {
            if ch == "%" || ch == "_" || ch == "\\" { out.unicodeScalars.append("\\") }
            out.unicodeScalars.append(ch)
        }
        return out
    }

    /// The form a name is searched by (the `users.name_folded` column, and the query it is matched against):
    /// Unicode's lower case (locale-free, Swift's `lowercased()`), then canonically composed (NFC). So "é" finds
    /// "Émile" whether either was typed with a precomposed letter or a combining accent, the same on both engines
    /// (neither engine's own lower() or LIKE is asked to know Unicode). Accents still count: "e" does not find
    /// "Émile" by name (a prefix with a combining accent must not find the name without it).
    public static func fold(_ text: String) -> String {
        text.lowercased().precomposedStringWithCanonicalMapping
    }
}
