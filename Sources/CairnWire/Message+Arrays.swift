// Arrays inside a parsed message, for the HTTP ingest formats that send them (an Overland batch is an array of GeoJSON
// points, each point's coordinates an array of numbers). The WebSocket protocol never needs them, so they are a cold
// path: the array's text, already validated by `parse`, is split into its elements, and each element is parsed again
// on its own (an object as a nested Message, a number through a one-field message), which allocates.

extension Message {
    /// The elements of the array at `key`, which must all be objects, each as its own Message (no id/op rules, no
    /// field-count limit); nil when absent or null. Throws `bad_request` naming `key` for any other element, and for
    /// more than `limit` elements — counted before any is parsed, so a body of a million `{}` costs one scan.
    public func objects(_ key: String, limit: Int = .max) throws(WireError) -> [Message]? {
        guard let text = try arrayText(key) else { return nil }
        guard Self.count(of: text, atMost: limit) else {
            throw .badRequest("field '\(key)' holds more than \(limit) elements")
        }
        var nestedLimits = limits
        nestedLimits.maxFields = .max
        var out: [Message] = []
        for element in Self.elements(of: text) {
            guard element.first == UInt8(ascii: "{") else { throw .badRequest("field '\(key)' must hold objects") }
            var nested = Message(limits: nestedLimits)
            try Array(element).withUnsafeBufferPointer { (buffer) throws(WireError) in
                try nested.parse(UnsafeRawBufferPointer(buffer), envelope: false)
            }
            out.append(nested)
        }
        return out
    }

    /// The elements of the array at `key`, which must all be numbers; nil when absent or null. Throws
    /// `bad_request` naming `key` for any other element.
    public func doubles(_ key: String) throws(WireError) -> [Double]? {
        guard let text = try arrayText(key) else { return nil }
        var out: [Double] = []
        var holder = Message()
        for element in Self.elements(of: text) {
            guard let first = element.first, first == UInt8(ascii: "-") || (48...57).contains(first) else {
                throw .badRequest("field '\(key)' must hold numbers")
            }
            let wrapped = Array(#"{"n":"#.utf8) + element + [UInt8(ascii: "}")]
            try holder.parse(wrapped)
            guard let value = try holder.double("n") else { throw .badRequest("field '\(key)' must hold numbers") }
            out.append(value)
        }
        return out
    }

    /// True when a validated array text holds at most `limit` elements (top-level commas, without splitting it).
    static func count(of text: ArraySlice<UInt8>, atMost limit: Int) -> Bool {
        guard limit < .max else { return true }
        var commas = 0
        var depth = 0
        var inString = false
        var i = text.startIndex + 1
        let end = text.endIndex - 1
        var empty = true
        while i < end {
            let c = text[i]
            if inString {
                if c == UInt8(ascii: "\\") { i += 1 } else if c == UInt8(ascii: "\"") { inString = false }
            } else {
                switch c {
                case UInt8(ascii: "\""): inString = true
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
                case UInt8(ascii: ","):
                    if depth == 0 {
                        commas += 1
                        if commas >= limit { return false }
                    }
                default: break
                }
                if c != 32 && c != 9 && c != 10 && c != 13 { empty = false }
            }
            i += 1
        }
        return empty || commas + 1 <= limit
    }

    /// The elements of a validated array text (`[` … `]`), each without surrounding whitespace.
    static func elements(of text: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        var out: [ArraySlice<UInt8>] = []
        var i = text.startIndex + 1  // past `[`
        let end = text.endIndex - 1  // at `]`
        var depth = 0
        var inString = false
        var start: Int?
        func isSpace(_ c: UInt8) -> Bool { c == 32 || c == 9 || c == 10 || c == 13 }
        func close(_ upTo: Int) {
            guard let s = start else { return }
            var e = upTo
            while e > s, isSpace(text[e - 1]) { e -= 1 }
            out.append(text[s..<e])
            start = nil
        }
        while i < end {
            let c = text[i]
            if inString {
                if c == UInt8(ascii: "\\") {
                    i += 2
                    continue
                }
                if c == UInt8(ascii: "\"") { inString = false }
                i += 1
                continue
            }
            switch c {
            case UInt8(ascii: "\""):
                inString = true
                if start == nil { start = i }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                if start == nil { start = i }
            case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
            case UInt8(ascii: ","):
                if depth == 0 { close(i) }
            default:
                if start == nil, !isSpace(c) { start = i }
            }
            i += 1
        }
        close(end)
        return out
    }
}
