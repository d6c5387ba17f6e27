// The strict, validating JSON reader behind `Message.parse`.
// One forward pass over raw bytes with one byte of lookahead and no token objects: nested values are only
// validated, top-level fields are recorded as spans in a reused table, and every refusal becomes a
// `bad_request` that says what was wrong, where, and in which field. It never traps on input: every index is
// checked against the end before it is read (the fuzz target in fuzz/ runs it under AddressSanitizer).
// Containers are walked with an explicit, reused stack rather than recursion, so no nesting can exhaust the
// thread's stack, whatever `WireLimits.maxDepth` says.

/// The reusable tables one parse fills; `Message` keeps them between parses so their capacity survives.
struct ParseBuffers: Sendable {
    /// The top-level fields, in order.
    var fields: [MessageField] = []
    /// Every key seen, for duplicate detection, and the decoded bytes of escaped keys.
    var keys = KeyIndex()
    /// Open containers inside the field being read (see `skipContainer`).
    var stack: [UInt32] = []
}

/// Parses one request text into a field table; the tables are swapped in and out by `Message` to reuse them.
struct MessageParser {
    private let p: UnsafePointer<UInt8>
    private let end: Int
    private let limits: WireLimits
    private let maxDepth: Int
    private var i = 0
    private var objects: UInt32 = 0

    /// The top-level field whose value is being read, to name it in errors.
    private var currentKey: KeySpan?

    /// The tables this parse fills, swapped in from and back out to the Message.
    var buffers = ParseBuffers()

    /// A parser over `count` bytes at `text`.
    init(text: UnsafePointer<UInt8>, count: Int, limits: WireLimits) {
        self.p = text
        self.end = count
        self.limits = limits
        self.maxDepth = limits.maxDepth
    }

    /// Parses the whole text, which must be exactly one object with optional surrounding whitespace.
    mutating func parseTopLevel() throws(WireError) {
        buffers.fields.removeAll(keepingCapacity: true)
        buffers.keys.reset()
        skipWhitespace()
        guard i < end else { throw .badRequest("empty request") }
        guard p[i] == UInt8(ascii: "{") else { throw .badRequest("a request must be a JSON object") }
        guard maxDepth >= 1 else { throw .badRequest("nesting deeper than \(maxDepth) levels") }
        try parseRequestObject()
        skipWhitespace()
        guard i == end else { throw fail("unexpected data after the object at offset \(i)") }
    }

    // MARK: Values

    private struct Value {
        var kind: ValueKind
        var escaped = false
        var number = DecimalNumber()
        var start: Int
        var end: Int
    }

    /// Reads one value of a top-level field; containers are validated by `skipContainer`.
    private mutating func parseValue() throws(WireError) -> Value {
        guard i < end else { throw fail("unexpected end of input") }
        let start = i
        switch p[i] {
        case UInt8(ascii: "{"):
            try skipContainer()
            return Value(kind: .object, start: start, end: i)
        case UInt8(ascii: "["):
            try skipContainer()
            return Value(kind: .array, start: start, end: i)
        case UInt8(ascii: "\""):
            let scan = try scanString(isKey: false)
            return Value(kind: .string, escaped: scan.escaped, start: start + 1, end: scan.end)
        default:
            let (kind, number) = try parseLexeme()
            return Value(kind: kind, number: number, start: start, end: i)
        }
    }

    /// Reads a scalar (string, number or literal) inside a container.
    private mutating func skipScalar() throws(WireError) {
        guard i < end else { throw fail("unexpected end of input") }
        if p[i] == UInt8(ascii: "\"") {
            _ = try scanString(isKey: false)
        } else {
            _ = try parseLexeme()
        }
    }

