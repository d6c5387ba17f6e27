// Values in and out of PostgreSQL in its text format. Parameters are sent as text and typed by the server from
// the statement, so one path serves every type; arrays of ids go as one array literal (`= ANY($1::bigint[])`), which
// keeps a statement's shape fixed however many ids it names. Results come back as text and are parsed on request;
// a value of the wrong shape is a typed error, not a trap.
public import Foundation

/// A value that can be bound to a statement parameter.
public protocol PostgresBindable: Sendable {
    /// The value in PostgreSQL's text input format.
    var postgresText: String { get }
}

extension Int64: PostgresBindable { public var postgresText: String { String(self) } }
extension Int: PostgresBindable { public var postgresText: String { String(self) } }
extension Int32: PostgresBindable { public var postgresText: String { String(self) } }
extension Double: PostgresBindable {
    /// Shortest round-tripping decimal; non-finite values in PostgreSQL's spelling.
    public var postgresText: String {
        if isNaN { return "NaN" }
        if isInfinite { return self < 0 ? "-Infinity" : "Infinity" }
        return "\(self)"
    }
}
extension String: PostgresBindable { public var postgresText: String { self } }
extension Bool: PostgresBindable { public var postgresText: String { self ? "t" : "f" } }
extension Data: PostgresBindable {
    /// bytea's hex input format.
    public var postgresText: String { PostgresBytes.hex(self) }
}

/// Raw bytes as a bytea parameter.
public struct PostgresBytes: PostgresBindable {
    public let bytes: [UInt8]
    public init(_ bytes: [UInt8]) { self.bytes = bytes }
    public var postgresText: String { Self.hex(bytes) }

    static let digits = Array("0123456789abcdef".utf8)

    static func hex<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        var text: [UInt8] = [UInt8(ascii: "\\"), UInt8(ascii: "x")]
        text.reserveCapacity(2 + bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Parses bytea's hex output (`\x0a1b...`); nil if it is not that.
    static func parse(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count >= 2, utf8[0] == UInt8(ascii: "\\"), utf8[1] == UInt8(ascii: "x"), utf8.count % 2 == 0 else {
            return nil
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity((utf8.count - 2) / 2)
        var index = 2
        while index < utf8.count {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// Integers as one array parameter (`$1::bigint[]`).
public struct PostgresIntArray: PostgresBindable {
    public let values: [Int64]
    public init(_ values: [Int64]) { self.values = values }
    public init<S: Sequence>(_ values: S) where S.Element == Int64 { self.values = Array(values) }
    public var postgresText: String { "{" + values.map(String.init).joined(separator: ",") + "}" }
}

/// Strings as one array parameter (`$1::text[]`), each element quoted and escaped.
public struct PostgresTextArray: PostgresBindable {
    public let values: [String]
    public init(_ values: [String]) { self.values = values }
    public var postgresText: String {
        let quoted = values.map { value -> String in
            var out = "\""
            Self.escape(value, into: &out)
            return out + "\""
        }
        return "{" + quoted.joined(separator: ",") + "}"
    }

    /// Appends `value` with a backslash before each `"` and `\`, scalar by scalar: a `"` that follows a prepended
    /// concatenation mark (U+0600) or a combining mark is one Character with it, so comparing Characters would
    /// miss it and let an element end early (and the rest of the text shift into other elements).
    static func escape(_ value: String, into out: inout String) {
        for scalar in value.unicodeScalars {
            if scalar == "\"" || scalar == "\\" { out.unicodeScalars.append("\\") }
            out.unicodeScalars.append(scalar)
        }
    }
}

/// Any values as one array parameter (`$1::float8[]`, `$1::bigint[]`, ...), NULLs included: with `unnest` several
/// arrays insert many rows in one statement (one round trip for a whole batch).
public struct PostgresArray<Element: PostgresBindable>: PostgresBindable {
    public let values: [Element?]
    public init(_ values: [Element?]) { self.values = values }
    public var postgresText: String {
        let items = values.map { value -> String in
            guard let value else { return "NULL" }
            var out = "\""
            PostgresTextArray.escape(value.postgresText, into: &out)
            return out + "\""
        }
        return "{" + items.joined(separator: ",") + "}"
    }
}

/// A statement's parameters, written like GRDB's: `[id, name, nil]`.
public struct PostgresArguments: ExpressibleByArrayLiteral, Sendable {
    public var values: [(any PostgresBindable)?]
    public init(arrayLiteral elements: (any PostgresBindable)?...) { values = elements }
    public init(_ values: [(any PostgresBindable)?]) { self.values = values }
    public init<S: Sequence>(_ values: S) where S.Element: PostgresBindable { self.values = values.map { $0 } }
    public mutating func append(_ value: (any PostgresBindable)?) { values.append(value) }
    public static func += (lhs: inout PostgresArguments, rhs: PostgresArguments) { lhs.values += rhs.values }
}

/// A value that can be read from a result column in text format.
public protocol PostgresDecodable {
    /// Parses the text; nil when it is not of this type.
    static func decode(postgresText text: String) -> Self?
}

extension Int64: PostgresDecodable {
    public static func decode(postgresText text: String) -> Int64? { Int64(text) }
}
extension Int: PostgresDecodable {
    public static func decode(postgresText text: String) -> Int? { Int(text) }
}
extension Double: PostgresDecodable {
    public static func decode(postgresText text: String) -> Double? {
        switch text {
        case "NaN": .nan
        case "Infinity": .infinity
        case "-Infinity": -.infinity
        default: Double(text)
        }
    }
}
extension String: PostgresDecodable {
    public static func decode(postgresText text: String) -> String? { text }
}
extension Bool: PostgresDecodable {
    /// `t`/`f` (boolean), or an integer (0 is false).
    public static func decode(postgresText text: String) -> Bool? {
        switch text {
        case "t", "true": true
        case "f", "false": false
        default: Int64(text).map { $0 != 0 }
        }
    }
}
extension Data: PostgresDecodable {
    public static func decode(postgresText text: String) -> Data? { PostgresBytes.parse(text).map { Data($0) } }
}
extension Array: PostgresDecodable where Element == UInt8 {
    public static func decode(postgresText text: String) -> [UInt8]? { PostgresBytes.parse(text) }
}
