// Places of interest (seed 001: "given the user's current location, it gets 20 nearby mountains and calculates the
// distance from the user to each mountain"). `places.nearest` answers from memory, exactly: nearest first by
// great-circle distance, ties by id, category and radius applied before the limit. `places.search` matches name
// prefixes, accents and case folded. `place.get` reads one place with its attributes from the store.
//
// Operators write places: `cairn places import` from the command line (straight into the store, then a reload),
// `place.upsert` / `place.remove` here (the `ops` role, asked of the `RoleStore` off the loop on every write, as
// the stats channel does). A write is committed before the reply and then applied to the catalog's side buffer;
// when that buffer has grown, a new catalog is built off the loop from the summaries in memory and swapped in.
// A reload (`places.reload`, or SIGHUP) reads every summary from the store and builds the catalog the same way.
// Writes that land while a catalog is being built are replayed onto it when it arrives.
//
// Where the caller is comes through the `position` hook, wired by the Hub to the live map.
public import CairnCore
package import CairnGeo
import CairnLoop

#if canImport(Glibc)
import Glibc
import CairnErrorCodes
import Logging
#endif

/// The places feature. Loop thread only.
public final class Places {
    /// Most places one answer carries.
    public static let maxLimit = 100
    /// Places in a nearest answer when the request names no limit.
    public static let defaultLimit = 20
    /// The longest `places.search` query, in bytes of UTF-8 (checked before it is folded).
    public static let maxQueryBytes = 200
    /// Longest name, category, source or external id, in characters.
    public static let maxNameLength = 200
    /// Longest category or source, in characters.
    public static let maxCategoryLength = 64
    /// Most attributes per place.
    public static let maxAttributes = 64

    private let store: (any PlaceStore)?
    private let roles: (any RoleStore)?
    private let work: LoopWork
    private var catalog = PlaceCatalog()
    /// Ids written while a catalog is being built (nil when none is).
    private var writtenDuringBuild: Set<Int64>?
    /// True when another build was asked for while one ran.
    private var buildAgain: (reload: Bool, done: [Outcome<Int>])?

    /// The caller's last position, wired by the Hub (the live map's).
    package var position: ((Int64) -> GeoPoint?)?

    /// How the protocol layer renders a place in a list, kept per place so an answer copies it rather than
    /// encoding each field again (set by the op table before serving; setting it rebuilds the catalog).
    public var wireForm: PlaceWireForm? {
        didSet { catalog = PlaceCatalog(catalog.allSummaries(), wireForm: wireForm) }
    }

    /// What the places feature has done since start, and the places by category now.
    public var counts: PlaceCounts {
        var counts = tally
        counts.byCategory = catalog.categoryCounts
        return counts
    }
    private var tally = PlaceCounts()
    /// A monotonic clock in nanoseconds, to time nearest queries.
    private let nanoseconds: () -> UInt64
    /// Receives each nearest query's duration in nanoseconds (the Prometheus exporter's histogram).
    public var nearestTimed: ((Int64) -> Void)?

    package init(
        store: (any PlaceStore)?, roles: (any RoleStore)?, work: LoopWork,
        nanoseconds: @escaping () -> UInt64 = Places.monotonicNanoseconds
    ) {
        self.store = store
        self.roles = roles
        self.work = work
        self.nanoseconds = nanoseconds
    }

    /// Nanoseconds on the continuous clock since the first call.
    public static func monotonicNanoseconds() -> UInt64 {
        let (seconds, attoseconds) = clockStart.duration(to: .now).components
        return UInt64(max(0, seconds)) &* 1_000_000_000 &+ UInt64(max(0, attoseconds / 1_000_000_000))
    }
    private static let clockStart = ContinuousClock.now

    /// Places in memory.
    public var count: Int { catalog.count }

    /// Loads the places read from the store at start; call once, before serving.
    public func restore(_ places: [PlaceSummary]) {
        catalog = PlaceCatalog(places, wireForm: wireForm)
        tally.loaded = UInt64(catalog.count)
        Self.returnFreedMemory()
    }

