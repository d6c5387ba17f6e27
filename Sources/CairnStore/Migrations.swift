// The schema, as an ordered list of named migrations. A migration once shipped is never edited: changes go in a
// new one, so every existing data directory upgrades step by step on start. GRDB records what has been applied.
import CairnSQL
import GRDB

enum Migrations {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-accounts") { db in
            try db.create(table: "users") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("username", .text).notNull().unique()
                t.column("name", .text).notNull()
                t.column("password_hash", .text)
                t.column("is_guest", .boolean).notNull().defaults(to: false)
                t.column("created_at", .integer).notNull()
            }
            try db.create(table: "tokens") { t in
                t.primaryKey("hash", .blob)
                t.column("user_id", .integer).notNull().indexed()
                    .references("users", onDelete: .cascade)
                t.column("created_at", .integer).notNull()
            }
        }
        migrator.registerMigration("v2-friends-positions") { db in
            // A friendship is stored once, as (low id, high id).
            try db.create(table: "friendships") { t in
                t.column("user_a", .integer).notNull().references("users", onDelete: .cascade)
                t.column("user_b", .integer).notNull().references("users", onDelete: .cascade).indexed()
                t.column("created_at", .integer).notNull()
                t.primaryKey(["user_a", "user_b"])
                t.check(sql: "user_a < user_b")
            }
            try db.create(table: "friend_requests") { t in
                t.column("from_id", .integer).notNull().references("users", onDelete: .cascade)
                t.column("to_id", .integer).notNull().references("users", onDelete: .cascade).indexed()
                t.column("created_at", .integer).notNull()
                t.primaryKey(["from_id", "to_id"])
            }
            // viewer_id 0 is the owner's global pause ("everyone").
            try db.create(table: "share_rules") { t in
                t.column("owner_id", .integer).notNull().references("users", onDelete: .cascade)
                t.column("viewer_id", .integer).notNull()
                t.column("level", .text).notNull()
                t.column("until", .integer)
                t.primaryKey(["owner_id", "viewer_id"])
            }
            try db.create(table: "positions") { t in
                t.primaryKey("user_id", .integer).references("users", onDelete: .cascade)
                fixColumns(t)
            }
            try db.create(table: "position_history") { t in
                t.column("user_id", .integer).notNull().references("users", onDelete: .cascade)
                fixColumns(t)
            }
            try db.create(index: "position_history_user_ts", on: "position_history", columns: ["user_id", "ts"])
        }
        migrator.registerMigration("v3-share-rule-versions") { db in
            // Each rule change carries the hub's version, so an older write finishing late cannot undo a newer one.
            try db.alter(table: "share_rules") { t in
                t.add(column: "version", .integer).notNull().defaults(to: 0)
            }
        }
        migrator.registerMigration("v4-media-relics-chat") { db in
            // Uploaded media, content-addressed: `id` is the lowercase hex SHA-256 of the bytes, the file lives under
            // the data directory's `media/` folder. One row per (content, uploader), so each uploader owns their
            // copy of shared content; the file is shared and removed only when no row names it any more.
            try db.create(table: "media") { t in
                t.column("id", .text).notNull()
                t.column("owner_id", .integer).notNull().references("users", onDelete: .cascade)
                t.column("content_type", .text).notNull()
                t.column("size", .integer).notNull()
                t.column("created_at", .integer).notNull()
                t.primaryKey(["id", "owner_id"])
            }
            try db.create(index: "media_owner", on: "media", columns: ["owner_id"])
            // Relics: a point, a radius, text and optional media, open only from within the radius. `expires_at`
            // is null for a permanent relic; `password_hash` is an scrypt record or null.
            try db.create(table: "relics") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("creator_id", .integer).notNull().references("users", onDelete: .cascade)
                t.column("lat", .double).notNull()
                t.column("lon", .double).notNull()
                t.column("radius", .double).notNull()
                t.column("text", .text).notNull()
                t.column("media_id", .text)
                t.column("password_hash", .text)
                t.column("created_at", .integer).notNull()
                t.column("expires_at", .integer)
            }
            try db.create(index: "relics_creator", on: "relics", columns: ["creator_id", "id"])
            try db.create(index: "relics_expires", on: "relics", columns: ["expires_at"])
            try db.create(index: "relics_media", on: "relics", columns: ["media_id"])
            // Chat between friends. A conversation is the pair (low id, high id); messages page by id.
            try db.create(table: "chat_messages") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("user_a", .integer).notNull().references("users", onDelete: .cascade)
                t.column("user_b", .integer).notNull().references("users", onDelete: .cascade)
                t.column("from_id", .integer).notNull()
                t.column("text", .text).notNull()
                t.column("ts", .integer).notNull()
                t.check(sql: "user_a < user_b AND from_id IN (user_a, user_b)")
            }
            try db.create(index: "chat_messages_pair", on: "chat_messages", columns: ["user_a", "user_b", "id"])
            try db.create(index: "chat_messages_b", on: "chat_messages", columns: ["user_b", "user_a", "id"])
            // How far each reader has read each conversation: messages from `peer_id` with id <= `upto` are read.
            try db.create(table: "chat_reads") { t in
                t.column("reader_id", .integer).notNull().references("users", onDelete: .cascade)
                t.column("peer_id", .integer).notNull().references("users", onDelete: .cascade)
                t.column("upto", .integer).notNull()
                t.primaryKey(["reader_id", "peer_id"])
            }
        }
        migrator.registerMigration("v5-roles") { db in
            // Privileges beyond an ordinary account (today only `ops`: the stats channel), granted by an operator.
            try db.create(table: "user_roles") { t in
                t.column("user_id", .integer).notNull().references("users", onDelete: .cascade)
                t.column("role", .text).notNull()
                t.column("granted_at", .integer).notNull()
                t.primaryKey(["user_id", "role"])
            }
        }
        migrator.registerMigration("v6-relic-creator-hidden") { db in
            // A relic left while its creator shared less than their precise position with a friend does not name
            // its creator to anyone else, for good (see docs/PROTOCOL.md, Relics).
            try db.alter(table: "relics") { t in
                t.add(column: "creator_hidden", .boolean).notNull().defaults(to: false)
            }
        }
        migrator.registerMigration("v7-position-history-ts") { db in
            // The history is purged by age; without this the purge would scan the whole table.
            try db.create(index: "position_history_ts", on: "position_history", columns: ["ts"])
        }
        migrator.registerMigration("v8-users-last-seen") { db in
            // Inactive guest accounts are purged (accounts.guest_expiry): when each was last connected, in ms since
            // the epoch. Existing guests count from their creation; the partial index serves the purge.
            try db.alter(table: "users") { t in
                t.add(column: "last_seen_at", .integer)
            }
            try db.execute(sql: "UPDATE users SET last_seen_at = created_at")
            try db.execute(sql: "CREATE INDEX users_guest_last_seen ON users(last_seen_at) WHERE is_guest")
        }
        migrator.registerMigration("v9-profiles") { db in
            // Profiles: a short bio and a photo (a media id of the user's own uploads, checked when set). The
            // index lets the media collector find the media still used as a photo.
            try db.alter(table: "users") { t in
                t.add(column: "bio", .text)
                t.add(column: "photo_media_id", .text)
            }
            try db.execute(
                sql: "CREATE INDEX users_photo_media ON users(photo_media_id) WHERE photo_media_id IS NOT NULL")
        }
        migrator.registerMigration("v10-buckets") { db in
            // Buckets and items (docs/PROTOCOL.md, Buckets and items). Members go with their account; a bucket goes
            // with its last owner (the trigger), its items with it. An item's photo is an upload of `photo_owner`,
            // which the media collector keeps while the item names it.
            try db.create(table: "buckets") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("name", .text).notNull()
                t.column("privacy", .text).notNull()
                t.column("created_at", .integer).notNull()
            }
            try db.create(table: "bucket_members") { t in
                t.column("bucket_id", .integer).notNull().references("buckets", onDelete: .cascade)
                t.column("user_id", .integer).notNull().references("users", onDelete: .cascade)
                t.column("role", .text).notNull()
                t.primaryKey(["bucket_id", "user_id"])
            }
            try db.create(index: "bucket_members_user", on: "bucket_members", columns: ["user_id", "role"])
            try db.execute(
                sql: """
                    CREATE TRIGGER bucket_last_owner AFTER DELETE ON bucket_members
                    WHEN OLD.role = 'owner' AND NOT EXISTS (
                      SELECT 1 FROM bucket_members WHERE bucket_id = OLD.bucket_id AND role = 'owner')
                    BEGIN DELETE FROM buckets WHERE id = OLD.bucket_id; END
                    """)
            try db.create(table: "items") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("bucket_id", .integer).notNull().references("buckets", onDelete: .cascade)
                t.column("name", .text).notNull()
                t.column("note", .text)
                t.column("done", .boolean).notNull().defaults(to: false)
                t.column("photo_id", .text)
                t.column("photo_owner", .integer)
                t.column("created_at", .integer).notNull()
            }
            try db.create(index: "items_bucket", on: "items", columns: ["bucket_id", "id"])
            try db.create(index: "items_photo", on: "items", columns: ["photo_id"])
        }
        migrator.registerMigration("v11-trackers") { db in
            // Trackers (docs/PROTOCOL.md, Trackers): a device id bound to one item, unique across the hub; an item
            // has at most one tracker, which goes with it. Only the SHA-256 of the tracker's key is stored.
            try db.create(table: "trackers") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("device", .text).notNull().unique()
                t.column("item_id", .integer).notNull().unique().references("items", onDelete: .cascade)
                t.column("key_hash", .blob).notNull()
                t.column("active", .boolean).notNull().defaults(to: false)
                t.column("created_at", .integer).notNull()
            }
            // The latest fix of each tracker, committed before the ingest's 200; it goes with its tracker.
            try db.create(table: "tracker_positions") { t in
                t.primaryKey("tracker_id", .integer).references("trackers", onDelete: .cascade)
                t.column("lat", .double).notNull()
                t.column("lon", .double).notNull()
                t.column("acc", .double)
                t.column("alt", .double)
                t.column("spd", .double)
                t.column("hdg", .double)
                t.column("bat", .double)
                t.column("ts", .integer).notNull()
            }
        }
        migrator.registerMigration("v12-item-privacy-alerts-safe-zones") { db in
            // Find my item (docs/PROTOCOL.md, Trackers): an item's position may be for its bucket's owners only
            // (`hidden`), its owners may want left-behind alerts (`alert`), and each user has safe zones where no
            // alert is raised; they go with their account. Registered before v14 (its number was kept for it): the
            // migrator applies whatever is missing, so a database that already has v14 gets v12 too.
            try db.alter(table: "items") { t in
                t.add(column: "hidden", .boolean).notNull().defaults(to: false)
                t.add(column: "alert", .boolean).notNull().defaults(to: false)
            }
            try db.create(index: "items_alert", on: "items", columns: ["alert"], condition: Column("alert") == true)
            try db.create(table: "safe_zones") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("user_id", .integer).notNull().references("users", onDelete: .cascade)
                t.column("name", .text).notNull()
                t.column("lat", .double).notNull()
                t.column("lon", .double).notNull()
                t.column("radius", .double).notNull()
            }
            try db.create(index: "safe_zones_user", on: "safe_zones", columns: ["user_id"])
        }
        migrator.registerMigration("v14-tracker-filter-state") { db in
            // The ingest's speed filter counts a tracker's consecutive rejections to re-anchor after N of them
            // (docs/OPERATIONS.md, Tracker filters); kept with the tracker so a restart does not start it over.
            try db.alter(table: "trackers") { t in
                t.add(column: "speed_rejections", .integer).notNull().defaults(to: 0)
            }
        }
        migrator.registerMigration("v13-tracker-key-index") { db in
            // Overland names its tracker by the key alone (`Authorization: Bearer KEY`): the key's digest is looked
            // up, and unique (keys are 32 random bytes; the index makes a duplicate impossible rather than unlikely).
            try db.create(index: "trackers_key_hash", on: "trackers", columns: ["key_hash"], unique: true)
        }
        migrator.registerMigration("v15-tracker-shows-items") { db in
            // Whether a tracker's device is shown the other items of its bucket (the OwnTracks answer): off for
            // every tracker until an owner turns it on with `tracker.update`.
            try db.alter(table: "trackers") { t in
                t.add(column: "shows_items", .boolean).notNull().defaults(to: false)
            }
        }
        migrator.registerMigration("v17-accounts-email-admin") { db in
            // PicShare's accounts and its admin role (docs/PROTOCOL.md, Accounts and Administration): an optional
            // email, stored lower-cased and unique among those given (login takes it in place of the username);
            // suspensions, one per account, lifted by deleting the row or by `until` passing; and the admin audit
            // log, which keeps its rows when the accounts they name are gone (ids without foreign keys, names copied).
            try db.alter(table: "users") { t in t.add(column: "email", .text) }
            try db.execute(sql: "CREATE UNIQUE INDEX users_email ON users(email) WHERE email IS NOT NULL")
            try db.create(table: "suspensions") { t in
                t.primaryKey("user_id", .integer).references("users", onDelete: .cascade)
                t.column("reason", .text).notNull()
                t.column("since", .integer).notNull()
                t.column("until", .integer)
                t.column("by_id", .integer)
            }
            try db.create(table: "admin_audit") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("at", .integer).notNull()
                t.column("admin_id", .integer).notNull()
                t.column("admin_name", .text).notNull()
                t.column("action", .text).notNull()
                t.column("target_kind", .text).notNull()
                t.column("target_id", .integer).notNull()
                t.column("target_name", .text)
                t.column("reason", .text)
                t.column("detail", .text)
            }
            try db.create(index: "admin_audit_target", on: "admin_audit", columns: ["target_kind", "target_id", "id"])
        }
        migrator.registerMigration("v18-places") { db in
            // Places of interest (seed 001), written by operators: `cairn places import` upserts by (source,
            // external id), so re-importing a newer file updates rather than duplicates. Attributes are a JSON
            // object as text (SQLite's json_object / json_each read and write it).
            try db.create(table: "places") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("source", .text).notNull()
                t.column("external_id", .text)
                t.column("name", .text).notNull()
                t.column("category", .text).notNull()
                t.column("lat", .double).notNull()
                t.column("lon", .double).notNull()
                t.column("attributes", .text).notNull().defaults(to: "{}")
                t.uniqueKey(["source", "external_id"])
            }
        }
        migrator.registerMigration("v20-admin-settings") { db in
            // Administration (docs/PROTOCOL.md): the settings admins changed, as text by key (absent: the
            // configured default holds); the daily figures' `active_users`, counted per UTC day in
            // `activity_days`, with `activity` keeping which accounts were already counted on the last two days
            // (older rows are deleted as days pass); and an index on registered accounts' creation time for
            // `new_users` (partial: guests are not counted, and the query needs no table row).
            try db.create(table: "admin_settings") { t in
                t.primaryKey("key", .text)
                t.column("value", .text).notNull()
                t.column("updated_at", .integer).notNull()
                t.column("updated_by", .integer)
            }
            try db.create(table: "activity", options: [.withoutRowID]) { t in
                t.column("day", .integer).notNull()
                t.column("user_id", .integer).notNull()
                t.primaryKey(["day", "user_id"])
            }
            try db.create(table: "activity_days") { t in
                t.primaryKey("day", .integer)
                t.column("users", .integer).notNull()
            }
            try db.execute(sql: "CREATE INDEX users_created_at ON users(created_at) WHERE NOT is_guest")
        }
        migrator.registerMigration("v19-pictures-events") { db in
            // Pictures and events (seed 004). An event is a hashtag (canonical: lower case, no '#'); a password hash
            // makes it private, and its members (creator first) are the only ones who see its pictures. A picture
            // keeps `private_event` (its event's id when that event is private) so visibility is read from the
            // indexes alone, and `strip` (its longitude strip, 0.001° wide) for nearby pages. The indexes cover what
            // ordering and filtering read: strips for nearby, likes and date for dense areas, the event's pictures.
            try db.create(table: "events") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("tag", .text).notNull().unique()
                t.column("title", .text)
                t.column("owner_id", .integer).notNull().indexed().references("users", onDelete: .cascade)
                t.column("password_hash", .text)
                t.column("created_at", .integer).notNull()
            }
            try db.create(table: "event_members") { t in
                t.column("event_id", .integer).notNull().references("events", onDelete: .cascade)
                t.column("user_id", .integer).notNull().indexed().references("users", onDelete: .cascade)
                t.column("joined_at", .integer).notNull()
                t.primaryKey(["event_id", "user_id"])
            }
            try db.create(table: "pictures") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("by_id", .integer).notNull().references("users", onDelete: .cascade)
                t.column("media_id", .text).notNull()
                t.column("caption", .text)
                t.column("event_id", .integer).references("events", onDelete: .cascade)
                t.column("private_event", .integer)
                t.column("lat", .double)
                t.column("lon", .double)
                t.column("strip", .integer)
                t.column("likes", .integer).notNull().defaults(to: 0)
                t.column("hidden", .integer).notNull().defaults(to: 0)
                t.column("created_at", .integer).notNull()
            }
            try db.create(
                index: "pictures_strip", on: "pictures",
                columns: ["strip", "lat", "lon", "likes", "created_at", "hidden", "private_event"])
            try db.create(
                index: "pictures_likes", on: "pictures",
                columns: ["likes", "id", "lat", "lon", "created_at", "hidden", "private_event"])
            try db.create(
                index: "pictures_date", on: "pictures",
                columns: ["created_at", "id", "lat", "lon", "likes", "hidden", "private_event"])
            try db.create(
                index: "pictures_event", on: "pictures",
                columns: ["event_id", "lat", "lon", "likes", "created_at", "hidden", "private_event"])
            try db.create(index: "pictures_by", on: "pictures", columns: ["by_id", "created_at"])
            try db.create(index: "pictures_media", on: "pictures", columns: ["media_id"])
            try db.create(table: "picture_likes") { t in
                t.column("picture_id", .integer).notNull().references("pictures", onDelete: .cascade)
                t.column("user_id", .integer).notNull().indexed().references("users", onDelete: .cascade)
                t.column("created_at", .integer).notNull()
                t.primaryKey(["picture_id", "user_id"])
            }
            // Reports stay open until an admin resolves them (restores or removes the picture); only open reports
            // of non-guests count toward hiding a picture from everyone.
            try db.create(table: "picture_reports") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("picture_id", .integer).notNull().references("pictures", onDelete: .cascade)
                t.column("reporter_id", .integer).notNull().indexed().references("users", onDelete: .cascade)
                t.column("reporter_guest", .boolean).notNull()
                t.column("reason", .text).notNull()
                t.column("text", .text)
                t.column("created_at", .integer).notNull()
                t.column("state", .text).notNull().defaults(to: "open").check(sql: "state IN ('open', 'resolved')")
                t.column("resolved_at", .integer)
                t.column("resolved_by", .integer)
                t.uniqueKey(["picture_id", "reporter_id"])
            }
            try db.create(index: "picture_reports_state", on: "picture_reports", columns: ["state", "created_at"])
        }
        // Every post of the last hour, deleted ones included, so posting and deleting in a loop cannot pass the hourly
        // limit (counting the surviving pictures could). Rows older than an hour are pruned as each poster posts.
        migrator.registerMigration("v21-picture-posts") { db in
            try db.create(table: "picture_posts") { t in
                t.column("user_id", .integer).notNull().references("users", onDelete: .cascade)
                t.column("at", .integer).notNull()
            }
            try db.create(index: "picture_posts_user_at", on: "picture_posts", columns: ["user_id", "at"])
            try db.execute(sql: "INSERT INTO picture_posts (user_id, at) SELECT by_id, created_at FROM pictures")
        }
        // Who paired each tracker (docs/SECURITY.md, Trackers and ingest): the tracker is accepted only while that
        // user is an owner of its item's bucket. Trackers paired before have NULL, "not recorded", and keep working
        // as before. No foreign key: an account deleted leaves its id (ids are never reused), so its trackers stay
        // refused instead of turning into unrecorded ones.
        migrator.registerMigration("v22-tracker-paired-by") { db in
            try db.alter(table: "trackers") { t in t.add(column: "paired_by", .integer) }
        }
        // Event pictures posted before `place: true` (docs/PROTOCOL.md, Posting) carry the poster's position
        // unasked, even one posted while paused or hidden from a friend: they lose it, and look as an event post
        // without `place` does (lat, lon and strip NULL, so no nearby page reaches them). Nearby pictures keep theirs:
        // posting one was placing it.
        migrator.registerMigration("v23-event-pictures-unplaced") { db in
            try db.execute(sql: "UPDATE pictures SET lat = NULL, lon = NULL, strip = NULL WHERE event_id IS NOT NULL")
        }
        // The user search matches the display name folded in Swift (`SQLText.fold`: lower case, NFC), since SQLite's
        // lower() and LIKE know ASCII only; every write of a name writes this column too. Existing names are folded
        // here, row by row. The indexes (NOCASE, as SQLite's case-insensitive LIKE needs to use one) serve the
        // search's prefix LIKE on each side of its OR (not partial: SQLite does not use a partial index for an OR's
        // side, and the OR then scans the table).
        migrator.registerMigration("v24-users-name-folded") { db in
            try db.alter(table: "users") { t in t.add(column: "name_folded", .text).notNull().defaults(to: "") }
            let update = try db.makeStatement(sql: "UPDATE users SET name_folded = ? WHERE id = ?")
            for row in try Row.fetchAll(db, sql: "SELECT id, name FROM users") {
                let id: Int64 = row["id"]
                let name: String = row["name"]
                try update.execute(arguments: [SQLText.fold(name), id])
            }
            try db.execute(
                sql: """
                    CREATE INDEX users_search_name ON users(name_folded COLLATE NOCASE);
                    CREATE INDEX users_search_username ON users(username COLLATE NOCASE);
                    """)
        }
        return migrator
    }

    /// The columns of one fix, shared by the latest-position table and the history. Part of migration
    /// v2-friends-positions: changing it later would change what that migration created, so add new columns in a
    /// new migration instead.
    private static func fixColumns(_ t: TableDefinition) {
        t.column("lat", .double).notNull()
        t.column("lon", .double).notNull()
        t.column("acc", .double)
        t.column("alt", .double)
        t.column("spd", .double)
        t.column("hdg", .double)
        t.column("bat", .double)
        t.column("ts", .integer).notNull()
        t.column("flagged", .boolean).notNull().defaults(to: false)
    }
}
