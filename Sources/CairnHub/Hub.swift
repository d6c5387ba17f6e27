// The hub: the container that builds Cairn's features, wires them to one another, runs the periodic tick and the
// shutdown drain. It holds no feature state of its own, and it is the only module that imports every feature. Each
// feature is a module of its own that keeps its state to itself and offers a small `package` API to the features
// above it:
//
//   Sessions    connections, accounts bound to them, authentication deadlines, revocations, presence (CairnSessions)
//   Social      the friend graph and the sharing rules (CairnSocial)
//   LiveMap     latest positions, the users index, watching, fan-out, snapshots (CairnLiveMap)
//   Relics      relic markers, their index, expiry, opening (CairnRelics)
//   Chat        messages between friends (store only; CairnChat)
//   Profiles    display names, bios and photos (store only; CairnProfiles)
//   Buckets     shared collections of items (store only; CairnBuckets)
//   Trackers    devices bound to items, their keys; items' live positions, finding them, left-behind alerts
//               (CairnTrackers)
//   SafeZones   each user's safe zones (in memory for the left-behind rule; CairnTrackers)
//   Places      places of interest: nearest, search, operators' writes (in memory; CairnPlaces)
//   StatsChannel  the stats channel for operators (CairnStats)
//   Administration  the admin role's ops: browsing users, suspending them (audited), live settings, daily figures
//               (CairnAdmin)
//   Pictures    pictures posted nearby or to events: likes, reports, pages, search, live watchers (CairnPictures)
//   PictureEvents  events by hashtag, public or private with a password, and their members (CairnPictures)
//
// Features learn of changes in the features above them through hooks wired here (a session ending, a user going
// offline, a view changing, a user moving), never by reading each other's stored properties. What the domain tells
// the outside world leaves through one `HubEvents` port, attached by the protocol layer.
//
// Everything here runs on the loop thread; `confinement` asserts it in debug builds. The domain knows no JSON,
// no SQLite and no sockets.
public import CairnAdmin
public import CairnBuckets
public import CairnChat
public import CairnCore
public import CairnCrypto
public import CairnLiveMap
public import CairnLoop
public import CairnMedia
public import CairnPictures
public import CairnPlaces
public import CairnProfiles
public import CairnRelics
public import CairnSessions
public import CairnSocial
public import CairnStats
public import CairnTrackers
public import Logging

/// Builds the features and runs what belongs to none of them: the tick and the shutdown drain.
public final class Hub: @unchecked Sendable {
    /// The settings in force.
    public let configuration: HubConfiguration
    /// The thread that owns live state, asserted at entry points in debug builds.
    public let confinement: LoopConfinement
    /// Slow work off the loop and back, counted for the shutdown drain.
    public let work: LoopWork
    /// The clock every feature reads (milliseconds since the epoch).
    public let clock: any Clock
    private let logger: Logger

    /// Connections, their accounts, deadlines, presence.
    public let sessions: Sessions
    /// Friends and sharing rules.
    public let social: Social
    /// Latest positions, watching and fan-out, snapshots.
    public let liveMap: LiveMap
    /// Relics.
    public let relics: Relics
    /// Chat.
    public let chat: Chat
    /// Profiles.
    public let profiles: Profiles
    /// Buckets and items.
    public let buckets: Buckets
    /// Trackers bound to items.
    public let trackers: Trackers
    /// Users' safe zones.
    public let safeZones: SafeZones
    /// Trackers' reports, authenticated and stored off the loop (the HTTP ingest endpoints call it).
    public let trackerIngest: TrackerIngest
    /// Trackers found by key, and what an OwnTracks device is shown (the HTTP ingest endpoints call it).
    public let trackerLookup: TrackerLookup
    /// Places of interest.
    public let places: Places
    /// The stats channel.
    public let statsChannel: StatsChannel
    /// The admin ops.
    public let administration: Administration
    /// Live settings: features register theirs here; admins change them with `admin.settings.set`.
    public var settings: AdminSettings { administration.settings }
    /// The daily figures: features add their `DailyStatsProvider` here.
    public var statistics: AdminStatistics { administration.statistics }
    /// Who was active on which day (the `active_users` figure).
    let activity: ActivityLog
    /// Pictures.
    public let pictures: Pictures
    /// Events (hashtags pictures are posted to).
    public let pictureEvents: PictureEvents
    /// Guests' last activity and the purge of inactive guests.
    let guestExpiry: GuestExpiry

    /// Where the domain's events go, once attached.
    public private(set) var events: (any HubEvents)?
    private var draining = false
    private var finalFlushStarted = false
    private var drained: (() -> Void)?