    /// Loading leaves freed pages behind (the rows read from the store, the build's scratch): before serving,
    /// glibc's `malloc_trim` hands them back rather than keeping them resident. malloc.h is not part of Swift's
    /// Glibc module, so the function is looked up by name (absent elsewhere: nothing happens).
    private static func returnFreedMemory() {
        #if canImport(Glibc)
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "malloc_trim") else { return }
        typealias Trim = @convention(c) (Int) -> Int32
        _ = unsafeBitCast(symbol, to: Trim.self)(0)
        #endif
    }

    // MARK: Reading

    /// The nearest places to the given position, or to the caller's last one.
    public func nearest(_ caller: Caller, _ request: NearestPlacesRequest) throws(DomainError) -> NearbyPlaces {
        let started = nanoseconds()
        let limit = request.limit ?? Int64(Self.defaultLimit)
        guard limit >= 1 && limit <= Int64(Self.maxLimit) else {
            throw .badRequest("field 'limit' must be 1-\(Self.maxLimit)")
        }
        if let radius = request.radius {
            guard radius.isFinite && radius >= 0 else {
                throw .badRequest("field 'radius' must be a non-negative number of metres")
            }
        }
        if let category = request.category, category.isEmpty {
            throw .badRequest("field 'category' must not be empty")
        }
        let center: GeoPoint
        switch (request.lat, request.lon) {
        case (let lat?, let lon?):
            guard let point = GeoPoint(lat: lat, lon: lon) else {
                throw .badRequest("fields 'lat' and 'lon' must be in [-90, 90] and [-180, 180]")
            }
            center = point
        case (nil, nil):
            guard let point = position?(caller.user.id) else {
                throw .badRequest("no position: give 'lat' and 'lon', or report one with 'pos' first")
            }
            center = point
        case (nil, _): throw .badRequest("field 'lat' is missing ('lat' and 'lon' go together)")
        case (_, nil): throw .badRequest("field 'lon' is missing ('lat' and 'lon' go together)")
        }
        let found = catalog.nearest(Int(limit), to: center, category: request.category, radius: request.radius)
        let took = nanoseconds() &- started
        tally.nearest &+= 1
        tally.nearestNanoseconds &+= took
        nearestTimed?(Int64(clamping: took))
        return found
    }

    /// Places whose name starts with `query`, accents and case folded.
    public func search(_ caller: Caller, query: String, limit: Int64?) throws(DomainError) -> [PlaceSummary] {
        let limit = limit ?? Int64(Self.defaultLimit)
        guard limit >= 1 && limit <= Int64(Self.maxLimit) else {
            throw .badRequest("field 'limit' must be 1-\(Self.maxLimit)")
        }
        // Bounded before folding: folding costs time in proportion to the text, on the loop.
        guard query.utf8.count <= Self.maxQueryBytes else {
            throw .badRequest("field 'q' must be at most \(Self.maxQueryBytes) bytes")
        }
        guard !NameFold.fold(query).isEmpty else { throw .badRequest("field 'q' must not be empty") }
        tally.searches &+= 1
        return catalog.search(query, limit: Int(limit))
    }

    /// One place with its attributes.
    public func get(_ caller: Caller, place: Int64, _ done: @escaping Outcome<Place>) {
        guard place > 0 else { return done(.failure(.badRequest("field 'place' must be a positive place id"))) }
        guard let store, catalog.contains(place) else {
            return done(.failure(DomainError(.notFound, "no such place")))
        }
        work.run(
            { () async throws(DomainError) -> Place in
                guard let found = try await LoopWork.storage({ try await store.place(id: place) }) else {
                    throw DomainError(.notFound, "no such place")
                }
                return found
            }, then: done)
    }

    // MARK: Writing (operators)

    /// Why `draft` cannot be stored (completing a sentence about the place), or nil when it can.
    public static func problem(with draft: PlaceDraft) -> String? {
        if GeoPoint(lat: draft.lat, lon: draft.lon) == nil {
            return "lat and lon must be numbers in [-90, 90] and [-180, 180]"
        }
        if draft.name.unicodeScalars.allSatisfy({ $0.properties.isWhitespace }) { return "the name is empty" }
        if draft.name.count > maxNameLength { return "the name is longer than \(maxNameLength) characters" }
        if let problem = tokenProblem(draft.category, "category") { return problem }
        if let problem = tokenProblem(draft.source, "source") { return problem }
        if let external = draft.externalID {
            if external.isEmpty { return "the id is empty" }
            if external.count > maxNameLength { return "the id is longer than \(maxNameLength) characters" }
        }
        if draft.attributes.count > maxAttributes { return "more than \(maxAttributes) attributes" }
        var seen = Set<String>()
        for attribute in draft.attributes {
            if !seen.insert(attribute.name).inserted { return "attribute '\(attribute.name)' is given twice" }
            if attribute.name.isEmpty || attribute.name.count > maxCategoryLength {
                return "an attribute name must be 1-\(maxCategoryLength) characters"
            }
            if case .text(let text) = attribute.value, text.utf8.count > 4096 {
                return "attribute '\(attribute.name)' is longer than 4096 bytes"
            }
            if case .number(let number) = attribute.value, !number.isFinite {
                return "attribute '\(attribute.name)' is not a finite number"
            }
        }
        return nil
    }

    /// A category or source: 1-64 of `a-z A-Z 0-9 _ - .`.
    private static func tokenProblem(_ token: String, _ what: String) -> String? {
        let allowed = token.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x5F || byte == 0x2D || byte == 0x2E
        }
        guard !token.isEmpty, token.utf8.count <= maxCategoryLength, allowed else {
            return "the \(what) must be 1-\(maxCategoryLength) characters of A-Z a-z 0-9 _ - ."
        }
        return nil
    }

    /// Inserts or updates a place (operators): by `place` when given, else by (source, external id).
    public func upsert(_ caller: Caller, _ draft: PlaceDraft, place: Int64?, _ done: @escaping Outcome<Place>) {
        if let place, place <= 0 {
            return done(.failure(.badRequest("field 'place' must be a positive place id")))
        }
        if let problem = Self.problem(with: draft) { return done(.failure(.badRequest("place refused: \(problem)"))) }
        guard let store else { return done(.failure(Self.readOnly)) }
        operatorOnly(
            caller, doing: "write places",
            { () async throws(DomainError) -> Place in
                let written: Place?
                do { written = try await store.upsertPlace(draft, id: place) } catch PlaceStoreError.keyTaken {
                    throw DomainError.badRequest(
                        "another place already has source '\(draft.source)' and id '\(draft.externalID ?? "")'")
                } catch {
                    hubLogger.error("storage failure: \(error)")
                    throw DomainError.storage(error)
                }
                guard let stored = written else { throw DomainError(.notFound, "no such place") }
                return stored
            },
            then: { result in
                if case .success(let stored) = result, let summary = stored.summary {
                    self.written(summary, id: stored.id)
                }
                done(result)
            })
    }

    /// Removes a place (operators).
    public func remove(_ caller: Caller, place: Int64, _ done: @escaping Outcome<Int64>) {
        guard place > 0 else { return done(.failure(.badRequest("field 'place' must be a positive place id"))) }
        guard let store else { return done(.failure(Self.readOnly)) }
        operatorOnly(
            caller, doing: "remove places",
            { () async throws(DomainError) -> Int64 in
                guard try await LoopWork.storage({ try await store.removePlace(id: place) }) else {
                    throw DomainError(.notFound, "no such place")
                }
                return place
            },
            then: { result in
                if case .success = result { self.written(nil, id: place) }
                done(result)
            })
    }

    /// Reads every place from the store again (operators), e.g. after `cairn places import`; answers the count.
    public func reload(_ caller: Caller, _ done: @escaping Outcome<Int>) {
        guard store != nil else { return done(.failure(Self.readOnly)) }
        operatorOnly(
            caller, doing: "reload places", { () async throws(DomainError) in () },
            then: { result in
                switch result {
                case .success: self.rebuild(reload: true, done)
                case .failure(let error): done(.failure(error))
                }
            })
    }

    /// Reads every place from the store again (SIGHUP); `done` gets the count.
    public func reloadFromStore(_ done: @escaping Outcome<Int> = { _ in }) {
        guard store != nil else { return done(.failure(Self.readOnly)) }
        rebuild(reload: true, done)
    }

    private static let readOnly = DomainError(.internal, "places have no store here; nothing was written")

    /// Runs `body` off the loop once the caller is known to hold the `ops` role.
    private func operatorOnly<T: Sendable>(
        _ caller: Caller, doing what: String, _ body: @escaping @Sendable () async throws(DomainError) -> T,
        then: @escaping Outcome<T>
    ) {
        guard let roles else { return then(.failure(DomainError(.forbidden, "only operators may \(what)"))) }
        let me = caller.user.id
        work.run(
            { () async throws(DomainError) -> T in
                guard try await LoopWork.storage({ try await roles.hasRole(.ops, userID: me) }) else {
                    throw DomainError(.forbidden, "only operators may \(what) (cairn user grant-ops)")
                }
                return try await body()
            }, then: then)
    }

    /// Applies a committed write to memory: `summary` nil when the place was removed.
    private func written(_ summary: PlaceSummary?, id: Int64) {
        if let summary {
            catalog.upsert(summary)
            tally.upserts &+= 1
        } else {
            catalog.remove(id)
            tally.removals &+= 1
        }
        writtenDuringBuild?.insert(id)
        if catalog.needsRebuild && writtenDuringBuild == nil { rebuild(reload: false) { _ in } }
    }

    /// Builds a new catalog off the loop, from the store (`reload`) or from the summaries in memory, swaps it in
    /// and replays the writes made meanwhile.
    private func rebuild(reload: Bool, _ done: @escaping Outcome<Int>) {
        if writtenDuringBuild != nil {
            var again = buildAgain ?? (reload: false, done: [])
            again.reload = again.reload || reload
            again.done.append(done)
            buildAgain = again
            return
        }
        writtenDuringBuild = []
        let store = self.store
        let current = catalog
        let wireForm = self.wireForm
        work.run(
            { () async throws(DomainError) -> PlaceCatalog in
                if reload, let store {
                    let loaded = try await LoopWork.storage { try await store.loadPlaceSummaries() }
                    return PlaceCatalog(loaded, wireForm: wireForm)
                }
                return PlaceCatalog(current.allSummaries(), wireForm: wireForm)
            },
            then: { result in
                let written = self.writtenDuringBuild ?? []
                self.writtenDuringBuild = nil
                switch result {
                case .success(var fresh):
                    for id in written {
                        if let summary = self.catalog.summary(of: id) {
                            fresh.upsert(summary)
                        } else {
                            fresh.remove(id)
                        }
                    }
                    self.catalog = fresh
                    if reload {
                        self.tally.reloads &+= 1
                        self.tally.loaded = UInt64(fresh.count)
                    }
                    done(.success(fresh.count))
                case .failure(let error):
                    if reload { self.tally.reloadFailures &+= 1 }
                    done(.failure(error))
                }
                if let again = self.buildAgain {
                    self.buildAgain = nil
                    self.rebuild(reload: again.reload) { result in
                        for waiting in again.done { waiting(result) }
                    }
                }
            })
    }
}
