// The output half of the codec: JSON appended to one reusable byte buffer, replacing JSONEncoder (about 7 µs per
// small event here). Callers write keys and values in order; the writer places commas itself, remembering per
// nesting level (one bit each in a UInt64) whether the current container already has an element, so there is
// no stack to allocate. Each token (comma, quotes and key included) is written straight into the buffer's spare
// capacity with one capacity check; integers digit by digit, doubles in shortest round-trip form (DoubleFormat's
// fast path for plain decimals, else the standard library's algorithm streamed in as ASCII), never via String.
// Writing an event allocates nothing once the buffer has grown to size.

/// Appends JSON to a reusable byte buffer; commas are placed automatically.
///
/// Nesting is limited to 63 levels; unbalanced `end…` calls or deeper nesting are programming errors and trap.
public struct JSONWriter: Sendable {
    /// The JSON written so far.
    public var bytes: [UInt8]
    /// The current nesting depth (0 outside any container).
    private var depth = 0
    /// Bit `d` is set when the container at depth `d` already holds an element.
    private var hasElement: UInt64 = 0
    /// True between a key and its value: the value takes no comma.
    private var afterKey = false

    /// A writer whose buffer has room for `capacity` bytes.
    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Empties the buffer, keeping its capacity, and forgets any open containers.
    public mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        depth = 0
        hasElement = 0
        afterKey = false
    }

    // MARK: Structure

    /// Opens an object (`{`).
    public mutating func beginObject() {
        if needsComma() { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "{"))
        push()
    }

    /// Closes the innermost object (`}`).
    public mutating func endObject() {
        pop()
        bytes.append(UInt8(ascii: "}"))
    }

    /// Opens an array (`[`).
    public mutating func beginArray() {
        if needsComma() { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "["))
        push()
    }

    /// Closes the innermost array (`]`).
    public mutating func endArray() {
        pop()
        bytes.append(UInt8(ascii: "]"))
    }

    /// Writes `"key":[…]`, each element of `elements` through `element` (the replies that list things).
    public mutating func array<Elements: Sequence>(
        _ key: StaticString, _ elements: Elements, _ element: (Elements.Element, inout JSONWriter) -> Void
    ) {
        self.key(key)
        beginArray()
        for value in elements { element(value, &self) }
        endArray()
    }

    /// Writes an object key and the colon; the next value written is its value.
    public mutating func key(_ key: StaticString) {
        let comma = needsComma()
        key.withUTF8Buffer { writeQuoted($0, comma: comma, colon: true) }
        afterKey = true
    }

    /// Writes an object key (escaped as needed) and the colon; the next value written is its value.
    public mutating func key(_ key: String) {
        let comma = needsComma()
        withUTF8(key) { writeQuoted($0, comma: comma, colon: true) }
        afterKey = true
    }

    // MARK: Values

    /// Writes a string, escaping `"`, `\` and control characters (`\n`, `\t`, … or `\u00XX`).
    public mutating func string(_ value: String) {
        let comma = needsComma()
        withUTF8(value) { writeQuoted($0, comma: comma, colon: false) }
    }

    /// Writes a compile-time string, escaped like `string(_: String)`.
    public mutating func string(_ value: StaticString) {
        let comma = needsComma()
        value.withUTF8Buffer { writeQuoted($0, comma: comma, colon: false) }
    }

    /// Writes an integer in decimal, without creating a String.
    public mutating func int(_ value: Int64) {
        let comma = needsComma()
        compose(capacity: 21) { out in
            var o = 0
            if comma {
                out[0] = UInt8(ascii: ",")
                o = 1
            }
            return o + Self.writeDecimal(value, into: out + o)
        }
    }

    /// Writes an integer in decimal, without creating a String.
    public mutating func int(_ value: Int) {
        int(Int64(value))
    }

    /// Writes a double in its shortest round-trip form (`37.7749295`, `1e-07`, `3.0`); NaN and ±infinity,
    /// which JSON cannot express, are written as `null`.
    public mutating func double(_ value: Double) {
        let comma = needsComma()
        guard value.isFinite else {
            appendLiteral("null", comma: comma)
            return
        }
        let written = compose(capacity: DoubleFormat.maxBytes + 1) { out in
            guard let count = DoubleFormat.shortFixed(value, into: out + (comma ? 1 : 0)) else { return 0 }
            if comma { out[0] = UInt8(ascii: ",") }
            return count + (comma ? 1 : 0)
        }
        guard written == 0 else { return }
        if comma { bytes.append(UInt8(ascii: ",")) }
        writeGeneral(value)
    }

    /// Writes a double like `double(_:)`, without trying the fast path first: for values that seldom take it,
    /// computed ones with all their digits (a distance in metres), where the attempt is only a cost.
    public mutating func computedDouble(_ value: Double) {
        let comma = needsComma()
        guard value.isFinite else {
            appendLiteral("null", comma: comma)
            return
        }
        if comma { bytes.append(UInt8(ascii: ",")) }
        writeGeneral(value)
    }

    /// The general algorithm: the standard library's shortest round-trip formatting, streamed as ASCII.
    private mutating func writeGeneral(_ value: Double) {
        var sink = ByteSink()
        swap(&sink.bytes, &bytes)
        value.write(to: &sink)
        swap(&sink.bytes, &bytes)
    }

    /// Writes `true` or `false`.
    public mutating func bool(_ value: Bool) {
        appendLiteral(value ? "true" : "false", comma: needsComma())
    }

    /// Writes `null`.
    public mutating func null() {
        appendLiteral("null", comma: needsComma())
    }

    /// Splices in one pre-encoded JSON value, unchecked; the caller guarantees it is valid JSON.
    public mutating func raw(_ json: UnsafeRawBufferPointer) {
        if needsComma() { bytes.append(UInt8(ascii: ",")) }
        bytes.append(contentsOf: json)
    }

    /// Splices pre-encoded members (`"a":1,"b":"x"`, no braces) into the open object, unchecked; the caller
    /// guarantees they are valid JSON members, at least one. Later fields are separated by a comma as usual.
    public mutating func rawMembers(_ json: UnsafeRawBufferPointer) {
        if needsComma() { bytes.append(UInt8(ascii: ",")) }
        bytes.append(contentsOf: json)
    }

    /// Splices in one pre-encoded JSON value given as bytes, unchecked.
    public mutating func raw(_ json: [UInt8]) {
        if needsComma() { bytes.append(UInt8(ascii: ",")) }
        bytes.append(contentsOf: json)
    }

    // MARK: Fields

    /// Writes `"key":"value"`.
    public mutating func field(_ key: StaticString, _ value: String) {
        self.key(key)
        string(value)
    }

    /// Writes `"key":value` for an integer.
    public mutating func field(_ key: StaticString, _ value: Int64) {
        self.key(key)
        int(value)
    }

    /// Writes `"key":value` for an integer.
    public mutating func field(_ key: StaticString, _ value: Int) {
        self.key(key)
        int(value)
    }

    /// Writes `"key":value` for a double (non-finite values as `null`).
    public mutating func field(_ key: StaticString, _ value: Double) {
        self.key(key)
        double(value)
    }

    /// Writes `"key":true` or `"key":false`.
    public mutating func field(_ key: StaticString, _ value: Bool) {
        self.key(key)
        bool(value)
    }

    /// Writes `"key":"value"`, or nothing when `value` is nil.
    public mutating func field(_ key: StaticString, _ value: String?) {
        if let value { field(key, value) }
    }

    /// Writes `"key":value`, or nothing when `value` is nil.
    public mutating func field(_ key: StaticString, _ value: Int64?) {
        if let value { field(key, value) }
    }

    /// Writes `"key":value`, or nothing when `value` is nil.
    public mutating func field(_ key: StaticString, _ value: Double?) {
        if let value { field(key, value) }
    }

    /// Writes `"key":value`, or nothing when `value` is nil.
    public mutating func field(_ key: StaticString, _ value: Bool?) {
        if let value { field(key, value) }
    }

    /// Writes `"key":null`.
    public mutating func nullField(_ key: StaticString) {
        self.key(key)
        null()
    }

    // MARK: Internals

    /// Updates the comma state for a new element and says whether it needs a comma before it.
    @inline(__always) private mutating func needsComma() -> Bool {
        if afterKey {
            afterKey = false
            return false
        }
        guard depth > 0 else { return false }
        let bit: UInt64 = 1 << UInt64(depth)
        if hasElement & bit != 0 { return true }
        hasElement |= bit
        return false
    }

    private mutating func push() {
        precondition(depth < 63, "JSONWriter: nesting deeper than 63 levels")
        depth += 1
        hasElement &= ~(1 << UInt64(depth))
    }

    private mutating func pop() {
        precondition(depth > 0, "JSONWriter: end of a container that was not begun")
        depth -= 1
        afterKey = false
    }

    /// Lets `fill` write up to `capacity` bytes straight into the buffer's spare capacity (one uniqueness and
    /// capacity check per token instead of one per byte). Returns the byte count.
    @inline(__always) @discardableResult
    private mutating func compose(capacity: Int, _ fill: (UnsafeMutablePointer<UInt8>) -> Int) -> Int {
        var written = 0
        bytes.append(addingCapacity: capacity) { span in
            span.withUnsafeMutableBufferPointer { buffer, initialized in
                written = fill(buffer.baseAddress!)
                initialized = written
            }
        }
        return written
    }

    private mutating func appendLiteral(_ literal: StaticString, comma: Bool) {
        if comma { bytes.append(UInt8(ascii: ",")) }
        literal.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Whether any byte must be escaped inside a JSON string.
    @inline(__always) private static func needsEscaping(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        for c in utf8 where c < 0x20 || c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") { return true }
        return false
    }

    /// Appends `[,]"…"[:]`: short strings that need no escaping in one copy, the rest in runs between escapes.
    private mutating func writeQuoted(_ utf8: UnsafeBufferPointer<UInt8>, comma: Bool, colon: Bool) {
        if utf8.count <= 125 && !Self.needsEscaping(utf8) {
            compose(capacity: 128) { out in
                var o = 0
                if comma {
                    out[o] = UInt8(ascii: ",")
                    o += 1
                }
                out[o] = UInt8(ascii: "\"")
                o += 1
                for c in utf8 {  // short: a loop beats a call to memcpy
                    out[o] = c
                    o += 1
                }
                out[o] = UInt8(ascii: "\"")
                o += 1
                if colon {
                    out[o] = UInt8(ascii: ":")
                    o += 1
                }
                return o
            }
            return
        }
        if comma { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        var runStart = 0
        for i in 0..<utf8.count {
            let c = utf8[i]
            guard c < 0x20 || c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") else { continue }
            if runStart < i { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<i])) }
            runStart = i + 1
            bytes.append(UInt8(ascii: "\\"))
            switch c {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(c)
            case 0x0A: bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(UInt8(ascii: "t"))
            case 0x08: bytes.append(UInt8(ascii: "b"))
            case 0x0C: bytes.append(UInt8(ascii: "f"))
            default:
                let hex: StaticString = "0123456789abcdef"
                bytes.append(UInt8(ascii: "u"))
                bytes.append(UInt8(ascii: "0"))
                bytes.append(UInt8(ascii: "0"))
                bytes.append(hex.utf8Start[Int(c >> 4)])
                bytes.append(hex.utf8Start[Int(c & 15)])
            }
        }
        if runStart < utf8.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...])) }
        bytes.append(UInt8(ascii: "\""))
        if colon { bytes.append(UInt8(ascii: ":")) }
    }

    /// Writes the decimal digits of `value` (at most 20 bytes) and returns the count.
    @inline(__always) private static func writeDecimal(_ value: Int64, into out: UnsafeMutablePointer<UInt8>) -> Int {
        var magnitude = value.magnitude
        var digits = 1
        var bound: UInt64 = 10
        while digits < 20 && magnitude >= bound {
            digits += 1
            bound = bound &* 10
        }
        let sign = value < 0 ? 1 : 0
        if sign == 1 { out[0] = UInt8(ascii: "-") }
        var i = sign + digits
        repeat {
            i -= 1
            out[i] = UInt8(ascii: "0") + UInt8(magnitude % 10)
            magnitude /= 10
        } while magnitude != 0
        return sign + digits
    }
}

/// Receives the standard library's shortest round-trip float formatting as ASCII bytes, so formatting a
/// double never creates a String: `Double.write(to:)` hands its stack buffer to `_writeASCII`, a requirement of
/// `TextOutputStream`. Should a future standard library call `write(_:)` instead, the output stays the same and
/// only that (rare, non-fast-path) case would allocate, which the allocation benchmark would show.
private struct ByteSink: TextOutputStream {
    var bytes: [UInt8] = []

    mutating func write(_ string: String) {
        bytes.append(contentsOf: string.utf8)
    }

    mutating func _writeASCII(_ buffer: UnsafeBufferPointer<UInt8>) {
        bytes.append(contentsOf: buffer)
    }
}
