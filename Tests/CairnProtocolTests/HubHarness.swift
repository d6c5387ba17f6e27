import CairnDomainTestSupport
import CairnLoop
import CairnProtocol
import CairnWire
import Testing

// The hub and its router, driven from the main actor, which plays the event loop: in-memory stores, a manual
// clock, a scheduler whose jobs the test runs on the main actor, and an outbound that records what would have been
// sent. The loop confinement is left unclaimed: the main actor is one serial executor, but not always one thread.
@testable import CairnDomain

@MainActor
final class HubHarness {
    let clock = ManualClock()
    let random = SeededRandom(seed: 7)
    let store = MemoryAccountStore()
    let content = MemoryContentStore()
    let buckets = MemoryBucketStore()
    let trackers: MemoryTrackerStore
    let safeZones = MemorySafeZoneStore()
    let places = MemoryPlaceStore()
    let scheduler = CollectingScheduler()
    let outbound = RecordingOutbound()
    let hub: Hub
    let router: Router

    init(roles: Bool = true, configure: (inout HubConfiguration) -> Void = { _ in }) {
        var config = HubConfiguration()
        configure(&config)
        trackers = MemoryTrackerStore(items: buckets)
        let accounts = Accounts(store: store, hasher: fastHasher(random), random: random, clock: clock)
        hub = Hub(
            accounts: accounts, social: store, relics: content, chat: content, profiles: store, buckets: buckets,
            trackers: trackers, safeZones: safeZones,
            scheduler: scheduler,
            clock: clock, random: random,
            configuration: config, roles: roles ? store : nil, admin: roles ? store : nil, places: places)
        router = Router(hub: hub)
        router.outbound = outbound
    }

    /// Sends a frame and runs `jobs` completions.
    func send(_ connection: ConnectionID, _ text: String, completions jobs: Int = 0) async throws {
        router.receive(connection, text)
        for _ in 0..<jobs { try await scheduler.run() }
    }

    func registerAndToken(_ connection: ConnectionID, _ username: String) async throws -> String {
        try await send(
            connection, #"{"id":1,"op":"register","username":"\#(username)","password":"password1"}"#, completions: 1)
        let reply = outbound.take(connection).first { $0["id"] as? Int == 1 }
        return try #require(reply?["token"] as? String)
    }
}
