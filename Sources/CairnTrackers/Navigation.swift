// The hand-off from "find my item" to a navigation app (seed 002): where the item is as a `geo:` URI (RFC 5870, with
// the fix's accuracy as its uncertainty), and directions there in Apple Maps and Google Maps, walking when the caller
// is near and public transport when far. Without the caller's position the apps start from the phone's own location
// (no `saddr` / `origin`), and the mode is transit: Cairn cannot tell how far it is, and transit directions fall back
// to walking for a short trip while walking directions for a long one are useless.
//
// Coordinates are written with exactly six decimals (about 0.1 m), the same for the same fix on every platform: the
// URLs are text a test can compare, not a float's shortest round trip.
public import CairnCore

/// How to get to an item.
public struct Navigation: Sendable, Equatable {
    /// The travel mode suggested.
    public enum Mode: String, Sendable {
        /// On foot (near).
        case walking
        /// Public transport (far, or distance unknown).
        case transit
    }

    /// The travel mode.
    public var mode: Mode
    /// `geo:lat,lon` or `geo:lat,lon;u=metres` (RFC 5870).
    public var geo: String
    /// An Apple Maps directions URL.
    public var apple: String
    /// A Google Maps directions URL (Maps URLs, `api=1`).
    public var google: String

    /// Directions to `item` from `from` (nil: from wherever the phone is), walking up to `walkingDistance` metres.
    public init(to item: Fix, from: Fix?, distance: Double?, walkingDistance: Double) {
        if let distance, distance <= walkingDistance { mode = .walking } else { mode = .transit }
        let destination = Self.pair(item.lat, item.lon)
        geo = "geo:" + destination + (item.acc.map { ";u=" + Self.metres($0) } ?? "")
        let origin = from.map { Self.pair($0.lat, $0.lon) }
        apple =
            "https://maps.apple.com/?" + (origin.map { "saddr=\($0)&" } ?? "") + "daddr=\(destination)&dirflg="
            + (mode == .walking ? "w" : "r")
        google =
            "https://www.google.com/maps/dir/?api=1" + (origin.map { "&origin=\($0)" } ?? "")
            + "&destination=\(destination)&travelmode=\(mode.rawValue)"
    }

    /// `lat,lon` with six decimals each.
    static func pair(_ lat: Double, _ lon: Double) -> String { decimal(lat) + "," + decimal(lon) }

    /// `value` rounded to six decimals, written out in full (`-0.000001`, `52.520000`).
    static func decimal(_ value: Double) -> String {
        let scaled = (value * 1_000_000).rounded()
        guard scaled.isFinite, abs(scaled) < 1e15 else { return "0.000000" }
        let micro = Int64(scaled)
        let magnitude = micro.magnitude
        let whole = magnitude / 1_000_000
        let fraction = String(magnitude % 1_000_000)
        let padded = String(repeating: "0", count: 6 - fraction.count) + fraction
        return (micro < 0 ? "-" : "") + "\(whole).\(padded)"
    }

    /// An uncertainty in whole metres, rounded up (never claims more precision than the fix has).
    static func metres(_ value: Double) -> String {
        guard value.isFinite, value > 0 else { return "0" }
        return String(Int64(min(value, 1e12).rounded(.up)))
    }
}

/// Where an item is, as `item.locate` answers it.
public struct ItemLocation: Sendable, Equatable {
    /// The item.
    public var item: Int64
    /// Its tracker's latest fix; nil when it never reported, or the item is hidden from the caller.
    public var position: Fix?
    /// Metres from the caller's last position to the item, rounded to whole metres; nil when either is unknown.
    public var distance: Double?
    /// How to get there; nil when the position is.
    public var navigate: Navigation?
}
