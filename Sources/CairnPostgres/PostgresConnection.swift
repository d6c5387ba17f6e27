// One libpq connection, used by one pool thread at a time. Statements are written with `?` placeholders, as the
// SQLite store writes them, and numbered (`$1`, `$2`, ...) here before they are sent, outside quoted text; parameters
// go as text (see PostgresValue). Every wait on the server is bounded (PostgresTimeouts): the connection is made and
// each statement answered through libpq's non-blocking calls, polling the socket against a deadline, so a server
// that stopped answering (a frozen process, a stalled disk, a half-open path) cannot hold the calling thread. A
// connection that timed out is closed at once (its state is unknown) and remade before its next job; one that broke
// (the server restarted) is too; the statement that met either fails (`PostgresError.timeout` / `.connection`).
import CPostgres
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A connection to PostgreSQL.
public final class PostgresConnection {
    private var conn: OpaquePointer?
    private var numbered: [String: String] = [:]
    private let url: String
    /// The bounds of every wait on the server.
    public let timeouts: PostgresTimeouts
    /// When the job in hand must be over (monotonic seconds, `PostgresTimeouts.now`); set by the pool for the
    /// requests' jobs, nil for startup and maintenance. Statements and reconnects give up at the earlier of this and
    /// their own bound.
    var jobDeadline: Double?
    /// True while `withoutTimeouts` runs: no bound at all (migrations wait for each other's lock).
    private var unbounded = false

    /// Connects with a libpq connection string or URI (`postgres://user@host:port/db?options=...`).
    public init(url: String, timeouts: PostgresTimeouts = .standard) throws {
        self.url = url
        self.timeouts = timeouts
        try connect()
    }

    deinit { if let conn { PQfinish(conn) } }

    /// True while the connection is usable.
    public var isHealthy: Bool { conn.map { PQstatus($0) == CONNECTION_OK } ?? false }

    /// Closes the connection and makes a new one with the same parameters; throws when the server still cannot be
    /// reached, or did not answer in time.
    public func reset() throws {
        drop()
        try connect()
    }

    /// Runs `body` with no bound on the server's answers and no statement timeout (migrations, which may wait for
    /// another node's); the session's timeout is set again after.
    public func withoutTimeouts<T>(_ body: () throws -> T) throws -> T {
        let saved = (jobDeadline, unbounded)
        jobDeadline = nil
        unbounded = true
        defer { (jobDeadline, unbounded) = saved }
        try execute("SET statement_timeout = 0")
        let value = try body()
        try execute("SET statement_timeout = \(timeouts.statementMilliseconds)")
        return value
    }

    /// The parameters every connection is made with, before the URL's (which may override any of them): TCP
    /// keepalives and a user timeout, so the kernel gives up on a dead peer; libpq's own connect timeout (whole
    /// seconds; the poll below is the exact bound); UTF-8 both ways.
    private var parameters: [(String, String)] {
        var list: [(String, String)] = [
            ("keepalives", "1"), ("keepalives_idle", "10"), ("keepalives_interval", "5"),
            ("keepalives_count", "3"), ("client_encoding", "UTF8"),
        ]
        if let bound = timeouts.clientBound {
            list.append(("connect_timeout", "\(max(2, Int(bound.rounded(.up))))"))
            list.append(("tcp_user_timeout", "\(Int(bound * 1000))"))
        }
        return list
    }

    /// Makes the connection: libpq's non-blocking connect, polled until the deadline.
    private func connect() throws {
        let pairs = parameters + [("dbname", url)]
        let keys = pairs.map { strdup($0.0) } + [nil]
        let values = pairs.map { strdup($0.1) } + [nil]
        defer { for pointer in keys + values { free(pointer) } }
        let made = keys.map { $0.map { UnsafePointer($0) } }.withUnsafeBufferPointer { k in
            values.map { $0.map { UnsafePointer($0) } }.withUnsafeBufferPointer { v in
                PQconnectStartParams(k.baseAddress, v.baseAddress, 1)
            }
        }
        guard let made else { throw PostgresError.connection("out of memory") }
        conn = made
        let deadline = deadline(for: timeouts.clientBound)
        var state = PGRES_POLLING_WRITING
        while PQstatus(made) != CONNECTION_BAD {
            switch state {
            case PGRES_POLLING_OK:
                cairn_pq_silence_notices(made)
                do {
                    try configureSession()
                } catch {
                    drop()
                    throw error
                }
                return
            case PGRES_POLLING_READING: try wait(for: Int16(POLLIN), until: deadline, what: "connecting")
            case PGRES_POLLING_WRITING: try wait(for: Int16(POLLOUT), until: deadline, what: "connecting")
            default: break
            }
            state = PQconnectPoll(made)
            if state == PGRES_POLLING_FAILED { break }
        }
        let message = String(cString: PQerrorMessage(made)).trimmingCharacters(in: .whitespacesAndNewlines)
        drop()
        throw PostgresError.connection(message)
    }

    /// Closes the connection (nothing is sent: a frozen server must not hold us). The server rolls back whatever
    /// transaction it held once it notices.
    private func drop() {
        if let conn { PQfinish(conn) }
        conn = nil
    }

