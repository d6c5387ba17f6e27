// Relics and media (docs/PROTOCOL.md, "Relics", "Media"): leave, list, open and delete relics; upload pictures and
// videos to `/v1/media` over plain HTTP with the session's token, and fetch the signed URLs the hub hands out.
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension CairnClient {
    private struct RelicReply: Decodable { var relic: Relic }
    private struct NearbyReply: Decodable {
        var relics: [Relic]
        var truncated: Bool?
    }
    private struct MineReply: Decodable {
        var relics: [Relic]
        var more: Bool
    }
    private struct MediaReply: Decodable { var media: String }
    private struct HTTPError: Decodable { var error: String }

    /// Leaves a relic where you stand (`relic.create`); your position must be confirmed (two plausible reports).
    /// - Throws: ``CairnError`` `bad_request` (no confirmed position), `too_far`, `forbidden` (while paused),
    ///   `rate_limited`, `not_found` (a media id you did not upload).
    public func createRelic(_ relic: NewRelic) async throws -> Relic {
        try await request("relic.create", try JSONValue.fields(of: relic), as: RelicReply.self).relic
    }

    /// Live relics within `radius` metres (default 2,000, at most 10,000) of your trusted position, nearest first
    /// (`relic.nearby`): markers, without text.
    public func nearbyRelics(radius: Double? = nil) async throws -> [Relic] {
        var fields: [String: JSONValue] = [:]
        if let radius { fields["radius"] = .double(radius) }
        return try await request("relic.nearby", fields, as: NearbyReply.self).relics
    }

    /// Opens a relic (`relic.open`): its text, media and creator.
    /// - Throws: ``CairnError`` `not_found`, `expired`, `too_far` (with `distance` and `radius` in
    ///   ``CairnError/details``), `wrong_password`, `rate_limited`.
    public func openRelic(_ id: Int64, password: String? = nil) async throws -> Relic {
        var fields: [String: JSONValue] = ["relic": .int(id)]
        if let password { fields["password"] = .string(password) }
        return try await request("relic.open", fields, as: RelicReply.self).relic
    }

    /// Your relics, newest first, live and expired (`relic.mine`); `more` tells whether to ask `before` the last id.
    public func myRelics(before: Int64? = nil, limit: Int? = nil) async throws -> (relics: [Relic], more: Bool) {
        var fields: [String: JSONValue] = [:]
        if let before { fields["before"] = .int(before) }
        if let limit { fields["limit"] = .int(Int64(limit)) }
        let reply = try await request("relic.mine", fields, as: MineReply.self)
        return (reply.relics, reply.more)
    }

    /// Deletes one of your relics (`relic.delete`).
    public func deleteRelic(_ id: Int64) async throws {
        try await request("relic.delete", ["relic": .int(id)])
    }

    /// Uploads a picture or video to `POST /v1/media` with the session's token and returns its media id, which
    /// ``NewRelic/media``, pictures, profile and item photos take.
    /// - Parameters:
    ///   - data: the bytes (at most 20 MiB by default).
    ///   - contentType: `image/jpeg`, `image/png`, `image/webp` or `video/mp4`.
    /// - Throws: ``CairnError`` with the HTTP ``CairnError/status``: `unauthorized` (401), `forbidden` (403: quota,
    ///   suspension), `too_large` (413), `bad_request` (411, 415), `rate_limited` (429, 503; with
    ///   ``CairnError/retryAfter``), `timeout`, `disconnected` (no answer).
    public func upload(_ data: Data, contentType: String) async throws -> String {
        guard let token = core.token else {
            throw CairnError(code: "unauthorized", message: "sign in before uploading", op: "upload")
        }
        var request = URLRequest(url: httpURL.appendingPathComponent("v1/media"))
        request.httpMethod = "POST"
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        request.httpBody = data
        let (body, _) = try await transfer(request, op: "upload")
        guard let reply = try? JSONDecoder().decode(MediaReply.self, from: body) else {
            throw CairnError(code: CairnError.invalidReply, message: "no media id in the reply", op: "upload")
        }
        return reply.media
    }

    /// Fetches what a signed URL the hub handed out names (a relic's ``Relic/mediaURL``, a picture's
    /// ``Picture/url``, a profile's photo): a path on the hub's HTTP port, or a whole URL.
    /// - Throws: ``CairnError`` `forbidden` (403: the URL expired or was altered; ask the hub for a fresh one),
    ///   `not_found` (404), `timeout`, `disconnected`.
    public func download(_ signedURL: String) async throws -> Data {
        let base =
            httpURL.absoluteString.hasSuffix("/") ? String(httpURL.absoluteString.dropLast()) : httpURL.absoluteString
        let text = signedURL.hasPrefix("http://") || signedURL.hasPrefix("https://") ? signedURL : base + signedURL
        guard let url = URL(string: text) else {
            throw CairnError(code: "bad_request", message: "not a URL: \(signedURL)", op: "download")
        }
        return try await transfer(URLRequest(url: url), op: "download").0
    }

    /// One HTTP exchange; a status outside 2xx becomes a ``CairnError`` named after it. Cancelling the calling task
    /// cancels the exchange (`CancellationError`).
    private func transfer(_ request: URLRequest, op: String) async throws -> (Data, HTTPURLResponse) {
        var request = request
        let timeout = configuration.transferTimeout
        request.timeoutInterval = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        let exchange = HTTPExchange()
        let outcome: Result<(Data, HTTPURLResponse), any Error> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let task = URLSession.shared.dataTask(with: request) { data, response, error in
                    if let error {
                        if exchange.isCancelled {
                            continuation.resume(returning: .failure(CancellationError()))
                            return
                        }
                        let timedOut = (error as? URLError)?.code == .timedOut
                        let failure = CairnError(
                            code: timedOut ? CairnError.timeout : CairnError.disconnected,
                            message: "\(op) failed: \(error.localizedDescription)", op: op)
                        continuation.resume(returning: .failure(failure))
                    } else if let response = response as? HTTPURLResponse {
                        continuation.resume(returning: .success((data ?? Data(), response)))
                    } else {
                        let failure = CairnError(
                            code: CairnError.disconnected, message: "\(op): no HTTP answer", op: op)
                        continuation.resume(returning: .failure(failure))
                    }
                }
                exchange.start(task)
            }
        } onCancel: {
            exchange.cancel()
        }
        let (body, response) = try outcome.get()
        guard (200..<300).contains(response.statusCode) else {
            let message =
                (try? JSONDecoder().decode(HTTPError.self, from: body))?.error ?? "HTTP \(response.statusCode)"
            let retry = (response.value(forHTTPHeaderField: "Retry-After")).flatMap(Int64.init).map(Duration.seconds)
            throw CairnError(
                code: Self.code(forStatus: response.statusCode), message: message, op: op, retryAfter: retry,
                status: response.statusCode)
        }
        return (body, response)
    }

    /// The error code for an HTTP status of `/v1/media`.
    static func code(forStatus status: Int) -> String {
        switch status {
        case 400, 411, 415: return "bad_request"
        case 401: return "unauthorized"
        case 403: return "forbidden"
        case 404: return "not_found"
        case 408: return CairnError.timeout
        case 413: return CairnError.tooLarge
        case 429, 503: return "rate_limited"
        default: return "internal"
        }
    }
}

/// The URLSession task of one HTTP exchange, which a cancellation handler on any thread may cancel, before or after it
/// started.
final class HTTPExchange: @unchecked Sendable {
    private let lock = NSLock()
    private var task: URLSessionDataTask?
    private var cancelled = false

    /// Whether the exchange was cancelled.
    var isCancelled: Bool { lock.locked { cancelled } }

    /// Starts `task`, or cancels it at once when the exchange was cancelled already.
    func start(_ task: URLSessionDataTask) {
        let cancelled = lock.locked {
            self.task = task
            return self.cancelled
        }
        task.resume()
        if cancelled { task.cancel() }
    }

    /// Cancels the exchange.
    func cancel() {
        let task = lock.locked {
            cancelled = true
            return self.task
        }
        task?.cancel()
    }
}
