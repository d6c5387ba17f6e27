// What every ingest format (OsmAnd / Traccar Client, OwnTracks, Overland) shares once its request is parsed:
// authenticate the device by its key, refuse an inactive tracker, check every fix of the report against the
// contract's ranges, pass each through the filters (`IngestFilters`), and commit the newest accepted one as the
// tracker's latest position before the app hears 200.
//
// Two kinds of "no": a malformed report (a value out of the contract's range, e.g. lat 91 or a negative accuracy)
// is refused whole with a reason (400) and nothing applied; a well-formed fix a filter drops is counted and left out
// while the report is still answered 200, so one batch may have fixes dropped and others stored. A fix older than
// the stored one (an app replaying a queue out of order) is committed nowhere and still answered 200, so the newest
// fix stays the latest; a batch's fixes may arrive in any order and are judged oldest first.
//
// A tracker is accepted only while whoever paired it is an owner of its item's bucket: the key is on a device they
// control, so once they are unshared or made a viewer its reports are refused as an inactive tracker's (403), checked
// when the report is read and again in the write (`TrackerStore.recordTrackerIngest`).
//
// A tracker reports for an item, and an item belongs to its bucket's owners: while every one of them is suspended
// (docs/PROTOCOL.md, Administration) its reports are refused (403 `suspended`) and nothing is stored; a bucket with
// an owner in good standing keeps its trackers. A timed suspension ends by itself: the store is asked with `now`.
//
// Once the device has proved its key, each request spends one of the tracker's request budget (`IngestRate`); past it
// the report is refused (429) before anything else is read or written. An endpoint that authenticated the tracker
// from the headers spends it there instead (`spend`), so a refused request's body is never read.
//
// It runs off the loop, in the HTTP service's task, like `MediaLibrary`: authentication and the write are store calls.
// A key is compared by its SHA-256 digest in constant time, and an unknown device is refused exactly like a wrong
// key. Two reports of one device at once are both judged against the same stored latest; the store keeps the newer
// fix, and the later commit's count of speed rejections wins (apps send one report at a time). Once committed, the
// fix is handed to `committed` (the hub brings it to the loop for the live map of items).
public import CairnCore
import CairnCrypto
public import CairnLiveMap
import Logging

/// Why a report was refused; each maps to one HTTP status.
public enum IngestRefusal: Error, Equatable, Sendable {
    /// The report is malformed or out of range (400), with the reason.
    case malformed(String)
    /// No such device, or the key does not match (401).
    case badCredentials
    /// The tracker is paired but not active, or whoever paired it is no longer an owner of its bucket (403).
    case inactive
    /// The store failed; nothing was applied (503).
    case unavailable
    /// Every owner of the tracker's bucket is suspended (403).
    case suspended
    /// The tracker reports faster than its budget allows (429); a token is there again after this many ms.
    case rateLimited(retryAfterMs: Int64)

    /// Every label, in the order /metrics lists them.
    public static let labels = ["malformed", "credentials", "inactive", "unavailable", "suspended", "rate_limited"]

    /// Its label in `cairn_ingest_refused_total`.
    public var label: String {
        switch self {
        case .malformed: "malformed"
        case .badCredentials: "credentials"
        case .inactive: "inactive"
        case .unavailable: "unavailable"
        case .suspended: "suspended"
        case .rateLimited: "rate_limited"
        }
    }
}

/// A parsed report: who sends it, with which key, and its positions (one, or an Overland batch).
public struct TrackerReport: Sendable, Equatable {
    /// The device id.
    public var device: String
    /// The key, as sent.
    public var key: String
    /// The positions, unchecked, in the order sent (not necessarily in time order). Never empty.
    public var positions: [PositionReport]
    /// Indices into `positions` of those the device marks as not valid (no satellite fix, e.g. the OsmAnd
    /// protocol's `valid=false`): well-formed, and dropped by the invalid filter.
    public var markedInvalid: Set<Int> = []

    /// A report of one position.
    public init(device: String, key: String, position: PositionReport) {
        self.init(device: device, key: key, positions: [position])
    }

    /// A report of several positions (an Overland batch).
    public init(device: String, key: String, positions: [PositionReport]) {
        self.device = device
        self.key = key
        self.positions = positions
    }
}

/// What became of an accepted report.
public struct IngestReceipt: Sendable, Equatable {
    /// The tracker that sent it.
    public var tracker: TrackerRecord
    /// The report's fixes, checked, oldest first.
    public var fixes: [Fix]
    /// What the filters made of each of `fixes`.
    public var verdicts: [IngestVerdict]
    /// The fix that became the tracker's latest, or nil when none did (all dropped, or a newer one was stored).
    public var latest: Fix?
}

/// Authenticates, filters and stores trackers' reports. Safe from any thread.
public final class TrackerIngest: Sendable {
    private let store: any TrackerStore
    private let clock: any Clock
    private let filters: IngestFilters
    /// Shared with `TrackerLookup`, whose refusals count here too.
    let counters = IngestCounters()
    private let committed: @Sendable (TrackerRecord, Fix) -> Void
    /// Each tracker's request budget (`IngestRate`).
    private let rate: IngestRate

