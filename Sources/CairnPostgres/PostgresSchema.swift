// The shared store's schema, as an ordered list of named migrations like the SQLite store's: a migration once
// shipped is never edited, changes go in a new one. The first one is the SQLite schema as it stands at v21, in
// PostgreSQL's types (BIGINT ids from identity columns, DOUBLE PRECISION, BOOLEAN flags, BYTEA digests), so both
// engines hold the same rows and the store code reads alike. Nodes that start together must not both migrate: the
// whole run holds a transaction-scoped advisory lock, and each applied name is recorded in `cairn_migrations`.
import CairnSQL
import Foundation

enum PostgresSchema {
    /// The lock every node takes while migrating (an arbitrary constant: "cairn" in ASCII).
    static let migrationLock: Int64 = 0x63_6169_726E

    /// The migrations, in order.
    static let migrations: [(name: String, sql: String)] = [
        ("p1-schema", schema),
        // Who paired each tracker, as SQLite's v22-tracker-paired-by: NULL for trackers paired before (not recorded,
        // judged by `active` alone); no foreign key, so a deleted account's trackers stay refused.
        ("p2-tracker-paired-by", "ALTER TABLE trackers ADD COLUMN paired_by BIGINT;"),
        // Event pictures lose the place they were given unasked, as SQLite's v23-event-pictures-unplaced.
        (
            "p3-event-pictures-unplaced",
            "UPDATE pictures SET lat = NULL, lon = NULL, strip = NULL WHERE event_id IS NOT NULL;"
        ),
        // The admin user list and the user search sort and page by username byte by byte (`COLLATE "C"`, SQLite's
        // order); the unique index on username is in the database's collation, so they needed one in "C". SQLite's
        // own unique index already is in that order (BINARY): no SQLite migration.
        ("p4-username-c-index", #"CREATE INDEX users_username_c ON users (username COLLATE "C");"#),
        // The folded display name the user search matches, as SQLite's v24-users-name-folded (filled from Swift by
        // `backfill`, so both engines fold alike whatever the database's locale). In "C", so its index serves the
        // search's prefix LIKE; with the username's "C" index, each side of the search's OR has one.
        (
            "p5-users-name-folded",
            #"""
            ALTER TABLE users ADD COLUMN name_folded TEXT COLLATE "C" NOT NULL DEFAULT '';
            """#
        ),
    ]

    /// What a migration computes in Swift, run after its SQL in the same transaction.
    private static func backfill(_ name: String, _ db: PostgresConnection) throws {
        switch name {
        case "p5-users-name-folded":
            let rows = try db.rows("SELECT id, name FROM users")
            if !rows.isEmpty {
                try db.execute(
                    """
                    UPDATE users SET name_folded = x.f FROM unnest(?::bigint[], ?::text[]) AS x(i, f)
                    WHERE users.id = x.i
                    """,
                    [
                        PostgresIntArray(rows.map { $0["id"] as Int64 }),
                        PostgresTextArray(rows.map { SQLText.fold($0["name"] as String) }),
                    ])
            }
            // Built once the column is filled, instead of being kept up row by row through the update.
            try db.execute(#"CREATE INDEX users_search_name ON users (name_folded)"#)
        default:
            break
        }
    }

    /// Applies what is missing; returns the names applied so far, in order. The lock is a session lock taken before
    /// the transaction begins: a node that waited for it then starts its transaction, and its snapshot, after the
    /// node before it committed, so it sees what that node applied (a lock taken inside the transaction would wait
    /// with a snapshot from before the other commit, and migrate again).
    static func migrate(_ pool: PostgresPool) throws -> [String] {
        // Unbounded: a node waits for another's migration however long it takes, and a migration may rewrite a
        // large table.
        try pool.withoutTransaction { db in
            try db.withoutTimeouts {
                _ = try db.rows("SELECT pg_advisory_lock(?)", [migrationLock])
                defer { _ = try? db.rows("SELECT pg_advisory_unlock(?)", [migrationLock]) }
                return try PostgresPool.inWrite(db, attempts: pool.attempts) { db in try apply(db) }
            }
        }
    }

    private static func apply(_ db: PostgresConnection) throws -> [String] {
        try db.execute(
            """
            CREATE TABLE IF NOT EXISTS cairn_migrations (
              name TEXT PRIMARY KEY, position INTEGER NOT NULL UNIQUE, applied_at BIGINT NOT NULL)
            """)
        let applied = Set(try db.scalars("SELECT name FROM cairn_migrations", as: String.self))
        for (position, migration) in migrations.enumerated() where !applied.contains(migration.name) {
            try db.executeScript(migration.sql)
            try backfill(migration.name, db)
            try db.execute(
                "INSERT INTO cairn_migrations (name, position, applied_at) VALUES (?, ?, ?)",
                [migration.name, position, Int64(Date().timeIntervalSince1970 * 1000)])
        }
        return try db.scalars("SELECT name FROM cairn_migrations ORDER BY position", as: String.self)
    }

    /// The tables of SQLite's v1–v21, in PostgreSQL.
    static let schema = """
        CREATE TABLE users (
          id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
          username TEXT NOT NULL UNIQUE,
          name TEXT NOT NULL,
          password_hash TEXT,
          is_guest BOOLEAN NOT NULL DEFAULT false,
          created_at BIGINT NOT NULL,
          last_seen_at BIGINT,
          bio TEXT,
          photo_media_id TEXT,
          email TEXT);
        CREATE INDEX users_guest_last_seen ON users(last_seen_at) WHERE is_guest;
        CREATE INDEX users_photo_media ON users(photo_media_id) WHERE photo_media_id IS NOT NULL;
        CREATE UNIQUE INDEX users_email ON users(email) WHERE email IS NOT NULL;
        CREATE INDEX users_created_at ON users(created_at) WHERE NOT is_guest;

        CREATE TABLE tokens (
          hash BYTEA PRIMARY KEY,
          user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
          created_at BIGINT NOT NULL);
        CREATE INDEX tokens_on_user_id ON tokens(user_id);

        -- A friendship is stored once, as (low id, high id).
        CREATE TABLE friendships (
          user_a BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
          user_b BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
          created_at BIGINT NOT NULL,
          PRIMARY KEY (user_a, user_b),
          CHECK (user_a < user_b));
        CREATE INDEX friendships_on_user_b ON friendships(user_b);
        CREATE TABLE friend_requests (
          from_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
          to_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
          created_at BIGINT NOT NULL,
          PRIMARY KEY (from_id, to_id));
        CREATE INDEX friend_requests_on_to_id ON friend_requests(to_id);
        -- viewer_id 0 is the owner's global pause ("everyone").
        CREATE TABLE share_rules (
          owner_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
          viewer_id BIGINT NOT NULL,
          level TEXT NOT NULL,
          until BIGINT,
          version BIGINT NOT NULL DEFAULT 0,
          PRIMARY KEY (owner_id, viewer_id));

        CREATE TABLE positions (
          user_id BIGINT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
          lat DOUBLE PRECISION NOT NULL, lon DOUBLE PRECISION NOT NULL, acc DOUBLE PRECISION,
          alt DOUBLE PRECISION, spd DOUBLE PRECISION, hdg DOUBLE PRECISION, bat DOUBLE PRECISION,
          ts BIGINT NOT NULL, flagged BOOLEAN NOT NULL DEFAULT false);
        CREATE TABLE position_history (
          user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
          lat DOUBLE PRECISION NOT NULL, lon DOUBLE PRECISION NOT NULL, acc DOUBLE PRECISION,
          alt DOUBLE PRECISION, spd DOUBLE PRECISION, hdg DOUBLE PRECISION, bat DOUBLE PRECISION,
          ts BIGINT NOT NULL, flagged BOOLEAN NOT NULL DEFAULT false);
        CREATE INDEX position_history_user_ts ON position_history(user_id, ts);
        CREATE INDEX position_history_ts ON position_history(ts);

        CREATE TABLE media (
          id TEXT NOT NULL,
          owner_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
          content_type TEXT NOT NULL,
          size BIGINT NOT NULL,
          created_at BIGINT NOT NULL,
          PRIMARY KEY (id, owner_id));
        CREATE INDEX media_owner ON media(owner_id);
        -- The content of media, once per id (shared by every node; each keeps a local copy of what it serves).
        CREATE TABLE media_blobs (
          id TEXT PRIMARY KEY,
          bytes BYTEA NOT NULL);
        -- Images are compressed already: stored out of line without trying again.
        ALTER TABLE media_blobs ALTER COLUMN bytes SET STORAGE EXTERNAL;

        CREATE TABLE relics (
          id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
          creator_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
          lat DOUBLE PRECISION NOT NULL, lon DOUBLE PRECISION NOT NULL, radius DOUBLE PRECISION NOT NULL,
          text TEXT NOT NULL,
          media_id TEXT,
          password_hash TEXT,
          created_at BIGINT NOT NULL,
          expires_at BIGINT,
          creator_hidden BOOLEAN NOT NULL DEFAULT false);
        CREATE INDEX relics_creator ON relics(creator_id, id);
        CREATE INDEX relics_expires ON relics(expires_at);
        CREATE INDEX relics_media ON relics(media_id);

        CREATE TABLE chat_messages (
          id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
          user_a BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
          user_b BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
          from_id BIGINT NOT NULL,
          text TEXT NOT NULL,
          ts BIGINT NOT NULL,
          CHECK (user_a < user_b AND from_id IN (user_a, user_b)));
        CREATE INDEX chat_messages_pair ON chat_messages(user_a, user_b, id);
        CREATE INDEX chat_messages_b ON chat_messages(user_b, user_a, id);
        CREATE TABLE chat_reads (
          reader_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
          peer_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
          upto BIGINT NOT NULL,
          PRIMARY KEY (reader_id, peer_id));

        CREATE TABLE user_roles (
          user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
          role TEXT NOT NULL,
          granted_at BIGINT NOT NULL,
          PRIMARY KEY (user_id, role));

        CREATE TABLE buckets (
          id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
          name TEXT NOT NULL,
          privacy TEXT NOT NULL,
          created_at BIGINT NOT NULL);
        CREATE TABLE bucket_members (
          bucket_id BIGINT NOT NULL REFERENCES buckets(id) ON DELETE CASCADE,
          user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
          role TEXT NOT NULL,
          PRIMARY KEY (bucket_id, user_id));
        CREATE INDEX bucket_members_user ON bucket_members(user_id, role);
        -- A bucket whose last owner leaves (or is deleted) goes with them.
        CREATE FUNCTION bucket_last_owner() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF OLD.role = 'owner' AND NOT EXISTS (
              SELECT 1 FROM bucket_members WHERE bucket_id = OLD.bucket_id AND role = 'owner') THEN
            DELETE FROM buckets WHERE id = OLD.bucket_id;
          END IF;
          RETURN NULL;
        END $$;
        CREATE TRIGGER bucket_last_owner AFTER DELETE ON bucket_members
          FOR EACH ROW EXECUTE FUNCTION bucket_last_owner();

        CREATE TABLE items (
          id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
          bucket_id BIGINT NOT NULL REFERENCES buckets(id) ON DELETE CASCADE,
          name TEXT NOT NULL,
          note TEXT,
          done BOOLEAN NOT NULL DEFAULT false,
          photo_id TEXT,
          photo_owner BIGINT,
          created_at BIGINT NOT NULL,
          hidden BOOLEAN NOT NULL DEFAULT false,
          alert BOOLEAN NOT NULL DEFAULT false);
        CREATE INDEX items_bucket ON items(bucket_id, id);
        CREATE INDEX items_photo ON items(photo_id);
        CREATE INDEX items_alert ON items(alert) WHERE alert;

        CREATE TABLE trackers (
          id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
          device TEXT NOT NULL UNIQUE,
          item_id BIGINT NOT NULL UNIQUE REFERENCES items(id) ON DELETE CASCADE,
          key_hash BYTEA NOT NULL,
          active BOOLEAN NOT NULL DEFAULT false,
          created_at BIGINT NOT NULL,
          speed_rejections BIGINT NOT NULL DEFAULT 0,
          shows_items BOOLEAN NOT NULL DEFAULT false);
        CREATE UNIQUE INDEX trackers_key_hash ON trackers(key_hash);
        CREATE TABLE tracker_positions (
          tracker_id BIGINT PRIMARY KEY REFERENCES trackers(id) ON DELETE CASCADE,
          lat DOUBLE PRECISION NOT NULL, lon DOUBLE PRECISION NOT NULL, acc DOUBLE PRECISION,
          alt DOUBLE PRECISION, spd DOUBLE PRECISION, hdg DOUBLE PRECISION, bat DOUBLE PRECISION,
          ts BIGINT NOT NULL);
        CREATE TABLE safe_zones (
          id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
          user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
          name TEXT NOT NULL,
          lat DOUBLE PRECISION NOT NULL, lon DOUBLE PRECISION NOT NULL, radius DOUBLE PRECISION NOT NULL);
        CREATE INDEX safe_zones_user ON safe_zones(user_id);

        CREATE TABLE suspensions (
          user_id BIGINT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
          reason TEXT NOT NULL,
          since BIGINT NOT NULL,
          until BIGINT,
          by_id BIGINT);
        CREATE TABLE admin_audit (
          id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
          at BIGINT NOT NULL,
          admin_id BIGINT NOT NULL,
          admin_name TEXT NOT NULL,
          action TEXT NOT NULL,
          target_kind TEXT NOT NULL,
          target_id BIGINT NOT NULL,
          target_name TEXT,
          reason TEXT,
          detail TEXT);
        CREATE INDEX admin_audit_target ON admin_audit(target_kind, target_id, id);
        CREATE TABLE admin_settings (
          key TEXT PRIMARY KEY,
          value TEXT NOT NULL,
          updated_at BIGINT NOT NULL,
          updated_by BIGINT);
        CREATE TABLE activity (
          day BIGINT NOT NULL,
          user_id BIGINT NOT NULL,
          PRIMARY KEY (day, user_id));
        CREATE TABLE activity_days (
          day BIGINT PRIMARY KEY,
          users BIGINT NOT NULL);

        -- Attributes are a JSON object in the order given: json, not jsonb (which sorts its keys).
        CREATE TABLE places (
          id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
          source TEXT NOT NULL,
          external_id TEXT,
          name TEXT NOT NULL,
          category TEXT NOT NULL,
          lat DOUBLE PRECISION NOT NULL, lon DOUBLE PRECISION NOT NULL,
          attributes JSON NOT NULL DEFAULT '{}',
          UNIQUE (source, external_id));

        CREATE TABLE events (
          id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
          tag TEXT NOT NULL UNIQUE,
          title TEXT,
          owner_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
          password_hash TEXT,
          created_at BIGINT NOT NULL);
        CREATE INDEX events_on_owner_id ON events(owner_id);
        CREATE TABLE event_members (
          event_id BIGINT NOT NULL REFERENCES events(id) ON DELETE CASCADE,
          user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
          joined_at BIGINT NOT NULL,
          PRIMARY KEY (event_id, user_id));
        CREATE INDEX event_members_on_user_id ON event_members(user_id);
        CREATE TABLE pictures (
          id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
          by_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
          media_id TEXT NOT NULL,
          caption TEXT,
          event_id BIGINT REFERENCES events(id) ON DELETE CASCADE,
          private_event BIGINT,
          lat DOUBLE PRECISION, lon DOUBLE PRECISION,
          strip BIGINT,
          likes BIGINT NOT NULL DEFAULT 0,
          hidden BIGINT NOT NULL DEFAULT 0,
          created_at BIGINT NOT NULL);
        -- id is in every SQLite index (the rowid); here the covering indexes name it.
        CREATE INDEX pictures_strip ON pictures(strip, lat, lon, likes, created_at, hidden, private_event)
          INCLUDE (id);
        CREATE INDEX pictures_likes ON pictures(likes, id, lat, lon, created_at, hidden, private_event);
        CREATE INDEX pictures_date ON pictures(created_at, id, lat, lon, likes, hidden, private_event);
        CREATE INDEX pictures_event ON pictures(event_id, lat, lon, likes, created_at, hidden, private_event)
          INCLUDE (id);
        CREATE INDEX pictures_by ON pictures(by_id, created_at);
        CREATE INDEX pictures_media ON pictures(media_id);
        CREATE TABLE picture_likes (
          picture_id BIGINT NOT NULL REFERENCES pictures(id) ON DELETE CASCADE,
          user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
          created_at BIGINT NOT NULL,
          PRIMARY KEY (picture_id, user_id));
        CREATE INDEX picture_likes_on_user_id ON picture_likes(user_id);
        CREATE TABLE picture_reports (
          id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
          picture_id BIGINT NOT NULL REFERENCES pictures(id) ON DELETE CASCADE,
          reporter_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
          reporter_guest BOOLEAN NOT NULL,
          reason TEXT NOT NULL,
          text TEXT,
          created_at BIGINT NOT NULL,
          state TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'resolved')),
          resolved_at BIGINT,
          resolved_by BIGINT,
          UNIQUE (picture_id, reporter_id));
        CREATE INDEX picture_reports_on_reporter_id ON picture_reports(reporter_id);
        CREATE INDEX picture_reports_state ON picture_reports(state, created_at);
        CREATE TABLE picture_posts (
          user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
          at BIGINT NOT NULL);
        CREATE INDEX picture_posts_user_at ON picture_posts(user_id, at);

        -- Secrets every node must share (the media URL key), created by the first node that needs one.
        CREATE TABLE secrets (
          name TEXT PRIMARY KEY,
          value BYTEA NOT NULL);
        """
}
