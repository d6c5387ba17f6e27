// The running app hands out the confinement its transport's service thread claims: off the loop for a test thread
// while it serves, released once it stops. The claim itself: CairnServerTests' LoopConfinementTests.
import CairnApp
import CairnLoop
import Testing

extension ServerIntegration {
    @Suite struct AppConfinementTests {
        @Test func theAppHandsOutTheClaimedConfinement() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            #expect(!hub.app.confinement.isOnLoop)
            try hub.stop()
            #expect(hub.app.confinement.isOnLoop)
        }
    }
}
