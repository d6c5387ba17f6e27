// The two ports through which the hub meets the outside world. The transport implements `Outbound` (bytes and
// closes towards one connection) and `LoopScheduler` (run a job on the event-loop thread); the hub never sees a
// socket, and tests drive it with plain in-memory implementations.
import CairnWire

/// Identifies one client connection for the lifetime of the process.
public typealias ConnectionID = UInt64

/// Where the hub sends what it has to say to a connection. Called on the loop thread only.
public protocol Outbound: AnyObject {
    /// Queues one complete JSON object for the connection; the transport batches objects into frames.
    func send(_ connection: ConnectionID, _ json: UnsafeRawBufferPointer)
    /// Queues a JSON object under `key`, replacing any object still pending under the same key (latest wins).
    /// Keyed objects go out after the plain ones, in the same frame. `json` is shared, not copied, between
    /// connections (arrays are copy-on-write), so one encoding can serve every watcher.
    func sendLatest(_ connection: ConnectionID, key: Int64, _ json: [UInt8])
    /// Drops whatever is pending under `key` (e.g. a friend was removed: their last position must not go out).
    func dropLatest(_ connection: ConnectionID, key: Int64)
    /// Closes the connection with a WebSocket close code and a short reason.
    func close(_ connection: ConnectionID, code: CloseCode, reason: String)
}

/// Runs jobs on the thread that owns live state. `execute` may be called from any thread.
public protocol LoopScheduler: Sendable {
    /// Queues `job` to run on the loop thread.
    func execute(_ job: @escaping @Sendable () -> Void)
}
