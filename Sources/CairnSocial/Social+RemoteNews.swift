// Friend events for changes committed through another node. The node that commits a request, an accept or a
// removal tells the target's connections there; a target connected to another node hears it from that node, once
// the change arrives on the control channel and is applied here (newer than what this node held, and not already
// so in memory). The event carries the user who acted (id, username, name): it is read from the store off the loop,
// and only when a target has a connection on this node, so a node where nobody concerned is connected reads
// nothing. By the time the read returns, the change must still hold (a request still pending, a friendship still
// on or still off); otherwise the news is stale and dropped. A resync (`Social+Resync`) never comes here: it makes up
// state this node missed, it is not news. Loop thread only.
import CairnCore
import CairnSessions
import Logging

extension Social {
    /// What a change applied from another node tells the user it concerns.
    enum RemoteNews {
        /// `by` asked `to` to be friends: `friend.request`.
        case request
        /// `by` accepted `to` (or their requests crossed): `friend.accepted`.
        case accepted
        /// `by` ended the friendship with `to`: `friend.removed`.
        case removed
    }

    /// Tells each `to` connected here that `by` did `news`, once the users who acted are read from the store.
    func tellRemoteNews(_ news: RemoteNews, _ pairs: [(by: Int64, to: Int64)]) {
        guard events != nil else { return }
        let heard = pairs.filter { sessions.isOnline($0.to) }
        guard !heard.isEmpty else { return }
        let store = self.store
        let ids = Array(Set(heard.map(\.by)))
        work.background(
            { try await store.users(ids: ids) },
            then: { result in
                guard case .success(let users) = result else {
                    if case .failure(let error) = result { hubLogger.error("storage failure: \(error)") }
                    return
                }
                let byID = Dictionary(users.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
                for (by, to) in heard where self.stillHolds(news, by: by, to: to) {
                    guard let user = byID[by] else { continue }
                    let event: HubEvent =
                        switch news {
                        case .request: .friendRequest(from: user)
                        case .accepted: .friendAccepted(by: user)
                        case .removed: .friendRemoved(by: user)
                        }
                    self.events?.publish(event, toUsers: [to], excluding: nil)
                }
            })
    }

    /// True while memory still says what `news` announces.
    private func stillHolds(_ news: RemoteNews, by: Int64, to: Int64) -> Bool {
        switch news {
        case .request: graph.hasRequest(from: by, to: to)
        case .accepted: graph.areFriends(by, to)
        case .removed: !graph.areFriends(by, to)
        }
    }
}
