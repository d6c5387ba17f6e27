// One libpq connection, used by one pool thread at a time. Statements are written with `?` placeholders, as the
// SQLite store writes them, and numbered (`$1`, `$2`, ...) here before they are sent, outside quoted text; parameters
// go as text (see PostgresValue). A connection that breaks (the server restarted) is reset by the pool before its
// next job; the statement that met the break fails with `PostgresError.connection`.
import CPostgres
import Foundation

/// A connection to PostgreSQL.
public final class PostgresConnection {
    private var conn: OpaquePointer?
    private var numbered: [String: String] = [:]

    /// Connects with a libpq connection string or URI (`postgres://user@host:port/db?options=...`).
    public init(url: String) throws {
        conn = PQconnectdb(url)
        guard let conn, PQstatus(conn) == CONNECTION_OK else {
            let message = conn.map { String(cString: PQerrorMessage($0)) } ?? "out of memory"
            if let conn { PQfinish(conn) }
            self.conn = nil
            throw PostgresError.connection(message.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        cairn_pq_silence_notices(conn)
        try configureSession()
    }

    deinit { if let conn { PQfinish(conn) } }

    /// True while the connection is usable.
    public var isHealthy: Bool { conn.map { PQstatus($0) == CONNECTION_OK } ?? false }

    /// Reconnects with the same parameters; throws when the server still cannot be reached.
    public func reset() throws {
        guard let conn else { throw PostgresError.connection("closed") }
        PQreset(conn)
        guard PQstatus(conn) == CONNECTION_OK else {
            throw PostgresError.connection(
                String(cString: PQerrorMessage(conn)).trimmingCharacters(in: .whitespacesAndNewlines))
        }
        cairn_pq_silence_notices(conn)
        try configureSession()
    }

    /// Fixes what the text format relies on, whatever the server's or role's defaults: UTF-8 both ways (and a UTF-8
    /// database: another encoding would store Swift's UTF-8 as something else), bytea in hex, doubles to the last
    /// digit, and backslashes in literals as plain characters (`ESCAPE '\'`).
    private func configureSession() throws {
        guard let conn, PQsetClientEncoding(conn, "UTF8") == 0 else {
            throw PostgresError.connection("cannot set client_encoding to UTF8")
        }
        try executeScript(
            "SET bytea_output = 'hex'; SET extra_float_digits = 3; SET standard_conforming_strings = on")
        let encoding: String? = try scalar("SHOW server_encoding")
        guard encoding == "UTF8" else {
            throw PostgresError.connection(
                "the database's encoding is \(encoding ?? "unknown"), not UTF8 (create it with ENCODING 'UTF8')")
        }
    }

    /// Runs a statement; returns the number of rows it affected (0 for statements that affect none).
    @discardableResult
    public func execute(_ sql: String, _ arguments: PostgresArguments = []) throws -> Int {
        try run(sql, arguments) { result in Int(String(cString: PQcmdTuples(result))) ?? 0 }
    }

    /// Runs several statements without parameters (schema scripts).
    public func executeScript(_ sql: String) throws {
        guard let conn else { throw PostgresError.connection("closed") }
        let result = PQexec(conn, sql)
        defer { PQclear(result) }
        try check(result)
    }

    /// The rows a query returns.
    public func rows(_ sql: String, _ arguments: PostgresArguments = []) throws -> [PostgresRow] {
        try run(sql, arguments) { result in
            let count = Int(PQntuples(result))
            let width = Int(PQnfields(result))
            let columns = (0..<width).map { String(cString: PQfname(result, Int32($0))) }
            var rows: [PostgresRow] = []
            rows.reserveCapacity(count)
            for r in 0..<count {
                var values: [String?] = []
                values.reserveCapacity(width)
                for c in 0..<width {
                    if PQgetisnull(result, Int32(r), Int32(c)) != 0 {
                        values.append(nil)
                    } else {
                        values.append(String(cString: PQgetvalue(result, Int32(r), Int32(c))))
                    }
                }
                rows.append(PostgresRow(columns: columns, values: values))
            }
            return rows
        }
    }

    /// The first row a query returns, if any.
    public func row(_ sql: String, _ arguments: PostgresArguments = []) throws -> PostgresRow? {
        try rows(sql, arguments).first
    }

    /// The first column of the first row; nil when there is no row or the value is NULL.
    public func scalar<T: PostgresDecodable>(
        _ sql: String, _ arguments: PostgresArguments = [], as type: T.Type = T.self
    ) throws -> T? {
        guard let row = try rows(sql, arguments).first else { return nil }
        return row[0]
    }

    /// The first column of every row (NULLs left out).
    public func scalars<T: PostgresDecodable>(
        _ sql: String, _ arguments: PostgresArguments = [], as type: T.Type = T.self
    ) throws -> [T] {
        try rows(sql, arguments).compactMap { $0[0] }
    }

    // MARK: Internals

    private func run<T>(_ sql: String, _ arguments: PostgresArguments, _ read: (OpaquePointer) -> T) throws -> T {
        guard let conn else { throw PostgresError.connection("closed") }
        let text = numberedPlaceholders(sql)
        let texts = arguments.values.map { $0?.postgresText }
        // A parameter goes as a C string: a NUL would silently cut it short. PostgreSQL's text cannot hold one
        // either, so it is refused as the server refuses it.
        if texts.contains(where: { $0?.utf8.contains(0) ?? false }) {
            throw PostgresError.server(
                sqlState: "22021", message: "invalid byte sequence for encoding \"UTF8\": 0x00", constraint: nil)
        }
        let values: [UnsafeMutablePointer<CChar>?] = texts.map { $0.flatMap { strdup($0) } }
        defer { for value in values { free(value) } }
        let pointers: [UnsafePointer<CChar>?] = values.map { $0.map { UnsafePointer($0) } }
        let result = pointers.withUnsafeBufferPointer { buffer in
            PQexecParams(conn, text, Int32(buffer.count), nil, buffer.baseAddress, nil, nil, 0)
        }
        defer { PQclear(result) }
        try check(result)
        return read(result!)
    }

    private func check(_ result: OpaquePointer?) throws {
        guard let conn else { throw PostgresError.connection("closed") }
        guard let result else {
            throw PostgresError.connection(
                String(cString: PQerrorMessage(conn)).trimmingCharacters(in: .whitespacesAndNewlines))
        }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY: return
        default:
            guard PQstatus(conn) == CONNECTION_OK else {
                throw PostgresError.connection(
                    String(cString: PQerrorMessage(conn)).trimmingCharacters(in: .whitespacesAndNewlines))
            }
            func field(_ code: Character) -> String? {
                PQresultErrorField(result, Int32(code.asciiValue!)).map { String(cString: $0) }
            }
            throw PostgresError.server(
                sqlState: field("C") ?? "XX000",
                message: field("M") ?? String(cString: PQresultErrorMessage(result)),
                constraint: field("n"))
        }
    }

    /// `?` → `$1`, `$2`, ... outside single-quoted literals and double-quoted identifiers (cached per statement).
    func numberedPlaceholders(_ sql: String) -> String {
        if let done = numbered[sql] { return done }
        let done = Self.number(sql)
        numbered[sql] = done
        return done
    }

    static func number(_ sql: String) -> String {
        var out = ""
        out.reserveCapacity(sql.utf8.count + 16)
        var next = 1
        var quote: Unicode.Scalar?
        for ch in sql.unicodeScalars {  // scalars, not Characters: a mark must not hide a quote or a `?`
            if let open = quote {
                if ch == open { quote = nil }
                out.unicodeScalars.append(ch)
            } else if ch == "'" || ch == "\"" {
                quote = ch
                out.unicodeScalars.append(ch)
            } else if ch == "?" {
                out += "$\(next)"
                next += 1
            } else {
                out.unicodeScalars.append(ch)
            }
        }
        return out
    }
}
