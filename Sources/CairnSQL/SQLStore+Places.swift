// Places' removals and counts, implementing that part of the domain's `PlaceStore`. Reading and writing places is
// each engine's own: their attributes are a JSON object each engine builds and reads with its own JSON functions
// (SQLite's json_object and json_each on text; PostgreSQL's json_object_agg and json_each on `json`, a whole import
// in one statement), and SQLite reads the summaries at start through a cursor.
import CairnCore
public import CairnPlaces

extension SQLStore {
    public func removePlace(id: Int64) async throws -> Bool {
        try await database.write { db in try db.execute("DELETE FROM places WHERE id = ?", [id]) > 0 }
    }

    public func removePlaces(source: String) async throws -> Int {
        try await database.write { db in try db.execute("DELETE FROM places WHERE source = ?", [source]) }
    }

    /// Places per source and category, both in byte order.
    public func placeCounts() async throws -> [PlaceCount] {
        try await database.read { db in
            try db.rows(
                """
                SELECT source, category, COUNT(*) FROM places GROUP BY source, category
                ORDER BY \(db.dialect.bytewise("source")), \(db.dialect.bytewise("category"))
                """
            ).map { PlaceCount(source: $0[0], category: $0[1], count: $0[2]) }
        }
    }
}
