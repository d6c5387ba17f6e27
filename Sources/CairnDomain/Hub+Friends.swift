// Friends (seeds 000 and 001): search, requests, accepting, declining, removing, listing. Every change is
// committed to the store before the reply and before the in-memory graph changes, except removal: a removed
// friend must stop receiving positions at once, so the graph changes first and is put back if the commit fails.
import CairnWire
import Logging

let storageLogger = Logger(label: "cairn.hub.storage")

extension Hub {
    func searchUsers(id: Int64?, from client: Client, user: User) throws(WireError) {
        let query = (try message.requireString("q")).trimmingWhitespace()
        guard !query.isEmpty else { throw .badRequest("field 'q' must not be empty") }
        guard query.count <= 64 else { throw .badRequest("field 'q' must be at most 64 characters") }
        let social = self.social, limit = configuration.searchLimit, me = user.id
        start(client, id: id, op: "user.search", { () async throws(WireError) -> [User] in
            try await Self.storage { try await social.searchUsers(prefix: query, excluding: me, limit: limit) }
        }, then: { client, users in
            self.replyOK(client, id: id) { w in
                w.key("users"); w.beginArray()
                for u in users { u.write(to: &w) }
                w.endArray()
            }
        })
    }

    func requestFriend(id: Int64?, from client: Client, user: User) throws(WireError) {
        let target = try friendID()
        guard target != user.id else { throw .badRequest("you cannot send a friend request to yourself") }
        guard !user.isGuest else { throw WireError(.forbidden, "guests cannot have friends; register an account") }
        if graph.areFriends(user.id, target) {
            replyOK(client, id: id) { w in w.key("status"); w.string("friends") }
            return
        }
        if graph.hasRequest(from: target, to: user.id) {
            // They asked first: asking back is accepting.
            try acceptFriend(id: id, from: client, user: user, target: target, op: "friend.request")
            return
        }
        if graph.hasRequest(from: user.id, to: target) {
            replyOK(client, id: id) { w in w.key("status"); w.string("pending") }
            return
        }
        let social = self.social, me = user.id, now = clock.now()
        start(client, id: id, op: "friend.request", { () async throws(WireError) -> User in
            guard let other = try await Self.storage({ try await social.user(id: target) }) else {
                throw WireError(.notFound, "no user with id \(target)")
            }
            guard !other.isGuest else { throw WireError(.forbidden, "guests cannot be befriended") }
            try await Self.storage { try await social.addFriendRequest(from: me, to: target, at: now) }
            return other
        }, then: { client, other in
            self.graph.addRequest(from: me, to: target)
            if self.graph.hasRequest(from: target, to: me) {
                // They asked at the same moment (both requests were committing): asking back is accepting.
                self.replyOK(client, id: id) { w in w.key("status"); w.string("pending") }
                self.befriendCrossedRequests(user, other, at: now)
                return
            }
            self.push(to: target, "friend.request") { w in w.key("user"); user.write(to: &w) }
            self.replyOK(client, id: id) { w in w.key("status"); w.string("pending") }
        })
    }

    /// Two requests crossed: commit the friendship, then tell both sides as if one had accepted.
    private func befriendCrossedRequests(_ a: User, _ b: User, at now: Int64) {
        let social = self.social
        background({ try await social.addFriendship(a.id, b.id, at: now) }, then: { result in
            guard case .success = result, !self.graph.areFriends(a.id, b.id) else { return }
            self.graph.addFriendship(a.id, b.id)
            self.push(to: a.id, "friend.accepted") { w in w.key("user"); b.write(to: &w) }
            self.push(to: b.id, "friend.accepted") { w in w.key("user"); a.write(to: &w) }
            self.sendCurrentPosition(of: a.id, toWatchersOf: b.id)
            self.sendCurrentPosition(of: b.id, toWatchersOf: a.id)
        })
    }

    func acceptFriend(id: Int64?, from client: Client, user: User) throws(WireError) {
        let target = try friendID()
        try acceptFriend(id: id, from: client, user: user, target: target, op: "friend.accept")
    }

    private func acceptFriend(id: Int64?, from client: Client, user: User, target: Int64, op: String) throws(WireError) {
        if graph.areFriends(user.id, target) {
            replyOK(client, id: id) { w in w.key("status"); w.string("friends") }
            return
        }
        guard graph.hasRequest(from: target, to: user.id) else {
            throw WireError(.notFound, "no friend request from user \(target)")
        }
        let social = self.social, me = user.id, now = clock.now()
        start(client, id: id, op: op, { () async throws(WireError) -> User? in
            try await Self.storage { try await social.addFriendship(me, target, at: now) }
            return try await Self.storage { try await social.user(id: target) }
        }, then: { client, other in
            self.graph.addFriendship(me, target)
            self.push(to: target, "friend.accepted") { w in w.key("user"); user.write(to: &w) }
            self.replyOK(client, id: id) { w in
                w.key("status"); w.string("friends")
                if let other {
                    w.key("friend"); self.writeFriend(other, to: &w)
                }
            }
            // Watchers on either side see the new friend's position straight away.
            self.sendCurrentPosition(of: target, toWatchersOf: me)
            self.sendCurrentPosition(of: me, toWatchersOf: target)
        })
    }

