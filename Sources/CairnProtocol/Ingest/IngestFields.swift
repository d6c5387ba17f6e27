// The small pieces of HTTP the ingest endpoints read without Foundation: form fields (`a=1&b=2`, percent-decoded,
// `+` as a space), HTTP Basic credentials (base64 of `user:password`), and ISO 8601 times as apps write them
// (`2021-01-01T00:00:00Z`, `2021-01-01 00:00:00.250+01:00`). Each returns nil rather than guessing at a malformed
// value, so a report is refused with a reason instead of being stored wrong.

/// The fields of a query string or form body; a later field of the same name wins.
struct FormFields {
    private var values: [String: String] = [:]

    init(_ text: String) {
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.decode(parts[0]), !name.isEmpty else { continue }
            values[name] = parts.count > 1 ? Self.decode(parts[1]) ?? "\u{FFFD}" : ""
        }
    }

    subscript(_ name: String) -> String? { values[name] }

    /// Adds `other`'s fields, which win over these.
    mutating func merge(_ other: FormFields) { values.merge(other.values) { _, new in new } }

    /// Percent-decoded UTF-8, `+` as a space; nil for a broken escape, bytes that are not UTF-8, or U+0000 (raw
    /// or `%00`: no text the hub reads holds it, PostgreSQL's text cannot store it).
    static func decode(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var it = text.utf8.makeIterator()
        while let c = it.next() {
            switch c {
            case UInt8(ascii: "+"): bytes.append(32)
            case UInt8(ascii: "%"):
                guard let h = it.next().flatMap(hex), let l = it.next().flatMap(hex), h | l != 0 else { return nil }
                bytes.append(h << 4 | l)
            case 0: return nil
            default: bytes.append(c)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hex(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: c - 48
        case 65...70: c - 55
        case 97...102: c - 87
        default: nil
        }
    }
}

extension String {
    /// The text percent-escaped for a form field (everything but unreserved characters).
    var percentEscaped: String {
        var out = ""
        for c in utf8 {
            if (48...57).contains(c) || (65...90).contains(c) || (97...122).contains(c) || c == 45 || c == 46 || c == 95
                || c == 126
            {
                out.unicodeScalars.append(Unicode.Scalar(c))
            } else {
                let digits = Array("0123456789ABCDEF".unicodeScalars)
                out += "%" + String(digits[Int(c >> 4)]) + String(digits[Int(c & 15)])
            }
        }
        return out
    }
}

/// `Authorization: Basic <base64(user:password)>`.
struct BasicCredentials {
    var user: String
    var password: String

    init?(_ header: String) {
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "basic",
            let raw = Self.base64(parts[1].trimmingCharacters()), !raw.contains(0),
            let text = String(validating: raw, as: UTF8.self), let colon = text.firstIndex(of: ":")
        else { return nil }
        user = String(text[..<colon])
        password = String(text[text.index(after: colon)...])
    }

    /// Standard base64 with optional padding; nil for anything else.
    static func base64(_ text: Substring) -> [UInt8]? {
        var bits: UInt32 = 0
        var count = 0
        var out: [UInt8] = []
        var padding = 0
        for c in text.utf8 {
            let v: UInt32
            switch c {
            case 65...90: v = UInt32(c - 65)
            case 97...122: v = UInt32(c - 71)
            case 48...57: v = UInt32(c + 4)
            case UInt8(ascii: "+"): v = 62
            case UInt8(ascii: "/"): v = 63
            case UInt8(ascii: "="):
                padding += 1
                continue
            default: return nil
            }
            guard padding == 0 else { return nil }
            bits = bits << 6 | v
            count += 6
            if count >= 8 {
                count -= 8
                out.append(UInt8(truncatingIfNeeded: bits >> UInt32(count)))
            }
        }
        guard count < 6, padding <= 2 else { return nil }
        return out
    }
}

extension Substring {
    fileprivate func trimmingCharacters() -> Substring {
        var s = self
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return s
    }
}

/// ISO 8601 date-times: `YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM|±HHMM|±HH)`; `T` may be a space, and an offset's `+`
/// may arrive as a space (a `+` a form encoder left unescaped). Without a zone the time is UTC.
enum ISO8601 {
    static func milliseconds(_ text: String) -> Int64? {
        let b = Array(text.utf8)
        func digits(_ at: Int, _ n: Int) -> Int? {
            guard at + n <= b.count else { return nil }
            var v = 0
            for i in at..<(at + n) {
                guard (48...57).contains(b[i]) else { return nil }
                v = v * 10 + Int(b[i] - 48)
            }
            return v
        }
        guard b.count >= 19, let year = digits(0, 4), b[4] == 45, let month = digits(5, 2), b[7] == 45,
            let day = digits(8, 2), b[10] == 84 || b[10] == 116 || b[10] == 32, let hour = digits(11, 2),
            b[13] == 58, let minute = digits(14, 2), b[16] == 58, let second = digits(17, 2)
        else { return nil }
        guard (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        var i = 19
        var fraction = 0
        if i < b.count, b[i] == 46 || b[i] == 44 {
            i += 1
            var scale = 100
            let start = i
            while i < b.count, (48...57).contains(b[i]) {
                fraction += Int(b[i] - 48) * scale
                scale /= 10
                i += 1
            }
            guard i > start else { return nil }
        }
        var offset = 0
        if i < b.count {
            switch b[i] {
            case 90, 122:
                i += 1
            case 43, 45, 32:
                let sign = b[i] == 45 ? -1 : 1
                i += 1
                guard let h = digits(i, 2) else { return nil }
                i += 2
                var m = 0
                if i < b.count {
                    if b[i] == 58 { i += 1 }
                    guard let mm = digits(i, 2) else { return nil }
                    m = mm
                    i += 2
                }
                guard h < 24, m < 60 else { return nil }
                offset = sign * (h * 3600 + m * 60)
            default: return nil
            }
        }
        guard i == b.count else { return nil }
        // Days from 1970-01-01 to the civil date (Howard Hinnant's algorithm).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146097 + doe - 719468
        let seconds = Int64(days) * 86400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offset)
        return seconds * 1000 + Int64(fraction)
    }
}
