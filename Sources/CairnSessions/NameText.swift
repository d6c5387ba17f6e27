// What a display name may not hide. Names are shown to other people next to messages and on maps, so a name must
// read the way it looks: no bidirectional controls (an override can make "alice‮lanigiro" display as another
// name, or reorder the text after it), and no invisible spacing (two names that look identical but differ by a
// zero-width space). The joiners U+200C and U+200D are part of how Persian words and emoji sequences are written,
// so they are allowed — but only between two visible characters, never leading, trailing or doubled.

/// Checks display names for invisible characters that change how text reads.
package enum NameText {
    /// Bidirectional controls: ALM, LRM, RLM, the embeddings and overrides, the isolates.
    static let bidiControls: Set<UInt32> = [
        0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E,
        0x2066, 0x2067, 0x2068, 0x2069,
    ]
    /// Invisible spacing: zero-width space, word joiner, zero-width no-break space (BOM), Mongolian vowel separator.
    static let invisibleSpacing: Set<UInt32> = [0x200B, 0x2060, 0xFEFF, 0x180E]
    /// Zero-width non-joiner and joiner: allowed between two visible characters only.
    static let joiners: Set<UInt32> = [0x200C, 0x200D]

    /// Why `name` is refused (completing "field 'name' …"), or nil when it reads as it looks.
    package static func invisibleProblem(in name: String) -> String? {
        let scalars = Array(name.unicodeScalars)
        for (i, scalar) in scalars.enumerated() {
            let value = scalar.value
            if bidiControls.contains(value) {
                return "must not contain bidirectional control characters (U+\(hex(value)))"
            }
            if invisibleSpacing.contains(value) {
                return "must not contain zero-width or invisible spacing characters (U+\(hex(value)))"
            }
            if joiners.contains(value) {
                let visibleBefore = i > 0 && isVisible(scalars[i - 1])
                let visibleAfter = i + 1 < scalars.count && isVisible(scalars[i + 1])
                guard visibleBefore && visibleAfter else {
                    return "may contain a zero-width joiner (U+\(hex(value))) only between two visible characters"
                }
            }
        }
        return nil
    }

    private static func isVisible(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        if bidiControls.contains(value) || invisibleSpacing.contains(value) || joiners.contains(value) { return false }
        switch scalar.properties.generalCategory {
        case .control, .format, .spaceSeparator, .lineSeparator, .paragraphSeparator: return false
        default: return true
        }
    }

    private static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
