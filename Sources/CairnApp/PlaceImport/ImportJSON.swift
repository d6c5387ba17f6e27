// A small JSON reader for GeoJSON imports: the whole document as values, each object remembering the byte offset
// it starts at (so a bad feature is named by its line). Strict RFC 8259 (no comments, no trailing commas), nesting
// limited to 64 levels so a hostile file cannot exhaust the stack. Pure Swift: the fuzz target compiles it alone.

/// A JSON value.
indirect enum ImportJSON: Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([ImportJSON])
    /// Members in order and the byte offset of the opening brace.
    case object([(key: String, value: ImportJSON)], offset: Int)

    static func == (a: ImportJSON, b: ImportJSON) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.number(let x), .number(let y)): return x == y
        case (.string(let x), .string(let y)): return x == y
        case (.array(let x), .array(let y)): return x == y
        case (.object(let x, let p), .object(let y, let q)):
            return p == q && x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: return false
        }
    }

    /// The member `key` of an object (the first, if repeated).
    subscript(key: String) -> ImportJSON? {
        guard case .object(let members, _) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// Parses a whole document; the error names the byte offset.
    static func parse(_ bytes: [UInt8]) -> Result<ImportJSON, ImportJSONError> {
        var reader = ImportJSONReader(bytes: bytes)
        do {
            reader.skipSpace()
            let value = try reader.value(depth: 0)
            reader.skipSpace()
            guard reader.i == bytes.count else { throw ImportJSONError(offset: reader.i, reason: "text after the end") }
            return .success(value)
        } catch let error as ImportJSONError {
            return .failure(error)
        } catch {
            return .failure(ImportJSONError(offset: reader.i, reason: "\(error)"))
        }
    }
}

/// Why a document is not JSON, and where.
struct ImportJSONError: Error, Equatable {
    let offset: Int
    let reason: String
}

private struct ImportJSONReader {
    let bytes: [UInt8]
    var i = 0

    static let maxDepth = 64

    mutating func skipSpace() {
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
    }

    func fail(_ reason: String) -> ImportJSONError { ImportJSONError(offset: i, reason: reason) }

    mutating func value(depth: Int) throws(ImportJSONError) -> ImportJSON {
        guard depth < Self.maxDepth else { throw fail("nested deeper than \(Self.maxDepth) levels") }
        guard i < bytes.count else { throw fail("unexpected end") }
        switch bytes[i] {
        case UInt8(ascii: "{"):
            let start = i
            i += 1
            var members: [(key: String, value: ImportJSON)] = []
            skipSpace()
            if i < bytes.count && bytes[i] == UInt8(ascii: "}") {
                i += 1
                return .object(members, offset: start)
            }
            while true {
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
                let key = try string()
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw fail("expected ':'") }
                i += 1
                skipSpace()
                members.append((key, try value(depth: depth + 1)))
                skipSpace()
                guard i < bytes.count else { throw fail("unexpected end in an object") }
                if bytes[i] == UInt8(ascii: ",") {
                    i += 1
                    continue
                }
                guard bytes[i] == UInt8(ascii: "}") else { throw fail("expected ',' or '}'") }
                i += 1
                return .object(members, offset: start)
            }
        case UInt8(ascii: "["):
            i += 1
            var elements: [ImportJSON] = []
            skipSpace()
            if i < bytes.count && bytes[i] == UInt8(ascii: "]") {
                i += 1
                return .array(elements)
            }
            while true {
                skipSpace()
                elements.append(try value(depth: depth + 1))
                skipSpace()
                guard i < bytes.count else { throw fail("unexpected end in an array") }
                if bytes[i] == UInt8(ascii: ",") {
                    i += 1
                    continue
                }
                guard bytes[i] == UInt8(ascii: "]") else { throw fail("expected ',' or ']'") }
                i += 1
                return .array(elements)
            }
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        default: return .number(try number())
        }
    }

    mutating func literal(_ word: String, _ value: ImportJSON) throws(ImportJSONError) -> ImportJSON {
        let w = Array(word.utf8)
        guard i + w.count <= bytes.count, Array(bytes[i..<i + w.count]) == w else { throw fail("unexpected text") }
        i += w.count
        return value
    }

    mutating func number() throws(ImportJSONError) -> Double {
        let start = i
        if i < bytes.count && bytes[i] == UInt8(ascii: "-") { i += 1 }
        let digits = i
        while i < bytes.count, bytes[i] >= 0x30 && bytes[i] <= 0x39 { i += 1 }
        guard i > digits else { throw fail("unexpected text") }
        if i - digits > 1 && bytes[digits] == 0x30 { throw fail("a number with a leading zero") }
        if i < bytes.count && bytes[i] == UInt8(ascii: ".") {
            i += 1
            let fraction = i
            while i < bytes.count, bytes[i] >= 0x30 && bytes[i] <= 0x39 { i += 1 }
            guard i > fraction else { throw fail("a number without fraction digits") }
        }
        if i < bytes.count && (bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E")) {
            i += 1
            if i < bytes.count && (bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-")) { i += 1 }
            let exponent = i
            while i < bytes.count, bytes[i] >= 0x30 && bytes[i] <= 0x39 { i += 1 }
            guard i > exponent else { throw fail("a number without exponent digits") }
        }
        guard let value = Double(String(decoding: bytes[start..<i], as: UTF8.self)) else {
            throw fail("not a number")
        }
        return value
    }

    mutating func string() throws(ImportJSONError) -> String {
        i += 1  // the opening quote
        var out: [UInt8] = []
        while true {
            guard i < bytes.count else { throw fail("a string is not closed") }
            let b = bytes[i]
            if b == UInt8(ascii: "\"") {
                i += 1
                return String(decoding: out, as: UTF8.self)
            }
            if b < 0x20 { throw fail("a control character in a string") }
            if b != UInt8(ascii: "\\") {
                out.append(b)
                i += 1
                continue
            }
            i += 1
            guard i < bytes.count else { throw fail("a string is not closed") }
            let e = bytes[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if scalar >= 0xD800 && scalar < 0xDC00 {
                    // A high surrogate must be followed by an escaped low one.
                    guard i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u")
                    else { throw fail("an unpaired surrogate") }
                    i += 2
                    let low = try hex4()
                    guard low >= 0xDC00 && low < 0xE000 else { throw fail("an unpaired surrogate") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if scalar >= 0xDC00 && scalar < 0xE000 {
                    throw fail("an unpaired surrogate")
                }
                guard let unicode = Unicode.Scalar(scalar) else { throw fail("an invalid escape") }
                out.append(contentsOf: Array(String(Character(unicode)).utf8))
            default: throw fail("an invalid escape")
            }
        }
    }

    mutating func hex4() throws(ImportJSONError) -> UInt32 {
        guard i + 4 <= bytes.count else { throw fail("a \\u escape needs 4 hex digits") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[i]
            let digit: UInt32
            switch b {
            case 0x30...0x39: digit = UInt32(b - 0x30)
            case 0x41...0x46: digit = UInt32(b - 0x41 + 10)
            case 0x61...0x66: digit = UInt32(b - 0x61 + 10)
            default: throw fail("a \\u escape needs 4 hex digits")
            }
            value = value * 16 + digit
            i += 1
        }
        return value
    }
}
