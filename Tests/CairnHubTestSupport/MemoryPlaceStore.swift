// An in-memory stand-in for the places part of the store, with the SQLite store's contract (upsert by source and
// external id; update by id answers nil for an unknown place) and a switch to make writes fail, so the places
// feature and its ops are tested without SQLite.
public import CairnPlaces
public import Synchronization

public final class MemoryPlaceStore: PlaceStore {
    public struct State {
        public var places: [Int64: Place] = [:]
        public var next: Int64 = 1
        public var failWrites = false
    }
    public let state = Mutex(State())

    public init() {}

    public struct InjectedFailure: Error {}

    public func loadPlaceSummaries() async throws -> [PlaceSummary] {
        state.withLock { $0.places.values.compactMap(\.summary) }
    }

    public func place(id: Int64) async throws -> Place? { state.withLock { $0.places[id] } }

    public func upsertPlace(_ draft: PlaceDraft, id: Int64?) async throws -> Place? {
        try state.withLock { s in
            if s.failWrites { throw InjectedFailure() }
            if let id {
                guard s.places[id] != nil else { return nil }
                if let external = draft.externalID,
                    s.places.values.contains(where: {
                        $0.id != id && $0.draft.source == draft.source && $0.draft.externalID == external
                    })
                {
                    throw PlaceStoreError.keyTaken
                }
                s.places[id] = Place(id: id, draft: draft)
                return s.places[id]
            }
            return Self.upsert(&s, draft)
        }
    }

    public func upsertPlaces(_ drafts: [PlaceDraft]) async throws -> Int {
        try state.withLock { s in
            if s.failWrites { throw InjectedFailure() }
            let before = s.places.count
            for draft in drafts { _ = Self.upsert(&s, draft) }
            return s.places.count - before
        }
    }

    private static func upsert(_ s: inout State, _ draft: PlaceDraft) -> Place {
        if let external = draft.externalID,
            let existing = s.places.values.first(where: {
                $0.draft.source == draft.source && $0.draft.externalID == external
            })
        {
            s.places[existing.id] = Place(id: existing.id, draft: draft)
            return s.places[existing.id]!
        }
        let place = Place(id: s.next, draft: draft)
        s.next += 1
        s.places[place.id] = place
        return place
    }

    public func removePlace(id: Int64) async throws -> Bool {
        try state.withLock { s in
            if s.failWrites { throw InjectedFailure() }
            return s.places.removeValue(forKey: id) != nil
        }
    }

    public func removePlaces(source: String) async throws -> Int {
        try state.withLock { s in
            if s.failWrites { throw InjectedFailure() }
            let gone = s.places.values.filter { $0.draft.source == source }.map(\.id)
            for id in gone { s.places[id] = nil }
            return gone.count
        }
    }

    public func placeCounts() async throws -> [PlaceCount] {
        state.withLock { s in
            var counts: [String: [String: Int]] = [:]
            for place in s.places.values {
                counts[place.draft.source, default: [:]][place.draft.category, default: 0] += 1
            }
            return counts.keys.sorted().flatMap { source in
                counts[source]!.keys.sorted().map {
                    PlaceCount(source: source, category: $0, count: counts[source]![$0]!)
                }
            }
        }
    }
}
