// Starts a real Cairn (store + hub + libwebsockets transport, exactly as `cairn serve` assembles it) in this
// process on an ephemeral loopback port with a fresh data directory; tests then talk to it with a real WebSocket
// client. scrypt runs at a low cost here so the suite stays quick; the parameters are stored per record anyway.
import CairnApp
import CairnCore
import CairnCrypto
import CairnServer
import CairnTestSupport
import Foundation
import Testing

/// All server integration tests: serialized, as each starts a server and the machine has two cores.
@Suite(.serialized, .timeLimit(.minutes(5))) enum ServerIntegration {}

final class RunningHub {
    let app: CairnApp
    let port: Int
    let dataDirectory: String
    private var stopped = false

    init(
        dataDirectory: String? = nil, clock: any Clock = SystemClock(),
        configure: (inout AppConfiguration) -> Void = { _ in }
    ) throws {
        var config = AppConfiguration()
        config.server.host = "127.0.0.1"
        config.server.port = 0
        config.server.lwsLogVerbosity = 0
        config.scrypt = ScryptParameters(n: 1024, r: 8, p: 1)
        config.hashWorkers = 2
        config.hub.signupsPerAddress = 0  // every test client comes from 127.0.0.1
        self.dataDirectory = dataDirectory ?? NSTemporaryDirectory() + "cairn-it-\(UUID().uuidString)"
        config.dataDirectory = self.dataDirectory
        configure(&config)
        app = try CairnApp(configuration: config, clock: clock)
        port = try app.start()
    }

    func client(
        path: String = "/ws", subprotocol: String? = "cairn.v1", headers: [String: String] = [:],
        receiveBufferSize: Int? = nil, sendBufferSize: Int? = nil
    ) throws -> WebSocketClient {
        try WebSocketClient(
            port: port, path: path, subprotocol: subprotocol, headers: headers, timeout: 10,
            receiveBufferSize: receiveBufferSize, sendBufferSize: sendBufferSize)
    }

    /// Registers `username` on a new client and returns the client and the user id.
    func member(_ username: String, receiveBufferSize: Int? = nil) throws -> (WebSocketClient, Int) {
        let c = try client(receiveBufferSize: receiveBufferSize)
        let reply = try c.requestOK("register", ["username": username, "password": "password1"])
        return (c, try #require((reply["user"] as? [String: Any])?["id"] as? Int))
    }

    /// Makes two members friends through the real ops.
    func befriend(_ a: (WebSocketClient, Int), _ b: (WebSocketClient, Int)) throws {
        _ = try a.0.requestOK("friend.request", ["user": b.1])
        _ = try b.0.requestOK("friend.accept", ["user": a.1])
        _ = try a.0.nextEvent("friend.accepted")
        _ = try b.0.nextEvent("friend.request")
    }

    /// `/healthz` as JSON.
    func health() throws -> [String: Any] {
        try HTTPClient.get(port: port, path: "/healthz").jsonObject()
    }

    /// A connected client that has registered `username`; returns the client and the token.
    func registered(_ username: String, password: String = "password1") throws -> (WebSocketClient, String) {
        let c = try client()
        let reply = try c.requestOK("register", ["username": username, "password": password])
        return (c, try #require(reply["token"] as? String))
    }

    func stop() throws {
        guard !stopped else { return }
        stopped = true
        try app.stop()
    }

    func removeData() { try? FileManager.default.removeItem(atPath: dataDirectory) }

    deinit {
        try? stop()
    }
}

func errorCode(_ reply: [String: Any]) -> String? { (reply["error"] as? [String: Any])?["code"] as? String }
func errorMessage(_ reply: [String: Any]) -> String {
    ((reply["error"] as? [String: Any])?["message"] as? String) ?? ""
}

/// A `cairn serve` subprocess on a data directory (for kill -9 tests), with the port it listens on.
func startServeProcess(data: String) throws -> (TestServerProcess, Int) {
    let server = try TestServerProcess(arguments: [
        "serve", "--port", "0", "--data", data, "--scrypt-cost", "10",
        "--signups-per-address", "0",
    ])
    return (server, try server.waitForListeningPort(timeout: 60))
}

/// Registers `name` on a new client of the hub at `port`; returns the client and the user id.
func registerMember(port: Int, _ name: String) throws -> (WebSocketClient, Int) {
    let c = try WebSocketClient(port: port, timeout: 10)
    let reply = try c.requestOK("register", ["username": name, "password": "password1"])
    return (c, try #require((reply["user"] as? [String: Any])?["id"] as? Int))
}
