// How much of a user's position one friend may see. The server applies it before anything is encoded, so a
// coordinate the viewer may not see never exists in a buffer addressed to them.

/// Visibility of a user's position to a friend.
public enum ShareLevel: String, Sendable, CaseIterable {
    /// The reported coordinates.
    case precise
    /// The centre of a fixed cell of about 2 km (see `ApproximateGrid`).
    case approximate
    /// Nothing.
    case hidden
}

extension ShareLevel {
    /// How much a viewer sees: precise 2, approximate 1, hidden 0 (a lower level shows less).
    var detail: Int {
        switch self {
        case .precise: 2
        case .approximate: 1
        case .hidden: 0
        }
    }
}
