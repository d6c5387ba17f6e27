// Loop confinement is checked, not only stated: a `LoopConfinement` knows which thread claimed it, and the
// transport's service thread claims the server's confinement while it serves, so every handler call (and every
// `Outbound` call, which asserts it) runs on that thread and a test thread is off the loop. The transport here
// drives a small echo handler of the test's own, which also shows it needs no hub (the app's own confinement:
// CairnSystemTests' AppConfinementTests).
import CairnLoop
import CairnServer
import CairnTestSupport
import Foundation
import Testing

@Suite(.timeLimit(.minutes(5)))
struct LoopConfinementTests {
    @Test func aClaimedConfinementIsOnLoopOnlyOnItsOwnThread() {
        let confinement = LoopConfinement(name: "a test loop")
        #expect(confinement.isOnLoop)  // unclaimed: nothing is checked yet

        let claimed = DispatchSemaphore(value: 0)
        let checked = DispatchSemaphore(value: 0)
        let seen = Seen()
        let owner = Thread {
            confinement.claim()
            claimed.signal()
            checked.wait()
            seen.value = confinement.isOnLoop
            confinement.release()
            claimed.signal()
        }
        owner.start()
        claimed.wait()
        #expect(!confinement.isOnLoop)  // this thread is not the owner
        checked.signal()
        claimed.wait()
        #expect(seen.value == true)  // the owner is on its loop
        #expect(confinement.isOnLoop)  // released: unchecked again
    }
}

@Suite(.timeLimit(.minutes(5)))
struct ServerConfinementTests {
    @Test func theServiceThreadClaimsTheConfinementWhileTheServerRuns() throws {
        let loop = ServiceLoop()
        let handler = EchoHandler(confinement: loop.confinement)
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.lwsLogVerbosity = 0
        let server = TransportServer(
            configuration: configuration, loop: loop, handler: handler,
            observer: CountingObserver())
        #expect(server.confinement === loop.confinement)
        let port = try server.start()
        #expect(!server.confinement.isOnLoop)  // claimed by the service thread, not by this one

        let client = try WebSocketClient(port: port, timeout: 10)
        try client.sendText("hello")
        #expect(try client.receive(timeout: 10) == .text("hello"))
        #expect(!server.confinement.isOnLoop)
        client.close()

        server.requestShutdown()
        server.waitUntilStopped()
        #expect(server.confinement.isOnLoop)  // released when the loop stopped
        // Read after the service thread is gone: every call the handler got came on the claiming thread.
        #expect(handler.calls > 0)
        #expect(handler.callsOffLoop == 0)
    }
}

/// What the owning thread saw; handed over through the semaphores, which order the write before the read.
private final class Seen: @unchecked Sendable {
    var value: Bool?
}

/// Echoes every text message back to its connection and counts calls made off the confined thread.
final class EchoHandler: ConnectionHandler {
    let confinement: LoopConfinement
    var outbound: (any Outbound)? {
        didSet { note() }
    }
    private(set) var calls = 0
    private(set) var callsOffLoop = 0
    private var open = 0

    init(confinement: LoopConfinement) { self.confinement = confinement }

    private func note() {
        calls += 1
        if !confinement.isOnLoop { callsOffLoop += 1 }
    }

    func connectionOpened(_ id: ConnectionID, token: String?, peer: String?) {
        note()
        open += 1
    }
    func received(_ id: ConnectionID, frame: UnsafeRawBufferPointer) {
        note()
        outbound?.send(id, frame)
    }
    func receivedBinary(_ id: ConnectionID) { note() }
    func connectionClosed(_ id: ConnectionID) {
        note()
        open -= 1
    }
    func tick() { note() }
    func beginShutdown(_ done: @escaping () -> Void) {
        note()
        done()
    }
    var operationsInFlight: Int { 0 }
    var health: HandlerHealth { HandlerHealth(connections: open, authenticated: 0, watching: 0, positions: 0) }
}

/// Counts what the transport reports; the figures themselves are the hub's tests' business.
final class CountingObserver: TransportObserver {
    var events = 0
    func connectionOpened() { events += 1 }
    func messageReceived(bytes: Int) { events += 1 }
    func frameSent(bytes: Int) { events += 1 }
    func fanoutLatency(nanoseconds: Int64) { events += 1 }
    func loopLag(nanoseconds: Int64) { events += 1 }
}
