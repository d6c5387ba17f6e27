// The bytes of HTTP request bodies the server holds in memory at once, and who may hold them. Bodies are buffered
// whole, so one budget bounds them all (`ServerConfiguration.maxBufferedBodyBytes`); within it each kind of body
// keeps a part the other kind cannot take: trackers reporting all at once cannot make a signed-in user's upload wait,
// and a few large uploads cannot make every tracker's report wait. A request is reserved its declared length once its
// service admitted it from the headers (both kinds authenticate first), and gives it back when its reply comes or
// its client leaves.
import CairnLoop

/// The share of the body budget a mount's bodies draw on.
public enum HTTPBodyPool: Sendable {
    /// Media uploads (and any mount not marked otherwise).
    case uploads
    /// Trackers' reports.
    case ingest
}

/// Bytes held per pool, within the server's budget. Loop thread only (a plain value in `HTTPEndpoint`).
struct BodyBudget {
    /// Bytes all bodies may hold at once.
    let total: Int
    /// Bytes of `total` that ingest bodies may not take.
    let keptForUploads: Int
    /// Bytes of `total` that uploads may not take.
    let keptForIngest: Int
    private(set) var uploads = 0
    private(set) var ingest = 0

    init(configuration: ServerConfiguration) {
        total = configuration.maxBufferedBodyBytes
        keptForUploads = total / 100 * min(max(configuration.uploadBodyReservePercent, 0), 100)
        keptForIngest = total / 100 * min(max(configuration.ingestBodyReservePercent, 0), 100)
    }

    /// Bytes held now, over both pools.
    var held: Int { uploads + ingest }

    /// True when `length` more bytes of `pool` fit: within the whole budget, and leaving the other pool its part.
    func fits(_ length: Int, in pool: HTTPBodyPool) -> Bool {
        guard held + length <= total else { return false }
        switch pool {
        case .uploads: return uploads + length <= total - keptForIngest
        case .ingest: return ingest + length <= total - keptForUploads
        }
    }

    /// Holds `length` bytes of `pool`.
    mutating func reserve(_ length: Int, in pool: HTTPBodyPool) {
        switch pool {
        case .uploads: uploads += length
        case .ingest: ingest += length
        }
    }

    /// Gives back `length` bytes of `pool`.
    mutating func release(_ length: Int, in pool: HTTPBodyPool) {
        reserve(-length, in: pool)
    }
}
