// The hub's side of running as one of several nodes: where the composition plugs in presence on other nodes and
// the reading of the link to them, and how a change of a user's presence elsewhere reaches friends connected here.
// A single node sets none of it and behaves exactly as before.
import CairnAdmin
import CairnBuckets
import CairnCore
import CairnLiveMap
import CairnPictures
import CairnRelics
import CairnSessions
import CairnSocial
import CairnTrackers

extension Hub {
    /// Presence on other nodes (nil: a single node). Set on the loop before serving.
    public var remotePresence: (any RemotePresence)? {
        get { sessions.remotePresence }
        set { sessions.remotePresence = newValue }
    }

    /// Positions for viewers on other nodes and from owners on other nodes (nil: a single node). Set on the loop
    /// before serving.
    public var remoteFanOut: (any RemoteFanOut)? {
        get { liveMap.remote }
        set { liveMap.remote = newValue }
    }

    /// Item moves for viewers on other nodes and from trackers reporting to other nodes (nil: a single node). Set on
    /// the loop before serving.
    public var remoteItems: (any RemoteItems)? {
        get { trackers.remote }
        set {
            trackers.remote = newValue
            guard newValue != nil else {
                trackers.onlineElsewhere = nil
                trackers.onlineHere = nil
                return
            }
            trackers.onlineHere = { [unowned sessions] user in sessions.isOnline(user) }
            trackers.onlineElsewhere = { [unowned sessions] user in
                sessions.remotePresence?.isOnlineElsewhere(user) ?? false
            }
        }
    }

    /// Another node committed `position` for an item (reported by `tracker`) and listed `viewers`, its audience
    /// members online elsewhere: this node's memory of the item is updated, and those of them watching items here who
    /// may still see it get `item.pos`.
    public func remoteItemMoved(_ position: ItemPosition, tracker: Int64, viewers: [Int64]) {
        confinement.assertOnLoop()
        trackers.remoteMoved(position, tracker: tracker, viewers: viewers)
    }

    /// Another node told `users` (connected here) that a bucket they view changed, or that they lost sight of bucket
    /// `lost`: that bucket's items' pending positions are withdrawn from their watching connections here, and the
    /// items those connections follow are read again.
    public func bucketNewsHeard(_ users: [Int64], lost: Int64? = nil) {
        confinement.assertOnLoop()
        if let lost { trackers.accessLost(bucket: lost, users: Set(users)) }
        trackers.viewsChanged(users)
    }

    /// Bucket news may have been missed (this node's inbox was not subscribed for a while): the items every
    /// watching connection here follows are read again.
    public func refollowWatchers() {
        confinement.assertOnLoop()
        trackers.refollowWatchers()
    }

    /// `viewer` came online on another node where it was not before (a new node, even if it is online on a third):
    /// owners connected here send it their current positions, at the level it may see.
    public func remoteViewerArrived(_ viewer: Int64) {
        confinement.assertOnLoop()
        liveMap.remoteViewerArrived(viewer)
    }

    /// A node where `viewer` is connected asks for `owner`'s current position (it has just followed the owner):
    /// sent at the viewer's level when the owner is connected here and they are friends.
    public func remoteViewerAsked(owner: Int64, viewer: Int64) {
        confinement.assertOnLoop()
        liveMap.remoteViewerAsked(owner: owner, viewer: viewer)
    }

    /// Reports the node's link to the other nodes for /healthz, the stats channel and /metrics; nil on one node.
    public var clusterReading: (() -> ClusterReading)? {
        get { statsChannel.clusterReading }
        set { statsChannel.clusterReading = newValue }
    }

    /// `user` came online on another node (their first connection anywhere else) or went offline on every other
    /// node. Friends connected here hear it, unless the user is connected here too (then nothing changed for them).
    public func remotePresenceChanged(_ user: Int64, online: Bool) {
        confinement.assertOnLoop()
        guard !sessions.isOnline(user) else { return }
        social.presenceChanged(user, online: online)
    }

    /// Friendships, requests and rules for the other nodes (nil: a single node). Set on the loop before serving.
    public var remoteSocial: (any RemoteSocial)? {
        get { social.remote }
        set { social.remote = newValue }
    }

    /// Another node committed the friendship of `a` and `b` at `version`: applied here as a local one would be, and
    /// told to whoever it concerns here (`b` hears `a` accepted; both hear it when their requests `crossed`).
    public func remoteFriendshipBegan(_ a: Int64, _ b: Int64, version: Int64, crossed: Bool = false) {
        confinement.assertOnLoop()
        social.applyRemoteFriendshipBegan(a, b, version: version, crossed: crossed)
    }

    /// Another node committed the end of `a` and `b`'s friendship (`a` removed `b`): positions withdrawn, channels
    /// left, and `b` told, here.
    public func remoteFriendshipEnded(_ a: Int64, _ b: Int64, versionAB: Int64, versionBA: Int64) {
        confinement.assertOnLoop()
        social.applyRemoteFriendshipEnded(a, b, versionAB: versionAB, versionBA: versionBA)
    }

    /// Another node committed a friend request (or its removal); `to` hears a new one here.
    public func remoteRequestChanged(from: Int64, to: Int64, pending: Bool, version: Int64) {
        confinement.assertOnLoop()
        social.applyRemoteRequest(from: from, to: to, pending: pending, version: version)
    }

    /// Another node committed a sharing rule: a hide stops this node publishing `owner` to that viewer at once.
    public func remoteRuleChanged(owner: Int64, viewer: Int64?, level: ShareLevel?, until: Int64?, version: Int64) {
        confinement.assertOnLoop()
        social.applyRemoteRule(owner: owner, viewer: viewer, level: level, until: until, version: version)
    }

