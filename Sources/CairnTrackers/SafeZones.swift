// Safe zones (seed 002): `safe_zone.add {name, lat, lon, radius}`, `safe_zone.list`, `safe_zone.remove {zone}`, each
// user's own. The feature keeps every user's zones in memory (restored at start, changed on the loop after the store
// committed), because the left-behind rule asks about them on every move; listing is answered from memory. A zone of
// someone else is `not_found`, as if it did not exist.
public import CairnCore
import CairnErrorCodes
package import CairnGeo
import CairnLoop
import CairnSessions
import Logging

/// The safe zone ops and the zones in memory. Loop thread only.
public final class SafeZones {
    /// Longest name, in characters.
    public static let nameLimit = 64
    /// Smallest and largest radius (m).
    public static let radiusRange: ClosedRange<Double> = 10...50_000

    private let store: any SafeZoneStore
    private let work: LoopWork
    private let perUser: Int
    private var zones: [Int64: [SafeZone]] = [:]

    package init(store: any SafeZoneStore, work: LoopWork, configuration: HubConfiguration) {
        self.store = store
        self.work = work
        perUser = configuration.safeZonesPerUser
    }

    /// Restores every user's zones (at start, from the store).
    public func restore(_ all: [SafeZone]) {
        for zone in all { zones[zone.owner, default: []].append(zone) }
        for owner in zones.keys { zones[owner]?.sort { $0.id < $1.id } }
    }

    /// Adds a zone for the caller.
    public func add(
        _ caller: Caller, name: String, lat: Double, lon: Double, radius: Double, _ done: @escaping Outcome<SafeZone>
    ) {
        let checked = name.trimmingWhitespace()
        guard !checked.isEmpty, checked.count <= Self.nameLimit else {
            return done(.failure(.badRequest("field 'name' must be 1-\(Self.nameLimit) characters")))
        }
        guard lat.isFinite, (-90...90).contains(lat) else {
            return done(.failure(.badRequest("field 'lat' must be between -90 and 90")))
        }
        guard lon.isFinite, (-180...180).contains(lon) else {
            return done(.failure(.badRequest("field 'lon' must be between -180 and 180")))
        }
        guard radius.isFinite, Self.radiusRange.contains(radius) else {
            return done(.failure(.badRequest("field 'radius' must be between 10 and 50000 m")))
        }
        let store = self.store
        let me = caller.user.id
        let limit = perUser
        work.run(
            { () async throws(DomainError) -> SafeZone in
                do {
                    return try await store.addSafeZone(
                        owner: me, name: checked, lat: lat, lon: lon, radius: radius, limit: limit)
                } catch SafeZoneStoreError.tooMany(let limit) {
                    throw DomainError.badRequest(
                        "you already have \(limit) safe zones, the most allowed; remove one first")
                } catch {
                    hubLogger.error("storage failure: \(error)")
                    throw DomainError.storage(error)
                }
            },
            then: { result in
                if case .success(let zone) = result { self.zones[me, default: []].append(zone) }
                done(result)
            })
    }

    /// The caller's zones, oldest first.
    public func list(_ caller: Caller) -> [SafeZone] { zones[caller.user.id] ?? [] }

    /// Removes one of the caller's zones.
    public func remove(_ caller: Caller, zone: Int64, _ done: @escaping Outcome<Int64>) {
        guard zone > 0 else { return done(.failure(.badRequest("field 'zone' must be a positive id"))) }
        let store = self.store
        let me = caller.user.id
        work.run(
            { () async throws(DomainError) -> Bool in
                try await LoopWork.storage { try await store.removeSafeZone(id: zone, owner: me) }
            },
            then: { result in
                switch result {
                case .success(true):
                    self.zones[me]?.removeAll { $0.id == zone }
                    if self.zones[me]?.isEmpty == true { self.zones[me] = nil }
                    done(.success(zone))
                case .success(false): done(.failure(DomainError(.notFound, "no safe zone \(zone)")))
                case .failure(let error): done(.failure(error))
                }
            })
    }

    /// True when `point` lies inside one of `owner`'s zones.
    package func shelters(_ owner: Int64, _ point: GeoPoint) -> Bool {
        zones[owner]?.contains { $0.contains(point) } ?? false
    }

    /// Forgets the zones of deleted accounts (the store dropped them with the account).
    package func forget(users: [Int64]) { for user in users { zones[user] = nil } }
}
