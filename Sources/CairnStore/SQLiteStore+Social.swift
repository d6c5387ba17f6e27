// The live-map part of the store: friendships, friend requests, sharing rules and position snapshots,
// implementing the domain's `SocialStore`. Graph and rule changes are single small transactions committed before
// the hub replies; positions arrive in batches and are written in one transaction per flush with prepared
// statements, so a flush of 100k rows costs one fsync, not 100k.
import CairnCore
import CairnSocial
import Foundation
import GRDB

extension SQLiteStore: SocialStore {
    /// Loads the friend graph, pending requests, rules and last positions.
    public func loadSocial() throws -> SocialSnapshot {
        try pool.read { db in
            var snapshot = try Self.sharing(db)
            for row in try Row.fetchAll(
                db, sql: "SELECT user_id, lat, lon, acc, alt, spd, hdg, bat, ts, flagged FROM positions")
            {
                snapshot.positions.append(StoredFix(userID: row[0], fix: Self.fix(row, from: 1)))
            }
            return snapshot
        }
    }

    /// Friendships, requests and every rule row (cleared ones too), in one read transaction.
    public func loadSharing() async throws -> SocialSnapshot {
        try await pool.read { db in try Self.sharing(db) }
    }

    private static func sharing(_ db: Database) throws -> SocialSnapshot {
        var snapshot = SocialSnapshot()
        for row in try Row.fetchAll(db, sql: "SELECT user_a, user_b FROM friendships") {
            snapshot.friendships.append((row[0], row[1]))
        }
        for row in try Row.fetchAll(db, sql: "SELECT from_id, to_id FROM friend_requests") {
            snapshot.requests.append((from: row[0], to: row[1]))
        }
        for row in try Row.fetchAll(
            db, sql: "SELECT owner_id, viewer_id, level, until, version FROM share_rules")
        {
            let viewer: Int64 = row[1]
            guard let level = ShareLevel(rawValue: row[2]) else { continue }
            let until: Int64? = row[3]
            let rule = StoredShareRule(
                ownerID: row[0], viewerID: viewer == 0 ? nil : viewer, level: level, until: until, version: row[4])
            if level == .precise && until == nil {
                snapshot.clearedRules.append(rule)
            } else {
                snapshot.shareRules.append(rule)
            }
        }
        snapshot.maxRuleVersion = try Int64.fetchOne(db, sql: "SELECT MAX(version) FROM share_rules") ?? 0
        return snapshot
    }

