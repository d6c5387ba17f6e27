// Places in the shared store, implementing the domain's `PlaceStore` but for removals and counts (CairnSQL's). The
// unique key (source, external_id) makes an import an upsert (`INSERT … ON CONFLICT DO UPDATE`), a whole batch in one
// statement: the drafts and their attributes go as arrays through `unnest`. Attributes are a JSON object built by
// PostgreSQL itself (`json_object_agg` in the order given, `to_json` of a text, number or boolean) and read back with
// `json_each … WITH ORDINALITY`, so the store writes no JSON by hand. The column is `json`, not `jsonb`: jsonb sorts
// an object's keys, and a place's attributes keep the order they were given in.
public import CairnPlaces
import CairnSQL

extension PostgresStore: PlaceStore {
    /// Every place without attributes, synchronously (the hub's start, before it serves).
    public func loadPlaceSummariesNow() throws -> [PlaceSummary] {
        try pool.read { db in try Self.placeSummaries(db) }
    }

    public func loadPlaceSummaries() async throws -> [PlaceSummary] {
        try await pool.read { db in try Self.placeSummaries(db) }
    }

    private static func placeSummaries(_ db: PostgresConnection) throws -> [PlaceSummary] {
        try db.rows("SELECT id, name, category, lat, lon FROM places ORDER BY id").compactMap { row in
            // No writer stores coordinates out of range.
            PlaceSummary(id: row[0], name: row[1], category: row[2], lat: row[3], lon: row[4])
        }
    }

    public func place(id: Int64) async throws -> Place? {
        try await pool.read { db in try Self.place(db, id: id) }
    }

    private static func place(_ db: PostgresConnection, id: Int64) throws -> Place? {
        guard
            let row = try db.row(
                "SELECT source, external_id, name, category, lat, lon FROM places WHERE id = ?", [id])
        else { return nil }
        var attributes: [PlaceAttribute] = []
        let entries = try db.rows(
            """
            SELECT a.key, json_typeof(a.value), a.value #>> '{}'
            FROM places p, json_each(p.attributes) WITH ORDINALITY AS a(key, value, n) WHERE p.id = ? ORDER BY a.n
            """, [id])
        for entry in entries {
            let key: String = entry[0]
            let type: String = entry[1]
            switch type {
            case "boolean": attributes.append(PlaceAttribute(key, .flag(entry[2])))
            case "number": attributes.append(PlaceAttribute(key, .number(entry[2])))
            case "string": attributes.append(PlaceAttribute(key, .text(entry[2])))
            default: continue  // null, or nested values no writer of Cairn's makes
            }
        }
        let draft = PlaceDraft(
            source: row["source"], externalID: row["external_id"], name: row["name"], category: row["category"],
            lat: row["lat"], lon: row["lon"], attributes: attributes)
        return Place(id: id, draft: draft)
    }

    public func upsertPlace(_ draft: PlaceDraft, id: Int64?) async throws -> Place? {
        do { return try await writePlace(draft, id: id) } catch let error as PostgresError
            where error.isUniqueViolation()
        {
            throw PlaceStoreError.keyTaken
        }
    }

    private func writePlace(_ draft: PlaceDraft, id: Int64?) async throws -> Place? {
        try await pool.write { db in
            let stored: Int64?
            if let id {
                var arguments: PostgresArguments = [
                    draft.source, draft.externalID, draft.name, draft.category, draft.lat, draft.lon,
                ]
                arguments += Self.attributeArrays([draft], numbered: false)
                arguments.append(id)
                let changed = try db.execute(
                    """
                    UPDATE places SET source = ?, external_id = ?, name = ?, category = ?, lat = ?, lon = ?,
                    attributes = (\(Self.attributesJSON(numbered: false))) WHERE id = ?
                    """, arguments)
                stored = changed > 0 ? id : nil
            } else {
                stored = try Self.upsert(db, [draft]).first?.id
            }
            return try stored.flatMap { try Self.place(db, id: $0) }
        }
    }

    public func upsertPlaces(_ drafts: [PlaceDraft]) async throws -> Int {
        // A statement may not upsert one row twice: the last draft of a (source, external id) wins, in the place of
        // the first (as upserting them one after another would leave it).
        var unique: [PlaceDraft] = []
        var position: [String: Int] = [:]
        for draft in drafts {
            if let external = draft.externalID {
                let key = draft.source + "\u{0}" + external
                if let index = position[key] {
                    unique[index] = draft
                    continue
                }
                position[key] = unique.count
            }
            unique.append(draft)
        }
        guard !unique.isEmpty else { return 0 }
        return try await pool.write { [unique] db in
            try Self.upsert(db, unique).filter(\.inserted).count
        }
    }

