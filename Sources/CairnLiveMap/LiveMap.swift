// The live map — the hot path. A `pos` is checked, compared with the user's latest fix (an older one is kept as
// history, never pushed), stored in memory and the spatial index, marked dirty for the next snapshot, and pushed
// to every friend who is watching, at the level that friend may see. The live map decides what each viewer may
// see before anything is encoded; the event port encodes each version at most once per move and hands the same
// bytes to every watcher, and the transport keeps only the latest pending position per friend for each watcher, so
// a slow reader costs one slot per friend, not a queue.
//
// It owns the latest fixes, the users layer of the spatial index and the snapshot bookkeeping
// (`LiveMap+Snapshots`). It asks `Social` who is whose friend and at what level, and `Sessions` who watches.
public import CairnCore
public import CairnGeo
package import CairnLoop
package import CairnSessions
package import CairnSocial
import CairnSpatial

/// Latest positions, the users index, watching, fan-out and snapshots. Loop thread only.
public final class LiveMap {
    let store: any SocialStore
    let work: LoopWork
    let clock: any Clock
    let sessions: Sessions
    let social: Social
    let telemetry: Telemetry
    public let configuration: HubConfiguration
    package var events: (any HubEvents)? {
        get { outlets.events }
        set { outlets.events = newValue }
    }
    /// Viewers on other nodes (nil: a single node; see `LiveMap+Remote`).
    package var remote: (any RemoteFanOut)? {
        get { outlets.remote }
        set { outlets.remote = newValue }
    }
    /// After this time (ms) no position is delivered or shown to anyone (.max: never): a node that may have missed
    /// rule changes and could not read them from the store fails closed.
    package var fencedAfter: Int64 {
        get { outlets.fencedAfter }
        set { outlets.fencedAfter = newValue }
    }
    /// Where moves go, held as one stored property so that a move reads all three with one exclusivity check.
    private var outlets = Outlets()
    private struct Outlets {
        var events: (any HubEvents)?
        var remote: (any RemoteFanOut)?
        var fencedAfter = Int64.max
    }

    /// The latest fixes, the users index, the dirty set and the trust states: one stored property, so a move pays
    /// for one exclusivity check instead of one per part (`PositionBook`).
    var book: PositionBook
    /// The latest fix of each user with one.
    var fixes: [Int64: Fix] { book.fixes }
    /// Users whose latest fix the next snapshot writes (LiveMap+Snapshots).
    var dirty: Set<Int64> { book.dirty }
    /// The users layer of the spatial index.
    var index: LayeredIndex { book.index }
    private let approximate: ApproximateGrid
    /// The cell approximate viewers were last shown each user in (hysteresis: see `approximateCell`).
    private var shownCells: [Int64: ApproximateGrid.Cell] = [:]

    // Snapshots (LiveMap+Snapshots).
    var late: LateFixes
    var purgingHistory = false
    var lastHistoryPurgeAt: Int64 = .min / 2
    var flushing = false
    var lastFlushAt: Int64 = 0
    var collecting: FlushInProgress?
    /// Durable acknowledgements (`durablePositions`) waiting for the next snapshot to start.
    var writeWaiters: [(Bool) -> Void] = []
    /// The last flush's start, row count and duration, for operators.
    public internal(set) var lastFlush: (at: Int64, rows: Int, durationMs: Int64)?
    /// How long the last flush spent on the loop in all (copying the changed fixes), in microseconds.
    public internal(set) var lastFlushLoopMicros: Int64 = 0
    /// The longest single loop turn of the last flush's collection, in microseconds.
    public internal(set) var lastFlushLongestChunkMicros: Int64 = 0

    /// A user moved to a new latest position (relics listen).
    package var moved: ((_ user: Int64, _ point: GeoPoint, _ now: Int64) -> Void)?

    package init(
        store: any SocialStore, work: LoopWork, clock: any Clock, sessions: Sessions, social: Social,
        telemetry: Telemetry, configuration: HubConfiguration
    ) {
        self.store = store
        self.work = work
        self.clock = clock
        self.sessions = sessions
        self.social = social
        self.telemetry = telemetry
        self.configuration = configuration
        self.book = PositionBook(index: LayeredIndex(cellSize: configuration.indexCellSize))
        self.approximate = ApproximateGrid(cellSize: configuration.approximateCellSize)
        self.late = LateFixes(perUser: configuration.lateFixesPerUser, total: configuration.lateFixesTotal)
        self.lastFlushAt = clock.now()
    }

