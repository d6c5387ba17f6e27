// What every ingest format (OsmAnd / Traccar Client first) shares once its request is parsed: authenticate the device
// by its key, refuse an inactive tracker, check the fix against the contract's ranges, and commit it as the tracker's
// latest position before the app hears 200 — so a report is either wholly stored or refused with nothing applied.
//
// It runs off the loop, in the HTTP service's task, like `MediaLibrary`: authentication and the write are store calls.
// A key is compared by its SHA-256 digest in constant time. A fix older than the stored one (an app replaying a queue
// out of order) is committed nowhere and still answered 200, so the newest fix stays the latest. Once committed, the
// fix is handed to `committed` (the hub brings it to the loop for the live map of items).

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

/// A parsed report: who sends it, with which key, and the position.
public struct TrackerReport: Sendable, Equatable {
    /// The device id.
    public var device: String
    /// The key, as sent.
    public var key: String
    /// The position, unchecked.
    public var position: PositionReport

    /// Creates the value.
    public init(device: String, key: String, position: PositionReport) {
        self.device = device
        self.key = key
        self.position = position
    }
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

    /// Authenticates the report, checks it and commits it; returns the fix stored (or kept out as older).
    @discardableResult
    public func report(_ report: TrackerReport) async throws(IngestRefusal) -> Fix {
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
        let fix: Fix
        do throws(DomainError) {
            fix = try LiveMap.checkedFix(report.position, now: clock.now(), maxFutureMs: maxFutureMs)
        } catch { throw .malformed(error.message) }
        let latest: Bool
        do { latest = try await store.recordTrackerFix(tracker: found.record.id, fix: fix) } catch {
            hubLogger.error("storage failure: \(error)")
            throw .unavailable
        }
        if latest { committed(found.record, fix) }
        return fix
    }

    /// Equal digests, compared in time independent of where they differ.
    private static func same(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var diff: UInt8 = 0
        for i in a.indices { diff |= a[i] ^ b[i] }
        return diff == 0
    }
}
