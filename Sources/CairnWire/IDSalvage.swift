// When a request cannot be parsed, the error should still be a reply the client can match: if the request's `id`
// can be read, the error carries it. The strict parser gives up at the first problem and keeps nothing, so this
// reads the text again, leniently and for one thing only: a top-level `"id"` key whose value is a plain positive
// integer (what the envelope accepts). It never guesses: a nested or repeated `id`, one inside a string, or a
// value that is not exactly such an integer gives nil, and the error goes out as an `error` event as before.

extension Message {
    /// The request id of a text that failed to parse, when it can be read unambiguously; nil otherwise.
    public static func salvageID(from text: UnsafeRawBufferPointer) -> Int64? {
        var found: Int64?
        var depth = 0
        var i = 0
        let n = text.count
        /// The last significant byte outside strings, to know whether a string at depth 1 is a key.
        var previous: UInt8 = 0
        while i < n {
            let byte = text[i]
            switch byte {
            case UInt8(ascii: "\""):
                let start = i + 1
                i = start
                while i < n && text[i] != UInt8(ascii: "\"") { i += text[i] == UInt8(ascii: "\\") ? 2 : 1 }
                guard i < n else { return found }  // an unterminated string: stop reading
                let isKey = depth == 1 && (previous == UInt8(ascii: "{") || previous == UInt8(ascii: ","))
                let isID = i - start == 2 && text[start] == UInt8(ascii: "i") && text[start + 1] == UInt8(ascii: "d")
                if isKey && isID {
                    guard found == nil, let value = integer(after: i + 1, in: text) else { return nil }
                    found = value
                }
                previous = UInt8(ascii: "\"")
                i += 1
                continue
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                i += 1
                continue
            default: break
            }
            previous = byte
            i += 1
        }
        return found
    }

    /// The value after a key's closing quote at `index`: `: <digits>` followed by a delimiter, as a positive
    /// integer of at most 2^53; nil for anything else.
    private static func integer(after index: Int, in text: UnsafeRawBufferPointer) -> Int64? {
        var i = index
        func skipSpace() {
            while i < text.count && (text[i] == 0x20 || text[i] == 0x09 || text[i] == 0x0A || text[i] == 0x0D) {
                i += 1
            }
        }
        skipSpace()
        guard i < text.count, text[i] == UInt8(ascii: ":") else { return nil }
        i += 1
        skipSpace()
        var value: Int64 = 0
        var digits = 0
        while i < text.count, text[i] >= UInt8(ascii: "0"), text[i] <= UInt8(ascii: "9") {
            guard digits < 16 else { return nil }
            if digits == 0 && text[i] == UInt8(ascii: "0") { return nil }  // no leading zeros, no zero
            value = value * 10 + Int64(text[i] - UInt8(ascii: "0"))
            digits += 1
            i += 1
        }
        guard digits > 0, value <= 1 << 53 else { return nil }
        skipSpace()
        guard i < text.count, text[i] == UInt8(ascii: ",") || text[i] == UInt8(ascii: "}") else { return nil }
        return value
    }
}
