public import CairnLoop
// `/v1/ingest/osmand` over plain HTTP on the hub's port: the OsmAnd protocol as OsmAnd's online tracking and Traccar
// Client send it, as a query string or a form body, and Traccar Client's JSON body (version 9 on). `OsmAndRequest`
// reads the request; `TrackerIngest` authenticates, checks and commits the report. Answers: 200 with an empty body
// once stored; 400 with the reason for a malformed report; 401 for missing or bad credentials; 403 for an inactive
// tracker; 503 when the store failed (`IngestReplies`). Nothing is applied unless the answer is 200.
public import CairnTrackers

/// The HTTP service for OsmAnd / Traccar Client reports.
public struct OsmAndEndpoint: HTTPService {
    /// Where it is mounted.
    public static let path = "/v1/ingest/osmand"
    /// The largest form body accepted.
    public static let maxBodyBytes = 8192
    private let ingest: TrackerIngest

    /// Creates the endpoint over the hub's ingest.
    public init(ingest: TrackerIngest) { self.ingest = ingest }

    /// Reads, authenticates and stores one report.
    public func handle(_ request: HTTPRequest) async -> HTTPReply {
        guard request.method == "GET" || request.method == "POST" else {
            return IngestReplies.methodNotAllowed("GET, POST")
        }
        let report: TrackerReport
        switch Self.parse(request) {
        case .success(let parsed): report = parsed
        case .failure(let refusal):
            ingest.refused(refusal)
            return IngestReplies.reply(refusal)
        }
        do {
            try await ingest.report(report)
            return HTTPReply(status: 200, contentType: "text/plain; charset=utf-8", body: .bytes([]))
        } catch { return IngestReplies.reply(error) }
    }

    /// The report in a request, or why it is refused (credentials are checked only for being present).
    static func parse(_ request: HTTPRequest) -> Result<TrackerReport, IngestRefusal> {
        do throws(IngestProblem) {
            let parsed = try OsmAndRequest.parse(
                method: request.method, query: request.query, contentType: request.contentType,
                authorization: request.authorization, body: request.body)
            var report = TrackerReport(device: parsed.device, key: parsed.key, positions: parsed.fixes.map(\.report))
            report.markedInvalid = Set(parsed.fixes.indices.filter { parsed.fixes[$0].markedInvalid })
            return .success(report)
        } catch { return .failure(error.refusal) }
    }
}