    /// Reads friendships, requests and rules from the shared store and applies what this node missed (after its
    /// control subscription is confirmed, and while it is cut off from the other nodes); `done` learns what changed.
    public func resyncSocial(_ done: @escaping (Result<ResyncCounts, DomainError>) -> Void) {
        confinement.assertOnLoop()
        social.resync(done)
    }

    /// Logouts and suspensions for the other nodes (nil: a single node). Set on the loop before serving.
    public var remoteSessions: (any RemoteSessions)? {
        get { sessions.remoteSessions }
        set { sessions.remoteSessions = newValue }
    }

    /// Another node committed a logout of the token `fingerprint` names: sessions here that use it end.
    public func remoteTokenRevoked(user: Int64, fingerprint: TokenFingerprint) {
        confinement.assertOnLoop()
        sessions.applyRemoteTokenRevoked(user: user, fingerprint: fingerprint)
    }

    /// Another node committed the end of every session of `user` (logout everywhere, suspension).
    public func remoteSessionsEnded(user: Int64, why: SessionEnd) {
        confinement.assertOnLoop()
        sessions.applyRemoteSessionsEnded(user: user, why: why)
    }

    /// Checks every bound connection's token against the store again, ending those it no longer accepts (after the
    /// control subscription is confirmed again: logouts and suspensions sent meanwhile were lost for this node).
    public func recheckSessions(_ done: @escaping (Result<Int, DomainError>) -> Void) {
        confinement.assertOnLoop()
        sessions.recheckTokens(done)
    }

    /// After this time (ms since the epoch) the node delivers and shows no position at all (.max: no fence). Set by
    /// the composition while the node may have missed rule changes made elsewhere and has not read them yet.
    public var positionsFencedAfter: Int64 {
        get { liveMap.fencedAfter }
        set {
            confinement.assertOnLoop()
            liveMap.fencedAfter = newValue
        }
    }

    /// Relics created and deleted here, for the other nodes (nil: a single node). Set on the loop before serving.
    public var remoteRelics: (any RemoteRelics)? {
        get { relics.remote }
        set { relics.remote = newValue }
    }

    /// Another node created relic `id`: read from the shared store and shown here.
    public func remoteRelicCreated(_ id: Int64) {
        confinement.assertOnLoop()
        relics.applyRemoteCreated(id)
    }

    /// Another node deleted relic `id`: it vanishes here too.
    public func remoteRelicDeleted(_ id: Int64) {
        confinement.assertOnLoop()
        relics.applyRemoteDeleted(id)
    }

    /// Reads the live relics from the shared store and applies what this node missed.
    public func resyncRelics(_ done: @escaping (Result<(added: Int, removed: Int), DomainError>) -> Void) {
        confinement.assertOnLoop()
        relics.resync(done)
    }

    /// Pictures posted here, for the other nodes (nil: a single node). Set on the loop before serving.
    public var remotePictures: (any RemotePictures)? {
        get { pictures.remote }
        set { pictures.remote = newValue }
    }

    /// Another node posted picture `id`: the connections watching here who may see it get `picture.new`.
    public func remotePicturePosted(_ id: Int64) {
        confinement.assertOnLoop()
        pictures.applyRemotePosted(id)
    }

    /// Changes of buckets committed here, for the other nodes (nil: a single node). Set on the loop before serving.
    public var remoteBuckets: (any RemoteBuckets)? {
        get { buckets.remote }
        set { buckets.remote = newValue }
    }

    /// Another node committed a change of `bucket` (or deleted it): what the trackers keep for it here (alerts,
    /// hidden items, items and trackers gone) is read again from the store.
    public func remoteBucketTouched(_ bucket: Int64) {
        confinement.assertOnLoop()
        trackers.applyRemoteBucketTouched(bucket)
    }

    /// Reads every alerted item from the shared store and applies what this node missed (a node that may have missed
    /// bucket changes, with its catch-up reads); `done` learns how many items' alert state changed.
    public func resyncItemAlerts(_ done: @escaping (Result<Int, DomainError>) -> Void) {
        confinement.assertOnLoop()
        trackers.resyncAlerts(done)
    }

    /// Another node deleted `items` (alone or with their bucket): their positions and alert state go here too, and a
    /// fix for them heard late is ignored.
    public func remoteItemsGone(_ items: [Int64]) {
        confinement.assertOnLoop()
        trackers.itemsGone(items)
    }
}

// MARK: Live settings

extension Hub {
    /// Admins' settings changed here, for the other nodes (nil: a single node). Set on the loop before serving.
    public var remoteSettings: (any RemoteSettings)? {
        get { administration.remote }
        set { administration.remote = newValue }
    }

    /// Another node committed a change of admins' settings: the stored values are read again and what differs from
    /// memory is put in force here. A failed read leaves memory as it was (logged; the next resync reads again).
    public func remoteSettingsChanged() {
        confinement.assertOnLoop()
        administration.settings.reread { result in
            if case .failure(let error) = result {
                hubLogger.warning("settings changed on another node could not be read: \(error.message)")
            }
        }
    }

    /// Reads admins' settings from the shared store and puts in force what this node missed; `done` learns how many
    /// settings changed.
    public func resyncSettings(_ done: @escaping (Result<Int, DomainError>) -> Void) {
        confinement.assertOnLoop()
        administration.settings.reread(done)
    }
}
