// One result row, read the same on both engines: `row[0]`, `row["id"]`, typed by the value it is assigned to,
// optional for a nullable column. The columns' types are fixed by the schema each engine creates, so a value that
// does not decode as the type asked for (or a NULL read as non-optional) is a schema bug: it stops the process with
// the column and value named rather than inventing a default.

/// A result row.
public struct SQLRow: Sendable {
    /// Column names, in order.
    public let columns: [String]
    /// The values, `.null` for NULL.
    public let values: [SQLValue]

    public init(columns: [String], values: [SQLValue]) {
        self.columns = columns
        self.values = values
    }

    /// The number of columns.
    public var count: Int { values.count }

    /// True when the column is NULL.
    public func isNull(_ index: Int) -> Bool { values[index] == .null }

    /// The column's value, decoded; a NULL or mistyped value is a schema bug (see the file header).
    public subscript<T: SQLDecodable>(_ index: Int) -> T {
        guard values[index] != .null else {
            preconditionFailure("SQL column \(index) (\(columns[index])) is NULL, read as \(T.self)")
        }
        return decode(index)
    }

    /// The column's value, nil for NULL.
    public subscript<T: SQLDecodable>(_ index: Int) -> T? {
        values[index] == .null ? nil : decode(index) as T
    }

    /// The named column's value.
    public subscript<T: SQLDecodable>(_ name: String) -> T { self[index(of: name)] }

    /// The named column's value, nil for NULL.
    public subscript<T: SQLDecodable>(_ name: String) -> T? { self[index(of: name)] }

    private func decode<T: SQLDecodable>(_ index: Int) -> T {
        guard let value = T.decode(values[index]) else {
            preconditionFailure("SQL column \(index) (\(columns[index])): \(values[index]) is not a \(T.self)")
        }
        return value
    }

    private func index(of name: String) -> Int {
        guard let index = columns.firstIndex(of: name) else {
            preconditionFailure("SQL result has no column \(name) (columns: \(columns))")
        }
        return index
    }
}
