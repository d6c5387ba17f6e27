// What the layer above the transport can do to a connection: queue JSON for it, keep a latest-wins slot per key
// (positions: a slow reader costs one pending object per friend, not a queue), withdraw a slot, close it. The
// transport implements it; the protocol layer is its only caller. Loop thread only.

/// Where encoded replies, events and closes go. Called on the loop thread only.
public protocol Outbound: AnyObject {
    /// Queues one complete JSON object for the connection; the transport batches objects into frames.
    func send(_ connection: ConnectionID, _ json: UnsafeRawBufferPointer)
    /// Queues a JSON object under `key`, replacing any object still pending under the same key (latest wins).
    /// Keyed objects go out after the plain ones, in the same frame. `json` is shared, not copied, between
    /// connections (arrays are copy-on-write), so one encoding can serve every watcher.
    func sendLatest(_ connection: ConnectionID, key: Int64, _ json: [UInt8])
    /// Drops whatever is pending under `key` (e.g. a friend was removed: their last position must not go out).
    func dropLatest(_ connection: ConnectionID, key: Int64)
    /// Closes the connection with a WebSocket close code (see the wire's `CloseCode`) and a short reason.
    func close(_ connection: ConnectionID, code: UInt16, reason: String)
}