    /// Inserts or updates by (source, external id) in one statement (no two drafts with the same key); answers
    /// each place's id and whether it is new.
    private static func upsert(_ db: PostgresConnection, _ drafts: [PlaceDraft]) throws -> [(
        id: Int64, inserted: Bool
    )] {
        var arguments: PostgresArguments = [
            PostgresTextArray(drafts.map(\.source)), PostgresArray(drafts.map(\.externalID)),
            PostgresTextArray(drafts.map(\.name)), PostgresTextArray(drafts.map(\.category)),
            PostgresArray(drafts.map { Optional($0.lat) }), PostgresArray(drafts.map { Optional($0.lon) }),
        ]
        arguments += attributeArrays(drafts, numbered: true)
        return try db.rows(
            """
            WITH d AS (
              SELECT * FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::float8[], ?::float8[])
                WITH ORDINALITY AS d(source, external_id, name, category, lat, lon, n)),
            a AS (\(attributesJSON(numbered: true)))
            INSERT INTO places (source, external_id, name, category, lat, lon, attributes)
            SELECT d.source, d.external_id, d.name, d.category, d.lat, d.lon, coalesce(a.attributes, '{}')
            FROM d LEFT JOIN a ON a.place = d.n ORDER BY d.n
            ON CONFLICT (source, external_id) DO UPDATE SET name = excluded.name, category = excluded.category,
            lat = excluded.lat, lon = excluded.lon, attributes = excluded.attributes
            RETURNING id, xmax = 0 AS inserted
            """, arguments
        ).map { (id: $0["id"], inserted: $0["inserted"]) }
    }

    /// The attributes as one JSON object: for one place (`numbered` false, a scalar subquery's body), or grouped by
    /// their draft's position, 1-based (`place`, `attributes`).
    private static func attributesJSON(numbered: Bool) -> String {
        let value = """
            json_object_agg(a.key, CASE a.kind WHEN 'n' THEN to_json(a.number) WHEN 'f' THEN to_json(a.flag)
              ELSE to_json(a.text) END ORDER BY a.n)
            """
        return numbered
            ? """
            SELECT a.place, \(value) AS attributes
            FROM unnest(?::bigint[], ?::text[], ?::text[], ?::text[], ?::float8[], ?::boolean[])
              WITH ORDINALITY AS a(place, key, kind, text, number, flag, n)
            GROUP BY a.place
            """
            : """
            SELECT coalesce(\(value), '{}')
            FROM unnest(?::text[], ?::text[], ?::text[], ?::float8[], ?::boolean[])
              WITH ORDINALITY AS a(key, kind, text, number, flag, n)
            """
    }

    /// The arrays `attributesJSON` binds: (the draft's 1-based position,) name, kind (t, n, f) and the value in
    /// the column of its kind.
    private static func attributeArrays(_ drafts: [PlaceDraft], numbered: Bool) -> PostgresArguments {
        var places: [Int64] = []
        var names: [String] = []
        var kinds: [String] = []
        var texts: [String?] = []
        var numbers: [Double?] = []
        var flags: [Bool?] = []
        for (index, draft) in drafts.enumerated() {
            for attribute in draft.attributes {
                places.append(Int64(index + 1))
                names.append(attribute.name)
                switch attribute.value {
                case .text(let text):
                    kinds.append("t")
                    texts.append(text)
                    numbers.append(nil)
                    flags.append(nil)
                case .number(let number):
                    kinds.append("n")
                    texts.append(nil)
                    numbers.append(number)
                    flags.append(nil)
                case .flag(let flag):
                    kinds.append("f")
                    texts.append(nil)
                    numbers.append(nil)
                    flags.append(flag)
                }
            }
        }
        var arguments = PostgresArguments()
        if numbered { arguments.append(PostgresIntArray(places)) }
        arguments.append(PostgresTextArray(names))
        arguments.append(PostgresTextArray(kinds))
        arguments.append(PostgresArray(texts))
        arguments.append(PostgresArray(numbers))
        arguments.append(PostgresArray(flags))
        return arguments
    }
}
