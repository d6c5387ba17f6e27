import CairnLiveMap
public import CairnLoop
import Synchronization

// The hub's features without the protocol layer: in-memory stores, a manual clock, a scheduler whose jobs the
// test runs on the main actor, and an event port that records domain events. Users, friendships and sharing rules
// are put in the store and restored, and connections bound directly, so each test states only what it is about.
@testable public import CairnCore
@testable public import CairnHub
@testable import CairnSessions
@testable public import CairnSocial

@MainActor
public final class DomainHarness {
    public let clock = ManualClock()
    public let random = SeededRandom(seed: 11)
    public let store = MemoryAccountStore()
    public let content = MemoryContentStore()
    public let scheduler = CollectingScheduler()
    public let events = RecordingEvents()
    public let buckets = MemoryBucketStore()
    public let trackers: MemoryTrackerStore
    public let safeZones = MemorySafeZoneStore()
    public let pictures = MemoryPictureStore()
    public let hub: Hub
    public private(set) var users: [Int64: User] = [:]

    /// `admin`: give the hub the account store as its admin store too (the admin ops answer only with one).
    public init(admin: Bool = false, configure: (inout HubConfiguration) -> Void = { _ in }) {
        var config = HubConfiguration()
        configure(&config)
        let accounts = Accounts(store: store, hasher: fastHasher(random), random: random, clock: clock)
        trackers = MemoryTrackerStore(items: buckets)
        let stores = HubStores(
            social: store, relics: content, chat: content, profiles: store, buckets: buckets, trackers: trackers,
            safeZones: safeZones, roles: store, admin: admin ? store : nil, pictures: pictures)
        hub = Hub(accounts: accounts, stores: stores, scheduler: scheduler, clock: clock, configuration: config)
        hub.attach(events)
    }

    /// Creates users `1...count` in the store.
    public func makeUsers(_ count: Int) async throws {
        for n in 1...count {
            let user = try await store.createUser(
                NewUser(
                    username: "user\(n)", name: "User \(n)", passwordHash: nil,
                    isGuest: false, createdAt: clock.now()))
            users[user.id] = user
            pictures.add(user)
        }
    }

    /// Stores friendships and rules, then restores the hub from the store (as at start-up).
    public func restore(friends pairs: [(Int64, Int64)], rules: [(owner: Int64, viewer: Int64, level: ShareLevel)] = [])
        throws
    {
        store.state.withLock { s in
            for (a, b) in pairs { s.friendships.insert([min(a, b), max(a, b)]) }
            for r in rules { s.rules[[r.owner, r.viewer]] = (r.level, nil) }
        }
        hub.restore(try store.loadSocial())
    }

    /// Opens connection `connection` and binds it to user `user`; returns the caller.
    @discardableResult
    public func connect(_ connection: ConnectionID, as user: Int64, watching: Bool = false) -> Caller {
        hub.sessions.open(connection, token: nil)
        hub.sessions.bind(connection, to: users[user]!, token: "token-\(connection)")
        let caller = Caller(connection: connection, user: users[user]!)
        if watching { _ = hub.liveMap.watch(caller) }
        return caller
    }
}

/// Starts an operation and runs the harness's jobs until it answers: its outcome, for tests of slow operations.
@MainActor
public func outcome<T>(_ h: DomainHarness, _ start: (@escaping Outcome<T>) -> Void) async throws -> Result<
    T, DomainError
> {
    var result: Result<T, DomainError>?
    start { result = $0 }
    while result == nil { try await h.scheduler.run() }
    return result!
}
