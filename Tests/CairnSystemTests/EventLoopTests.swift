// The service thread's two event loops over real sockets: the default libev loop (lws loads its libev plugin and
// runs on our epoll loop) and the poll() fallback each serve WebSocket and HTTP, deliver friends' moves, run the
// one-second sweep while no socket is active, and shut down cleanly with clients still connected.
import CairnApp
import CairnCore
import CairnServer
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite struct EventLoopTests {
        @Test func defaultLoopIsLibevThroughThePlugin() throws {
            #expect(ServerConfiguration().eventLoop == .libev)
            let hub = try RunningHub()
            defer { hub.removeData() }
            // lws loads the plugin only when asked to run on libev, and creation fails without it.
            // /proc files report size 0, so read until the end rather than by size.
            let handle = try #require(FileHandle(forReadingAtPath: "/proc/self/maps"))
            defer { try? handle.close() }
            let maps = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
            #expect(maps.contains("libwebsockets-evlib_ev"))
            #expect(maps.contains("libev.so"))
        }

        @Test(arguments: EventLoopBackend.allCases)
        func servesSocketsTimersAndShutdown(_ backend: EventLoopBackend) throws {
            let hub = try RunningHub {
                $0.server.eventLoop = backend
                $0.hub.authTimeoutMs = 1000
                $0.server.shutdownGraceSeconds = 1
            }
            defer { hub.removeData() }
            #expect(try hub.health()["status"] as? String == "ok")
            let alice = try hub.member("alice")
            let bob = try hub.member("bob")
            try hub.befriend(alice, bob)
            _ = try bob.0.requestOK("friends.watch")
            try alice.0.send(["op": "pos", "lat": 48.8566, "lon": 2.3522])
            #expect(try bob.0.nextEvent("pos")["user"] as? Int == alice.1)
            // The sweep timer fires on an otherwise idle loop: a client that never authenticates is closed by it
            // once its auth deadline passes, with no socket traffic in between to wake the loop.
            let idle = try hub.client()
            #expect(try idle.expectClose(timeout: 10).code == 4508)
            // Shutdown with clients connected: they get 1001 and the loop stops.
            try hub.stop()
            #expect(try alice.0.expectClose(timeout: 10).code == 1001)
        }
    }
}
