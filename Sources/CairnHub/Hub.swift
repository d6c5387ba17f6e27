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
// The hub keeps its features in one ordered list behind `HubFeature` (CairnCore): it attaches the events port to
// each, ticks each, and tells each of a session ending, a connection closing, a user's presence changing and users
// purged, in a loop; the features that show media get the signer the same way (`ShowsMedia`). What one feature
// needs from another in particular (a view changing, a user moving, a bucket's items going) is a hook the owning
// feature declares and `wire()` connects by hand, grouped by that feature: those hooks are the graph between the
// features, who never read each other's stored properties. What the domain tells the outside world leaves through
// one `HubEvents` port, attached by the protocol layer.
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
    /// Every feature, in the order the tick runs them: authentication deadlines first, then sharing rules, relics'
    /// expiry and purge, position history, guests, the day's activity, left-behind alerts; the rest have no tick.
    /// The position snapshot is not in the loop: `tick` takes it last. The lifecycle broadcasts follow the same
    /// order, where only one thing matters: in a purge, Sessions (first) ends the purged users' sessions before the
    /// other features forget those users, so their session-ending work runs on state still there.
    private let features: [any HubFeature]

    /// Where the domain's events go, once attached.
    public private(set) var events: (any HubEvents)?
    private var draining = false
    private var finalFlushStarted = false
    private var drained: (() -> Void)?

    /// Creates a hub whose features store through `stores` (see `HubStores` for what an absent optional port means).
    public init(
        accounts: Accounts, stores: HubStores, scheduler: any LoopScheduler, clock: any Clock,
        random: any RandomSource = SecureRandom(),
        configuration: HubConfiguration = HubConfiguration(),
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
        self.social = Social(
            store: stores.social, work: work, clock: clock, sessions: sessions, configuration: configuration)
        liveMap = LiveMap(
            store: stores.social, work: work, clock: clock, sessions: sessions, social: self.social,
            telemetry: telemetry, configuration: configuration)
        self.relics = Relics(
            store: stores.relics, users: stores.social, accounts: accounts, work: work, clock: clock,
            sessions: sessions, social: self.social, liveMap: liveMap, configuration: configuration)
        self.chat = Chat(
            store: stores.chat, users: stores.social, work: work, clock: clock, social: self.social,
            configuration: configuration)
        self.profiles = Profiles(
            store: stores.profiles, accounts: accounts, work: work, clock: clock, sessions: sessions)
        self.buckets = Buckets(
            store: stores.buckets, work: work, clock: clock, social: self.social, configuration: configuration)
        let itemTrackers = Trackers(
            store: stores.trackers, work: work, clock: clock, random: random, buckets: self.buckets,
            configuration: configuration)
        self.safeZones = SafeZones(store: stores.safeZones, work: work, configuration: configuration)
        self.trackers = itemTrackers
        // A committed fix comes back to the loop, where the feature that owns items' positions takes it; the
        // feature is only ever touched there.
        nonisolated(unsafe) let onLoop = itemTrackers
        trackerIngest = TrackerIngest(
            store: stores.trackers, clock: clock, filters: configuration.ingestFilters,
            rate: (configuration.ingestRequestsPerSecond, configuration.ingestRequestBurst),
            committed: { tracker, fix in scheduler.execute { onLoop.moved(tracker, fix) } })
        trackerLookup = TrackerLookup(store: stores.trackers, clock: clock, ingest: trackerIngest)
        self.places = Places(store: stores.places, roles: stores.roles, work: work)
        statsChannel = StatsChannel(
            roles: stores.roles, work: work, clock: clock, sessions: sessions, liveMap: liveMap,
            telemetry: telemetry)
        administration = Administration(
            roles: stores.roles, store: stores.admin, work: work, clock: clock, sessions: sessions,
            settings: AdminSettings(),
            statistics: AdminStatistics(accounts: accounts, roles: stores.roles, clock: clock))
        activity = ActivityLog(store: stores.admin, work: work, now: clock.now())
        let pictureFeature = Pictures(
            store: stores.pictures, work: work, clock: clock, sessions: sessions, social: self.social, liveMap: liveMap,
            administration: administration, configuration: configuration)
        self.pictures = pictureFeature
        pictureEvents = PictureEvents(
            store: stores.pictures, accounts: accounts, work: work, clock: clock, sessions: sessions,
            pictures: pictureFeature, configuration: configuration)
        guestExpiry = GuestExpiry(
            store: accounts.store, work: work, sessions: sessions, configuration: configuration,
            now: clock.now())
        features = [
            sessions, self.social, self.relics, liveMap, guestExpiry, activity, self.safeZones, itemTrackers,
            self.buckets, self.chat, self.profiles, self.places, pictureFeature, pictureEvents, statsChannel,
            administration,
        ]
        wire()
    }

    /// Connects the features to one another: first the lifecycle broadcasts (a fact every feature may care about,
    /// told to each in `features` order), then the graph, grouped by the feature that owns the hook: each hook is
    /// answered by another feature's method.
    private func wire() {
        let features = self.features
        let sessions = self.sessions
        sessions.sessionEnding = { connection, user in
            for feature in features { feature.sessionEnds(on: connection, user: user) }
        }
        sessions.connectionGone = { connection in for feature in features { feature.connectionClosed(connection) } }
        let social = self.social
        sessions.presenceChanged = { [unowned sessions] user, online in
            // Several nodes: the live map listens to the friends' moves made elsewhere before the others hear of
            // the arrival and answer it; friends hear nothing while the user stays online on another node.
            for feature in features { feature.presenceChangedHere(user, online: online) }
            let remote = sessions.remotePresence
            remote?.localPresenceChanged(user, online: online)
            guard !(remote?.isOnlineElsewhere(user) ?? false) else { return }
            social.presenceChanged(user, online: online)  // to the friends the user does not hide from
        }
        guestExpiry.purged = { purge in
            for feature in features { feature.usersPurged(purge.users, relics: purge.relics, items: purge.items) }
        }

        let guests = self.guestExpiry
        let activity = self.activity
        sessions.guestSeen = { user in guests.seen(user) }
        sessions.bound = { user in activity.note(user) }

        let liveMap = self.liveMap
        let buckets = self.buckets
        social.viewChanged = { owner, viewer in liveMap.showCurrentPosition(of: owner, to: viewer) }
        social.viewEnded = { owner, viewer in liveMap.withdrawPosition(of: owner, from: viewer) }
        social.friendshipEnded = { a, b in buckets.friendshipEnded(a, b) }
        social.friendshipEndedElsewhere = { a, b in buckets.friendshipEndedElsewhere(a, b) }

        let relics = self.relics
        let trackers = self.trackers
        liveMap.moved = { user, point, now in
            relics.roam(user, to: point, now: now)
            trackers.ownerMoved(user, now: now)  // items they may have left behind
        }

        buckets.itemsGone = { items in trackers.itemsGone(items) }
        buckets.itemChanged = { item, owners in trackers.itemChanged(item, owners: owners) }
        buckets.ownersChanged = { bucket, owners in trackers.ownersChanged(bucket: bucket, owners: owners) }
        buckets.accessLost = { bucket, users in trackers.accessLost(bucket: bucket, users: users) }
        buckets.viewsChanged = { users in trackers.viewsChanged(users) }

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

        places.position = { user in liveMap.point(of: user) }

        chat.register(in: settings)
        pictures.register(in: settings)
        work.idle = { [unowned self] in self.finishDrainIfIdle() }
    }

    /// Sends the domain's events to `events` from now on (the protocol layer's delivery).
    public func attach(_ events: any HubEvents) {
        self.events = events
        for feature in features { feature.attach(events) }
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
    /// profiles and items no photo URL. Setting it hands it to every feature that `ShowsMedia`.
    public var mediaSigner: (any MediaSigner)? {
        didSet { for case let feature as any ShowsMedia in features { feature.mediaSigner = mediaSigner } }
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
        for feature in features { feature.tick(now: now) }
        liveMap.flushIfDue(now: now)  // last: the snapshot sees what the tick changed
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
