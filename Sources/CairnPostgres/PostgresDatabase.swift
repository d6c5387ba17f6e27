// The PostgreSQL side of CairnSQL's database protocol: a pool connection runs the shared store's statements, with
// their parameters as text (lists as array literals, `SQLDialect.isAny`), and the pool gives the transactions
// (REPEATABLE READ snapshots, SERIALIZABLE writes rerun after a serialization failure, every wait bounded). Result
// columns are typed by the type the server names for them, so a bytea comes back as bytes and a bigint as an integer.
import CPostgres
import CairnSQL
import Foundation

/// A pool connection seen through `SQLDatabase`.
struct PostgresDatabase: SQLDatabase {
    let db: PostgresConnection

    var dialect: SQLDialect { .postgres }

    func rows(_ sql: String, _ arguments: SQLArguments) throws -> [SQLRow] {
        try rows(sql, arguments, keepText: true)
    }

    /// The connection keeps the numbered form of every text it ran: a text made per request is numbered and let go.
    func rowsOnce(_ sql: String, _ arguments: SQLArguments) throws -> [SQLRow] {
        try rows(sql, arguments, keepText: false)
    }

    private func rows(_ sql: String, _ arguments: SQLArguments, keepText: Bool) throws -> [SQLRow] {
        try db.run(sql, Self.arguments(arguments), keepText: keepText) { result in
            let count = Int(PQntuples(result))
            let width = Int(PQnfields(result))
            let columns = (0..<width).map { String(cString: PQfname(result, Int32($0))) }
            let types = (0..<width).map { PQftype(result, Int32($0)) }
            var rows: [SQLRow] = []
            rows.reserveCapacity(count)
            for r in 0..<count {
                var values: [SQLValue] = []
                values.reserveCapacity(width)
                for c in 0..<width {
                    if PQgetisnull(result, Int32(r), Int32(c)) != 0 {
                        values.append(.null)
                    } else {
                        values.append(Self.value(String(cString: PQgetvalue(result, Int32(r), Int32(c))), types[c]))
                    }
                }
                rows.append(SQLRow(columns: columns, values: values))
            }
            return rows
        }
    }

    func execute(_ sql: String, _ arguments: SQLArguments) throws -> Int {
        try db.execute(sql, Self.arguments(arguments))
    }

    /// A transaction-scoped advisory lock: every node's writers that take the same key take turns.
    func lockUntilCommit(_ key: Int64) throws {
        _ = try db.rows("SELECT pg_advisory_xact_lock(?)", [key])
    }

    static func arguments(_ arguments: SQLArguments) -> PostgresArguments {
        PostgresArguments(arguments.values.map(bindable))
    }

    static func bindable(_ value: SQLValue) -> (any PostgresBindable)? {
        switch value {
        case .null: nil
        case .integer(let i): i
        case .real(let d): d
        case .text(let t): t
        case .blob(let b): PostgresBytes(b)
        case .integers(let list): PostgresIntArray(list)
        case .texts(let list): PostgresTextArray(list)
        }
    }

    /// A column's text decoded by its type's OID (pg_type.h): booleans and integers as integers, floats as reals,
    /// bytea as bytes, the rest (text, numeric) as text.
    static func value(_ text: String, _ type: Oid) -> SQLValue {
        switch type {
        case 16: .integer(text == "t" ? 1 : 0)
        case 20, 21, 23, 26: Int64(text).map(SQLValue.integer) ?? .text(text)
        case 700, 701: Double.decode(postgresText: text).map(SQLValue.real) ?? .text(text)
        case 17: PostgresBytes.parse(text).map(SQLValue.blob) ?? .text(text)
        default: .text(text)
        }
    }
}

/// The pool seen through `SQLTransactions`.
struct PostgresTransactions: SQLTransactions {
    let pool: PostgresPool

    func read<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) throws -> T) async throws -> T {
        try await pool.read { db in try body(PostgresDatabase(db: db)) }
    }

    func write<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) throws -> T) async throws -> T {
        try await pool.write { db in try body(PostgresDatabase(db: db)) }
    }

    func read<T>(_ body: (any SQLDatabase) throws -> T) throws -> T {
        try pool.read { db in try body(PostgresDatabase(db: db)) }
    }

    func write<T>(_ body: (any SQLDatabase) throws -> T) throws -> T {
        try pool.write { db in try body(PostgresDatabase(db: db)) }
    }

    /// PostgreSQL names the violated constraint, which for `table.column` the schema calls `table_column`.
    func isUniqueViolation(_ error: any Error, of index: String?) -> Bool {
        (error as? PostgresError)?.isUniqueViolation(index?.replacingOccurrences(of: ".", with: "_")) ?? false
    }
}
