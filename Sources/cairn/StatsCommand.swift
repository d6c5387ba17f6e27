// `cairn stats`: the live stats channel in a terminal, like `top`. Connects as an operator (a token, or a username
// and password), sends `stats.watch` and redraws a table from each `stats` event (one a second). Ctrl-C closes the
// connection normally and exits 0; the server closing it ends the command too. `--once` prints one reading and
// exits, as a table or (`--json`) as the event's JSON line, for scripts and tests.
import ArgumentParser
import CairnClient
import Foundation

struct StatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Show the hub's live stats channel (needs an account with the ops role).",
        discussion: "Grant the role with `cairn user grant-ops <username>`. Exits 0 on Ctrl-C or after --once, 1 when "
            + "the server refuses or closes the connection.")

    @Option(help: "The hub's WebSocket URL. [env: CAIRN_URL] (default: ws://127.0.0.1:7681/ws)")
    var url: String?

    // Tokens are base64url and may start with '-': take the next argument whatever it looks like.
    @Option(parsing: .unconditional, help: "A session token of an ops account. [env: CAIRN_TOKEN]")
    var token: String?

    @Option(help: "Log in with this username instead of a token.")
    var username: String?

    @Option(parsing: .unconditional, help: "Password for --username. [env: CAIRN_PASSWORD]")
    var password: String?

    @Flag(help: "Print one reading and exit.")
    var once = false

    @Flag(help: "Print readings as the event's JSON line instead of a table.")
    var json = false

    // Checked here rather than in `run`, so a mistake prints this command's usage (ArgumentParser shows the root
    // command's usage for a ValidationError thrown from `run`).
    func validate() throws {
        if username != nil && token != nil { throw ValidationError("use either --token or --username, not both") }
        let env = Environment().values
        if username != nil, password == nil, env["CAIRN_PASSWORD"] == nil {
            throw ValidationError("--username needs --password (or CAIRN_PASSWORD)")
        }
        if username == nil, token == nil, env["CAIRN_TOKEN"].map({ $0.isEmpty }) ?? true {
            throw ValidationError("give --token (or CAIRN_TOKEN) or --username and --password")
        }
    }

    func run() throws {
        let env = Environment()
        let endpoint = try WebSocketEndpoint(url: env.resolve(url, "CAIRN_URL", default: "ws://127.0.0.1:7681/ws"))
        let token = self.token ?? env.values["CAIRN_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        var login: (String, String)?
        if let username {
            guard let password = password ?? env.values["CAIRN_PASSWORD"] else {
                throw CommandFailure("--username needs --password (or CAIRN_PASSWORD)")
            }
            login = (username, password)
        } else if token == nil {
            throw CommandFailure("give --token (or CAIRN_TOKEN) or --username and --password")
        }

        let client = LwsWebSocketClient(
            endpoint: endpoint,
            headers: token.map { [("authorization", "Bearer \($0)")] } ?? [])
        let signals = Self.blockShutdownSignals()
        let waiter = Thread {
            var set = signals
            var received: Int32 = 0
            if sigwait(&set, &received) == 0 { client.requestStop() }
        }
        waiter.name = "cairn-stats-signals"
        waiter.start()

        let live = !once && !json && isatty(STDOUT_FILENO) == 1
        var refusal: String?
        var readings = 0
        let ending = try client.run { event in
            switch event {
            case .opened:
                if let (name, password) = login {
                    client.send(Self.line(["id": 1, "op": "login", "username": name, "password": password]))
                }
                client.send(Self.line(["id": 2, "op": "stats.watch"]))
            case .message(let text):
                for line in text.split(separator: "\n") {
                    guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                        continue
                    }
                    if object["ok"] as? Bool == false {
                        let error = object["error"] as? [String: Any]
                        refusal = "\(error?["code"] as? String ?? "error"): \(error?["message"] as? String ?? "")"
                        client.close()
                        return
                    }
                    guard object["ev"] as? String == "stats" else { continue }
                    readings += 1
                    if json {
                        print(line)
                    } else {
                        if live { print("\u{1B}[H\u{1B}[2J", terminator: "") }
                        print(StatsView.render(object, endpoint: endpoint))
                    }
                    fflush(nil)  // stdout may be a pipe
                    if once { client.close() }
                }
            }
        }
        if let refusal { throw CommandFailure("the hub refused: \(refusal)") }
        if !ending.byClient {
            let code = ending.code.map { " (\($0)\(ending.reason.isEmpty ? "" : ": \(ending.reason)"))" } ?? ""
            throw CommandFailure("the hub closed the connection\(code)")
        }
        if readings == 0 && once { throw CommandFailure("no reading arrived") }
    }

    /// Blocks SIGINT and SIGTERM for every thread, so the waiter takes them with sigwait (as `serve` does).
    static func blockShutdownSignals() -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &set, nil)
        return set
    }

    static func line(_ object: [String: Any]) -> String {
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }
}
