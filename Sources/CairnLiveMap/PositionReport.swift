// A position as a client reports it, before any rule has looked at it: the protocol layer fills it from a `pos`
// request (or, later, from a tracker's ingest format) and the live map checks every range. Plain values, so
// building one costs nothing on the hot path.

/// A reported position, unchecked.
public struct PositionReport: Sendable, Equatable {
    /// Latitude in degrees.
    public var lat: Double
    /// Longitude in degrees.
    public var lon: Double
    /// Accuracy in metres.
    public var acc: Double?
    /// Altitude in metres.
    public var alt: Double?
    /// Speed in m/s.
    public var spd: Double?
    /// Heading in degrees.
    public var hdg: Double?
    /// Battery in percent.
    public var bat: Double?
    /// When it was measured, ms since the epoch (nil: now).
    public var ts: Int64?

    /// Creates the value.
    public init(
        lat: Double, lon: Double, acc: Double? = nil, alt: Double? = nil, spd: Double? = nil,
        hdg: Double? = nil, bat: Double? = nil, ts: Int64? = nil
    ) {
        self.lat = lat
        self.lon = lon
        self.acc = acc
        self.alt = alt
        self.spd = spd
        self.hdg = hdg
        self.bat = bat
        self.ts = ts
    }
}

/// What became of a checked fix.
public enum FixOutcome: Sendable, Equatable {
    /// It is the new latest position and was pushed to watching friends.
    case accepted
    /// As `accepted`, but its implied speed exceeded the maximum.
    case flagged
    /// It is older than the latest one: kept as history, not pushed.
    case stale
}
