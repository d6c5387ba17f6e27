// Presence: a user is online while at least one of their connections is authenticated. The first connection
// opening and the last one closing (including one dropped for not answering pings) are pushed to every online
// friend as `{"ev":"presence","user":id,"online":bool}`.
import CairnWire

extension Hub {
    /// True when `user` has an authenticated connection.
    func isOnline(_ user: Int64) -> Bool { !(sessions[user]?.isEmpty ?? true) }

    func announcePresence(of user: Int64, online: Bool) {
        let friends = graph.friends(of: user)
        guard !friends.isEmpty else { return }
        writer.reset()
        Envelope.event("presence", into: &writer) { w in
            w.key("user"); w.int(user)
            w.key("online"); w.bool(online)
        }
        for friend in friends {
            guard let connections = sessions[friend] else { continue }
            for connection in connections { flush(to: connection) }
        }
    }
}
