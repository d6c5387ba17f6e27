// The values of trackers (seed 002): a device, named by its own unique id, bound to one item. The device proves who
// it is with a secret key the hub hands out once at pairing and keeps only as a digest, like session tokens.
//
// A tracker remembers who paired it: the key sits on a device that person controls, so the tracker is accepted only
// while they are an owner of its item's bucket (`pairerLeft`, worked out by the store on every read). A tracker paired
// before this was recorded has no pairer (nil) and is judged by its `active` flag alone.

/// A tracker as stored.
public struct TrackerRecord: Sendable, Equatable {
    /// Store-assigned id.
    public var id: Int64
    /// The device's own unique id (what OsmAnd calls `id`).
    public var device: String
    /// The item it is bound to.
    public var item: Int64
    /// Whether its reports are accepted.
    public var active: Bool
    /// When it was paired (ms since the epoch).
    public var created: Int64
    /// Whether its device is shown the other items of its item's bucket (OwnTracks' friends); off until an owner
    /// turns it on, since whoever holds the device is not necessarily someone the bucket is shared with.
    public var showsItems: Bool
    /// Who paired it (a user id); nil for a tracker paired before the hub recorded it.
    public var pairedBy: Int64?
    /// True when `pairedBy` is no longer an owner of the item's bucket (unshared, made a viewer, account deleted):
    /// its reports are refused as an inactive tracker's and its device is shown nothing. Read from the store, never
    /// written: it holds again if that user is made an owner again.
    public var pairerLeft: Bool

    /// Creates the value.
    public init(
        id: Int64, device: String, item: Int64, active: Bool, created: Int64, showsItems: Bool = false,
        pairedBy: Int64? = nil, pairerLeft: Bool = false
    ) {
        self.id = id
        self.device = device
        self.item = item
        self.active = active
        self.created = created
        self.showsItems = showsItems
        self.pairedBy = pairedBy
        self.pairerLeft = pairerLeft
    }

    /// Whether its reports are accepted now (its suspended owners aside): active, and its pairer still an owner.
    public var accepted: Bool { active && !pairerLeft }
}

/// A tracker just paired, with its secret key: the only time the key is shown.
public struct PairedTracker: Sendable, Equatable {
    /// The tracker.
    public var record: TrackerRecord
    /// Its secret key (base64url of 32 random bytes).
    public var key: String
}
