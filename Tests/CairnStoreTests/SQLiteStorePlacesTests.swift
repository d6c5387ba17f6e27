// The places table of migration v18-places: upsert by (source, external id) updates instead of duplicating,
// attributes (text, numbers, booleans) round-trip through SQLite's JSON in order, update by id, removal by id and
// by source, counts by source and category; read back from a reopened store, as after a restart.
import CairnDomain
import Foundation
import Testing

@testable import CairnStore

struct SQLiteStorePlacesTests {
    @Test func upsertAttributesAndRemoval() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var store = try SQLiteStore(directory: dir)
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

        try store.close()
        store = try SQLiteStore(directory: dir)
        let summaries = try store.loadPlaceSummariesNow().sorted { $0.id < $1.id }
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
        try store.close()
    }
}
