import CairnHubTestSupport
import CairnLoop
import CairnProtocol
import CairnWire
import Testing

// The hub and its router, driven from the main actor, which plays the event loop: in-memory stores, a manual
// clock, a scheduler whose jobs the test runs on the main actor, and an outbound that records what would have been
// sent. The loop confinement is left unclaimed: the main actor is one serial executor, but not always one thread.
@testable import CairnCore
@testable import CairnHub
@testable import CairnSessions

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
        let stores = HubStores(
            social: store, relics: content, chat: content, profiles: store, buckets: buckets, trackers: trackers,
            safeZones: safeZones, roles: roles ? store : nil, admin: roles ? store : nil, places: places)
        hub = Hub(
            accounts: accounts, stores: stores, scheduler: scheduler, clock: clock, random: random,
            configuration: config)
        router = Router(hub: hub)
        router.outbound = outbound
    }

    /// Sends a frame; with `completions` above 0, plays the loop until the slow work it started has finished.
    func send(_ connection: ConnectionID, _ text: String, completions jobs: Int = 0) async throws {
        router.receive(connection, text)
        if jobs > 0 { try await settle() }
    }

    /// Plays the loop until the hub has no slow work in flight: every job started so far, and every job those
    /// started, has run. Counting jobs instead depends on how many an op takes and on the order in which jobs from
    /// different threads (the hasher, the stores) arrive: a job left over from one step would be taken for the next
    /// step's, and a reply looked for too early.
    func settle() async throws {
        var waited = 0
        while hub.operationsInFlight > 0 || scheduler.pending > 0 {
            if scheduler.pending > 0 {
                try await scheduler.run()
                continue
            }
            try await Task.sleep(nanoseconds: 1_000_000)
            waited += 1
            if waited > 10_000 {
                Issue.record("\(hub.operationsInFlight) operation(s) still in flight after 10 s")
                return
            }
        }
    }

    func registerAndToken(_ connection: ConnectionID, _ username: String) async throws -> String {
        try await send(
            connection, #"{"id":1,"op":"register","username":"\#(username)","password":"password1"}"#, completions: 1)
        let reply = outbound.take(connection).first { $0["id"] as? Int == 1 }
        return try #require(reply?["token"] as? String)
    }
}
