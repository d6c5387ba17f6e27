// What every ingest format (OsmAnd / Traccar Client, OwnTracks, Overland) shares once its request is parsed:
// authenticate the device by its key, refuse an inactive tracker, check every fix of the report against the
// contract's ranges, and commit the newest as the tracker's latest position before the app hears 200 — so a report
// (one fix, or an Overland batch) is either wholly stored or refused with nothing applied.
//
// It runs off the loop, in the HTTP service's task, like `MediaLibrary`: authentication and the write are store calls.
// A key is compared by its SHA-256 digest in constant time. A fix older than the stored one (an app replaying a queue
// out of order) is committed nowhere and still answered 200, so the newest fix stays the latest; a batch's fixes may
// arrive in any order. Once committed, the fix is handed to `committed` (the hub brings it to the loop for the live
// map of items).

/// Why a report was refused; each maps to one HTTP status.
public enum IngestRefusal: Error, Equatable, Sendable {
    /// The report is malformed or out of range (400), with the reason.
    case malformed(String)
    /// No such device, or the key does not match (401).
    case badCredentials
    /// The tracker is paired but not active (403).
    case inactive
    /// The store failed; nothing was applied (503).
    case unavailable
}

/// A parsed report: who sends it, with which key, and its positions (one, or an Overland batch).
public struct TrackerReport: Sendable, Equatable {
    /// The device id.
    public var device: String
    /// The key, as sent.
    public var key: String
    /// The positions, unchecked, in the order sent (not necessarily in time order). Never empty.
    public var positions: [PositionReport]

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
    /// The fix that became the tracker's latest, or nil when a newer one was already stored.
    public var latest: Fix?
}

/// Authenticates and stores trackers' reports. Safe from any thread.
public final class TrackerIngest: Sendable {
    private let store: any TrackerStore
    private let clock: any Clock
    private let maxFutureMs: Int64
    private let committed: @Sendable (TrackerRecord, Fix) -> Void

    init(
        store: any TrackerStore, clock: any Clock, maxFutureMs: Int64,
        committed: @escaping @Sendable (TrackerRecord, Fix) -> Void
    ) {
        self.store = store
        self.clock = clock
        self.maxFutureMs = maxFutureMs
        self.committed = committed
    }

    /// The most positions one report may carry.
    public static let batchLimit = 1000

    /// Authenticates the report, checks every fix and commits the newest; says what became of it.
    @discardableResult
    public func report(_ report: TrackerReport) async throws(IngestRefusal) -> IngestReceipt {
        guard !report.positions.isEmpty else { throw .malformed("the report has no position") }
        guard report.positions.count <= Self.batchLimit else {
            throw .malformed("a report carries at most \(Self.batchLimit) positions")
        }
        guard Trackers.isDeviceID(report.device), let digest = Trackers.keyDigest(report.key) else {
            throw .badCredentials
        }
        let found: (record: TrackerRecord, keyDigest: [UInt8])?
        do { found = try await store.tracker(device: report.device) } catch {
            hubLogger.error("storage failure: \(error)")
            throw .unavailable
        }
        guard let found, Self.same(found.keyDigest, digest) else { throw .badCredentials }
        guard found.record.active else { throw .inactive }
        let now = clock.now()
        var fixes: [Fix] = []
        fixes.reserveCapacity(report.positions.count)
        for (n, position) in report.positions.enumerated() {
            do throws(DomainError) {
                fixes.append(try LiveMap.checkedFix(position, now: now, maxFutureMs: maxFutureMs))
            } catch {
                throw .malformed(report.positions.count == 1 ? error.message : "position \(n + 1): \(error.message)")
            }
        }
        fixes.sort { $0.ts < $1.ts }
        let newest = fixes[fixes.count - 1]
        let latest: Bool
        do { latest = try await store.recordTrackerFix(tracker: found.record.id, fix: newest) } catch {
            hubLogger.error("storage failure: \(error)")
            throw .unavailable
        }
        if latest { committed(found.record, newest) }
        return IngestReceipt(tracker: found.record, fixes: fixes, latest: latest ? newest : nil)
    }

    /// Equal digests, compared in time independent of where they differ.
    private static func same(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var diff: UInt8 = 0
        for i in a.indices { diff |= a[i] ^ b[i] }
        return diff == 0
    }
}
