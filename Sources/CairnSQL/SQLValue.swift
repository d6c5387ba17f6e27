// Values in and out of a statement, whichever engine runs it. A parameter is one of SQL's few storage classes, or a
// list (ids, names) that the statement takes as one parameter so its shape is fixed however many it names (see
// `SQLDialect.isAny`): SQLite gets the list as a JSON array, PostgreSQL as an array literal. A result column comes
// back as one of the same classes and is decoded to the Swift type it is assigned to; the decoders accept what either
// engine gives for the schema's types (PostgreSQL's numeric aggregates arrive as text, SQLite's booleans as 0 or 1).
public import Foundation

/// A statement parameter or a result column.
public enum SQLValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
    /// A list of integers bound as one parameter.
    case integers([Int64])
    /// A list of strings bound as one parameter.
    case texts([String])
}

/// A Swift value that can be bound to a statement parameter.
public protocol SQLBindable: Sendable {
    /// The value as a parameter.
    var sqlValue: SQLValue { get }
}

extension Int64: SQLBindable { public var sqlValue: SQLValue { .integer(self) } }
extension Int: SQLBindable { public var sqlValue: SQLValue { .integer(Int64(self)) } }
extension Int32: SQLBindable { public var sqlValue: SQLValue { .integer(Int64(self)) } }
extension Double: SQLBindable { public var sqlValue: SQLValue { .real(self) } }
extension String: SQLBindable { public var sqlValue: SQLValue { .text(self) } }
extension Bool: SQLBindable { public var sqlValue: SQLValue { .integer(self ? 1 : 0) } }
extension Data: SQLBindable { public var sqlValue: SQLValue { .blob([UInt8](self)) } }
extension SQLValue: SQLBindable { public var sqlValue: SQLValue { self } }
extension Optional: SQLBindable where Wrapped: SQLBindable {
    public var sqlValue: SQLValue { self?.sqlValue ?? .null }
}

/// Integers as one parameter (`SQLDialect.isAny(_:_:)` with `.integer`).
public struct SQLIntegers: SQLBindable {
    public let values: [Int64]
    public init<S: Sequence>(_ values: S) where S.Element == Int64 { self.values = Array(values) }
    public var sqlValue: SQLValue { .integers(values) }
}

/// Strings as one parameter (`SQLDialect.isAny(_:_:)` with `.text`).
public struct SQLTexts: SQLBindable {
    public let values: [String]
    public init<S: Sequence>(_ values: S) where S.Element == String { self.values = Array(values) }
    public var sqlValue: SQLValue { .texts(values) }
}

/// A statement's parameters, in `?` order: `[id, name, nil]`.
public struct SQLArguments: ExpressibleByArrayLiteral, Sendable {
    public var values: [SQLValue]
    public init(arrayLiteral elements: (any SQLBindable)?...) { values = elements.map { $0?.sqlValue ?? .null } }
    public init(_ values: [SQLValue]) { self.values = values }
    public mutating func append(_ value: (any SQLBindable)?) { values.append(value?.sqlValue ?? .null) }
    public static func += (lhs: inout SQLArguments, rhs: SQLArguments) { lhs.values += rhs.values }
}

/// A Swift type a result column can be read as.
public protocol SQLDecodable {
    /// The value, or nil when the column's value is not of this type (NULL is handled before).
    static func decode(_ value: SQLValue) -> Self?
}

extension Int64: SQLDecodable {
    public static func decode(_ value: SQLValue) -> Int64? {
        switch value {
        case .integer(let i): i
        case .real(let d): Int64(exactly: d)
        case .text(let t): Int64(t) ?? Double(t).flatMap { Int64(exactly: $0) }
        default: nil
        }
    }
}
extension Int: SQLDecodable {
    public static func decode(_ value: SQLValue) -> Int? { Int64.decode(value).flatMap { Int(exactly: $0) } }
}
extension Double: SQLDecodable {
    public static func decode(_ value: SQLValue) -> Double? {
        switch value {
        case .integer(let i): Double(i)
        case .real(let d): d
        case .text("NaN"): .nan
        case .text("Infinity"): .infinity
        case .text("-Infinity"): -.infinity
        case .text(let t): Double(t)
        default: nil
        }
    }
}
extension String: SQLDecodable {
    public static func decode(_ value: SQLValue) -> String? {
        switch value {
        case .text(let t): t
        case .integer(let i): String(i)
        case .blob(let b): String(bytes: b, encoding: .utf8)
        default: nil
        }
    }
}
extension Bool: SQLDecodable {
    /// 0 or 1 (SQLite), `t`/`f` (a PostgreSQL boolean), any integer (0 is false).
    public static func decode(_ value: SQLValue) -> Bool? {
        switch value {
        case .integer(let i): i != 0
        case .real(let d): d != 0
        case .text("t"), .text("true"): true
        case .text("f"), .text("false"): false
        case .text(let t): Int64(t).map { $0 != 0 }
        default: nil
        }
    }
}
extension Data: SQLDecodable {
    public static func decode(_ value: SQLValue) -> Data? {
        switch value {
        case .blob(let b): Data(b)
        case .text(let t): Data(t.utf8)
        default: nil
        }
    }
}
extension Array: SQLDecodable where Element == UInt8 {
    public static func decode(_ value: SQLValue) -> [UInt8]? { Data.decode(value).map { [UInt8]($0) } }
}
