// "Run this once Redis holds every subscription asked so far." A node that publishes something other nodes answer
// on a channel (a user's arrival, answered with the owners' positions on their channels) must be subscribed to those
// channels before the answer reaches Redis, but SUBSCRIBE goes on the pub/sub connection and PUBLISH on the
// commands connection, which Redis does not order between them. Redis does answer one connection's commands in
// order, one confirmation per channel of each SUBSCRIBE: once it has confirmed as many channels as were sent, every
// SUBSCRIBE sent before is in place. So the barrier counts channels sent and confirmations heard on the current
// pub/sub connection, and holds each action until the confirmations reach the count at the time it was asked,
// running actions in the order asked. Unsubscribing does not matter: Redis confirms every SUBSCRIBE it received.
// Nothing is held while the connection is down: an action then runs at once, told `false` (its subscriptions will
// only exist after the reconnect), and the held ones run so when the connection is lost. Loop thread only.

/// Holds actions until Redis confirmed every SUBSCRIBE sent before them on the pub/sub connection.
final class SubscriptionBarrier {
    private var sent: UInt64 = 0
    private var confirmed: UInt64 = 0
    private var held: [(mark: UInt64, action: (Bool) -> Void)] = []

    /// True while the pub/sub connection is established.
    private(set) var isConnected = false

    /// Actions waiting for confirmations.
    var heldCount: Int { held.count }

    /// The pub/sub connection is (re)established: nothing sent on it yet.
    func connected() {
        isConnected = true
        sent = 0
        confirmed = 0
    }

    /// A SUBSCRIBE naming `channels` channels went out on the connection (each gets its own confirmation).
    func subscribed(_ channels: Int) {
        guard isConnected else { return }
        sent &+= UInt64(channels)
    }

    /// Redis confirmed one channel of a SUBSCRIBE: the actions whose subscriptions are all in place run, in order.
    func confirmation() {
        guard isConnected else { return }
        confirmed &+= 1
        while let first = held.first, confirmed >= first.mark {
            held.removeFirst()
            first.action(true)
        }
    }

    /// The connection is gone (or the link stopped): what was held runs now, in order, told `false`.
    func lost() {
        isConnected = false
        sent = 0
        confirmed = 0
        let releasing = held
        held.removeAll()
        for entry in releasing { entry.action(false) }
    }

    /// Runs `action(true)` once every SUBSCRIBE sent so far is confirmed (at once if they are and nothing is held
    /// before it), or `action(false)` at once while the connection is down or when it is lost first.
    func after(_ action: @escaping (Bool) -> Void) {
        guard isConnected else { return action(false) }
        if held.isEmpty && confirmed >= sent { return action(true) }
        held.append((sent, action))
    }
}