    /// Creates a hub. `roles` decides who may watch the stats channel, who is an admin and who may write places;
    /// without it nobody may. `admin` stores what the admin ops read and write; without it they are refused.
    /// Without `places` the hub has no places (nearest answers nothing, writes fail).
    public init(
        accounts: Accounts, social: any SocialStore, relics: any RelicStore, chat: any ChatStore,
        profiles: any ProfileStore, buckets: any BucketStore, trackers: any TrackerStore,
        safeZones: any SafeZoneStore, scheduler: any LoopScheduler, clock: any Clock,
        random: any RandomSource = SecureRandom(),
        configuration: HubConfiguration = HubConfiguration(), roles: (any RoleStore)? = nil,
        admin: (any AdminStore)? = nil,
        places: (any PlaceStore)? = nil,
        pictures: (any PictureStore)? = nil,
        confinement: LoopConfinement = LoopConfinement(name: "the hub's loop thread"),
        logger: Logger = Logger(label: "cairn.hub")
    ) {
        self.configuration = configuration
        self.confinement = confinement
        self.clock = clock
        self.logger = logger
        let work = LoopWork(scheduler: scheduler, confinement: confinement)
        self.work = work
        let telemetry = Telemetry()
        sessions = Sessions(accounts: accounts, work: work, clock: clock, configuration: configuration)
        self.social = Social(store: social, work: work, clock: clock, sessions: sessions, configuration: configuration)
        liveMap = LiveMap(
            store: social, work: work, clock: clock, sessions: sessions, social: self.social,
            telemetry: telemetry, configuration: configuration)
        self.relics = Relics(
            store: relics, users: social, accounts: accounts, work: work, clock: clock,
            sessions: sessions, social: self.social, liveMap: liveMap, configuration: configuration)
        self.chat = Chat(
            store: chat, users: social, work: work, clock: clock, social: self.social,
            configuration: configuration)
        self.profiles = Profiles(store: profiles, accounts: accounts, work: work, clock: clock, sessions: sessions)
        self.buckets = Buckets(
            store: buckets, work: work, clock: clock, social: self.social, configuration: configuration)
        let itemTrackers = Trackers(
            store: trackers, work: work, clock: clock, random: random, buckets: self.buckets,
            configuration: configuration)
        self.safeZones = SafeZones(store: safeZones, work: work, configuration: configuration)
        self.trackers = itemTrackers
        // A committed fix comes back to the loop, where the feature that owns items' positions takes it; the
        // feature is only ever touched there.
        nonisolated(unsafe) let onLoop = itemTrackers
        trackerIngest = TrackerIngest(
            store: trackers, clock: clock, filters: configuration.ingestFilters,
            rate: (configuration.ingestRequestsPerSecond, configuration.ingestRequestBurst),
            committed: { tracker, fix in scheduler.execute { onLoop.moved(tracker, fix) } })
        trackerLookup = TrackerLookup(store: trackers, clock: clock, ingest: trackerIngest)
        self.places = Places(store: places, roles: roles, work: work)
        statsChannel = StatsChannel(
            roles: roles, work: work, clock: clock, sessions: sessions, liveMap: liveMap,
            telemetry: telemetry)
        administration = Administration(
            roles: roles, store: admin, work: work, clock: clock, sessions: sessions, settings: AdminSettings(),
            statistics: AdminStatistics(accounts: accounts, roles: roles, clock: clock))
        activity = ActivityLog(store: admin, work: work, now: clock.now())
        let pictureFeature = Pictures(
            store: pictures, work: work, clock: clock, sessions: sessions, social: self.social, liveMap: liveMap,
            administration: administration, configuration: configuration)
        self.pictures = pictureFeature
        pictureEvents = PictureEvents(
            store: pictures, accounts: accounts, work: work, clock: clock, sessions: sessions,
            pictures: pictureFeature, configuration: configuration)
        guestExpiry = GuestExpiry(
            store: accounts.store, work: work, sessions: sessions, configuration: configuration,
            now: clock.now())
        wire()
    }

