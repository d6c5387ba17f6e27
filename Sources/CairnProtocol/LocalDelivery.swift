// The local side of the event seam: the domain's events, encoded once each and written to this process's
// connections through the transport's `Outbound`. Users are resolved to their connections through `Sessions`
// (every authenticated connection of a user; for positions, the ones watching the live map). With several nodes,
// user-addressed news goes on to the users' connections on other nodes as well (`ClusterNews`).
//
// Positions take the latest-wins path: each version of a move (precise, approximate) is encoded at most once and
// the same bytes are handed to every watcher under the owner's key, so a slow reader costs one slot per friend.
import CairnCore
import CairnLoop
import CairnSessions
import CairnWire

/// Encodes the domain's events and writes them to local connections. Loop thread only.
final class LocalDelivery: HubEvents {
    unowned let sessions: Sessions
    /// Held strongly (a weak load per delivery would cost more than the delivery); the transport sets it when it
    /// starts and clears it when it stops, which ends the cycle between the transport and the router.
    var outbound: (any Outbound)?
    /// Several nodes: user-addressed news for users connected elsewhere (nil: a single node).
    var news: ClusterNews?
    private var writer = JSONWriter(capacity: 1024)

    init(sessions: Sessions) {
        self.sessions = sessions
    }

    func publish(_ event: HubEvent, toUsers users: [Int64], excluding: ConnectionID?) {
        guard let outbound else { return }
        var encoded = false
        for user in users {
            for connection in sessions.connections(of: user) where connection != excluding {
                if !encoded {
                    encode(event)
                    encoded = true
                }
                writer.bytes.withUnsafeBytes { outbound.send(connection, $0) }
            }
        }
        news?.forward(event, to: users)
    }

    func publish(_ event: HubEvent, toConnections connections: [ConnectionID]) {
        guard let outbound, !connections.isEmpty else { return }
        encode(event)
        for connection in connections {
            writer.bytes.withUnsafeBytes { outbound.send(connection, $0) }
        }
    }

    func positionMoved(
        _ move: inout PositionFanOut, to viewer: Int64, approximate: Bool,
        watching: ConnectionList
    ) {
        guard let outbound, encode(&move, approximate: approximate) else { return }
        // The bytes are handed from the move itself: no copy of them (a retain and a release) per viewer.
        if approximate {
            for connection in watching { outbound.sendLatest(connection, key: move.owner, move.encodedApproximate!) }
        } else {
            for connection in watching { outbound.sendLatest(connection, key: move.owner, move.encodedPrecise!) }
        }
    }

    /// The `pos` event of one version of `move`, encoded at most once per move (kept in the move).
    func encoded(_ move: inout PositionFanOut, approximate: Bool) -> [UInt8]? {
        guard encode(&move, approximate: approximate) else { return nil }
        return approximate ? move.encodedApproximate : move.encodedPrecise
    }

    /// Encodes one version of `move` unless it already is; false when the move has no such version.
    private func encode(_ move: inout PositionFanOut, approximate: Bool) -> Bool {
        if approximate {
            guard let fix = move.approximate else { return false }
            if move.encodedApproximate == nil {
                move.encodedApproximate = positionEvent(VisiblePosition(owner: move.owner, fix: fix, approximate: true))
            }
            return true
        }
        if move.encodedPrecise == nil {
            move.encodedPrecise = positionEvent(
                VisiblePosition(owner: move.owner, fix: move.precise, approximate: false))
        }
        return true
    }

    func positionShown(_ position: VisiblePosition, to viewer: Int64) {
        guard let outbound else { return }
        let bytes = positionEvent(position)
        for connection in sessions.watchingConnections(of: viewer) {
            outbound.sendLatest(connection, key: position.owner, bytes)
        }
    }

    func positionHidden(owner: Int64, from viewer: Int64) {
        guard let outbound else { return }
        let bytes = hiddenEvent(owner: owner)
        for connection in sessions.watchingConnections(of: viewer) {
            outbound.sendLatest(connection, key: owner, bytes)
        }
    }

    func positionWithdrawn(owner: Int64, from viewer: Int64) {
        for connection in sessions.watchingConnections(of: viewer) { outbound?.dropLatest(connection, key: owner) }
    }

    func positionsWithdrawn(owners: Set<Int64>, from connection: ConnectionID) {
        for owner in owners { outbound?.dropLatest(connection, key: owner) }
    }

    func end(_ connection: ConnectionID, _ why: SessionEnd) {
        let close = why.close
        outbound?.close(connection, code: close.code.rawValue, reason: close.reason)
    }

    // MARK: Encoding

    func itemMoved(_ position: ItemPosition, to connections: [ConnectionID]) {
        guard let outbound, !connections.isEmpty else { return }
        writer.reset()
        Envelope.event("item.pos", into: &writer) { w in position.write(to: &w) }
        let bytes = writer.bytes
        // Items' slots are keyed by the negated item id, apart from users' (positive ids).
        for connection in connections { outbound.sendLatest(connection, key: -position.item, bytes) }
    }

    func itemsWithdrawn(_ items: [Int64], from connections: [ConnectionID]) {
        guard let outbound else { return }
        for connection in connections {
            for item in items { outbound.dropLatest(connection, key: -item) }
        }
    }

    func positionEvent(_ position: VisiblePosition) -> [UInt8] {
        writer.reset()
        Envelope.event("pos", into: &writer) { w in position.write(to: &w) }
        return writer.bytes
    }

    func hiddenEvent(owner: Int64) -> [UInt8] {
        writer.reset()
        Envelope.event("pos.hidden", into: &writer) { w in
            w.key("user")
            w.int(owner)
        }
        return writer.bytes
    }

    private func encode(_ event: HubEvent) {
        writer.reset()
        event.write(into: &writer)
    }

    /// `event`'s bytes, as this delivery writes them.
    func encoded(_ event: HubEvent) -> [UInt8] {
        encode(event)
        return writer.bytes
    }
}
