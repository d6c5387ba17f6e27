// The transport's figures leave through a sink it owns, so the transport knows what it measures but not who keeps
// the counts: connections accepted, WebSocket messages and bytes in and out, how long a position waited between the
// frame that carried it and the write that hands it to a watcher, and how late the loop runs its timer and jobs.
// The composition plugs in whatever records them (today the hub's telemetry). Every call is made on the loop
// thread, from the hot path, so an implementation should do little more than add.

/// Receives the transport's measurements as they happen. Called on the loop thread only.
public protocol TransportObserver: AnyObject {
    /// A WebSocket connection was accepted.
    func connectionOpened()
    /// A complete WebSocket message of `bytes` bytes arrived.
    func messageReceived(bytes: Int)
    /// One frame of `bytes` bytes was handed to the socket.
    func frameSent(bytes: Int)
    /// One position reached a watcher's write, `nanoseconds` after the frame that carried it was received.
    func fanoutLatency(nanoseconds: Int64)
    /// The loop ran its timer or a queued job `nanoseconds` later than asked.
    func loopLag(nanoseconds: Int64)
}
