import CairnHubTestSupport
import CairnLoop

// A hub for one node's side of several nodes, without Redis and without the protocol layer: in-memory stores, a
// manual clock and a scheduler whose jobs the test runs on the main actor. What another node would have sent is
// handed to the node's parts (`ClusterItems`, the control kinds' payloads) directly.
@testable import CairnCore
@testable import CairnHub
@testable import CairnSessions

@MainActor
final class NodeHarness {
    let clock = ManualClock()
    let random = SeededRandom(seed: 5)
    let store = MemoryAccountStore()
    let content = MemoryContentStore()
    let buckets = MemoryBucketStore()
    let trackers: MemoryTrackerStore
    let safeZones = MemorySafeZoneStore()
    let scheduler = CollectingScheduler()
    let hub: Hub

    init() {
        trackers = MemoryTrackerStore(items: buckets)
        let accounts = Accounts(store: store, hasher: fastHasher(random), random: random, clock: clock)
        let stores = HubStores(
            social: store, relics: content, chat: content, profiles: store, buckets: buckets, trackers: trackers,
            safeZones: safeZones)
        hub = Hub(accounts: accounts, stores: stores, scheduler: scheduler, clock: clock, random: random)
    }
}
