// The kinds of things Cairn locates. Each kind lives in its own grid so a query for nearby trackers never wades
// through users, and ids only need to be unique within a kind (user 7 and tracker 7 are different points).

/// A kind of indexed point; each has its own grid in a `LayeredIndex`.
public enum SpatialLayer: Int, CaseIterable, Sendable {
    /// People sharing their location.
    case users
    /// Devices reporting on their own (cars, pets, parcels).
    case trackers
    /// Things left at a place for others to find.
    case relics
    /// Named points of interest.
    case places
}
