// Where an item is: it lives in the core because the hub's events carry it (`HubEvents.itemMoved`); the trackers
// feature (`Trackers`) decides who may see it.

/// Where an item is: the latest fix of its tracker.
public struct ItemPosition: Sendable, Equatable {
    /// The item.
    public var item: Int64
    /// Its tracker's latest fix.
    public var fix: Fix

    /// Creates the value.
    public init(item: Int64, fix: Fix) {
        self.item = item
        self.fix = fix
    }
}