    /// Restores last positions; call once, before serving.
    package func restore(_ positions: [StoredFix]) {
        for p in positions {
            book.fixes[p.userID] = p.fix
            if let point = GeoPoint(lat: p.fix.lat, lon: p.fix.lon) {
                book.index.upsert(p.userID, at: point, in: .users)
            }
        }
    }

    /// Forgets users whose accounts were deleted (purged guests): their fixes, their place in the index, trust.
    package func forget(users: [Int64]) {
        for user in users {
            if book.fixes.removeValue(forKey: user) != nil { _ = book.index.remove(user, from: .users) }
            shownCells[user] = nil
            book.trust[user] = nil
            book.dirty.remove(user)
        }
    }

    // MARK: Reading

    /// Users with a known position.
    public var count: Int { book.fixes.count }
    /// The latest fix of `user`.
    public func fix(of user: Int64) -> Fix? { book.fixes[user] }
    /// The latest place of `user`, if any.
    public func point(of user: Int64) -> GeoPoint? {
        guard let fix = book.fixes[user] else { return nil }
        return GeoPoint(lat: fix.lat, lon: fix.lon)
    }
    /// Calls `body` with each user whose latest position is within `radius` metres of `centre`.
    package func forEachUser(within radius: Double, of centre: GeoPoint, _ body: (Int64) -> Void) {
        book.index.forEach(in: .users, within: radius, of: centre) { user, _, _ in body(user) }
    }

    // MARK: Ops

    /// Checks a reported position and makes it the caller's latest (or history, when older).
    public func report(_ caller: Caller, _ report: PositionReport) throws(DomainError) -> FixOutcome {
        let now = clock.now()
        let fix = try Self.checkedFix(report, now: now, maxFutureMs: configuration.maxFutureMs)
        return acceptFix(fix, for: caller.user.id, now: now)
    }

    /// A reported position checked against the contract's ranges (shared by `pos` and the trackers' ingest): a
    /// typed `bad_request` naming the field, or the fix, timed `now` when the report carries no time. A `ts` more
    /// than `maxFutureMs` ahead is refused; with nil it is left to the caller (the ingest's future filter).
    public static func checkedFix(
        _ report: PositionReport, now: Int64, maxFutureMs: Int64?
    ) throws(DomainError) -> Fix {
        var fix = Fix(lat: report.lat, lon: report.lon, ts: now)
        guard (-90...90).contains(fix.lat) else { throw .badRequest("field 'lat' must be between -90 and 90") }
        guard (-180...180).contains(fix.lon) else { throw .badRequest("field 'lon' must be between -180 and 180") }
        fix.acc = try check("acc", report.acc, in: 0...1_000_000, unit: "m")
        fix.alt = try check("alt", report.alt, in: -20_000...1_000_000, unit: "m")
        fix.spd = try check("spd", report.spd, in: 0...100_000, unit: "m/s")
        fix.bat = try check("bat", report.bat, in: 0...100, unit: "%")
        if let hdg = report.hdg {
            guard hdg >= 0 && hdg < 360 else { throw .badRequest("field 'hdg' must be in [0, 360) degrees") }
            fix.hdg = hdg
        }
        if let ts = report.ts {
            guard ts > 0 else {
                throw .badRequest("field 'ts' must be a positive number of milliseconds since the epoch")
            }
            if let maxFutureMs, ts > now + maxFutureMs {
                throw .badRequest("field 'ts' is more than \(maxFutureMs / 1000) s in the future")
            }
            fix.ts = ts
        }
        return fix
    }

    @inline(__always)
    private static func check(
        _ key: StaticString, _ value: Double?, in range: ClosedRange<Double>,
        unit: String
    ) throws(DomainError) -> Double? {
        guard let value else { return nil }
        guard range.contains(value) else {
            throw .badRequest(
                "field '\(key)' must be between \(plain(range.lowerBound)) and "
                    + "\(plain(range.upperBound)) \(unit)")
        }
        return value
    }

