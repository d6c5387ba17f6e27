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
        return migrator
    }
}
