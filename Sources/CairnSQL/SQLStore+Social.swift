// The live-map part of the store: friendships, friend requests, sharing rules and position snapshots, implementing
// the domain's `SocialStore` but for the positions' writes. Graph and rule changes are single small transactions
// committed before the hub replies. Writing and purging positions is each engine's own (`flushPositions`,
// `purgePositionHistory`): SQLite writes a flush row by row with cached statements in one transaction, PostgreSQL in
// one statement whatever its size (one round trip and one commit for 100k fixes, not 100k of each).
public import CairnCore
public import CairnSocial

extension SQLStore {
    /// Loads the friend graph, pending requests, rules and last positions.
    public func loadSocial() throws -> SocialSnapshot {
        try database.read { db in
            var snapshot = try Self.sharing(db)
            for row in try db.rows("SELECT user_id, lat, lon, acc, alt, spd, hdg, bat, ts, flagged FROM positions") {
                snapshot.positions.append(StoredFix(userID: row[0], fix: Self.fix(row, from: 1)))
            }
            return snapshot
        }
    }

    /// Friendships, requests and every rule row (cleared ones too), in one snapshot.
    public func loadSharing() async throws -> SocialSnapshot {
        try await database.read { db in try Self.sharing(db) }
    }

    private static func sharing(_ db: any SQLDatabase) throws -> SocialSnapshot {
        var snapshot = SocialSnapshot()
        for row in try db.rows("SELECT user_a, user_b FROM friendships") {
            snapshot.friendships.append((row[0], row[1]))
        }
        for row in try db.rows("SELECT from_id, to_id FROM friend_requests") {
            snapshot.requests.append((from: row[0], to: row[1]))
        }
        for row in try db.rows("SELECT owner_id, viewer_id, level, until, version FROM share_rules") {
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
        snapshot.maxRuleVersion = try db.scalar("SELECT MAX(version) FROM share_rules") ?? 0
        return snapshot
    }

    /// A user by id.
    public func user(id: Int64) async throws -> User? {
        try await database.read { db in
            try db.row("SELECT id, username, name, is_guest FROM users WHERE id = ?", [id]).map(SQLAccounts.user)
        }
    }

    /// Users by ids, in id order.
    public func users(ids: [Int64]) async throws -> [User] {
        guard !ids.isEmpty else { return [] }
        return try await database.read { db in
            try db.rows(
                "SELECT id, username, name, is_guest FROM users WHERE \(db.dialect.isAny("id")) ORDER BY id",
                [SQLIntegers(ids)]
            ).map(SQLAccounts.user)
        }
    }

    /// Prefix search on username and display name, guests and `excluding` left out. The query is folded as names are
    /// (`SQLText.fold`: lower case, NFC) and matched against `name_folded` and the username (`[a-z0-9_.]`, which
    /// folding leaves as it is), so case is ignored beyond ASCII and alike on both engines. A query holding U+0000
    /// finds nobody (no name holds it; PostgreSQL's text could not even be asked).
    public func searchUsers(prefix: String, excluding: Int64, limit: Int) async throws -> [User] {
        let folded = SQLText.fold(prefix)
        guard !folded.unicodeScalars.contains("\u{0}") else { return [] }
        let pattern = SQLText.escapeLike(folded) + "%"
        return try await database.read { db in
            try db.rows(
                """
                SELECT id, username, name, is_guest FROM users
                WHERE NOT is_guest AND id <> ?
                  AND (\(db.dialect.bytewise("username")) LIKE ? ESCAPE '\\' OR name_folded LIKE ? ESCAPE '\\')
                ORDER BY \(db.dialect.bytewise("username")) LIMIT ?
                """, [excluding, pattern, pattern, limit]
            ).map(SQLAccounts.user)
        }
    }

    /// Records a friend request (repeating one is harmless).
    public func addFriendRequest(from: Int64, to: Int64, at: Int64) async throws {
        try await database.write { db in
            try db.execute(
                "INSERT INTO friend_requests (from_id, to_id, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                [from, to, at])
        }
    }

    /// Deletes a friend request.
    public func deleteFriendRequest(from: Int64, to: Int64) async throws {
        try await database.write { db in
            try db.execute("DELETE FROM friend_requests WHERE from_id = ? AND to_id = ?", [from, to])
        }
    }

    /// `a` accepts `b`'s request: makes them friends and clears requests between them. The request is checked in
    /// the same (serializable) transaction, so one withdrawn or declined while the accept was on its way, on any
    /// node, cannot still be accepted.
    public func addFriendship(_ a: Int64, _ b: Int64, at: Int64) async throws {
        try await database.write { db in
            let known: Bool =
                try db.scalar(
                    """
                    SELECT EXISTS (SELECT 1 FROM friendships WHERE user_a = ? AND user_b = ?)
                      OR EXISTS (SELECT 1 FROM friend_requests WHERE from_id = ? AND to_id = ?)
                    """, [min(a, b), max(a, b), b, a]) ?? false
            guard known else { throw SocialStoreError.noFriendRequest(from: b, to: a) }
            try db.execute(
                "INSERT INTO friendships (user_a, user_b, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                [min(a, b), max(a, b), at])
            try db.execute(
                "DELETE FROM friend_requests WHERE (from_id = ? AND to_id = ?) OR (from_id = ? AND to_id = ?)",
                [a, b, b, a])
        }
    }

    /// Ends the friendship of `a` and `b`, clears requests between them, and resets the per-friend rules between
    /// them to versioned placeholders (see `SocialStore.deleteFriendship`).
    public func deleteFriendship(_ a: Int64, _ b: Int64, versionAB: Int64, versionBA: Int64) async throws {
        try await database.write { db in
            try db.execute("DELETE FROM friendships WHERE user_a = ? AND user_b = ?", [min(a, b), max(a, b)])
            try db.execute(
                "DELETE FROM friend_requests WHERE (from_id = ? AND to_id = ?) OR (from_id = ? AND to_id = ?)",
                [a, b, b, a])
            try Self.upsertRule(db, owner: a, viewer: b, level: nil, until: nil, version: versionAB)
            try Self.upsertRule(db, owner: b, viewer: a, level: nil, until: nil, version: versionBA)
        }
    }

    /// Upserts one sharing rule unless a newer version is stored. Going back to the default is stored as
    /// `precise` without a time limit (a tombstone that keeps its version), not as a deletion.
    public func saveShareRule(ownerID: Int64, viewerID: Int64?, level: ShareLevel?, until: Int64?, version: Int64)
        async throws
    {
        try await database.write { db in
            try Self.upsertRule(db, owner: ownerID, viewer: viewerID, level: level, until: until, version: version)
        }
    }

    private static func upsertRule(
        _ db: any SQLDatabase, owner: Int64, viewer: Int64?, level: ShareLevel?, until: Int64?, version: Int64
    ) throws {
        try db.execute(
            """
            INSERT INTO share_rules (owner_id, viewer_id, level, until, version) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (owner_id, viewer_id) DO UPDATE
              SET level = excluded.level, until = excluded.until, version = excluded.version
              WHERE excluded.version > share_rules.version
            """, [owner, viewer ?? 0, (level ?? .precise).rawValue, level == nil ? nil : until, version])
    }

    private static func fix(_ row: SQLRow, from i: Int) -> Fix {
        Fix(
            lat: row[i], lon: row[i + 1], acc: row[i + 2], alt: row[i + 3], spd: row[i + 4], hdg: row[i + 5],
            bat: row[i + 6], ts: row[i + 7], flagged: row[i + 8])
    }
}
