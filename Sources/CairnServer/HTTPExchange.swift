// One request to a mounted HTTP service, from its headers to the last byte of its reply, as the service thread
// tracks it. Keyed by the wsi's address plus a serial number: a reply that comes back after its client hung up
// (and the address was reused) finds a different serial and is dropped.
import CairnLoop

final class HTTPExchange {
    enum Phase {
        /// The service is deciding from the headers whether the body may be read; the socket is not read meanwhile.
        case admitting
        /// Body bytes are arriving.
        case receiving
        /// Refused early (413, 503, ...): the rest of the body is read and dropped so the client sees the answer
        /// rather than a reset, up to a bound, and then the connection closes.
        case discarding
        /// The service is working on it.
        case handling
        /// The reply is being written.
        case replying
    }

    let serial: UInt64
    let wsi: OpaquePointer
    let mount: HTTPMount
    var request: HTTPRequest
    var phase = Phase.receiving
    /// Bytes counted against the server-wide budget for buffered bodies while this exchange holds them.
    var reserved = 0
    var discarded = 0
    var reply: HTTPReply?
    var headerSent = false
    var sent = 0
    /// The client asked for `100 Continue` before sending its body.
    var expectsContinue = false
    /// The whole (small) body arrived while the request was being admitted.
    var bodyComplete = false
    /// When the body started to be awaited (monotonic ns); the body must be complete within the server's bound.
    var bodySince: UInt64 = 0

    init(serial: UInt64, wsi: OpaquePointer, mount: HTTPMount, request: HTTPRequest) {
        self.serial = serial
        self.wsi = wsi
        self.mount = mount
        self.request = request
    }
}
