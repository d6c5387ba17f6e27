// Validation and decoding of JSON string bodies (the bytes between the quotes).
// Parsing only validates: it checks UTF-8 (RFC 3629: no overlongs, no UTF-8-encoded surrogates, nothing above
// U+10FFFF), control characters and escapes (including surrogate pairs; `\u0000` is refused, so no string read
// from the wire holds U+0000, which PostgreSQL's text cannot store) in one pass and remembers whether the
// string had any escape. Decoding happens later and only when someone asks for the value, straight into the
// destination's storage, so unread strings cost nothing beyond that one scan.

/// Why a string body was refused.
enum StringProblem: Error, Equatable {
    /// The input ended before the closing quote.
    case unterminated
    /// A byte below 0x20 appeared unescaped.
    case controlCharacter(UInt8)
    /// A backslash was followed by something that is not a JSON escape (nil: by the end of input).
    case invalidEscape(UInt8?)
    /// `\u` was not followed by four hex digits.
    case invalidUnicodeEscape
    /// A `\uD800`–`\uDFFF` escape that is not part of a high-low surrogate pair.
    case loneSurrogate
    /// `\u0000`: U+0000 is refused in every string (a store's text cannot hold it on every engine).
    case nulCharacter
    /// The bytes are not well-formed UTF-8.
    case invalidUTF8
}

/// Scanning and decoding of JSON string bodies over raw bytes.
enum JSONString {
    /// What a successful scan found.
    struct Scan {
        /// The index of the closing quote.
        var end: Int
        /// Whether the body contains at least one backslash escape.
        var escaped: Bool
    }

    /// Validates the string body starting at `start` (just after the opening quote) and finds its closing quote.
    /// On failure the problem is thrown and `problemOffset` holds the offending byte's index.
    static func scan(
        _ p: UnsafePointer<UInt8>, from start: Int, end: Int, problemOffset: inout Int
    ) throws(StringProblem) -> Scan {
        var i = start
        var escaped = false
        while true {
            // Fast path: plain printable ASCII.
            while i < end {
                let c = p[i]
                if c < 0x20 || c == 0x22 || c == 0x5C || c >= 0x80 { break }
                i += 1
            }
            guard i < end else {
                problemOffset = i
                throw .unterminated
            }
            let c = p[i]
            if c == 0x22 {
                return Scan(end: i, escaped: escaped)
            }
            problemOffset = i
            if c == 0x5C {
                escaped = true
                i = try scanEscape(p, at: i, end: end)
            } else if c < 0x20 {
                throw .controlCharacter(c)
            } else {
                i = try scanUTF8(p, at: i, end: end)
            }
        }
    }

    /// Validates the escape at `i` (a backslash) and returns the index after it.
    private static func scanEscape(_ p: UnsafePointer<UInt8>, at i: Int, end: Int) throws(StringProblem) -> Int {
        guard i + 1 < end else { throw .invalidEscape(nil) }
        switch p[i + 1] {
        case 0x22, 0x5C, 0x2F, 0x62, 0x66, 0x6E, 0x72, 0x74:  // " \ / b f n r t
            return i + 2
        case 0x75:  // u
            guard let unit = hex4(p, at: i + 2, end: end) else { throw .invalidUnicodeEscape }
            switch unit {
            case 0xD800...0xDBFF:
                guard i + 7 < end, p[i + 6] == 0x5C, p[i + 7] == 0x75 else { throw .loneSurrogate }
                guard let low = hex4(p, at: i + 8, end: end) else { throw .invalidUnicodeEscape }
                guard (0xDC00...0xDFFF).contains(low) else { throw .loneSurrogate }
                return i + 12
            case 0xDC00...0xDFFF:
                throw .loneSurrogate
            case 0:
                throw .nulCharacter
            default:
                return i + 6
            }
        default:
            throw .invalidEscape(p[i + 1])
        }
    }