    /// A literal or a number. The valid forms are read directly; a refused token is shown whole, as the
    /// maximal run of number-like bytes (so `tru`, `NaN`, `0x1F` and `1.2.3` are each named in the message).
    private mutating func parseLexeme() throws(WireError) -> (ValueKind, DecimalNumber) {
        switch p[i] {
        case UInt8(ascii: "t") where literal("true"): return (.trueLiteral, DecimalNumber())
        case UInt8(ascii: "f") where literal("false"): return (.falseLiteral, DecimalNumber())
        case UInt8(ascii: "n") where literal("null"): return (.null, DecimalNumber())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "."):
            do {
                let (number, after) = try JSONNumber.read(p, at: i, end: end)
                i = after
                return (.number, number)
            } catch {
                throw numberError(error)
            }
        case let c where JSONNumber.isLexemeByte(c):
            let lexeme = quoted(i, runLength())
            switch c {
            case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                throw fail("invalid literal \(lexeme) (expected true, false or null)")
            default:
                throw fail("invalid value \(lexeme)")
            }
        case let c:
            throw fail("unexpected \(Self.describe(c)) at offset \(i)")
        }
    }

    /// Consumes `word` if it is at `i` and not followed by more number-like bytes.
    @inline(__always) private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard end - i >= count else { return false }
        let w = word.utf8Start
        for k in 1..<count where p[i + k] != w[k] { return false }
        guard i + count == end || !JSONNumber.isLexemeByte(p[i + count]) else { return false }
        i += count
        return true
    }

    /// The length of the run of number-like bytes at `i`.
    private func runLength() -> Int {
        var k = i
        while k < end && JSONNumber.isLexemeByte(p[k]) { k += 1 }
        return k - i
    }

    private func numberError(_ problem: NumberProblem) -> WireError {
        let lexeme = quoted(i, runLength())
        switch problem {
        case .leadingPlus: return fail("invalid number \(lexeme): a leading '+' is not allowed")
        case .leadingZero: return fail("invalid number \(lexeme): leading zeros are not allowed")
        case .noDigitBeforePoint: return fail("invalid number \(lexeme): a digit must precede '.'")
        case .noDigitAfterPoint: return fail("invalid number \(lexeme): a digit must follow '.'")
        case .noExponentDigits: return fail("invalid number \(lexeme): the exponent has no digits")
        case .notANumber: return fail("invalid number \(lexeme)")
        case .tooLong: return fail("number too long (more than \(JSONNumber.maxLexemeBytes) characters)")
        case .outOfRange: return fail("number out of range \(lexeme)")
        }
    }

    // MARK: Containers

    /// Reads the request object itself, recording each field.
    private mutating func parseRequestObject() throws(WireError) {
        let object = objects
        objects &+= 1
        i += 1  // {
        skipWhitespace()
        if i < end && p[i] == UInt8(ascii: "}") {
            i += 1
            return
        }
        while true {
            let key = try readKey()
            try checkNewTopLevelKey(key, object: object)
            guard buffers.fields.count < limits.maxFields else {
                throw fail("too many fields (more than \(limits.maxFields))")
            }
            currentKey = key
            let value = try parseValue()
            buffers.fields.append(
                MessageField(
                    key: key, kind: value.kind, escaped: value.escaped, start: value.start, end: value.end,
                    number: value.number))
            currentKey = nil
            skipWhitespace()
            guard i < end else { throw fail("unexpected end of input") }
            switch p[i] {
            case UInt8(ascii: ","):
                i += 1
                skipWhitespace()
            case UInt8(ascii: "}"):
                i += 1
                return
            default:
                throw fail("expected ',' or '}' at offset \(i), found \(Self.describe(p[i]))")
            }
        }
    }

    /// Top-level keys are checked against the field table directly while there are few of them (the common
    /// case, cheaper than hashing); past `linearKeyLimit` they move into the key index like nested keys.
    private static let linearKeyLimit = 16

    private mutating func checkNewTopLevelKey(_ key: KeySpan, object: UInt32) throws(WireError) {
        let count = buffers.fields.count
        if count < Self.linearKeyLimit {
            for field in buffers.fields where sameKey(field.key, key) { throw fail("duplicate key '\(name(key))'") }
            return
        }
        if count == Self.linearKeyLimit {
            for field in buffers.fields { _ = buffers.keys.insert(field.key, object: object, text: p) }
        }
        guard buffers.keys.insert(key, object: object, text: p) else { throw fail("duplicate key '\(name(key))'") }
    }

    /// Whether two keys have the same decoded bytes.
    @inline(__always) private func sameKey(_ a: KeySpan, _ b: KeySpan) -> Bool {
        guard a.mayEqual(b) else { return false }
        if a.count <= 8 { return true }
        if !a.inSide && !b.inSide {
            for k in 0..<a.count where p[a.start + k] != p[b.start + k] { return false }
            return true
        }
        return buffers.keys.side.withUnsafeBufferPointer { side in
            KeyIndex.equal(KeyIndex.bytes(of: a, text: p, side: side), KeyIndex.bytes(of: b, text: p, side: side))
        }
    }

    /// Reads `"key"` and the colon after it, and leaves `i` at the value.
    private mutating func readKey() throws(WireError) -> KeySpan {
        guard i < end else { throw fail("unexpected end of input") }
        guard p[i] == UInt8(ascii: "\"") else {
            throw fail("expected a key in quotes at offset \(i), found \(Self.describe(p[i]))")
        }
        let key = try parseKey()
        skipWhitespace()
        guard i < end else { throw fail("unexpected end of input") }
        guard p[i] == UInt8(ascii: ":") else {
            throw fail("expected ':' after key '\(name(key))' at offset \(i)")
        }
        i += 1
        skipWhitespace()
        return key
    }

    /// Validates the object or array at `i` (a field's value, at depth 2) and everything inside it, without
    /// recursion: `buffers.stack` holds, per open container, its object number, or `arrayMark` for an array. So any
    /// `maxDepth` is safe, and hostile nesting costs one stack entry per level instead of native stack frames.
    private mutating func skipContainer() throws(WireError) {
        buffers.stack.removeAll(keepingCapacity: true)
        var closed = try openContainer()
        while !buffers.stack.isEmpty {
            if !closed {
                // Read one element of the innermost container.
                let container = buffers.stack[buffers.stack.count - 1]
                if container != Self.arrayMark {
                    let key = try readKey()
                    guard buffers.keys.insert(key, object: container, text: p) else {
                        throw fail("duplicate key '\(name(key))'")
                    }
                }
                guard i < end else { throw fail("unexpected end of input") }
                if p[i] == UInt8(ascii: "{") || p[i] == UInt8(ascii: "[") {
                    closed = try openContainer()
                    continue
                }
                try skipScalar()
            }
            // After an element: a comma, or the end of the innermost container.
            closed = false
            skipWhitespace()
            guard i < end else { throw fail("unexpected end of input") }
            let isObject = buffers.stack[buffers.stack.count - 1] != Self.arrayMark
            switch p[i] {
            case UInt8(ascii: ","):
                i += 1
                skipWhitespace()
            case UInt8(ascii: "}") where isObject, UInt8(ascii: "]") where !isObject:
                i += 1
                buffers.stack.removeLast()
                closed = true
            default:
                let expected = isObject ? "'}'" : "']'"
                throw fail("expected ',' or \(expected) at offset \(i), found \(Self.describe(p[i]))")
            }
        }
    }

    /// The stack entry of an open array (objects are entered by their object number).
    private static let arrayMark = UInt32.max

    /// Opens the container at `i`; returns true if it was empty and is already closed again.
    private mutating func openContainer() throws(WireError) -> Bool {
        // The request object is depth 1, so a field's own container is depth 2.
        guard buffers.stack.count + 2 <= maxDepth else { throw fail("nesting deeper than \(maxDepth) levels") }
        let isObject = p[i] == UInt8(ascii: "{")
        if isObject {
            buffers.stack.append(objects)
            objects &+= 1
        } else {
            buffers.stack.append(Self.arrayMark)
        }
        i += 1
        skipWhitespace()
        if i < end && p[i] == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
            i += 1
            buffers.stack.removeLast()
            return true
        }
        return false
    }

    // MARK: Strings

    /// Scans the string at `i` (an opening quote) and leaves `i` after its closing quote.
    @inline(__always) private mutating func scanString(isKey: Bool) throws(WireError) -> JSONString.Scan {
        // Inline fast path for the common case: printable ASCII up to the closing quote.
        let start = i + 1
        var k = start
        while k < end {
            let c = p[k]
            if c < 0x20 || c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") || c >= 0x80 { break }
            k += 1
        }
        if k < end && p[k] == UInt8(ascii: "\""), k - start <= limits.maxStringBytes {
            i = k + 1
            return JSONString.Scan(end: k, escaped: false)
        }
        return try scanStringInFull(isKey: isKey, resumingAt: k)
    }

    /// The general string scan: escapes, UTF-8 validation, and every refusal with its message.
    private mutating func scanStringInFull(isKey: Bool, resumingAt resume: Int) throws(WireError) -> JSONString.Scan {
        let start = i + 1
        var offset = resume
        let what = isKey ? "key" : "string"
        let scan: JSONString.Scan
        do {
            scan = try JSONString.scan(p, from: resume, end: end, problemOffset: &offset)
        } catch {
            switch error {
            case .unterminated:
                throw fail("unterminated \(what) (unexpected end of input)")
            case .controlCharacter(let c):
                throw fail("raw control character \(Self.hex(c)) in \(what) at offset \(offset) (must be escaped)")
            case .invalidEscape(let c?):
                let shown = c >= 0x21 && c < 0x7F ? "'\\\(Character(Unicode.Scalar(c)))'" : "'\\' + \(Self.hex(c))"
                throw fail("invalid escape \(shown) in \(what) at offset \(offset)")
            case .invalidEscape(nil):
                throw fail("unterminated escape in \(what) (unexpected end of input)")
            case .invalidUnicodeEscape:
                throw fail("invalid \\u escape in \(what) at offset \(offset) (needs four hex digits)")
            case .loneSurrogate:
                throw fail("lone surrogate escape in \(what) at offset \(offset)")
            case .nulCharacter:
                throw fail("\\u0000 in \(what) at offset \(offset) (U+0000 is not allowed)")
            case .invalidUTF8:
                throw fail("invalid UTF-8 in \(what) at offset \(offset)")
            }
        }
        guard scan.end - start <= limits.maxStringBytes else {
            throw fail("\(what) longer than \(limits.maxStringBytes) bytes")
        }
        i = scan.end + 1
        return scan
    }

    /// Scans a key and returns where its decoded bytes are (escaped keys are decoded into the side buffer).
    private mutating func parseKey() throws(WireError) -> KeySpan {
        let bodyStart = i + 1
        let scan = try scanString(isKey: true)
        let count = scan.end - bodyStart
        if scan.escaped { return buffers.keys.appendDecoded(p + bodyStart, count: count) }
        return KeySpan(start: bodyStart, count: count, inSide: false, bytes: p + bodyStart)
    }

    // MARK: Helpers

    @inline(__always) private mutating func skipWhitespace() {
        while i < end {
            switch p[i] {
            case 0x20, 0x0A, 0x0D, 0x09: i += 1
            default: return
            }
        }
    }

    /// A `bad_request` whose message is `problem`, plus the top-level field being read, if any.
    private func fail(_ problem: String) -> WireError {
        guard let key = currentKey else { return .badRequest(problem) }
        return .badRequest("\(problem) in field '\(name(key))'")
    }

    /// A key's decoded text for messages, cut to 64 characters.
    private func name(_ key: KeySpan) -> String {
        let text = buffers.keys.side.withUnsafeBufferPointer { side in
            String(decoding: KeyIndex.bytes(of: key, text: p, side: side), as: UTF8.self)
        }
        return text.count > 64 ? String(text.prefix(64)) + "…" : text
    }

    /// A lexeme in single quotes for messages, cut to 24 characters (lexeme bytes are ASCII).
    private func quoted(_ start: Int, _ count: Int) -> String {
        let shown = String(decoding: UnsafeBufferPointer(start: p + start, count: min(count, 24)), as: UTF8.self)
        return "'\(shown)\(count > 24 ? "…" : "")'"
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return "0x\(digits[Int(byte >> 4)])\(digits[Int(byte & 15)])"
    }

    /// "character 'x'" for printable ASCII, "byte 0xC3" otherwise.
    private static func describe(_ byte: UInt8) -> String {
        if byte >= 0x20 && byte < 0x7F { return "character '\(Character(Unicode.Scalar(byte)))'" }
        return byte >= 0x80 ? "non-ASCII byte \(hex(byte))" : "byte \(hex(byte))"
    }
}
