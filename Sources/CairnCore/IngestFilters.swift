// The ingest's filters, after Traccar's `FilterHandler`: a well-formed fix a tracker reports can still be one not
// worth showing — no fix at all (0, 0), a clock far ahead, the same fix again, a vague one, a jump no vehicle makes,
// or simply more often than wanted. Such a fix is dropped: counted, not stored, and answered 200 like any other,
// because the apps resend whatever is not acknowledged and would resend it forever.
//
// Each fix of a report is judged in time order against the last fix accepted (the stored latest, then the batch's
// own accepted fixes). The speed filter re-anchors: after `reanchorAfter` consecutive rejections, or once the last
// accepted fix is `reanchorGapMs` old, the next fix is accepted as it is — so a tracker that really moved while
// nobody heard it (a flight with the phone off) is not frozen at its old place, as Traccar's `filter.maxSpeed`
// freezes it. The count of consecutive rejections is stored with the tracker, so a restart does not reset it.
//
// The filters are part of the hub's configuration, so they live in the core; the trackers feature judges fixes
// with them (`IngestFilters+Judge.swift`).
import CairnGeo

/// Which filters the ingest applies, and their bounds. Zero turns a bound off.
public struct IngestFilters: Sendable, Equatable {
    /// Drop fixes the device itself marks as not valid (no satellite fix).
    public var invalid = true
    /// Drop fixes at exactly (0, 0), what a receiver without a fix often sends.
    public var zero = true
    /// Drop fixes timed more than this far ahead of the hub's clock (ms). Never off: a fix dated next year would
    /// stay the latest and hide every true fix behind it.
    public var futureMs: Int64 = 5 * 60 * 1000
    /// Drop a fix timed exactly like the last accepted one (an app resending what it already sent).
    public var duplicate = true
    /// Drop fixes whose accuracy radius is larger than this (m); 0: off.
    public var maxAccuracy: Double = 0
    /// Drop a fix whose great-circle speed from the last accepted one is above this (m/s); 0: off.
    public var maxSpeed: Double = 350
    /// After this many consecutive speed rejections the next fix is accepted as a new anchor; 0: never by count.
    public var reanchorAfter = 3
    /// A fix this long after the last accepted one (ms) is not speed-checked; 0: never by time.
    public var reanchorGapMs: Int64 = 30 * 60 * 1000
    /// Drop a fix less than this after the last accepted one (ms); 0: off.
    public var minPeriodMs: Int64 = 0

    /// The defaults above.
    public init() {}
}

/// Why a well-formed fix was dropped; the label of `cairn_ingest_filtered_total`.
public enum IngestDrop: String, CaseIterable, Sendable, Equatable {
    /// The device marked it as not valid.
    case invalid
    /// It was at (0, 0).
    case zero
    /// It was timed too far in the future.
    case future
    /// Its timestamp equals the last accepted fix's.
    case duplicate
    /// Its accuracy was worse than the bound.
    case accuracy
    /// It came sooner than the minimum period after the last accepted fix.
    case period
    /// It implied a speed above the maximum from the last accepted fix.
    case speed
}

/// Why the speed filter accepted a fix it would otherwise have dropped; the label of
/// `cairn_ingest_speed_reanchors_total`.
public enum SpeedReanchor: String, CaseIterable, Sendable, Equatable {
    /// Enough consecutive fixes had been dropped for speed.
    case count
    /// The last accepted fix was old enough.
    case gap
}
