// Friendships and sharing rules beyond this process. With several nodes on one shared store, a friendship made or
// ended, or a rule changed, through one node is committed to the database at once but lives in every node's memory
// (the graph, the rules) only once each node hears of it. Social tells this port after each commit, with the
// version the change carries; the composition publishes it to the other nodes, and hands what they publish back to
// `Social.applyRemote…` (through the hub), which takes the same paths a local change takes and ignores anything not
// newer than what it holds. A change that lets someone see less (a hide, an unfriend) is answered only once the
// port confirms that every node that could still publish the owner applied it: a hide takes effect everywhere
// before its reply; when the port gives up (a node neither answered nor left in time, or the node is stopping),
// the change stays committed and in force here, and the request is answered with an error that says so. A single
// node has no implementation and nothing changes. Loop thread only.
import CairnCore
import CairnErrorCodes

/// Where Social's committed changes go for the other nodes.
public protocol RemoteSocial: AnyObject {
    /// `a` and `b` became friends (committed), at `version`: `a` accepted `b`'s request, or (`crossed`) their
    /// requests crossed and each was told the other accepted.
    func friendshipBegan(_ a: Int64, _ b: Int64, version: Int64, crossed: Bool)
    /// `a` and `b` are no longer friends (committed): the rules both ways were reset at these versions. `confirmed`
    /// runs with true once every other node applied it (or dropped out of presence), false if the port gave up.
    func friendshipEnded(
        _ a: Int64, _ b: Int64, versionAB: Int64, versionBA: Int64, confirmed: @escaping (Bool) -> Void)
    /// `from` asked `to` to be friends (committed), or the request went (withdrawn, declined).
    func requestChanged(from: Int64, to: Int64, pending: Bool, version: Int64)
    /// The rule of `owner` for `viewer` (nil: the pause) is now `level` until `until` (level nil: the default,
    /// precise for good, or no pause), committed at `version`. When `confirmed` is given (the change lets some
    /// viewer see less), it runs with true once every other node applied it (or dropped out of presence), false if
    /// the port gave up.
    func ruleChanged(
        owner: Int64, viewer: Int64?, level: ShareLevel?, until: Int64?, version: Int64,
        confirmed: ((Bool) -> Void)?)
}

extension DomainError {
    /// A hide or an unfriend committed and in force on this node, which other nodes did not all confirm in time.
    static let unconfirmedElsewhere = DomainError(
        .internal,
        "the change is saved and in force on this hub, but not every other hub confirmed it in time; "
            + "they apply it when they hear of it or read it from the store")
}
