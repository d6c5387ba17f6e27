// Text the statements build from a caller's words.

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
}