    package init(
        store: any TrackerStore, clock: any Clock, filters: IngestFilters,
        rate: (perSecond: Double, burst: Int) = (0, 1),
        committed: @escaping @Sendable (TrackerRecord, Fix) -> Void
    ) {
        self.store = store
        self.clock = clock
        self.filters = filters
        self.rate = IngestRate(perSecond: rate.perSecond, burst: rate.burst)
        self.committed = committed
    }

    /// The most positions one report may carry.
    public static let batchLimit = 1000

    /// What became of reports and fixes since start (for /metrics).
    public var counts: IngestCounts { counters.current }

    /// Counts a refusal made before a report reached `report` (an endpoint that could not read the request).
    public func refused(_ refusal: IngestRefusal) { counters.refused(refusal) }

    /// Spends one request of `tracker`'s budget (an endpoint that authenticated the tracker from a request's headers,
    /// before reading its body); throws `rateLimited`, counted, when it is spent.
    public func spend(_ tracker: TrackerRecord) throws(IngestRefusal) {
        if let wait = rate.take(tracker.id, now: clock.now()) {
            refused(.rateLimited(retryAfterMs: wait))
            throw .rateLimited(retryAfterMs: wait)
        }
    }

    /// Trackers whose request budget is being tracked (for tests of its bound).
    var rateTracked: Int { rate.tracked }

    /// Authenticates the report, checks every fix, filters them and commits the newest accepted; says what became of
    /// it. The request spends one of the tracker's budget once it is authenticated, unless the endpoint has already
    /// `spent` it for this request.
    @discardableResult
    public func report(_ report: TrackerReport, spent: Bool = false) async throws(IngestRefusal) -> IngestReceipt {
        do {
            let (receipt, counts) = try await ingest(report, spent: spent)
            counters.add(counts)
            return receipt
        } catch {
            refused(error)
            throw error
        }
    }

    private func ingest(
        _ report: TrackerReport, spent: Bool
    ) async throws(IngestRefusal) -> (IngestReceipt, IngestCounts) {
        guard !report.positions.isEmpty else { throw .malformed("the report has no position") }
        guard report.positions.count <= Self.batchLimit else {
            throw .malformed("a report carries at most \(Self.batchLimit) positions")
        }
        guard Trackers.isDeviceID(report.device), let digest = Trackers.keyDigest(report.key) else {
            throw .badCredentials
        }
        let now = clock.now()
        let found: TrackerIngestState?
        // Found by the key's digest, then held to the device named: an unknown device and a known one with a wrong key
        // take the same path, a look-up that finds nothing.
        do { found = try await store.trackerIngestState(keyDigest: digest, now: now) } catch {
            hubLogger.error("storage failure: \(error)")
            throw .unavailable
        }
        guard let found, Digest.constantTimeEqual(found.keyDigest, digest), found.record.device == report.device else {
            throw .badCredentials
        }
        if !spent, let wait = rate.take(found.record.id, now: now) { throw .rateLimited(retryAfterMs: wait) }
        guard found.record.accepted else { throw .inactive }
        guard !found.ownersSuspended else { throw .suspended }
        // Range checks first, for the whole report: one malformed position refuses it all. The future bound is a
        // filter here, not a refusal: a tracker whose clock runs ahead must not be made to resend forever.
        var checked: [(fix: Fix, invalid: Bool)] = []
        checked.reserveCapacity(report.positions.count)
        for (n, position) in report.positions.enumerated() {
            do throws(DomainError) {
                let fix = try LiveMap.checkedFix(position, now: now, maxFutureMs: nil)
                checked.append((fix, report.markedInvalid.contains(n)))
            } catch {
                throw .malformed(report.positions.count == 1 ? error.message : "position \(n + 1): \(error.message)")
            }
        }
        checked.sort { $0.fix.ts < $1.fix.ts }
        var state = IngestFilterState(last: found.latest, speedRejections: found.speedRejections)
        var counts = IngestCounts()
        var verdicts: [IngestVerdict] = []
        verdicts.reserveCapacity(checked.count)
        var newest: Fix?
        for (fix, invalid) in checked {
            let verdict = filters.judge(fix, markedInvalid: invalid, state: &state, now: now)
            verdicts.append(verdict)
            switch verdict {
            case .accepted(let reanchor):
                if newest != nil { counts.superseded += 1 }
                newest = fix
                if let reanchor { counts.reanchors[reanchor, default: 0] += 1 }
            case .older: counts.older += 1
            case .dropped(let reason): counts.dropped[reason, default: 0] += 1
            }
        }
        var latest = false
        if newest != nil || state.speedRejections != found.speedRejections {
            do {
                latest = try await store.recordTrackerIngest(
                    tracker: found.record.id, fix: newest, speedRejections: state.speedRejections)
            } catch TrackerStoreError.notActive {
                throw .inactive  // deactivated, unpaired or its pairer unshared meanwhile: nothing was written
            } catch {
                hubLogger.error("storage failure: \(error)")
                throw .unavailable
            }
        }
        if let newest {
            if latest {
                counts.stored += 1
                committed(found.record, newest)
            } else {
                counts.older += 1  // a newer fix was stored meanwhile, by another report
            }
        }
        let receipt = IngestReceipt(
            tracker: found.record, fixes: checked.map(\.fix), verdicts: verdicts, latest: latest ? newest : nil)
        return (receipt, counts)
    }
}
