// Places in SQLite, implementing the domain's `PlaceStore` but for removals and counts (CairnSQL's). The unique key
// (source, external_id) (migration v18-places) makes an import an upsert: `INSERT … ON CONFLICT DO UPDATE`, so
// re-importing a newer file updates the places it names instead of duplicating them. Attributes are kept as a JSON
// object in text, written with SQLite's own json_object and read back with json_each, so the store writes no JSON by
// hand.
public import CairnPlaces
import CairnSQL
import GRDB

extension SQLiteStore: PlaceStore {
    /// Every place without attributes, synchronously (the hub's start, before it serves).
    public func loadPlaceSummariesNow() throws -> [PlaceSummary] {
        try pool.read { db in try Self.summaries(db) }
    }

    public func loadPlaceSummaries() async throws -> [PlaceSummary] {
        try await pool.read { db in try Self.summaries(db) }
    }

    private static func summaries(_ db: Database) throws -> [PlaceSummary] {
        var found: [PlaceSummary] = []
        let rows = try Row.fetchCursor(db, sql: "SELECT id, name, category, lat, lon FROM places")
        while let row = try rows.next() {
            guard let place = PlaceSummary(id: row[0], name: row[1], category: row[2], lat: row[3], lon: row[4])
            else { continue }  // no writer stores coordinates out of range
            found.append(place)
        }
        return found
    }

    public func place(id: Int64) async throws -> Place? {
        try await pool.read { db in try Self.place(db, id: id) }
    }

    private static func place(_ db: Database, id: Int64) throws -> Place? {
        guard
            let row = try Row.fetchOne(
                db, sql: "SELECT source, external_id, name, category, lat, lon, attributes FROM places WHERE id = ?",
                arguments: [id])
        else { return nil }
        var attributes: [PlaceAttribute] = []
        let entries = try Row.fetchAll(
            db, sql: "SELECT key, type, value FROM json_each(?) ORDER BY id", arguments: [row["attributes"] as String])
        for entry in entries {
            let key: String = entry[0]
            let type: String = entry[1]
            switch type {
            case "true": attributes.append(PlaceAttribute(key, .flag(true)))
            case "false": attributes.append(PlaceAttribute(key, .flag(false)))
            case "integer", "real": attributes.append(PlaceAttribute(key, .number(entry[2])))
            case "text": attributes.append(PlaceAttribute(key, .text(entry[2])))
            default: continue  // null, or nested values no writer of Cairn's makes
            }
        }
        let draft = PlaceDraft(
            source: row["source"], externalID: row["external_id"], name: row["name"], category: row["category"],
            lat: row["lat"], lon: row["lon"], attributes: attributes)
        return Place(id: id, draft: draft)
    }

    public func upsertPlace(_ draft: PlaceDraft, id: Int64?) async throws -> Place? {
        do { return try await writePlace(draft, id: id) } catch let error as DatabaseError
            where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE
        {
            throw PlaceStoreError.keyTaken
        }
    }

    private func writePlace(_ draft: PlaceDraft, id: Int64?) async throws -> Place? {
        try await pool.write { db in
            let stored: Int64?
            if let id {
                let (json, values) = Self.attributesSQL(draft.attributes)
                try db.execute(
                    sql: """
                        UPDATE places SET source = ?, external_id = ?, name = ?, category = ?, lat = ?, lon = ?,
                        attributes = \(json) WHERE id = ?
                        """,
                    arguments: StatementArguments(Self.columnValues(draft) + values + [id]))
                stored = db.changesCount > 0 ? id : nil
            } else {
                stored = try Self.upsert(db, draft)
            }
            return try stored.flatMap { try Self.place(db, id: $0) }
        }
    }

    public func upsertPlaces(_ drafts: [PlaceDraft]) async throws -> Int {
        try await pool.write { db in
            let before = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM places") ?? 0
            for draft in drafts { _ = try Self.upsert(db, draft) }
            let after = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM places") ?? 0
            return after - before
        }
    }

    /// Inserts or updates by (source, external id); answers the place's id.
    private static func upsert(_ db: Database, _ draft: PlaceDraft) throws -> Int64 {
        let (json, values) = attributesSQL(draft.attributes)
        let id = try Int64.fetchOne(
            db,
            sql: """
                INSERT INTO places (source, external_id, name, category, lat, lon, attributes)
                VALUES (?, ?, ?, ?, ?, ?, \(json))
                ON CONFLICT (source, external_id) DO UPDATE SET name = excluded.name, category = excluded.category,
                lat = excluded.lat, lon = excluded.lon, attributes = excluded.attributes
                RETURNING id
                """,
            arguments: StatementArguments(columnValues(draft) + values))
        return id ?? db.lastInsertedRowID
    }

    private static func columnValues(_ draft: PlaceDraft) -> [(any DatabaseValueConvertible)?] {
        [draft.source, draft.externalID, draft.name, draft.category, draft.lat, draft.lon]
    }

    /// `json_object(?, ?, …)` for the attributes, and the values to bind to it.
    private static func attributesSQL(_ attributes: [PlaceAttribute]) -> (String, [(any DatabaseValueConvertible)?]) {
        guard !attributes.isEmpty else { return ("'{}'", []) }
        var parts: [String] = []
        var values: [(any DatabaseValueConvertible)?] = []
        for attribute in attributes {
            values.append(attribute.name)
            switch attribute.value {
            case .text(let text):
                parts.append("?, ?")
                values.append(text)
            case .number(let number):
                parts.append("?, ?")
                values.append(number)
            case .flag(let flag):
                parts.append("?, json(?)")
                values.append(flag ? "true" : "false")
            }
        }
        return ("json_object(\(parts.joined(separator: ", ")))", values)
    }
}
