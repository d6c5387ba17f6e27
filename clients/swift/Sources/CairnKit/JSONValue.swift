// Any JSON value, for the fields of a request and the parts of a reply the typed API leaves open (an admin's
// settings, a place's attributes, the stats channel). The typed API is built on it: a request's fields are encoded to
// an object of these before the envelope's `id` and `op` are added.
import Foundation

/// A JSON value as the hub sends and reads it.
///
/// Integers are kept apart from other numbers so that ids (`Int64`) travel exactly. The literals work as in JSON:
/// `["lat": 48.85, "lon": 2.35, "note": nil]`.
public enum JSONValue: Sendable, Hashable, Codable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number without a fraction or exponent that fits 64 bits.
    case int(Int64)
    /// Any other number.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object.
    case object([String: JSONValue])

    /// Decodes any JSON value.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Encodes the value as JSON.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The member `key` of an object, or `nil`.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The string, or `nil` for any other value.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The number as a `Double`, or `nil` for any other value.
    public var doubleValue: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }

    /// The number as an `Int64` when it is a whole number, or `nil`.
    public var int64Value: Int64? {
        switch self {
        case .int(let value): return value
        case .double(let value): return value.rounded() == value ? Int64(exactly: value) : nil
        default: return nil
        }
    }

    /// The boolean, or `nil` for any other value.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// Any `Encodable` value as JSON (a request struct becomes an object of its fields).
    public init(encoding value: some Encodable) throws {
        let data = try JSONEncoder().encode(value)
        self = try JSONDecoder().decode(JSONValue.self, from: data)
    }

    /// The fields of an `Encodable` struct as an object's members (`nil` optionals left out).
    static func fields(of value: some Encodable) throws -> [String: JSONValue] {
        guard case .object(let members) = try JSONValue(encoding: value) else {
            throw CairnError(code: "bad_request", message: "request fields must encode as an object")
        }
        return members
    }

    /// Decodes a `Decodable` type from this value.
    public func decode<T: Decodable>(as type: T.Type = T.self) throws -> T {
        try JSONDecoder().decode(T.self, from: JSONEncoder().encode(self))
    }
}

extension JSONValue: ExpressibleByNilLiteral {
    /// `nil` is JSON's `null`.
    public init(nilLiteral: ()) { self = .null }
}

extension JSONValue: ExpressibleByBooleanLiteral {
    /// A boolean literal.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension JSONValue: ExpressibleByIntegerLiteral {
    /// An integer literal.
    public init(integerLiteral value: Int64) { self = .int(value) }
}

extension JSONValue: ExpressibleByFloatLiteral {
    /// A floating-point literal.
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension JSONValue: ExpressibleByStringLiteral {
    /// A string literal.
    public init(stringLiteral value: String) { self = .string(value) }
}

extension JSONValue: ExpressibleByArrayLiteral {
    /// An array literal.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
}

extension JSONValue: ExpressibleByDictionaryLiteral {
    /// An object literal.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
