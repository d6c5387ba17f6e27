// Raw operational counters, collected where things happen and read once a second (the stats channel) or when
// scraped (/metrics). The transport counts connections, WebSocket messages and bytes, and times each position
// from the receipt of the frame that carried it to the write that hands it to a watcher, and how late the loop
// runs its timer and jobs; the hub counts positions. Everything here is plain integers and two fixed histograms
// owned by the event-loop thread, so recording costs a few instructions and no lock. Nothing is assembled until
// someone asks; the stats channel (`StatsChannel`) turns these into a `StatsSnapshot`.

/// Receives each latency sample as it is measured (e.g. a Prometheus exporter that keeps exact buckets).
/// Called on the event-loop thread.
public protocol TelemetrySink: AnyObject {
    /// One position written to one watcher, `nanoseconds` after the frame that carried it was received.
    func recordFanoutLatency(nanoseconds: Int64)
    /// The loop ran a timer or a queued job `nanoseconds` later than asked.
    func recordLoopLag(nanoseconds: Int64)
}

/// Counters since the process started, plus latency samples since the last stats tick. Event-loop thread only.
public final class Telemetry {
    /// WebSocket connections accepted since start.
    public var connectionsOpened: UInt64 = 0
    /// Complete WebSocket messages received.
    public var messagesReceived: UInt64 = 0
    /// Payload bytes of the messages received.
    public var bytesReceived: UInt64 = 0
    /// WebSocket messages (frames) written.
    public var messagesSent: UInt64 = 0
    /// Payload bytes written.
    public var bytesSent: UInt64 = 0
    /// Positions accepted as a user's new latest fix.
    public var positionsAccepted: UInt64 = 0
    /// Positions written to watchers (each one a fan-out latency sample).
    public var deliveries: UInt64 = 0
    /// Fan-out latencies since the last stats tick.
    public internal(set) var fanoutWindow = LatencyHistogram()
    /// Event-loop lag samples since the last stats tick.
    public internal(set) var loopLagWindow = LatencyHistogram()
    /// Also receives every sample, if set (before the loop starts).
    public var sink: (any TelemetrySink)?

    /// Creates zeroed counters.
    public init() {}

    /// Records one position delivered to one watcher.
    @inline(__always)
    public func recordFanoutLatency(nanoseconds: Int64) {
        deliveries &+= 1
        fanoutWindow.record(nanoseconds: nanoseconds)
        sink?.recordFanoutLatency(nanoseconds: nanoseconds)
    }

    /// Records how late the loop ran something it had been asked to run.
    public func recordLoopLag(nanoseconds: Int64) {
        loopLagWindow.record(nanoseconds: nanoseconds)
        sink?.recordLoopLag(nanoseconds: nanoseconds)
    }

    /// Starts new latency windows (once a second).
    package func resetWindows() {
        fanoutWindow.reset()
        loopLagWindow.reset()
    }
}
