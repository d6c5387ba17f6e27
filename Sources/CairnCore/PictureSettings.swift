// The pictures settings an admin may change while the hub runs (issue 14: report threshold, largest nearby radius,
// whether guests may post, posts per hour). Options give their values at start; `Pictures.settings` holds the ones
// in force and can be replaced at once, so the admin feature can persist and apply new ones without a restart.

/// The pictures settings in force.
public struct PictureSettings: Sendable, Equatable {
    /// Distinct non-guest reporters that hide a picture from everyone.
    public var reportThreshold: Int
    /// The largest radius `picture.nearby` and `pictures.watch` accept (m).
    public var maxNearbyRadius: Double
    /// Whether guest accounts may post pictures.
    public var guestsMayPost: Bool
    /// Pictures one user may post per hour.
    public var postsPerHour: Int

    /// Creates the value.
    public init(
        reportThreshold: Int = 3, maxNearbyRadius: Double = 5_000, guestsMayPost: Bool = false,
        postsPerHour: Int = 30
    ) {
        self.reportThreshold = reportThreshold
        self.maxNearbyRadius = maxNearbyRadius
        self.guestsMayPost = guestsMayPost
        self.postsPerHour = postsPerHour
    }

    /// The problem with these values, naming the setting, or nil when they are valid.
    public var problem: String? {
        if !(1...1_000).contains(reportThreshold) { return "report_threshold must be 1–1000" }
        if !(maxNearbyRadius >= 10 && maxNearbyRadius <= 100_000) { return "max_nearby_radius must be 10–100000 m" }
        if !(1...100_000).contains(postsPerHour) { return "posts_per_hour must be 1–100000" }
        return nil
    }
}
