import CairnHubTestSupport
import CairnLoop
import CairnProtocol
import Testing

// Helpers for driving the live-map ops through the hub from the test thread.

extension HubHarness {
    /// Opens connection `connection`, registers `username` on it and returns the user id.
    func user(_ connection: ConnectionID, _ username: String) async throws -> Int64 {
        router.connectionOpened(connection, token: nil)
        try await send(
            connection, #"{"id":1,"op":"register","username":"\#(username)","password":"password1"}"#, completions: 1)
        let reply = outbound.take(connection).first { $0["id"] as? Int == 1 }
        let user = try #require(reply?["user"] as? [String: Any])
        return Int64(try #require(user["id"] as? Int))
    }

    /// Makes the users on two connections friends (request, then accept).
    func befriend(_ a: ConnectionID, _ aID: Int64, _ b: ConnectionID, _ bID: Int64) async throws {
        try await send(a, #"{"id":90,"op":"friend.request","user":\#(bID)}"#, completions: 1)
        try await send(b, #"{"id":91,"op":"friend.accept","user":\#(aID)}"#, completions: 1)
        _ = outbound.take(a)
        _ = outbound.take(b)
        _ = outbound.takeLatest(a)
        _ = outbound.takeLatest(b)
    }

    /// Sends a frame and returns the reply with `id`.
    func request(_ connection: ConnectionID, _ text: String, id: Int = 1, completions: Int = 0) async throws -> [String:
        Any]
    {
        try await send(connection, text, completions: completions)
        var replies = outbound.take(connection)
        // Another job (a tick's batched write, say) may have been among the completions run: keep playing the loop
        // until the reply comes (up to 10 s), rather than depend on the order jobs arrive in.
        var waited = 0
        while !replies.contains(where: { $0["id"] as? Int == id }) && waited < 10_000 {
            if scheduler.pending > 0 {
                try await scheduler.run()
            } else {
                try await Task.sleep(nanoseconds: 1_000_000)
                waited += 1
            }
            replies += outbound.take(connection)
        }
        return try #require(replies.first { $0["id"] as? Int == id }, "no reply \(id) in \(replies)")
    }

    /// Reports a position synchronously (pos needs no slow work).
    func move(_ connection: ConnectionID, lat: Double, lon: Double, ts: Int64? = nil) {
        let tsField = ts.map { ",\"ts\":\($0)" } ?? ""
        router.receive(connection, #"{"op":"pos","lat":\#(lat),"lon":\#(lon),"acc":5\#(tsField)}"#)
    }

    /// Reports the same fix twice: relics trust a session's first fix only once a second one confirms it.
    func stand(_ connection: ConnectionID, lat: Double, lon: Double) {
        move(connection, lat: lat, lon: lon)
        move(connection, lat: lat, lon: lon)
    }
}
