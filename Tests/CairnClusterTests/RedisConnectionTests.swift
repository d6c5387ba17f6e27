// One hiredis connection against a real redis-server: dropped while it is still connecting (the link drops both of
// its connections when one is lost, whatever state the other is in), it connects again after its back-off. hiredis
// calls the disconnect callback only for a connected context, so such a drop once left the freed context in place:
// the connection never came back, and the next drop or stop freed it a second time (a node cut off behind a proxy
// that accepts and closes crashed this way in the partition drill).
import CairnTestSupport
import Foundation
import Testing

@testable import CairnCluster

@Suite(
    .serialized, .enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed"), .timeLimit(.minutes(5)))
struct RedisConnectionTests {
    @Test func aConnectionDroppedWhileStillConnectingConnectsAgainAndStopsCleanly() throws {
        let redis = try RedisServerProcess()
        let loop = TestLoop()
        let connection = RedisConnection(
            name: "commands", endpoint: try RedisEndpoint(url: redis.url), loop: loop.loop,
            backoff: ReconnectBackoff(base: 0.05, cap: 0.4), random: { 0.5 })
        var ups = 0
        connection.onUp = { ups += 1 }
        connection.start()
        // hiredis reports the connection only once the loop has turned: it is still connecting.
        #expect(!connection.isUp)
        connection.drop(because: "the other connection was lost")
        #expect(loop.spin(timeout: 5) { connection.isUp }, "dropped while connecting, it never connected again")
        #expect(ups == 1)
        var reply: Result<RedisValue, RedisError>?
        connection.send([Array("PING".utf8)]) { reply = $0 }
        #expect(loop.spin(timeout: 5) { reply != nil })
        #expect(reply == .success(.bytes(Array("PONG".utf8))))
        connection.stop()
    }
}
