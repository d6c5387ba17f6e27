import CairnHub
import CairnHubTestSupport
import CairnLoop
import CairnProtocol
import Foundation
import Synchronization
import Testing

// The stats channel in the hub: only operators may watch, the role is asked of the store on every watch (so a
// grant or revocation counts without a restart), and each tick pushes a `stats` event whose figures follow what
// happened: connections opening, messages counted by the transport, positions accepted. Time is a ManualClock.
@testable import CairnCore

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct HubStatsTests {
    static let gauges = TransportGauges(
        pendingCoalesced: 3, pendingOutboundBytes: 120, residentBytes: 50_000_000,
        uptimeSeconds: 12.5)

    /// Registers `name` on `connection`, optionally grants ops, and sends stats.watch; returns the reply.
    func watch(_ h: HubHarness, _ connection: ConnectionID, _ name: String, ops: Bool) async throws -> [String: Any] {
        let id = try await h.user(connection, name)
        if ops { h.store.state.withLock { _ = $0.ops.insert(id) } }
        return try await h.request(connection, #"{"id":7,"op":"stats.watch"}"#, id: 7, completions: 1)
    }

    func statsEvents(_ h: HubHarness, _ connection: ConnectionID) -> [[String: Any]] {
        h.outbound.take(connection).filter { $0["ev"] as? String == "stats" }
    }

    @Test func anOrdinaryUserIsForbidden() async throws {
        let h = HubHarness()
        let reply = try await watch(h, 1, "alice", ops: false)
        #expect(reply["ok"] as? Bool == false)
        #expect(errorCode(reply) == "forbidden")
        #expect(!h.hub.isStatsWatched)
        h.hub.publishStats { Self.gauges }
        #expect(statsEvents(h, 1).isEmpty)
    }

    @Test func withoutARoleStoreNobodyMayWatch() async throws {
        let h = HubHarness(roles: false)
        let id = try await h.user(1, "alice")
        h.store.state.withLock { _ = $0.ops.insert(id) }
        let reply = try await h.request(1, #"{"id":7,"op":"stats.watch"}"#, id: 7)
        #expect(errorCode(reply) == "forbidden")
    }

    @Test func beforeAuthenticationItIsUnauthorized() async throws {
        let h = HubHarness()
        h.router.connectionOpened(1, token: nil)
        let reply = try await h.request(1, #"{"id":7,"op":"stats.watch"}"#, id: 7)
        #expect(errorCode(reply) == "unauthorized")
    }

    @Test func anOperatorGetsAStatsEventEachTick() async throws {
        let h = HubHarness()
        let reply = try await watch(h, 1, "ops", ops: true)
        #expect(reply["ok"] as? Bool == true)
        #expect(reply["interval_ms"] as? Int == 1000)
        #expect(h.hub.isStatsWatched)
        h.hub.publishStats { Self.gauges }
        let event = try #require(statsEvents(h, 1).first)
        let connections = try #require(event["connections"] as? [String: Any])
        #expect(connections["total"] as? Int == 1)
        #expect(connections["authenticated"] as? Int == 1)
        #expect(connections["stats"] as? Int == 1)
        #expect((event["fanout"] as? [String: Any])?["pending_coalesced"] as? Int == 3)
        #expect((event["process"] as? [String: Any])?["resident_bytes"] as? Int == 50_000_000)
        #expect(event["uptime_s"] as? Double == 12.5)
        #expect(event["ts"] as? Int == Int(h.clock.now()))
        // No relic layer reports a count: the field is there, as null.
        let live = try #require(event["live"] as? [String: Any])
        #expect(live.keys.contains("relics") && live["relics"] is NSNull)
        #expect(event["snapshot"] is NSNull)
    }

    @Test func figuresFollowConnectionsTrafficAndPositions() async throws {
        let h = HubHarness()
        _ = try await watch(h, 1, "ops", ops: true)
        h.hub.publishStats { Self.gauges }
        let first = try #require(statsEvents(h, 1).first)
        #expect((first["traffic"] as? [String: Any])?["messages_in_per_s"] is NSNull)

        // Two more clients connect, one reports a position; the transport counts 10 messages of 400 bytes.
        _ = try await h.user(2, "bob")
        h.router.connectionOpened(3, token: nil)
        h.move(2, lat: 10, lon: 20)
        h.hub.telemetry.messagesReceived += 10
        h.hub.telemetry.bytesReceived += 4000
        h.hub.telemetry.recordFanoutLatency(nanoseconds: 2_000_000)
        h.clock.advance(by: 2000)
        h.hub.publishStats { Self.gauges }
        let second = try #require(statsEvents(h, 1).first)
        let connections = try #require(second["connections"] as? [String: Any])
        #expect(connections["total"] as? Int == 3)
        #expect(connections["authenticated"] as? Int == 2)
        let traffic = try #require(second["traffic"] as? [String: Any])
        #expect(traffic["messages_in_per_s"] as? Double == 5)
        #expect(traffic["bytes_in_per_s"] as? Double == 2000)
        #expect(traffic["messages_in_total"] as? Int == 10)
        let live = try #require(second["live"] as? [String: Any])
        #expect(live["positions"] as? Int == 1)
        #expect(live["positions_accepted_total"] as? Int == 1)
        let fanout = try #require(second["fanout"] as? [String: Any])
        #expect(fanout["deliveries"] as? Int == 1)
        let p99 = try #require(fanout["latency_p99_ms"] as? Double)
        #expect(p99 >= 2 && p99 <= 2.25)
        #expect((second["store"] as? [String: Any])?["pending_rows"] as? Int == 1)

        // The latency window starts afresh each tick.
        h.clock.advance(by: 1000)
        h.hub.publishStats { Self.gauges }
        let third = try #require(statsEvents(h, 1).first)
        #expect((third["fanout"] as? [String: Any])?["latency_p99_ms"] is NSNull)
        #expect((third["traffic"] as? [String: Any])?["messages_in_per_s"] as? Double == 0)
    }

    @Test func relicCountIsReportedOnceWired() async throws {
        let h = HubHarness()
        _ = try await watch(h, 1, "ops", ops: true)
        h.hub.relicCount = { 42 }
        h.hub.publishStats { Self.gauges }
        let event = try #require(statsEvents(h, 1).first)
        #expect((event["live"] as? [String: Any])?["relics"] as? Int == 42)
    }

    @Test func snapshotFiguresAppearAfterAFlush() async throws {
        let h = HubHarness()
        _ = try await watch(h, 1, "ops", ops: true)
        _ = try await h.user(2, "bob")
        h.move(2, lat: 1, lon: 2)
        h.hub.flushPositionsNow()
        try await h.settle()
        h.clock.advance(by: 3000)
        h.hub.publishStats { Self.gauges }
        let event = try #require(statsEvents(h, 1).first)
        let snapshot = try #require(event["snapshot"] as? [String: Any])
        #expect(snapshot["rows"] as? Int == 1)
        #expect(snapshot["age_s"] as? Double == 3)
        #expect((event["store"] as? [String: Any])?["pending_rows"] as? Int == 0)
    }

    @Test func unwatchLogoutAndCloseStopTheEvents() async throws {
        let h = HubHarness()
        _ = try await watch(h, 1, "ops", ops: true)
        let unwatched = try await h.request(1, #"{"id":8,"op":"stats.unwatch"}"#, id: 8)
        #expect(unwatched["ok"] as? Bool == true)
        h.hub.publishStats { Self.gauges }
        #expect(statsEvents(h, 1).isEmpty)

        _ = try await h.request(1, #"{"id":9,"op":"stats.watch"}"#, id: 9, completions: 1)
        #expect(h.hub.isStatsWatched)
        h.router.connectionClosed(1)
        #expect(!h.hub.isStatsWatched)
    }

    @Test func theRoleIsCheckedOnEveryWatch() async throws {
        let h = HubHarness()
        let id = try await h.user(1, "carol")
        let refused = try await h.request(1, #"{"id":7,"op":"stats.watch"}"#, id: 7, completions: 1)
        #expect(errorCode(refused) == "forbidden")
        h.store.state.withLock { _ = $0.ops.insert(id) }  // granted while connected
        let granted = try await h.request(1, #"{"id":8,"op":"stats.watch"}"#, id: 8, completions: 1)
        #expect(granted["ok"] as? Bool == true)
        _ = try await h.request(1, #"{"id":9,"op":"stats.unwatch"}"#, id: 9)
        h.store.state.withLock { _ = $0.ops.remove(id) }  // revoked
        let again = try await h.request(1, #"{"id":10,"op":"stats.watch"}"#, id: 10, completions: 1)
        #expect(errorCode(again) == "forbidden")
    }

    @Test func aStoreFailureIsAnInternalErrorNotAGrant() async throws {
        let h = HubHarness()
        let id = try await h.user(1, "dave")
        h.store.state.withLock {
            $0.ops.insert(id)
            $0.failReads = true
        }
        let reply = try await h.request(1, #"{"id":7,"op":"stats.watch"}"#, id: 7, completions: 1)
        #expect(errorCode(reply) == "internal")
        #expect(!h.hub.isStatsWatched)
    }
}