    /// Connects the features' hooks to one another.
    private func wire() {
        let sessions = self.sessions
        let social = self.social
        let liveMap = self.liveMap
        let relics = self.relics
        let statsChannel = self.statsChannel
        let trackers = self.trackers
        let pictures = self.pictures
        sessions.sessionEnding = { connection, user in
            pictures.stopWatching(connection)
            liveMap.stopWatching(connection, user: user)
            trackers.stopWatching(connection, withdraw: true)  // the connection stays: pending item.pos goes
            relics.forget(connection: connection)  // the markers it was shown were shown to that account
            statsChannel.unwatch(connection)
        }
        sessions.connectionGone = { connection in
            pictures.stopWatching(connection)
            trackers.stopWatching(connection)
            relics.forget(connection: connection)
            statsChannel.unwatch(connection)
        }
        sessions.presenceChanged = { [unowned sessions] user, online in
            if !online {
                relics.forget(user: user)
                liveMap.sessionEnded(user)  // the next session's first fix must be confirmed again
            }
            // Several nodes: listen to the friends' moves made elsewhere (before the others hear of the arrival and
            // answer it); the others hear of it; friends hear nothing while the user stays online on another.
            liveMap.viewerPresenceChanged(user, online: online)
            trackers.ownerPresenceChanged(user, online: online)  // their alerted items, from wherever they report
            let remote = sessions.remotePresence
            remote?.localPresenceChanged(user, online: online)
            guard !(remote?.isOnlineElsewhere(user) ?? false) else { return }
            social.presenceChanged(user, online: online)  // to the friends the user does not hide from
        }
        social.viewChanged = { owner, viewer in liveMap.showCurrentPosition(of: owner, to: viewer) }
        social.viewEnded = { owner, viewer in liveMap.withdrawPosition(of: owner, from: viewer) }
        let buckets = self.buckets
        social.friendshipEnded = { a, b in buckets.friendshipEnded(a, b) }
        social.friendshipEndedElsewhere = { a, b in buckets.friendshipEndedElsewhere(a, b) }
        liveMap.moved = { user, point, now in
            relics.roam(user, to: point, now: now)
            trackers.ownerMoved(user, now: now)  // items they may have left behind
        }
        trackers.connectionOpen = { [unowned sessions] connection in sessions.isOpen(connection) }
        // Several nodes only (read while the trackers have a `remote`): who is connected here, and elsewhere.
        trackers.onlineHere = { [unowned sessions] user in sessions.isOnline(user) }
        trackers.onlineElsewhere = { [unowned sessions] user in
            sessions.remotePresence?.isOnlineElsewhere(user) ?? false
        }
        trackers.userFix = { user in liveMap.fix(of: user) }  // the caller's own position, for item.locate
        trackers.ownerFix = { user in liveMap.trustedFix(of: user) }  // left behind believes trusted positions only
        let safeZones = self.safeZones
        trackers.shelters = { owner, point in safeZones.shelters(owner, point) }
        buckets.itemsGone = { items in trackers.itemsGone(items) }
        buckets.itemChanged = { item, owners in trackers.itemChanged(item, owners: owners) }
        buckets.ownersChanged = { bucket, owners in trackers.ownersChanged(bucket: bucket, owners: owners) }
        buckets.accessLost = { bucket, users in trackers.accessLost(bucket: bucket, users: users) }
        buckets.viewsChanged = { users in trackers.viewsChanged(users) }
        places.position = { user in liveMap.point(of: user) }
        let guests = self.guestExpiry
        sessions.guestSeen = { user in guests.seen(user) }
        let activity = self.activity
        sessions.bound = { user in activity.note(user) }
        chat.register(in: settings)
        pictures.register(in: settings)
        guests.purged = { purge in
            sessions.endSessions(of: purge.users)  // connected after the purge began: their account is gone
            relics.purged(purge.relics)
            liveMap.forget(users: purge.users)
            safeZones.forget(users: purge.users)
            trackers.itemsGone(purge.items)  // buckets that lost every owner went with their items
            trackers.ownersGone(purge.users)  // co-owned buckets stay; the purged owners are no longer alerted
        }
        work.idle = { [unowned self] in self.finishDrainIfIdle() }
    }

    /// Sends the domain's events to `events` from now on (the protocol layer's delivery).
    public func attach(_ events: any HubEvents) {
        self.events = events
        sessions.events = events
        social.events = events
        liveMap.events = events
        relics.events = events
        chat.events = events
        buckets.events = events
        trackers.events = events
        statsChannel.events = events
        pictures.events = events
    }

    /// `user` sent an op: counts them active today (`ActivityLog`; a set insertion, once a day more).
    public func noteActive(_ user: User) { activity.note(user) }

    /// Restores the friend graph, sharing rules and last positions; call once, before serving.
    public func restore(_ snapshot: SocialSnapshot) {
        social.restore(snapshot)
        liveMap.restore(snapshot.positions)
    }

