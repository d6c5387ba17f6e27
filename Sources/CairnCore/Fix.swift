// A reported position, as the hub keeps it in memory for every live user: the contract's fields, already
// validated, plus the server's verdict on it (an implausible implied speed is flagged, never silently dropped).

/// One position report.
public struct Fix: Sendable, Equatable {
    /// Latitude, degrees.
    public var lat: Double
    /// Longitude, degrees.
    public var lon: Double
    /// Horizontal accuracy, metres.
    public var acc: Double?
    /// Altitude, metres.
    public var alt: Double?
    /// Speed, m/s.
    public var spd: Double?
    /// Heading, degrees [0, 360).
    public var hdg: Double?
    /// Battery, percent [0, 100].
    public var bat: Double?
    /// When the fix was taken, ms since the epoch.
    public var ts: Int64
    /// True when the speed implied by the previous fix exceeded the configured maximum.
    public var flagged: Bool

    /// Creates a fix.
    public init(
        lat: Double, lon: Double, acc: Double? = nil, alt: Double? = nil, spd: Double? = nil,
        hdg: Double? = nil, bat: Double? = nil, ts: Int64, flagged: Bool = false
    ) {
        self.lat = lat
        self.lon = lon
        self.acc = acc
        self.alt = alt
        self.spd = spd
        self.hdg = hdg
        self.bat = bat
        self.ts = ts
        self.flagged = flagged
    }
}
