// The SQLite side of CairnSQL's database protocol: a GRDB connection runs the shared store's statements (cached
// per connection, as GRDB caches them), and GRDB's pool gives the transactions. Lists go as JSON arrays, which
// `json_each` reads (`SQLDialect.isAny`).
import CairnSQL
import Foundation
import GRDB

/// A GRDB connection seen through `SQLDatabase`.
struct SQLiteDatabase: SQLDatabase {
    let db: Database

    var dialect: SQLDialect { .sqlite }

    func rows(_ sql: String, _ arguments: SQLArguments) throws -> [SQLRow] {
        try rows(of: db.cachedStatement(sql: sql), arguments)
    }

    /// GRDB's cache keeps every text it prepared for the connection's life: a text made per request is prepared,
    /// run and finalized.
    func rowsOnce(_ sql: String, _ arguments: SQLArguments) throws -> [SQLRow] {
        try rows(of: db.makeStatement(sql: sql), arguments)
    }

    private func rows(of statement: Statement, _ arguments: SQLArguments) throws -> [SQLRow] {
        let columns = statement.columnNames
        return try Row.fetchAll(statement, arguments: Self.arguments(arguments)).map { row in
            SQLRow(columns: columns, values: row.databaseValues.map(Self.value))
        }
    }

    func execute(_ sql: String, _ arguments: SQLArguments) throws -> Int {
        try db.cachedStatement(sql: sql).execute(arguments: Self.arguments(arguments))
        return db.changesCount
    }

    /// SQLite has one writer: write transactions already run one at a time.
    func lockUntilCommit(_ key: Int64) throws {}

    static func arguments(_ arguments: SQLArguments) -> StatementArguments {
        StatementArguments(arguments.values.map(databaseValue))
    }

    static func databaseValue(_ value: SQLValue) -> DatabaseValue {
        switch value {
        case .null: .null
        case .integer(let i): i.databaseValue
        case .real(let d): d.databaseValue
        case .text(let t): t.databaseValue
        case .blob(let b): Data(b).databaseValue
        case .integers(let list): ("[" + list.map(String.init).joined(separator: ",") + "]").databaseValue
        case .texts(let list):
            // JSON strings: JSONEncoder escapes what JSON needs; an array of strings always encodes.
            (try? String(decoding: JSONEncoder().encode(list), as: UTF8.self))?.databaseValue ?? .null
        }
    }

    static func value(_ value: DatabaseValue) -> SQLValue {
        switch value.storage {
        case .null: .null
        case .int64(let i): .integer(i)
        case .double(let d): .real(d)
        case .string(let s): .text(s)
        case .blob(let data): .blob([UInt8](data))
        }
    }
}

/// GRDB's pool seen through `SQLTransactions`.
struct SQLiteTransactions: SQLTransactions {
    let pool: DatabasePool

    func read<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) throws -> T) async throws -> T {
        try await pool.read { db in try body(SQLiteDatabase(db: db)) }
    }

    func write<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) throws -> T) async throws -> T {
        try await pool.write { db in try body(SQLiteDatabase(db: db)) }
    }

    func read<T>(_ body: (any SQLDatabase) throws -> T) throws -> T {
        try pool.read { db in try body(SQLiteDatabase(db: db)) }
    }

    func write<T>(_ body: (any SQLDatabase) throws -> T) throws -> T {
        try pool.write { db in try body(SQLiteDatabase(db: db)) }
    }

    /// SQLite names the violated columns in its message ("UNIQUE constraint failed: users.email").
    func isUniqueViolation(_ error: any Error, of index: String?) -> Bool {
        guard let error = error as? DatabaseError, error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE else {
            return false
        }
        return index.map { (error.message ?? "").contains($0) } ?? true
    }
}