    /// Restores the live relics; call once, before serving.
    public func restore(relics markers: [RelicMarker]) { relics.restore(markers) }

    // MARK: Figures

    /// Operational counters; the transport records traffic and latencies here on the loop.
    public var telemetry: Telemetry { statsChannel.telemetry }
    /// Slow operations started and not yet finished.
    public var operationsInFlight: Int { work.inFlight }
    /// Open connections.
    public var connectionCount: Int { sessions.connectionCount }
    /// Connections bound to an account.
    public var authenticatedCount: Int { sessions.authenticatedCount }
    /// Connections watching their friends.
    public var watchingCount: Int { sessions.watchingCount }
    /// Users with a known position.
    public var livePositions: Int { liveMap.count }
    /// Live relics in memory.
    public var liveRelics: Int { relics.count }
    /// True while at least one connection watches the stats channel.
    public var isStatsWatched: Bool { statsChannel.isWatched }
    /// Reports the number of relics live in memory for the stats channel; nil while no relic layer is wired.
    public var relicCount: (() -> Int)? {
        get { statsChannel.relicCount }
        set { statsChannel.relicCount = newValue }
    }
    /// Signs media URLs handed to those allowed to see the media; without one, relics show media ids only and
    /// profiles and items no photo URL.
    public var mediaSigner: (any MediaSigner)? {
        get { relics.mediaSigner }
        set {
            relics.mediaSigner = newValue
            profiles.mediaSigner = newValue
            buckets.mediaSigner = newValue
            pictures.mediaSigner = newValue
        }
    }
    /// The last snapshot's start, rows and duration.
    public var lastFlush: (at: Int64, rows: Int, durationMs: Int64)? { liveMap.lastFlush }
    /// Forces a snapshot now (tests, and the final flush at shutdown).
    public func flushPositionsNow() { liveMap.flushPositionsNow() }

    /// Every figure now; `transport` supplies what only the transport knows.
    public func statsSnapshot(transport: TransportGauges) -> StatsSnapshot {
        confinement.assertOnLoop()
        var reading = statsChannel.snapshot(transport: transport)
        reading.ingest = trackerIngest.counts
        reading.places = places.counts
        return reading
    }

    /// Once a second: pushes `stats` to operators watching and starts new latency windows.
    public func publishStats(transport: () -> TransportGauges) {
        confinement.assertOnLoop()
        statsChannel.publish(transport: transport)
    }

    // MARK: Tick and shutdown

    /// True once shutting down: no new work is taken.
    public var isDraining: Bool { draining }

    /// Periodic housekeeping (about once a second): authentication deadlines, sharing rules whose time is up,
    /// relic expiry and purging, position history purging, guests' last activity and purging, left-behind grace
    /// times, and the position snapshot.
    public func tick() {
        confinement.assertOnLoop()
        // Once shutting down, the drain writes the last snapshot; nothing new may reach the store after that.
        guard !draining else { return }
        let now = clock.now()
        sessions.closeExpiredAuthentications(now: now)
        social.expireShareRules(now: now)
        relics.expire(now: now)
        relics.purgeOld(now: now)
        liveMap.purgeHistory(now: now)
        guestExpiry.tick(now: now)
        activity.tick(now: now)
        trackers.tickLeftBehind(now: now)
        liveMap.flushIfDue(now: now)
    }

    /// Stops taking new work and calls `done` on the loop once every operation in flight has finished and the
    /// final position snapshot is committed.
    public func beginShutdown(_ done: @escaping () -> Void) {
        confinement.assertOnLoop()
        draining = true
        drained = done
        activity.flushBeforeShutdown()  // the day's marks not yet written
        // The last snapshot starts now, beside whatever is still in flight (no request moves anyone any more):
        // even if the transport stops waiting for slow requests, the positions are already on their way.
        startFinalFlush()
        finishDrainIfIdle()
    }

    private func startFinalFlush() {
        guard !finalFlushStarted, liveMap.pendingRows > 0 else { return }
        finalFlushStarted = true  // tried once: if the store is failing, shutting down must still finish
        if liveMap.isFlushing {
            finalFlushStarted = false
            return
        }  // a flush is running; its completion retries
        liveMap.flushPositionsNow()
    }

    private func finishDrainIfIdle() {
        guard draining, let done = drained else { return }
        startFinalFlush()
        guard work.inFlight == 0 else { return }
        if liveMap.unwrittenPositions > 0 {
            let unwritten = liveMap.unwrittenPositions
            logger.error("shutting down with \(unwritten) position(s) not written: the final snapshot failed")
        }
        drained = nil
        done()
    }
}