    /// Validates one multi-byte UTF-8 sequence starting at `i` and returns the index after it.
    private static func scanUTF8(_ p: UnsafePointer<UInt8>, at i: Int, end: Int) throws(StringProblem) -> Int {
        @inline(__always) func byte(_ k: Int, in range: ClosedRange<UInt8>) -> Bool {
            k < end && range.contains(p[k])
        }
        let tail: ClosedRange<UInt8> = 0x80...0xBF
        switch p[i] {
        case 0xC2...0xDF:
            if byte(i + 1, in: tail) { return i + 2 }
        case 0xE0:
            if byte(i + 1, in: 0xA0...0xBF), byte(i + 2, in: tail) { return i + 3 }
        case 0xE1...0xEC, 0xEE...0xEF:
            if byte(i + 1, in: tail), byte(i + 2, in: tail) { return i + 3 }
        case 0xED:  // excludes U+D800...U+DFFF
            if byte(i + 1, in: 0x80...0x9F), byte(i + 2, in: tail) { return i + 3 }
        case 0xF0:
            if byte(i + 1, in: 0x90...0xBF), byte(i + 2, in: tail), byte(i + 3, in: tail) { return i + 4 }
        case 0xF1...0xF3:
            if byte(i + 1, in: tail), byte(i + 2, in: tail), byte(i + 3, in: tail) { return i + 4 }
        case 0xF4:  // up to U+10FFFF
            if byte(i + 1, in: 0x80...0x8F), byte(i + 2, in: tail), byte(i + 3, in: tail) { return i + 4 }
        default:
            break
        }
        throw .invalidUTF8
    }

    /// The value of four hex digits at `i`, or nil.
    private static func hex4(_ p: UnsafePointer<UInt8>, at i: Int, end: Int) -> UInt32? {
        guard i + 4 <= end else { return nil }
        var value: UInt32 = 0
        for k in i..<(i + 4) {
            guard let digit = hexValue(p[k]) else { return nil }
            value = value << 4 | digit
        }
        return value
    }

    @inline(__always) private static func hexValue(_ c: UInt8) -> UInt32? {
        switch c {
        case 0x30...0x39: return UInt32(c - 0x30)
        case 0x41...0x46: return UInt32(c - 0x41 + 10)
        case 0x61...0x66: return UInt32(c - 0x61 + 10)
        default: return nil
        }
    }

    /// Decodes a body that `scan` accepted into `out`, which must have room for `count` bytes (decoding never
    /// grows a string), and returns the number of bytes written.
    static func decode(_ p: UnsafePointer<UInt8>, count: Int, into out: UnsafeMutablePointer<UInt8>) -> Int {
        var i = 0
        var o = 0
        while i < count {
            let c = p[i]
            if c != 0x5C {
                out[o] = c
                o += 1
                i += 1
                continue
            }
            // Escapes were validated by `scan`; the guards below only keep a bad caller memory-safe.
            guard i + 1 < count else { break }
            let e = p[i + 1]
            i += 2
            let simple: UInt8
            switch e {
            case 0x62: simple = 0x08
            case 0x66: simple = 0x0C
            case 0x6E: simple = 0x0A
            case 0x72: simple = 0x0D
            case 0x74: simple = 0x09
            case 0x75:
                guard var scalar = hex4(p, at: i, end: count) else { return o }
                i += 4
                if (0xD800...0xDBFF).contains(scalar), i + 6 <= count,
                    let low = hex4(p, at: i + 2, end: count), (0xDC00...0xDFFF).contains(low)
                {
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    i += 6
                } else if (0xD800...0xDFFF).contains(scalar) {
                    scalar = 0xFFFD
                }
                o += encodeUTF8(scalar, into: out + o)
                continue
            default: simple = e  // " \ /
            }
            out[o] = simple
            o += 1
        }
        return o
    }

    /// Writes `scalar` as UTF-8 and returns the byte count (1–4). Never longer than the `\uXXXX` text it replaces.
    @inline(__always) private static func encodeUTF8(_ scalar: UInt32, into out: UnsafeMutablePointer<UInt8>) -> Int {
        switch scalar {
        case 0..<0x80:
            out[0] = UInt8(scalar)
            return 1
        case 0x80..<0x800:
            out[0] = UInt8(0xC0 | scalar >> 6)
            out[1] = UInt8(0x80 | scalar & 0x3F)
            return 2
        case 0x800..<0x10000:
            out[0] = UInt8(0xE0 | scalar >> 12)
            out[1] = UInt8(0x80 | scalar >> 6 & 0x3F)
            out[2] = UInt8(0x80 | scalar & 0x3F)
            return 3
        default:
            out[0] = UInt8(0xF0 | scalar >> 18)
            out[1] = UInt8(0x80 | scalar >> 12 & 0x3F)
            out[2] = UInt8(0x80 | scalar >> 6 & 0x3F)
            out[3] = UInt8(0x80 | scalar & 0x3F)
            return 4
        }
    }
}
