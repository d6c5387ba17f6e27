// An event's hashtag: what a client may send (`#Party2026` or `party2026`) and its canonical form, the key events
// are stored and compared by (lower case, without `#`). Letters, digits and `_` only, so a tag reads the same in a
// caption as in a request, and a caption's `#words` can be matched against it.
public import CairnCore

/// Checks and canonicalises event hashtags.
public enum EventTag {
    /// The longest tag, in bytes of UTF-8 (without `#`).
    public static let maxBytes = 64

    /// The canonical tag of `text`, or a `bad_request` naming `field`.
    public static func canonical(_ text: String, field: String = "tag") throws(DomainError) -> String {
        var body = Substring(text)
        if body.hasPrefix("#") { body = body.dropFirst() }
        guard !body.isEmpty, body.utf8.count <= maxBytes,
            body.unicodeScalars.allSatisfy({
                $0 == "_" || $0.properties.isAlphabetic || $0.properties.numericType != nil
            })
        else {
            throw .badRequest(
                "field '\(field)' must be a hashtag: 1–\(maxBytes) bytes of letters, digits and '_' (a leading '#' "
                    + "is allowed)")
        }
        return body.lowercased()
    }

    /// The `#words` of `text`, canonical, in order of appearance, without repeats.
    public static func hashtags(in text: String) -> [String] {
        var found: [String] = []
        var current: String?
        func end() {
            if let tag = current?.lowercased(), !tag.isEmpty, tag.utf8.count <= maxBytes, !found.contains(tag) {
                found.append(tag)
            }
            current = nil
        }
        for scalar in text.unicodeScalars {
            if scalar == "#" {
                end()
                current = ""
            } else if current != nil,
                scalar == "_" || scalar.properties.isAlphabetic || scalar.properties.numericType != nil
            {
                current!.unicodeScalars.append(scalar)
            } else {
                end()
            }
        }
        end()
        return found
    }

    /// Whether a picture with `caption`, posted to the event tagged `eventTag` (if any), matches a search: its
    /// caption holds every word (lower-cased, as `words` are) and it carries every tag, as its event's or as a whole
    /// `#word` of its caption. The stores narrow candidates with SQL and decide with this.
    public static func matches(caption: String?, eventTag: String?, words: [String], tags: [String]) -> Bool {
        let folded = (caption ?? "").lowercased()
        guard words.allSatisfy({ folded.contains($0) }) else { return false }
        guard !tags.isEmpty else { return true }
        let captionTags = hashtags(in: folded)
        return tags.allSatisfy { $0 == eventTag || captionTags.contains($0) }
    }
}
