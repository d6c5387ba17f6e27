// What the ingest integration tests (OsmAnd, OwnTracks, Overland) set up over the real WebSocket ops before a tracker
// reports over real HTTP: buckets, items, and active trackers with their keys.
import CairnTestSupport
import Foundation
import Testing

extension RunningHub {
    /// A new bucket of `owner`'s; returns its id.
    func bucket(_ owner: WebSocketClient, _ name: String) throws -> Int {
        let reply = try owner.requestOK("bucket.create", ["name": name])
        return try #require((reply["bucket"] as? [String: Any])?["id"] as? Int)
    }

    /// A new item in `bucket`; returns its id.
    func item(_ owner: WebSocketClient, bucket: Int, _ name: String) throws -> Int {
        let reply = try owner.requestOK("item.create", ["bucket": bucket, "name": name])
        return try #require((reply["item"] as? [String: Any])?["id"] as? Int)
    }

    /// Pairs `device` to `item` and activates it; returns the tracker id and its key.
    func activeTracker(_ owner: WebSocketClient, item: Int, device: String) throws -> (id: Int, key: String) {
        let pair = try owner.requestOK("tracker.pair", ["item": item, "device": device])
        let tracker = try #require(pair["tracker"] as? [String: Any])
        let id = try #require(tracker["id"] as? Int)
        _ = try owner.requestOK("tracker.activate", ["tracker": id])
        return (id, try #require(tracker["key"] as? String))
    }
}