    /// Fixes what the text format relies on, whatever the server's or role's defaults: UTF-8 both ways (and a UTF-8
    /// database: another encoding would store Swift's UTF-8 as something else), bytea in hex, doubles to the last
    /// digit, backslashes in literals as plain characters (`ESCAPE '\'`), and the statement timeout.
    private func configureSession() throws {
        try executeScript(
            "SET bytea_output = 'hex'; SET extra_float_digits = 3; SET standard_conforming_strings = on; "
                + "SET statement_timeout = \(timeouts.statementMilliseconds)")
        let encoding: String? = try scalar("SHOW server_encoding")
        guard encoding == "UTF8" else {
            throw PostgresError.connection(
                "the database's encoding is \(encoding ?? "unknown"), not UTF8 (create it with ENCODING 'UTF8')")
        }
        let client: String? = try scalar("SHOW client_encoding")
        guard client == "UTF8" else { throw PostgresError.connection("cannot set client_encoding to UTF8") }
    }

    /// Runs a statement; returns the number of rows it affected (0 for statements that affect none).
    @discardableResult
    public func execute(_ sql: String, _ arguments: PostgresArguments = []) throws -> Int {
        try run(sql, arguments) { result in Int(String(cString: PQcmdTuples(result))) ?? 0 }
    }

    /// Runs several statements without parameters (schema scripts).
    public func executeScript(_ sql: String) throws {
        let result = try exchange { PQsendQuery($0, sql) }
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

    /// Runs `sql`; `keepText: false` for a text made per request, whose numbered form is not kept.
    func run<T>(
        _ sql: String, _ arguments: PostgresArguments, keepText: Bool = true, _ read: (OpaquePointer) -> T
    ) throws -> T {
        guard conn != nil else { throw PostgresError.connection("closed") }
        let text = keepText ? numberedPlaceholders(sql) : Self.number(sql)
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
        let result = try exchange { conn in
            pointers.withUnsafeBufferPointer { buffer in
                PQsendQueryParams(conn, text, Int32(buffer.count), nil, buffer.baseAddress, nil, nil, 0)
            }
        }
        defer { PQclear(result) }
        try check(result)
        return read(result)
    }

    /// Sends one query string and reads every result it gives, waiting on the socket no longer than the deadline;
    /// returns the first failed result, else the last (as `PQexec` does). A wait that runs out closes the connection.
    private func exchange(_ send: (OpaquePointer) -> Int32) throws -> OpaquePointer {
        guard let conn else { throw PostgresError.connection("closed") }
        let deadline = deadline(for: timeouts.clientBound)
        guard PQsetnonblocking(conn, 1) == 0, send(conn) == 1 else { throw brokenConnection(conn) }
        while true {
            let left = PQflush(conn)
            if left == 0 { break }
            if left < 0 { throw brokenConnection(conn) }
            try wait(for: Int16(POLLIN | POLLOUT), until: deadline, what: "sending a statement")
            guard PQconsumeInput(conn) == 1 else { throw brokenConnection(conn) }
        }
        var kept: OpaquePointer?
        while true {
            while PQisBusy(conn) == 0 {
                guard let result = PQgetResult(conn) else {
                    guard let kept else { throw brokenConnection(conn) }
                    return kept
                }
                if let held = kept {
                    if Self.failed(held) {  // the first failure is the answer; later results are dropped
                        PQclear(result)
                        continue
                    }
                    PQclear(held)
                }
                kept = result
            }
            do {
                try wait(for: Int16(POLLIN), until: deadline, what: "waiting for an answer")
            } catch {
                PQclear(kept)
                throw error
            }
            guard PQconsumeInput(conn) == 1 else {
                PQclear(kept)
                throw brokenConnection(conn)
            }
        }
    }

    private static func failed(_ result: OpaquePointer) -> Bool {
        let status = PQresultStatus(result)
        return status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK && status != PGRES_EMPTY_QUERY
    }

    private func brokenConnection(_ conn: OpaquePointer) -> PostgresError {
        .connection(String(cString: PQerrorMessage(conn)).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// The moment a wait bounded by `bound` seconds from now must end: the earlier of that and the job's deadline;
    /// nil for none.
    private func deadline(for bound: Double?) -> Double? {
        if unbounded { return nil }
        let own = bound.map { PostgresTimeouts.now() + $0 }
        guard let job = jobDeadline else { return own }
        return min(own ?? job, job)
    }

    /// Waits until the socket is ready for `events`; past the deadline closes the connection and throws `timeout`.
    private func wait(for events: Int16, until deadline: Double?, what: String) throws {
        guard let conn else { throw PostgresError.connection("closed") }
        let socket = PQsocket(conn)
        guard socket >= 0 else { throw brokenConnection(conn) }
        while true {
            var milliseconds: Int32 = -1
            if let deadline {
                let left = deadline - PostgresTimeouts.now()
                if left <= 0 {
                    drop()
                    throw PostgresError.timeout("no answer from PostgreSQL in time (\(what)); connection closed")
                }
                milliseconds = Int32(min((left * 1000).rounded(.up), 3_600_000))
            }
            var entry = pollfd(fd: socket, events: events, revents: 0)
            let ready = poll(&entry, 1, milliseconds)
            if ready > 0 { return }
            if ready < 0 && errno != EINTR {
                throw PostgresError.connection("poll: " + String(cString: strerror(errno)))
            }
        }
    }

    private func check(_ result: OpaquePointer) throws {
        guard let conn else { throw PostgresError.connection("closed") }
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
