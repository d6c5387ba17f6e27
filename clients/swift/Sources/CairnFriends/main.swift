// cairn-friends: the example program of CairnKit. It signs in to a hub, watches friends and prints their moves as
// they happen, and the connection's states, until interrupted. It reconnects by itself if the hub restarts.
//
//     swift run cairn-friends ws://127.0.0.1:7681/ws alice
//
// The password is read from CAIRN_PASSWORD (or the third argument).
import CairnKit
import Foundation

/// Prints a line at once, also into a pipe or a file (`print` would buffer it there).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let arguments = CommandLine.arguments
guard arguments.count >= 3, let url = URL(string: arguments[1]) else {
    say("usage: cairn-friends WS_URL USERNAME [PASSWORD]   (or the password in CAIRN_PASSWORD)")
    exit(2)
}
let username = arguments[2]
guard let password = arguments.count > 3 ? arguments[3] : ProcessInfo.processInfo.environment["CAIRN_PASSWORD"] else {
    say("no password: give it as the third argument or in CAIRN_PASSWORD")
    exit(2)
}

let client = CairnClient(url: url)
let events = client.events  // taken before the watch: no move between its reply and the loop below is missed
do {
    let session = try await client.login(username: username, password: password)
    say("signed in as \(session.user.name) (@\(session.user.username), id \(session.user.id))")
    let names = Dictionary(uniqueKeysWithValues: try await client.friends().map { ($0.id, $0.name) })
    func label(_ user: Int64) -> String { names[user] ?? "user \(user)" }
    for position in try await client.watchFriends() {
        say("\(label(position.user)) is at \(position.latitude), \(position.longitude)")
    }
    Task {
        for await state in client.states { say("[\(state)]") }
    }
    for await event in events {
        switch event {
        case .position(let p):
            let accuracy = p.accuracy.map { " ±\(Int($0)) m" } ?? ""
            say("\(label(p.user)) moved to \(p.latitude), \(p.longitude)\(accuracy)")
        case .positionHidden(let user):
            say("\(label(user)) is hidden")
        case .presence(let user, let online):
            say("\(label(user)) is \(online ? "online" : "offline")")
        case .friendPositions(let positions):
            say("watching again: \(positions.count) friends placed")
        case .closed(let info):
            say("connection closed (\(info.code) \(info.reason))\(info.willReconnect ? ", reconnecting" : "")")
        case .signedOut(let error):
            say("signed out: \(error?.message ?? "token refused")")
            exit(1)
        default:
            break
        }
    }
} catch let error as CairnError {
    say("error: \(error.code): \(error.message)")
    exit(1)
}
