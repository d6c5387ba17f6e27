// One result row, read like GRDB's `Row` so the store's code reads the same on both engines: `row[0]`, `row["id"]`,
// typed by the value it is assigned to, optional for a nullable column. The columns' types are fixed by the schema
// this module creates, so a value that does not parse as the type asked for (or a NULL read as non-optional) is a
// schema bug: it stops the process with the column and value named rather than inventing a default.

/// A result row in text format.
public struct PostgresRow: Sendable {
    /// Column names, in order (shared by every row of a result).
    public let columns: [String]
    /// The values, nil for NULL.
    public let values: [String?]

    /// The number of columns.
    public var count: Int { values.count }

    /// True when the column is NULL.
    public func isNull(_ index: Int) -> Bool { values[index] == nil }

    /// The column's value, decoded; a NULL or malformed value is a schema bug (see the file header).
    public subscript<T: PostgresDecodable>(_ index: Int) -> T {
        guard let text = values[index] else {
            preconditionFailure("PostgreSQL column \(index) (\(columns[index])) is NULL, read as \(T.self)")
        }
        guard let value = T.decode(postgresText: text) else {
            preconditionFailure("PostgreSQL column \(index) (\(columns[index])): '\(text)' is not a \(T.self)")
        }
        return value
    }

    /// The column's value, nil for NULL.
    public subscript<T: PostgresDecodable>(_ index: Int) -> T? {
        guard let text = values[index] else { return nil }
        guard let value = T.decode(postgresText: text) else {
            preconditionFailure("PostgreSQL column \(index) (\(columns[index])): '\(text)' is not a \(T.self)")
        }
        return value
    }

    /// The named column's value.
    public subscript<T: PostgresDecodable>(_ name: String) -> T { self[index(of: name)] }

    /// The named column's value, nil for NULL.
    public subscript<T: PostgresDecodable>(_ name: String) -> T? { self[index(of: name)] }

    private func index(of name: String) -> Int {
        guard let index = columns.firstIndex(of: name) else {
            preconditionFailure("PostgreSQL result has no column \(name) (columns: \(columns))")
        }
        return index
    }
}
