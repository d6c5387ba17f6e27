// `GET /v1/admin/stats.csv?days=N` over plain HTTP on the hub's port: the daily figures of `admin.stats` as CSV, for
// a spreadsheet or a cron job, with the bearer token of an admin (`Authorization: Bearer <token>`). 401 without a
// token or with one that is invalid, expired or revoked (with a Bearer challenge), 403 for an account that is not
// an admin (or is suspended), 400 for a `days` outside 1–366, 404 for another path under the prefix, 405 for another
// method without a body (the mount takes none, so the transport answers a body with 411 or 413 before this runs).
// The token and the role are checked and the figures read off the loop, in the service's task.
public import CairnAdmin
import CairnCore
import CairnErrorCodes
public import CairnLoop

/// The HTTP service for the daily figures as CSV.
public struct AdminStatsEndpoint: HTTPService {
    /// Where it is mounted.
    public static let pathPrefix = "/v1/admin"
    /// The one path it serves.
    public static let path = "/v1/admin/stats.csv"

    private let statistics: AdminStatistics

    /// Creates the endpoint over the hub's figures.
    public init(statistics: AdminStatistics) { self.statistics = statistics }

    /// Serves the CSV.
    public func handle(_ request: HTTPRequest) async -> HTTPReply {
        guard request.path == Self.path else { return .plainText(404, "not found\n") }
        guard request.method == "GET" || request.method == "HEAD" else {
            return .plainText(405, "method not allowed\n", headers: [("Allow", "GET, HEAD")])
        }
        do throws(DomainError) {
            _ = try await statistics.admin(token: MediaEndpoint.bearerToken(request.authorization))
            let days = try AdminStatistics.checkedDays(try Self.days(request.query))
            let rows = try await statistics.rows(days: days)
            return HTTPReply(
                status: 200, contentType: "text/csv; charset=utf-8; header=present",
                headers: [
                    ("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff"),
                    ("Content-Disposition", #"attachment; filename="cairn-stats.csv""#),
                ],
                body: .bytes(Array(DailyStatsCSV.text(rows).utf8)))
        } catch {
            switch error.code {
            case .unauthorized:
                return .plainText(401, error.message + "\n", headers: [("WWW-Authenticate", "Bearer")])
            case .forbidden, .suspended: return .plainText(403, error.message + "\n")
            case .badRequest: return .plainText(400, error.message + "\n")
            default: return .plainText(500, "storage failure; try again\n")
            }
        }
    }

    /// The `days` parameter of the query: nil when absent; `bad_request` when it is not a whole number.
    static func days(_ query: String?) throws(DomainError) -> Int64? {
        guard let query else { return nil }
        for pair in query.split(separator: "&") where pair.hasPrefix("days=") {
            guard let days = Int64(pair.dropFirst(5)) else {
                throw .badRequest("field 'days' must be 1–\(AdminStatistics.maxDays)")
            }
            return days
        }
        return nil
    }
}
