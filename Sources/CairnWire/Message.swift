// One parsed request, read lazily. This replaces decoding each request into a Codable struct with
// JSONDecoder (about 15 µs per small message here): `parse` validates the whole text strictly in one pass,
// records the top-level fields as offsets, and keeps a private copy of the text those offsets point into;
// accessors find a field by comparing the caller's key bytes with the stored key bytes and convert only that
// value (numbers were already read into significand and exponent during the pass). The copy, the field table
// and the key index are kept across parses (`removeAll(keepingCapacity:)`), so a connection that reuses one
// Message parses and reads numbers, booleans and short strings without touching the allocator.

/// One parsed request object. Reusable: `parse` resets it and keeps its buffers' capacity, so steady-state
/// parsing allocates nothing.
///
/// After `parse` throws, the message holds no fields, except when the only problem was an ill-typed `id` or
/// `op`: then the other fields stay readable (so an error reply can still name the op).
public struct Message: Sendable {
    /// The limits `parse` enforces.
    public let limits: WireLimits
    private var text: [UInt8] = []
    private var buffers = ParseBuffers()
    private var idValue: Int64?
    private var opIndex: Int?

    /// An empty message that will enforce `limits` when parsing.
    public init(limits: WireLimits = WireLimits()) {
        self.limits = limits
    }

    // MARK: Parsing

    /// Parses and strictly validates one JSON text, which must be a single object.
    public mutating func parse(_ text: UnsafeRawBufferPointer) throws(WireError) {
        try parse(text, envelope: true)
    }

    /// Parses and strictly validates one JSON text given as bytes.
    public mutating func parse(_ text: [UInt8]) throws(WireError) {
        try text.withUnsafeBufferPointer { (buffer) throws(WireError) in
            try parse(UnsafeRawBufferPointer(buffer), envelope: true)
        }
    }

    /// Parses; with `envelope`, also checks the types of `id` and `op` (nested objects are not requests).
    mutating func parse(_ input: UnsafeRawBufferPointer, envelope: Bool) throws(WireError) {
        idValue = nil
        opIndex = nil
        text.removeAll(keepingCapacity: true)
        buffers.fields.removeAll(keepingCapacity: true)
        guard let base = input.baseAddress, input.count > 0 else { throw .badRequest("empty request") }
        var parser = MessageParser(
            text: base.assumingMemoryBound(to: UInt8.self), count: input.count, limits: limits)
        swap(&parser.buffers, &buffers)
        do {
            try parser.parseTopLevel()
        } catch {
            swap(&parser.buffers, &buffers)
            buffers.fields.removeAll(keepingCapacity: true)
            throw error
        }
        swap(&parser.buffers, &buffers)
        text.append(addingCapacity: input.count) { span in
            span.withUnsafeMutableBufferPointer { buffer, initialized in
                UnsafeMutableRawPointer(buffer.baseAddress!).copyMemory(from: base, byteCount: input.count)
                initialized = input.count
            }
        }
        if envelope { try readEnvelope() }
    }

    /// Reads `id` (a positive integer up to 2^53, or absent) and checks that `op`, if present, is a string.
    private mutating func readEnvelope() throws(WireError) {
        if let index = find("op") {
            guard buffers.fields[index].kind == .string else { throw .badRequest("field 'op' must be a string") }
            opIndex = index
        }
        if let index = find("id") {
            let field = buffers.fields[index]
            guard field.kind == .number, case .exact(let value) = integer(field), value >= 1 else {
                throw .badRequest("field 'id' must be an integer from 1 to 2^53 (9007199254740992)")
            }
            idValue = value
        }
    }

    // MARK: Envelope

    /// The request id: nil when absent. Parse refuses an id that is not a positive integer (≤ 2^53).
    public var id: Int64? { idValue }

    /// The op, or nil if absent (parse does not require it). Parse refuses an op that is not a string.
    /// Creating the String does not allocate for ops of up to 15 bytes; `isOp(_:)` never does.
    public var op: String? {
        guard let opIndex else { return nil }
        return decodeString(buffers.fields[opIndex])
    }