    private static func plain(_ v: Double) -> String { v == v.rounded() ? String(Int64(v)) : String(v) }

    /// The position path shared by every source of positions: compares with the latest fix, keeps late ones
    /// as history, flags implausible speed, decides whether relics may trust it, updates memory and the index,
    /// marks the user for the next snapshot and fans out. `fix` must already be checked.
    @discardableResult
    public func acceptFix(_ fix: Fix, for me: Int64, now: Int64) -> FixOutcome {
        // Memory, index, dirty set and trust in one mutating call (one exclusivity check); then the fan-out.
        guard
            case .latest(let fix, let point, let trusted) = book.record(fix, for: me, maxSpeed: configuration.maxSpeed)
        else {
            // Late: history, not news. (An equal timestamp is a later arrival of the same instant and replaces.)
            keepLate(fix, for: me, now: now)
            return .stale
        }
        telemetry.positionsAccepted &+= 1
        fanOut(me, fix, now: now)
        if trusted, let point, let moved { moved(me, point, now) }
        return fix.flagged ? .flagged : .accepted
    }

    private func keepLate(_ fix: Fix, for user: Int64, now: Int64) {
        // Older than the history keeps: nothing would ever read it.
        guard fix.ts >= now - configuration.positionHistoryRetentionMs else { return }
        late.keep(fix, for: user)
    }

    /// Tells every watching friend of `owner` about `fix`, at the level each may see; with several nodes, also
    /// lists the friends online on other nodes by level and hands the move to `remote` once (privacy applied here).
    private func fanOut(_ owner: Int64, _ fix: Fix, now: Int64) {
        let outlets = self.outlets
        guard let events = outlets.events, now <= outlets.fencedAfter else { return }
        let remote = outlets.remote
        // The owner's rules and who watches are read once per move, so each friend costs one look-up for its
        // watching connections and one for its rule (none when the owner has no per-viewer rule).
        let share = social.shareView(of: owner, now: now)
        guard !share.hidesFromEveryone else { return }
        let watchers = sessions.watchingByUser
        var move = PositionFanOut(owner: owner, precise: fix)
        var approxChecked = false
        let elsewhere = remote == nil ? nil : sessions.remotePresence
        var remotePrecise: [Int64] = []
        var remoteApproximate: [Int64] = []
        for friend in social.friends(of: owner) {
            let watching = watchers[friend]
            let remotely = elsewhere?.isOnlineElsewhere(friend) ?? false
            guard watching != nil || remotely else { continue }
            switch share.level(of: friend) {
            case .hidden:
                continue
            case .precise:
                if let watching { events.positionMoved(&move, to: friend, approximate: false, watching: watching) }
                if remotely { remotePrecise.append(friend) }
            case .approximate:
                if !approxChecked {
                    approxChecked = true
                    // A user moving inside one cell (or just past its edge) has nothing new for approximate viewers.
                    let (cell, changed) = approximateCell(of: owner, at: fix)
                    if changed { move.approximate = approximated(fix, in: cell) }
                }
                guard move.approximate != nil else { continue }
                if let watching { events.positionMoved(&move, to: friend, approximate: true, watching: watching) }
                if remotely { remoteApproximate.append(friend) }
            }
        }
        if let remote, !remotePrecise.isEmpty || !remoteApproximate.isEmpty {
            remote.positionMoved(&move, precise: remotePrecise, approximate: remoteApproximate)
        }
    }

    /// The cell approximate viewers see `owner` in, and whether it just changed. With hysteresis: the cell last
    /// shown holds until `fix` lies more than `approximateHysteresis` metres beyond its edge, so jitter around an
    /// edge neither flips the cell back and forth nor dates the moment of crossing. Kept per owner (8 bytes), the
    /// same for every approximate viewer, and updated only when an approximate view is made.
    private func approximateCell(of owner: Int64, at fix: Fix) -> (cell: ApproximateGrid.Cell, changed: Bool) {
        if let shown = shownCells[owner],
            !approximate.isBeyond(shown, lat: fix.lat, lon: fix.lon, margin: configuration.approximateHysteresis)
        {
            return (shown, false)
        }
        let cell = approximate.cell(lat: fix.lat, lon: fix.lon)
        return (cell, shownCells.updateValue(cell, forKey: owner) != cell)
    }

