// The values of buckets and items (seeds 000 and 002): a bucket is a named collection with owners and viewers, an
// item one thing in it. The store hands out records (who the members are, which upload an item's photo is); the
// feature turns them into the views a caller may see (the caller's role, a signed photo URL or the placeholder).

/// Who, beyond its members, can view a bucket.
public enum BucketPrivacy: String, Sendable, CaseIterable {
    /// Only its owners and those it is shared with.
    case `private`
    /// Also every friend of an owner.
    case friends
}

/// What a member of a bucket may do.
public enum BucketRole: String, Sendable, CaseIterable {
    /// Edits the bucket, shares it, adds and deletes items.
    case owner
    /// Sees it, and ticks items off (`done`).
    case viewer
}

/// A bucket as stored, with its members.
public struct BucketRecord: Sendable, Equatable {
    /// Store-assigned id.
    public var id: Int64
    /// Its name.
    public var name: String
    /// Who beyond its members can view it.
    public var privacy: BucketPrivacy
    /// When it was created (ms since the epoch).
    public var created: Int64
    /// Its members and their roles.
    public var members: [Int64: BucketRole]

    /// Creates the value.
    public init(id: Int64, name: String, privacy: BucketPrivacy, created: Int64, members: [Int64: BucketRole]) {
        self.id = id
        self.name = name
        self.privacy = privacy
        self.created = created
        self.members = members
    }

    /// Its owners, in id order.
    public var owners: [Int64] { members.filter { $0.value == .owner }.map(\.key).sorted() }
    /// Its viewers by share, in id order.
    public var viewers: [Int64] { members.filter { $0.value == .viewer }.map(\.key).sorted() }
}

/// A bucket as one caller sees it.
public struct BucketView: Sendable, Equatable {
    /// The bucket.
    public var record: BucketRecord
    /// The caller's role in it.
    public var role: BucketRole
}

/// An uploaded media file named by an item: the content id and the account that uploaded it.
public struct MediaRef: Sendable, Equatable {
    /// The media id.
    public var id: String
    /// Its uploader.
    public var owner: Int64

    /// Creates the value.
    public init(id: String, owner: Int64) {
        self.id = id
        self.owner = owner
    }
}

/// An item as stored.
public struct ItemRecord: Sendable, Equatable {
    /// Store-assigned id.
    public var id: Int64
    /// Its bucket.
    public var bucket: Int64
    /// Its name.
    public var name: String
    /// A note, when given.
    public var note: String?
    /// Ticked off.
    public var done: Bool
    /// Its photo, when given.
    public var photo: MediaRef?
    /// When it was created (ms since the epoch).
    public var created: Int64
    /// Its tracker, when one is paired.
    public var tracker: Int64?
    /// Its position goes to the bucket's owners only (`item.update {hidden}`).
    public var hidden: Bool
    /// Its owners hear `item.left_behind` when they move away from it (`item.update {alert}`).
    public var alert: Bool

    /// Creates the value.
    public init(
        id: Int64, bucket: Int64, name: String, note: String?, done: Bool, photo: MediaRef?, created: Int64,
        tracker: Int64? = nil, hidden: Bool = false, alert: Bool = false
    ) {
        self.id = id
        self.bucket = bucket
        self.name = name
        self.note = note
        self.done = done
        self.photo = photo
        self.created = created
        self.tracker = tracker
        self.hidden = hidden
        self.alert = alert
    }
}

/// What `item.update` changes; nil leaves a field as it is.
public struct ItemChanges: Sendable, Equatable {
    /// A new name.
    public var name: String?
    /// A new note; empty removes it.
    public var note: String?
    /// A new photo; empty removes it.
    public var photo: String?
    /// Ticked off or not.
    public var done: Bool?
    /// Position for owners only, or for every viewer (owners).
    public var hidden: Bool?
    /// Left-behind alerts on or off (owners).
    public var alert: Bool?

    /// Creates the value.
    public init(
        name: String? = nil, note: String? = nil, photo: String? = nil, done: Bool? = nil, hidden: Bool? = nil,
        alert: Bool? = nil
    ) {
        self.name = name
        self.note = note
        self.photo = photo
        self.done = done
        self.hidden = hidden
        self.alert = alert
    }

    /// True when only `done` is asked for (what a viewer may change).
    var onlyDone: Bool { name == nil && note == nil && photo == nil && hidden == nil && alert == nil }

    /// True when nothing at all is asked for.
    var isEmpty: Bool { onlyDone && done == nil }
}

/// Who may hear where an item is, worked out on the loop when it moves: every viewer of its bucket, or only the
/// owners when the item is hidden.
public struct ItemAudience: Sendable, Equatable {
    /// The item as stored now.
    public var item: ItemRecord
    /// The bucket's owners.
    public var owners: Set<Int64>
    /// Everyone who can view the bucket (owners included).
    public var viewers: Set<Int64>

    /// Those who may see the item's position.
    public var positionTo: Set<Int64> { item.hidden ? owners : viewers }
}

/// An item as shown: `photoURL` (signed) when it has a photo, otherwise `placeholderURL`.
public struct ItemView: Sendable, Equatable {
    /// The item.
    public var record: ItemRecord
    /// A signed URL of its photo.
    public var photoURL: String?
    /// The placeholder image's path, when it has no photo (or no signer is wired).
    public var placeholderURL: String?
}