    /// Whether the op is exactly `name`, compared byte by byte without creating a String.
    public func isOp(_ name: String) -> Bool {
        guard let opIndex else { return false }
        let field = buffers.fields[opIndex]
        if field.escaped { return decodeString(field) == name }
        return withUTF8(name) { name in
            text.withUnsafeBufferPointer { text in
                KeyIndex.equal(UnsafeBufferPointer(rebasing: text[field.start..<field.end]), name)
            }
        }
    }

    // MARK: Fields

    /// The number of top-level fields.
    public var fieldCount: Int { buffers.fields.count }

    /// Whether the request has a top-level field named `key` (even if its value is null).
    public func contains(_ key: String) -> Bool {
        find(key) != nil
    }

    /// Whether the field `key` is present and JSON null.
    public func isNull(_ key: String) -> Bool {
        guard let index = find(key) else { return false }
        return buffers.fields[index].kind == .null
    }

    /// The string value of `key`, with escapes decoded; nil when absent or null.
    /// Throws `bad_request` "field 'key' must be a string" for any other type, and "field 'key' must be at most N
    /// bytes" when it is longer than `limits.maxFieldStringBytes` (checked on the encoded length first, which an
    /// escape can only make longer than 6 bytes per decoded byte, so an oversized value is refused unread).
    public func string(_ key: String) throws(WireError) -> String? {
        guard let field = present(key) else { return nil }
        guard field.kind == .string else { throw Self.typeError(key, "a string") }
        let most = limits.maxFieldStringBytes
        guard field.end - field.start <= most * 6 else { throw Self.tooLong(key, most) }
        let value = decodeString(field)
        guard value.utf8.count <= most else { throw Self.tooLong(key, most) }
        return value
    }

    /// The integer value of `key`; nil when absent or null. Integral numbers such as `1e3` or `2.0` are
    /// accepted; the value must be within ±2^53. Throws `bad_request` for fractions, other types and overflow.
    public func int(_ key: String) throws(WireError) -> Int64? {
        guard let field = present(key) else { return nil }
        guard field.kind == .number else { throw Self.typeError(key, "an integer") }
        switch integer(field) {
        case .exact(let value): return value
        case .fractional: throw Self.typeError(key, "an integer")
        case .outOfRange: throw .badRequest("field '\(key)' must be an integer within ±2^53")
        }
    }

    /// The numeric value of `key`; nil when absent or null. Throws `bad_request` for other types.
    public func double(_ key: String) throws(WireError) -> Double? {
        guard let field = present(key) else { return nil }
        guard field.kind == .number else { throw Self.typeError(key, "a number") }
        if let value = field.number.fastDouble { return value }
        return text.withUnsafeBufferPointer { text in
            JSONNumber.double(field.number, text.baseAddress! + field.start, count: field.end - field.start)
        }
    }

    /// The boolean value of `key`; nil when absent or null. Throws `bad_request` for other types.
    public func bool(_ key: String) throws(WireError) -> Bool? {
        guard let field = present(key) else { return nil }
        switch field.kind {
        case .trueLiteral: return true
        case .falseLiteral: return false
        default: throw Self.typeError(key, "a boolean")
        }
    }

    /// The nested object at `key` as its own Message (no id/op rules, no field-count limit); nil when absent or
    /// null. A cold-path accessor: it copies the object's text and allocates.
    public func object(_ key: String) throws(WireError) -> Message? {
        guard let field = present(key) else { return nil }
        guard field.kind == .object else { throw Self.typeError(key, "an object") }
        var nestedLimits = limits
        nestedLimits.maxFields = .max
        var nested = Message(limits: nestedLimits)
        try text.withUnsafeBufferPointer { (text) throws(WireError) in
            let body = UnsafeBufferPointer(rebasing: text[field.start..<field.end])
            try nested.parse(UnsafeRawBufferPointer(body), envelope: false)
        }
        return nested
    }

    /// The text of the array at `key`, brackets included; nil when absent or null (read by `Message+Arrays`).
    func arrayText(_ key: String) throws(WireError) -> ArraySlice<UInt8>? {
        guard let field = present(key) else { return nil }
        guard field.kind == .array else { throw Self.typeError(key, "an array") }
        return text[field.start..<field.end]
    }

