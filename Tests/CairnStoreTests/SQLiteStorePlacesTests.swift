// The places table of migration v18-places: upsert by (source, external id) updates instead of duplicating (in a
// batch too), attributes (text, numbers, booleans) round-trip through the engine's JSON in order, update by id,
// removal by id and by source, counts by source and category; read back from a reopened store, as after a restart.
// On both engines.
import CairnPlaces
import CairnPostgres
import CairnTestSupport
import Foundation
import Testing

@testable import CairnStore

extension StoreEngine {
    /// Runs `body` with a way to open the same store again (empty at first), as after a restart; `body` closes every
    /// store it opens with `closePlaceStore`.
    func withReopenableStore(_ body: (_ open: () throws -> any EngineStore) async throws -> Void) async throws {
        switch self {
        case .sqlite:
            let dir = temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            try await body { try SQLiteStore(directory: dir) }
        case .postgres:
            let url = try PostgresServerProcess.freshURL()
            try await body { try PostgresStore(url: url, connections: 2) }
        }
    }

    /// Closes a store `withReopenableStore` opened.
    func closePlaceStore(_ store: any EngineStore) throws {
        if let sqlite = store as? SQLiteStore { try sqlite.close() }
        (store as? PostgresStore)?.close()
    }

    /// The synchronous load the hub makes at start (outside the port).
    func placeSummariesNow(_ store: any EngineStore) throws -> [PlaceSummary] {
        if let sqlite = store as? SQLiteStore { return try sqlite.loadPlaceSummariesNow() }
        return try #require(store as? PostgresStore).loadPlaceSummariesNow()
    }
}

@Suite(.timeLimit(.minutes(5)))
struct SQLiteStorePlacesTests {
    @Test(arguments: StoreEngine.available)
    func upsertAttributesAndRemoval(engine: StoreEngine) async throws {
        try await engine.withReopenableStore { open in try await upsertAttributesAndRemoval(engine, open) }
    }

    func upsertAttributesAndRemoval(_ engine: StoreEngine, _ open: () throws -> any EngineStore) async throws {
        var store = try open()
        let attributes = [
            PlaceAttribute("elevation", .number(1620)), PlaceAttribute("url", .text("https://x.ch/\"q\"")),
            PlaceAttribute("open", .flag(true)), PlaceAttribute("closed", .flag(false)),
        ]
        let zermatt = PlaceDraft(
            source: "alps", externalID: "z", name: "Zermatt", category: "ski_area", lat: 46.02, lon: 7.75,
            attributes: attributes)
        let peak = PlaceDraft(
            source: "alps", externalID: "m", name: "Matterhorn", category: "peak", lat: 45.98, lon: 7.66)
        let loose = PlaceDraft(source: "ops", externalID: nil, name: "Hut", category: "hut", lat: 45.9, lon: 7.6)
        #expect(try await store.upsertPlaces([zermatt, peak, loose, loose]) == 4)  // no external id: always new
        var moved = zermatt
        moved.lat = 46.03
        moved.attributes = [PlaceAttribute("elevation", .number(1700))]
        #expect(try await store.upsertPlaces([moved]) == 0)
        // In one batch, the last draft of a key wins.
        var twice = peak
        twice.name = "Matterhorn (2)"
        #expect(try await store.upsertPlaces([twice, peak]) == 0)

        try engine.closePlaceStore(store)
        store = try open()
        let summaries = try engine.placeSummariesNow(store).sorted { $0.id < $1.id }
        #expect(summaries.map(\.name) == ["Zermatt", "Matterhorn", "Hut", "Hut"])
        #expect(summaries[0].lat == 46.03)
        let first = try #require(try await store.place(id: summaries[0].id))
        #expect(first.draft == moved)
        let byOne = try #require(try await store.upsertPlace(zermatt, id: nil))
        #expect(byOne.id == summaries[0].id && byOne.draft.attributes == attributes)
        var renamed = peak
        renamed.name = "Cervino"
        #expect(try await store.upsertPlace(renamed, id: summaries[1].id)?.draft.name == "Cervino")
        #expect(try await store.upsertPlace(renamed, id: 999) == nil)
        // Giving it Zermatt's (source, external id) is refused, and changes nothing.
        var clash = renamed
        clash.externalID = "z"
        await #expect(throws: PlaceStoreError.keyTaken) { try await store.upsertPlace(clash, id: summaries[1].id) }
        #expect(try await store.place(id: summaries[1].id)?.draft == renamed)
        #expect(
            try await store.placeCounts() == [
                PlaceCount(source: "alps", category: "peak", count: 1),
                PlaceCount(source: "alps", category: "ski_area", count: 1),
                PlaceCount(source: "ops", category: "hut", count: 2),
            ])
        #expect(try await store.removePlace(id: summaries[2].id))
        #expect(!(try await store.removePlace(id: summaries[2].id)))
        #expect(try await store.removePlaces(source: "alps") == 2)
        #expect(try await store.loadPlaceSummaries().map(\.name) == ["Hut"])
        try engine.closePlaceStore(store)
    }
}