    /// A user by id.
    public func user(id: Int64) async throws -> User? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT id, username, name, is_guest FROM users WHERE id = ?", arguments: [id])
                .map(Self.user)
        }
    }

    /// Users by ids, in id order.
    public func users(ids: [Int64]) async throws -> [User] {
        guard !ids.isEmpty else { return [] }
        return try await pool.read { db in
            var result: [User] = []
            // Chunks keep each statement under SQLite's variable limit.
            for start in stride(from: 0, to: ids.count, by: 500) {
                let chunk = Array(ids[start..<min(start + 500, ids.count)])
                let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
                result += try Row.fetchAll(
                    db, sql: "SELECT id, username, name, is_guest FROM users WHERE id IN (\(marks))",
                    arguments: StatementArguments(chunk)
                ).map(Self.user)
            }
            return result.sorted { $0.id < $1.id }
        }
    }

    /// Prefix search on username and display name (case-insensitive), guests and `excluding` left out.
    public func searchUsers(prefix: String, excluding: Int64, limit: Int) async throws -> [User] {
        let pattern = Self.escapeLike(prefix.lowercased()) + "%"
        return try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT id, username, name, is_guest FROM users
                    WHERE is_guest = 0 AND id <> ?
                      AND (username LIKE ? ESCAPE '\\' OR lower(name) LIKE ? ESCAPE '\\')
                    ORDER BY username LIMIT ?
                    """, arguments: [excluding, pattern, pattern, limit]
            ).map(Self.user)
        }
    }

    /// Records a friend request (repeating one is harmless).
    public func addFriendRequest(from: Int64, to: Int64, at: Int64) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO friend_requests (from_id, to_id, created_at) VALUES (?, ?, ?)",
                arguments: [from, to, at])
        }
    }

    /// Deletes a friend request.
    public func deleteFriendRequest(from: Int64, to: Int64) async throws {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM friend_requests WHERE from_id = ? AND to_id = ?", arguments: [from, to])
        }
    }

    /// `a` accepts `b`'s request: makes them friends and clears requests between them. The request is checked in
    /// the same transaction, so one withdrawn or declined while the accept was on its way cannot still be accepted.
    public func addFriendship(_ a: Int64, _ b: Int64, at: Int64) async throws {
        try await pool.write { db in
            let friends =
                try Bool.fetchOne(
                    db,
                    sql: """
                        SELECT EXISTS (SELECT 1 FROM friendships WHERE user_a = ? AND user_b = ?)
                        """, arguments: [min(a, b), max(a, b)]) ?? false
            let requested =
                try Bool.fetchOne(
                    db,
                    sql: """
                        SELECT EXISTS (SELECT 1 FROM friend_requests WHERE from_id = ? AND to_id = ?)
                        """, arguments: [b, a]) ?? false
            guard friends || requested else { throw SocialStoreError.noFriendRequest(from: b, to: a) }
            try db.execute(
                sql: "INSERT OR IGNORE INTO friendships (user_a, user_b, created_at) VALUES (?, ?, ?)",
                arguments: [min(a, b), max(a, b), at])
            try db.execute(
                sql: "DELETE FROM friend_requests WHERE (from_id = ? AND to_id = ?) OR (from_id = ? AND to_id = ?)",
                arguments: [a, b, b, a])
        }
    }

    /// Ends the friendship of `a` and `b`, clears requests between them, and resets the per-friend rules between
    /// them to versioned placeholders (see `SocialStore.deleteFriendship`).
    public func deleteFriendship(_ a: Int64, _ b: Int64, versionAB: Int64, versionBA: Int64) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "DELETE FROM friendships WHERE user_a = ? AND user_b = ?", arguments: [min(a, b), max(a, b)])
            try db.execute(
                sql: "DELETE FROM friend_requests WHERE (from_id = ? AND to_id = ?) OR (from_id = ? AND to_id = ?)",
                arguments: [a, b, b, a])
            try Self.upsertRule(db, owner: a, viewer: b, level: nil, until: nil, version: versionAB)
            try Self.upsertRule(db, owner: b, viewer: a, level: nil, until: nil, version: versionBA)
        }
    }

    /// Upserts one sharing rule unless a newer version is stored. Going back to the default is stored as
    /// `precise` without a time limit (a tombstone that keeps its version), not as a deletion.
    public func saveShareRule(ownerID: Int64, viewerID: Int64?, level: ShareLevel?, until: Int64?, version: Int64)
        async throws
    {
        try await pool.write { db in
            try Self.upsertRule(db, owner: ownerID, viewer: viewerID, level: level, until: until, version: version)
        }
    }

    static func upsertRule(
        _ db: Database, owner: Int64, viewer: Int64?, level: ShareLevel?, until: Int64?,
        version: Int64
    ) throws {
        try db.execute(
            sql: """
                INSERT INTO share_rules (owner_id, viewer_id, level, until, version) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT(owner_id, viewer_id) DO UPDATE
                  SET level = excluded.level, until = excluded.until, version = excluded.version
                  WHERE excluded.version > share_rules.version
                """, arguments: [owner, viewer ?? 0, (level ?? .precise).rawValue, level == nil ? nil : until, version])
    }

    /// Writes a batch of positions in one transaction.
    public func flushPositions(_ batch: PositionBatch) async throws {
        guard !batch.isEmpty else { return }
        // A fix of a user deleted meanwhile (a guest purged while a last position was on its way) is skipped, not
        // an error: one missing user must not fail the whole snapshot, and with it every later one.
        try await pool.write { db in
            let upsert = try db.cachedStatement(
                sql: """
                    INSERT INTO positions (user_id, lat, lon, acc, alt, spd, hdg, bat, ts, flagged)
                    SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10 WHERE EXISTS (SELECT 1 FROM users WHERE id = ?1)
                    ON CONFLICT(user_id) DO UPDATE SET lat = excluded.lat, lon = excluded.lon, acc = excluded.acc,
                      alt = excluded.alt, spd = excluded.spd, hdg = excluded.hdg, bat = excluded.bat, ts = excluded.ts,
                      flagged = excluded.flagged
                    WHERE excluded.ts >= positions.ts
                    """)
            for item in batch.latest {
                try upsert.execute(arguments: Self.arguments(item))
            }
            let append = try db.cachedStatement(
                sql: """
                    INSERT INTO position_history (user_id, lat, lon, acc, alt, spd, hdg, bat, ts, flagged)
                    SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10 WHERE EXISTS (SELECT 1 FROM users WHERE id = ?1)
                    """)
            for item in batch.history {
                try append.execute(arguments: Self.arguments(item))
            }
        }
    }

    /// Deletes history rows with `ts` before `cutoff`, a slice per transaction so the writer is never held long.
    public func purgePositionHistory(before cutoff: Int64) async throws -> Int {
        var total = 0
        while true {
            let deleted = try await pool.write { db -> Int in
                try db.execute(
                    sql: """
                        DELETE FROM position_history WHERE rowid IN
                          (SELECT rowid FROM position_history WHERE ts < ? LIMIT 10000)
                        """, arguments: [cutoff])
                return db.changesCount
            }
            total += deleted
            if deleted < 10000 { return total }
        }
    }

    /// Rows in the position history (tests and diagnostics).
    func positionHistoryCount() throws -> Int {
        try pool.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM position_history") ?? 0 }
    }

    static func arguments(_ item: StoredFix) -> StatementArguments {
        let f = item.fix
        return [item.userID, f.lat, f.lon, f.acc, f.alt, f.spd, f.hdg, f.bat, f.ts, f.flagged]
    }

    static func fix(_ row: Row, from i: Int) -> Fix {
        Fix(
            lat: row[i], lon: row[i + 1], acc: row[i + 2], alt: row[i + 3], spd: row[i + 4], hdg: row[i + 5],
            bat: row[i + 6], ts: row[i + 7], flagged: row[i + 8])
    }

    static func escapeLike(_ text: String) -> String {
        // Scalar by scalar: a wildcard that follows a prepended or combining mark is one Character with it, and
        // comparing Characters would leave it unescaped.
        var out = ""
        for scalar in text.unicodeScalars {
            if scalar == "%" || scalar == "_" || scalar == "\\" { out.unicodeScalars.append("\\") }
            out.unicodeScalars.append(scalar)
        }
        return out
    }
}