    /// `fix` as an approximate viewer may see it: the centre of `cell` and the time to the minute, nothing else.
    private func approximated(_ fix: Fix, in cell: ApproximateGrid.Cell) -> Fix {
        let centre = approximate.centre(of: cell)
        return Fix(lat: centre.lat, lon: centre.lon, ts: fix.ts - fix.ts % 60_000)
    }

    /// What `viewer` may see of `owner`: nothing unless they are friends, else what the owner's rules allow. (The
    /// fan-out walks the owner's friends and asks the rules directly.)
    func level(of owner: Int64, to viewer: Int64, now: Int64) -> ShareLevel {
        guard now <= fencedAfter else { return .hidden }
        return social.areFriends(owner, viewer) ? social.level(owner: owner, viewer: viewer, now: now) : .hidden
    }

    /// `owner`'s latest position as `viewer` may see it now, or nil when hidden, unknown or older than
    /// `watchMaxAgeMs`; marked stale when older than `staleAfterMs`.
    func visiblePosition(of owner: Int64, to viewer: Int64, now: Int64) -> VisiblePosition? {
        guard let fix = book.fixes[owner], now - fix.ts <= configuration.watchMaxAgeMs else { return nil }
        let stale = now - fix.ts > configuration.staleAfterMs
        switch level(of: owner, to: viewer, now: now) {
        case .hidden: return nil
        case .precise: return VisiblePosition(owner: owner, fix: fix, approximate: false, stale: stale)
        case .approximate:
            let cell = approximateCell(of: owner, at: fix).cell
            return VisiblePosition(owner: owner, fix: approximated(fix, in: cell), approximate: true, stale: stale)
        }
    }

    /// Starts pushing friends' moves to this connection; answers the friends' positions as the caller may see them.
    public func watch(_ caller: Caller) -> [VisiblePosition] {
        sessions.setWatching(caller.connection, true)
        let now = clock.now()
        let me = caller.user.id
        // Pushed after the reply (latest-wins slots go out after plain replies): what other nodes last sent, each
        // owner checked against this node's rules now.
        remote?.watchStarted(caller.connection, viewer: me) { [unowned self] owner in
            social.areFriends(owner, me) ? level(of: owner, to: me, now: now) : .hidden
        }
        return social.friends(of: me).sorted().compactMap { visiblePosition(of: $0, to: me, now: now) }
    }

    /// Stops pushing friends' moves to this connection.
    public func unwatch(_ caller: Caller) { stopWatching(caller.connection, user: caller.user.id) }

    /// Stops a connection watching (it unwatched, logged out or closed), withdrawing what is pending for it.
    package func stopWatching(_ connection: ConnectionID, user: Int64) {
        guard sessions.isWatching(connection: connection) else { return }
        events?.positionsWithdrawn(owners: social.friends(of: user), from: connection)
        sessions.setWatching(connection, false)
    }

    /// Sends `owner`'s current position (at the level `viewer` may see) to `viewer`'s watching connections; if
    /// hidden, withdraws anything pending and says so.
    package func showCurrentPosition(of owner: Int64, to viewer: Int64) {
        if remote != nil { showRemotely(owner, to: viewer) }
        guard sessions.isWatching(viewer), let events else { return }
        let now = clock.now()
        if level(of: owner, to: viewer, now: now) == .hidden {
            events.positionHidden(owner: owner, from: viewer)
            return
        }
        guard let position = visiblePosition(of: owner, to: viewer, now: now) else { return }
        events.positionShown(position, to: viewer)
    }

    /// Withdraws `owner`'s pending position from `viewer`'s watching connections.
    package func withdrawPosition(of owner: Int64, from viewer: Int64) {
        if remote != nil { withdrawRemotely(owner, from: viewer) }
        guard sessions.isWatching(viewer) else { return }
        events?.positionWithdrawn(owner: owner, from: viewer)
    }
}
