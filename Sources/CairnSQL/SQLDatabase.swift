// The few things the store's code asks of a database, whichever engine it is: run a statement with `?` parameters
// and get its rows or the number of rows it changed, inside a read or write transaction that runs off the caller's
// thread (`SQLTransactions`). SQLite (CairnStore, through GRDB) and PostgreSQL (CairnPostgres, through libpq) each
// implement both; what their SQL spells differently is the `dialect`. An insert's new id comes back with
// `RETURNING id` on both (SQLite has RETURNING since 3.35).

/// One connection inside a transaction. Used only on the thread that runs the transaction's body.
public protocol SQLDatabase {
    /// How this engine spells what the engines spell differently.
    var dialect: SQLDialect { get }

    /// The rows a statement returns (a query, or a write with RETURNING).
    func rows(_ sql: String, _ arguments: SQLArguments) throws -> [SQLRow]

    /// The rows of a statement whose text depends on the request (a condition per word searched): not kept
    /// prepared after it ran, so how many texts callers can make does not decide how much each connection holds.
    func rowsOnce(_ sql: String, _ arguments: SQLArguments) throws -> [SQLRow]

    /// Runs a statement; the number of rows it inserted, updated or deleted.
    @discardableResult
    func execute(_ sql: String, _ arguments: SQLArguments) throws -> Int

    /// Holds the lock named `key` until the transaction ends: a writer that takes it waits for another that holds
    /// it. Nothing to do under SQLite's single writer, where write transactions already run one at a time.
    func lockUntilCommit(_ key: Int64) throws
}

extension SQLDatabase {
    /// The rows of a statement without parameters.
    public func rows(_ sql: String) throws -> [SQLRow] { try rows(sql, []) }

    /// Runs a statement without parameters.
    @discardableResult
    public func execute(_ sql: String) throws -> Int { try execute(sql, []) }

    /// The first row a statement returns, if any.
    public func row(_ sql: String, _ arguments: SQLArguments = []) throws -> SQLRow? {
        try rows(sql, arguments).first
    }

    /// The first column of the first row; nil when there is no row or the value is NULL.
    public func scalar<T: SQLDecodable>(
        _ sql: String, _ arguments: SQLArguments = [], as type: T.Type = T.self
    ) throws -> T? {
        guard let row = try rows(sql, arguments).first else { return nil }
        return row[0]
    }

    /// The first column of every row (NULLs left out).
    public func scalars<T: SQLDecodable>(
        _ sql: String, _ arguments: SQLArguments = [], as type: T.Type = T.self
    ) throws -> [T] {
        try rows(sql, arguments).compactMap { $0[0] }
    }
}

/// An engine's transactions. A read sees one snapshot; a write is committed (durable) before it returns. The async
/// forms run on the engine's own threads and suspend the caller, so the event loop never waits on the database; the
/// blocking forms are for startup and the operator's commands.
public protocol SQLTransactions: Sendable {
    func read<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) throws -> T) async throws -> T
    @discardableResult
    func write<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) throws -> T) async throws -> T
    func read<T>(_ body: (any SQLDatabase) throws -> T) throws -> T
    @discardableResult
    func write<T>(_ body: (any SQLDatabase) throws -> T) throws -> T
    /// True when `error` is this engine's refusal of a row that breaks a unique constraint; with `index`
    /// (`table.column`, a unique index the schema names `table_column`), that one only.
    func isUniqueViolation(_ error: any Error, of index: String?) -> Bool
}

extension SQLTransactions {
    /// True when `error` is this engine's refusal of a row that breaks a unique constraint.
    public func isUniqueViolation(_ error: any Error) -> Bool { isUniqueViolation(error, of: nil) }
}

/// A store whose ports are implemented once, in this module, on its engine's transactions.
public protocol SQLStore: Sendable {
    /// The engine's transactions.
    var database: any SQLTransactions { get }
}