    /// The string value of `key`; throws `bad_request` "missing field 'key'" when absent or null.
    public func requireString(_ key: String) throws(WireError) -> String {
        guard let value = try string(key) else { throw Self.missing(key) }
        return value
    }

    /// The integer value of `key`; throws `bad_request` "missing field 'key'" when absent or null.
    public func requireInt(_ key: String) throws(WireError) -> Int64 {
        guard let value = try int(key) else { throw Self.missing(key) }
        return value
    }

    /// The numeric value of `key`; throws `bad_request` "missing field 'key'" when absent or null.
    public func requireDouble(_ key: String) throws(WireError) -> Double {
        guard let value = try double(key) else { throw Self.missing(key) }
        return value
    }

    /// The boolean value of `key`; throws `bad_request` "missing field 'key'" when absent or null.
    public func requireBool(_ key: String) throws(WireError) -> Bool {
        guard let value = try bool(key) else { throw Self.missing(key) }
        return value
    }

    /// The decoded top-level keys in order, for free-form objects (a place's attributes), tests and the fuzz
    /// target (allocates).
    public var keyNames: [String] {
        text.withUnsafeBufferPointer { text in
            buffers.keys.side.withUnsafeBufferPointer { side in
                buffers.fields.map { field in
                    String(decoding: KeyIndex.bytes(of: field.key, text: text.baseAddress!, side: side), as: UTF8.self)
                }
            }
        }
    }

    // MARK: Internals

    /// The field named `key` unless absent or null.
    private func present(_ key: String) -> MessageField? {
        guard let index = find(key) else { return nil }
        let field = buffers.fields[index]
        return field.kind == .null ? nil : field
    }

    /// The index of the top-level field whose decoded key equals `key`'s UTF-8, without allocating.
    private func find(_ key: String) -> Int? {
        guard !buffers.fields.isEmpty else { return nil }
        return withUTF8(key) { key in
            let count = key.count
            let prefix = count == 0 ? 0 : KeySpan.prefix(key.baseAddress!, count: count)
            for index in buffers.fields.indices {
                let stored = buffers.fields[index].key
                guard stored.count == count && stored.prefix == prefix else { continue }
                if count <= 8 || keyBytesEqual(stored, key) { return index }
            }
            return nil
        }
    }

    private func keyBytesEqual(_ stored: KeySpan, _ key: UnsafeBufferPointer<UInt8>) -> Bool {
        text.withUnsafeBufferPointer { text in
            buffers.keys.side.withUnsafeBufferPointer { side in
                KeyIndex.equal(KeyIndex.bytes(of: stored, text: text.baseAddress!, side: side), key)
            }
        }
    }

    private func integer(_ field: MessageField) -> IntegerValue {
        if let value = field.number.integer { return value }
        return text.withUnsafeBufferPointer { text in
            JSONNumber.integer(field.number, text.baseAddress! + field.start, count: field.end - field.start)
        }
    }

    private func decodeString(_ field: MessageField) -> String {
        text.withUnsafeBufferPointer { text in
            let body = UnsafeBufferPointer(rebasing: text[field.start..<field.end])
            guard field.escaped, let source = body.baseAddress else {
                return String(decoding: body, as: UTF8.self)
            }
            return String(unsafeUninitializedCapacity: body.count) { out in
                JSONString.decode(source, count: body.count, into: out.baseAddress!)
            }
        }
    }

    private static func typeError(_ key: String, _ expected: String) -> WireError {
        .badRequest("field '\(key)' must be \(expected)")
    }

    private static func tooLong(_ key: String, _ most: Int) -> WireError {
        .badRequest("field '\(key)' must be at most \(most) bytes")
    }

    private static func missing(_ key: String) -> WireError {
        .badRequest("missing field '\(key)'")
    }
}

/// Calls `body` with the UTF-8 bytes of `string`, without copying for native strings.
@inline(__always)
func withUTF8<R>(_ string: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    if let result = string.utf8.withContiguousStorageIfAvailable(body) { return result }
    var copy = string
    copy.makeContiguousUTF8()
    return copy.utf8.withContiguousStorageIfAvailable(body)!
}