    func declineFriend(id: Int64?, from client: Client, user: User) throws(WireError) {
        let target = try friendID()
        guard graph.hasRequest(from: target, to: user.id) else {
            throw WireError(.notFound, "no friend request from user \(target)")
        }
        let social = self.social, me = user.id
        start(client, id: id, op: "friend.decline", { () async throws(WireError) -> Bool in
            try await Self.storage { try await social.deleteFriendRequest(from: target, to: me) }
            return true
        }, then: { client, _ in
            self.graph.removeRequest(from: target, to: me)
            self.replyOK(client, id: id) { _ in }
        })
    }

    func removeFriend(id: Int64?, from client: Client, user: User) throws(WireError) {
        let target = try friendID()
        let me = user.id, social = self.social
        if graph.hasRequest(from: me, to: target) && !graph.areFriends(me, target) {
            // Withdrawing a request that was never answered.
            start(client, id: id, op: "friend.remove", { () async throws(WireError) -> Bool in
                try await Self.storage { try await social.deleteFriendRequest(from: me, to: target) }
                return true
            }, then: { client, _ in
                self.graph.removeRequest(from: me, to: target)
                self.replyOK(client, id: id) { w in w.key("status"); w.string("withdrawn") }
            })
            return
        }
        guard graph.areFriends(me, target) else { throw WireError(.notFriends, "you are not friends with user \(target)") }
        // Stop the flow of positions now, before the commit: privacy does not wait for the disk.
        graph.removeFriendship(me, target)
        let versionMine = bumpRuleVersion(me, target), versionTheirs = bumpRuleVersion(target, me)
        rules.forget(me, target)
        dropPendingPositions(of: target, forWatchersOf: me)
        dropPendingPositions(of: me, forWatchersOf: target)
        start(client, id: id, op: "friend.remove", { () async throws(WireError) -> Bool in
            try await Self.storage {
                try await social.deleteFriendship(me, target, versionAB: versionMine, versionBA: versionTheirs)
            }
            return true
        }, onFailure: { client, error in
            // The store still has the friendship: put memory back in line with it (only what this request changed).
            self.graph.addFriendship(me, target)
            if self.isLatest(versionMine, me, target) {
                self.rules.restore(owner: me, viewer: target, to: self.committedRules[RuleKey(me, target)]?.entry)
            }
            if self.isLatest(versionTheirs, target, me) {
                self.rules.restore(owner: target, viewer: me, to: self.committedRules[RuleKey(target, me)]?.entry)
            }
            self.fail(client, id: id, op: "friend.remove", error)
        }, then: { client, _ in
            self.recordCommitted(RuleKey(me, target), nil, versionMine)
            self.recordCommitted(RuleKey(target, me), nil, versionTheirs)
            self.push(to: target, "friend.removed") { w in w.key("user"); user.write(to: &w) }
            self.replyOK(client, id: id) { w in w.key("status"); w.string("removed") }
        })
    }

    func listFriends(id: Int64?, from client: Client, user: User) {
        let ids = Array(graph.friends(of: user.id)), social = self.social
        start(client, id: id, op: "friend.list", { () async throws(WireError) -> [User] in
            try await Self.storage { try await social.users(ids: ids) }
        }, then: { client, users in
            self.replyOK(client, id: id) { w in
                w.key("friends"); w.beginArray()
                for u in users where self.graph.areFriends(user.id, u.id) { self.writeFriend(u, to: &w) }
                w.endArray()
            }
        })
    }

    func listRequests(id: Int64?, from client: Client, user: User) {
        let incoming = graph.incomingRequests(of: user.id), outgoing = graph.outgoingRequests(of: user.id)
        let ids = Array(incoming.union(outgoing)), social = self.social
        start(client, id: id, op: "friend.requests", { () async throws(WireError) -> [User] in
            try await Self.storage { try await social.users(ids: ids) }
        }, then: { client, users in
            self.replyOK(client, id: id) { w in
                w.key("incoming"); w.beginArray()
                for u in users where incoming.contains(u.id) { u.write(to: &w) }
                w.endArray()
                w.key("outgoing"); w.beginArray()
                for u in users where outgoing.contains(u.id) { u.write(to: &w) }
                w.endArray()
            }
        })
    }

    // MARK: Helpers

    func friendID() throws(WireError) -> Int64 {
        let target = try message.requireInt("user")
        guard target > 0 else { throw .badRequest("field 'user' must be a positive user id") }
        return target
    }

    func writeFriend(_ u: User, to w: inout JSONWriter) {
        w.beginObject()
        w.key("id"); w.int(u.id)
        w.key("username"); w.string(u.username)
        w.key("name"); w.string(u.name)
        w.key("online"); w.bool(isOnline(u.id))
        w.endObject()
    }

    /// Runs a store call, turning any storage error into `internal`; the detail is logged, not sent.
    static func storage<T>(_ body: () async throws -> T) async throws(WireError) -> T {
        do { return try await body() } catch {
            storageLogger.error("storage failure: \(error)")
            throw WireError(.internal, "Storage failure; the request was not applied")
        }
    }
}
