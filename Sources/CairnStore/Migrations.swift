// The schema, as an ordered list of named migrations. A migration once shipped is never edited: changes go in a
// new one, so every existing data directory upgrades step by step on start. GRDB records what has been applied.
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
