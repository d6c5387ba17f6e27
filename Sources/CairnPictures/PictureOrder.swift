// The one definition of how pictures are ordered and paged, shared by every store (SQLite and the test fake):
// each sort maps a picture to a key, keys compare totally (ties broken by id, highest first), and a page is the
// first keys strictly after the cursor's. A cursor is the last key of the previous page plus the point the first
// page was measured from, so a later page never depends on where the viewer has walked since, and pictures posted
// in between sort before a date cursor (never duplicated, never skipping older ones). Likes change: a likes cursor
// keeps its promise only for pictures whose count did not change between pages (one liked or unliked meanwhile
// may move across the cursor and be shown twice or not at all).
import CairnCrypto
public import CairnGeo

/// What a store reads of a picture to decide its place in an order and whether a viewer sees it.
public struct PictureCandidate: Sendable, Equatable {
    /// The picture's id.
    public var id: Int64
    /// Where it was posted, if known.
    public var point: GeoPoint?
    /// Its likes.
    public var likes: Int64
    /// When it was posted (ms).
    public var createdAt: Int64
    /// True once hidden from everyone.
    public var hidden: Bool
    /// The private event it belongs to, if any.
    public var privateEvent: Int64?

    /// Creates the value.
    public init(id: Int64, point: GeoPoint?, likes: Int64, createdAt: Int64, hidden: Bool, privateEvent: Int64?) {
        self.id = id
        self.point = point
        self.likes = likes
        self.createdAt = createdAt
        self.hidden = hidden
        self.privateEvent = privateEvent
    }
}

/// Who is looking, as far as visibility goes.
public struct PictureViewer: Sendable, Equatable {
    /// The viewer's account.
    public var user: Int64
    /// Private events the viewer joined (or owns).
    public var joined: Set<Int64>
    /// Pictures the viewer reported (hidden from the viewer at once).
    public var reported: Set<Int64>

    /// Creates the value.
    public init(user: Int64, joined: Set<Int64>, reported: Set<Int64>) {
        self.user = user
        self.joined = joined
        self.reported = reported
    }

    /// Whether the viewer may see `candidate`.
    public func sees(_ candidate: PictureCandidate) -> Bool {
        if candidate.hidden || reported.contains(candidate.id) { return false }
        if let event = candidate.privateEvent { return joined.contains(event) }
        return true
    }
}

/// A picture's place in an order: smaller comes first.
public struct PictureKey: Sendable, Equatable, Comparable {
    /// The integer part (minus the date or minus the likes; 0 for distance).
    public var rank: Int64
    /// The distance part (metres; infinity when unknown; 0 for the other sorts).
    public var distance: Double
    /// The picture's id: among equal parts, the highest id comes first.
    public var id: Int64

    /// Creates the value.
    public init(rank: Int64, distance: Double, id: Int64) {
        self.rank = rank
        self.distance = distance
        self.id = id
    }

    public static func < (a: PictureKey, b: PictureKey) -> Bool {
        if a.rank != b.rank { return a.rank < b.rank }
        if a.distance != b.distance { return a.distance < b.distance }
        return a.id > b.id
    }
}

/// Where the next page starts: the last key shown, the sort it belongs to and the point distances are measured from.
public struct PictureCursor: Sendable, Equatable {
    /// The sort the cursor belongs to.
    public var sort: PictureSort
    /// The last key of the previous page.
    public var after: PictureKey
    /// The point the first page was measured from, if any.
    public var origin: GeoPoint?

    /// Creates the value.
    public init(sort: PictureSort, after: PictureKey, origin: GeoPoint?) {
        self.sort = sort
        self.after = after
        self.origin = origin
    }

    /// The opaque text handed to clients.
    public var text: String {
        var parts = [sort.rawValue, String(after.rank), String(after.distance.bitPattern, radix: 16), String(after.id)]
        if let origin {
            parts.append(String(origin.lat.bitPattern, radix: 16))
            parts.append(String(origin.lon.bitPattern, radix: 16))
        }
        return Base64URL.encode(Array(parts.joined(separator: "~").utf8))
    }

    /// Reads a cursor this hub handed out; nil for anything else.
    public init?(text: String) {
        guard text.utf8.count <= 200, let bytes = Base64URL.decode(text) else { return nil }
        let parts = String(decoding: bytes, as: UTF8.self).split(separator: "~", omittingEmptySubsequences: false)
        guard parts.count == 4 || parts.count == 6, let sort = PictureSort(rawValue: String(parts[0])),
            let rank = Int64(parts[1]), let bits = UInt64(parts[2], radix: 16), let id = Int64(parts[3])
        else { return nil }
        let distance = Double(bitPattern: bits)
        guard !distance.isNaN, distance >= 0, id > 0 else { return nil }
        // A rank this hub hands out: minus a time or a like count (never Int64.min, whose negation traps), or 0 for
        // a distance sort.
        switch sort {
        case .date, .likes: guard rank <= 0, rank > Int64.min else { return nil }
        case .distance: guard rank == 0 else { return nil }
        }
        var origin: GeoPoint?
        if parts.count == 6 {
            guard let lat = UInt64(parts[4], radix: 16), let lon = UInt64(parts[5], radix: 16),
                let point = GeoPoint(lat: Double(bitPattern: lat), lon: Double(bitPattern: lon))
            else { return nil }
            origin = point
        }
        self.init(sort: sort, after: PictureKey(rank: rank, distance: distance, id: id), origin: origin)
    }
}

/// Keys and pages for one sort, measured from one point.
public struct PictureOrder: Sendable {
    /// The sort.
    public var sort: PictureSort
    /// The point distances are measured from (the viewer's, or the cursor's origin).
    public var origin: GeoPoint?

    /// Creates the value.
    public init(sort: PictureSort, origin: GeoPoint?) {
        self.sort = sort
        self.origin = origin
    }

    /// Metres from the origin to `point`; infinity when either is unknown.
    public func distance(to point: GeoPoint?) -> Double {
        guard let origin, let point else { return .infinity }
        return origin.distance(to: point)
    }

    /// `candidate`'s key in this order.
    public func key(_ candidate: PictureCandidate) -> PictureKey {
        switch sort {
        case .date: PictureKey(rank: -candidate.createdAt, distance: 0, id: candidate.id)
        case .likes: PictureKey(rank: -candidate.likes, distance: 0, id: candidate.id)
        case .distance: PictureKey(rank: 0, distance: distance(to: candidate.point), id: candidate.id)
        }
    }

    /// The first `limit` candidates the viewer sees, strictly after `after`, within `radius` metres of the origin
    /// when a radius is given, in order; each with its key.
    public func page(
        _ candidates: [PictureCandidate], viewer: PictureViewer, after: PictureKey?, radius: Double?, limit: Int
    ) -> [(candidate: PictureCandidate, key: PictureKey)] {
        var kept: [(candidate: PictureCandidate, key: PictureKey)] = []
        for candidate in candidates where viewer.sees(candidate) {
            if let radius, !(distance(to: candidate.point) <= radius) { continue }
            let key = key(candidate)
            if let after, !(after < key) { continue }
            kept.append((candidate, key))
        }
        kept.sort { $0.key < $1.key }
        if kept.count > limit { kept.removeLast(kept.count - limit) }
        return kept
    }
}
