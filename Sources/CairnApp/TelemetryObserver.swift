// Where the transport's measurements land: the hub's `Telemetry`, which the stats channel and /metrics read. The
// transport reports through its own `TransportObserver` protocol and knows nothing of `Telemetry`; this adapter
// does the counting it used to do itself, unchanged. Loop thread only, on the hot path: plain additions.
import CairnCore
import CairnServer

/// Records the transport's figures into a `Telemetry`.
final class TelemetryObserver: TransportObserver {
    private let telemetry: Telemetry

    init(_ telemetry: Telemetry) { self.telemetry = telemetry }

    func connectionOpened() { telemetry.connectionsOpened &+= 1 }

    func messageReceived(bytes: Int) {
        telemetry.messagesReceived &+= 1
        telemetry.bytesReceived &+= UInt64(bytes)
    }

    func frameSent(bytes: Int) {
        telemetry.messagesSent &+= 1
        telemetry.bytesSent &+= UInt64(bytes)
    }

    func fanoutLatency(nanoseconds: Int64) { telemetry.recordFanoutLatency(nanoseconds: nanoseconds) }

    func loopLag(nanoseconds: Int64) { telemetry.recordLoopLag(nanoseconds: nanoseconds) }
}
