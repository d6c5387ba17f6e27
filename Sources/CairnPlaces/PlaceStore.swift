// Durable storage of places, implemented by CairnStore. The hub reads every summary once at start (and again on
// reload, to pick up an import made from the command line), reads one place's attributes when asked, and writes
// single places for `place.upsert` / `place.remove`. Imports write in batches, upserting by (source, external id).

/// Why a place store refused a write.
public enum PlaceStoreError: Error, Equatable {
    /// Another place already has this (source, external id).
    case keyTaken
}

/// Durable storage of places.
public protocol PlaceStore: Sendable {
    /// Every place, without attributes.
    func loadPlaceSummaries() async throws -> [PlaceSummary]
    /// One place with its attributes, or nil.
    func place(id: Int64) async throws -> Place?
    /// Inserts `draft`, or updates the place with its (source, external id), or the place `id` when given (nil
    /// when that place does not exist). Returns the stored place. Throws `PlaceStoreError.keyTaken`, changing
    /// nothing, when updating `id` would give it another place's (source, external id).
    func upsertPlace(_ draft: PlaceDraft, id: Int64?) async throws -> Place?
    /// Inserts or updates (by source and external id) many places in one transaction; answers how many were new.
    func upsertPlaces(_ drafts: [PlaceDraft]) async throws -> Int
    /// Removes one place; false when there was none.
    func removePlace(id: Int64) async throws -> Bool
    /// Removes every place of `source`; answers how many.
    func removePlaces(source: String) async throws -> Int
    /// How many places each source and category hold, by source then category.
    func placeCounts() async throws -> [PlaceCount]
}
