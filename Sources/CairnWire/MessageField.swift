// What the reader remembers about each top-level field of a request: where its key and value are in the text
// and what kind of value it is. Plain integers only, so the field table is a flat array that is reused across
// parses; values are decoded lazily by the accessors, from these spans.

/// The JSON type of a field's value.
enum ValueKind: UInt8, Sendable {
    case string, number, object, array, trueLiteral, falseLiteral, null
}

/// One top-level field of a parsed request.
struct MessageField: Sendable {
    /// Where the key's decoded bytes are.
    var key: KeySpan
    /// The value's JSON type.
    var kind: ValueKind
    /// For strings: whether the body contains escapes (and so needs decoding).
    var escaped: Bool
    /// Start of the value in the text; for strings, the first byte after the opening quote.
    var start: Int
    /// End of the value (exclusive); for strings, the index of the closing quote.
    var end: Int
    /// For numbers: the value as read during parsing, so accessors need not scan the digits again.
    var number: DecimalNumber
}
