// How a simulated user gets around. Each mode has a plausible city speed range; every leg between two waypoints
// draws its speed from the range, so a walker never drives and the server's speed check (300 m/s) never trips.
public import CairnSeed

/// Walking, cycling or driving, with the speed range a leg is drawn from.
public enum TravelMode: String, Sendable, CaseIterable, Codable {
    /// 1.0–1.8 m/s.
    case walking
    /// 3.5–7 m/s.
    case cycling
    /// 8–16.7 m/s (30–60 km/h, city traffic).
    case driving

    /// Metres per second a leg may have.
    public var speedRange: ClosedRange<Double> {
        switch self {
        case .walking: 1.0...1.8
        case .cycling: 3.5...7.0
        case .driving: 8.0...16.7
        }
    }
}

/// The share of users in each mode, e.g. `walking=0.6,cycling=0.25,driving=0.15`.
public struct ModeMix: Sendable, Equatable, Codable {
    /// Weights per mode (not necessarily normalised; at least one is positive).
    public var weights: [TravelMode: Double]

    /// A city mix: mostly walkers.
    public static let city = ModeMix(weights: [.walking: 0.6, .cycling: 0.25, .driving: 0.15])

    /// Creates a mix from weights.
    public init(weights: [TravelMode: Double]) { self.weights = weights }

    /// Parses `mode=weight,...`; nil when a mode is unknown, a weight negative, or all are zero.
    public init?(parsing text: String) {
        var weights: [TravelMode: Double] = [:]
        for part in text.split(separator: ",") {
            let pair = part.split(separator: "=")
            guard pair.count == 2, let mode = TravelMode(rawValue: String(pair[0])), let w = Double(pair[1]), w >= 0
            else { return nil }
            weights[mode] = w
        }
        guard weights.values.contains(where: { $0 > 0 }) else { return nil }
        self.weights = weights
    }

    /// A mode drawn from the mix.
    public func draw(using rng: inout SplitMix64) -> TravelMode {
        let total = TravelMode.allCases.reduce(0) { $0 + (weights[$1] ?? 0) }
        var u = unitInterval(&rng) * total
        for mode in TravelMode.allCases {
            let w = weights[mode] ?? 0
            if u < w { return mode }
            u -= w
        }
        return TravelMode.allCases.last { (weights[$0] ?? 0) > 0 }!
    }

    /// `walking=0.6,cycling=0.25,driving=0.15` (modes in a fixed order).
    public var description: String {
        TravelMode.allCases.compactMap { m in weights[m].map { "\(m.rawValue)=\($0)" } }.joined(separator: ",")
    }
}

/// A uniform double in [0, 1) from 53 random bits.
func unitInterval(_ rng: inout SplitMix64) -> Double {
    Double(rng.next() >> 11) * (1.0 / 9_007_199_254_740_992.0)
}
