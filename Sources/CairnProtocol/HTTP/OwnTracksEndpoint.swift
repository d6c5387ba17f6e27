public import CairnLoop
// `/v1/ingest/owntracks`: OwnTracks in HTTP mode, on the hub's port. `OwnTracksRequest` reads the message (HTTP Basic:
// user the device id, password the key); a `location` goes to `TrackerIngest`, which authenticates, checks and commits
// it before the 200. The 200 carries a JSON array: the other items of the tracker's bucket that have a position, as
// OwnTracks `card` + `location` messages (`OwnTracksFriends`), so the app shows them on its map. Only items of that
// bucket, never users and never anything of another bucket (`TrackerLookup.bucketMates`), and nothing once the
// tracker's pairer is no longer an owner of it.
//
// The credentials are checked from the headers, before a byte of the body is read or any of the server's body budget
// reserved (`admit`), and the request spends one of the tracker's budget then (`TrackerIngest.spend`). Any other
// message (transition, waypoint, lwt, card, status, encrypted...) and an empty body store nothing and are answered `[]`
// once the credentials are checked again. Refusals as for every ingest format (`IngestReplies`). If reading
// the bucket's items fails after the fix was committed, the answer is still 200, with `[]`: the report is stored, and
// a 503 would only make the app send it again.
public import CairnTrackers

/// The HTTP service for OwnTracks messages.
public struct OwnTracksEndpoint: HTTPService {
    /// Where it is mounted.
    public static let path = "/v1/ingest/owntracks"
    /// The largest message accepted (a card carries a picture).
    public static let maxBodyBytes = 256 * 1024
    private static let limits = OwnTracksRequest.limits(maxBodyBytes: maxBodyBytes)
    private let ingest: TrackerIngest
    private let lookup: TrackerLookup

    /// Creates the endpoint over the hub's ingest and tracker lookup.
    public init(ingest: TrackerIngest, lookup: TrackerLookup) {
        self.ingest = ingest
        self.lookup = lookup
    }

    /// A body is read only for an active tracker whose Basic credentials (device id and key) match, within its
    /// request budget: nothing of the body is read or reserved for anyone else.
    public func admit(_ request: HTTPRequest) async -> HTTPReply? {
        guard request.method == "POST" else { return IngestReplies.methodNotAllowed("POST") }
        guard let basic = request.authorization.flatMap(BasicCredentials.init), !basic.user.isEmpty,
            !basic.password.isEmpty
        else {
            ingest.refused(.badCredentials)
            return IngestReplies.reply(.badCredentials)
        }
        do throws(IngestRefusal) {
            try ingest.spend(try await lookup.tracker(device: basic.user, key: basic.password))
        } catch { return IngestReplies.reply(error) }
        return nil
    }

    /// Reads, authenticates and stores one message; answers the bucket's other items.
    public func handle(_ request: HTTPRequest) async -> HTTPReply {
        guard request.method == "POST" else { return IngestReplies.methodNotAllowed("POST") }
        let message: OwnTracksMessage
        do throws(IngestProblem) {
            message = try OwnTracksRequest.parse(
                authorization: request.authorization, body: request.body, limits: Self.limits)
        } catch {
            ingest.refused(error.refusal)
            return IngestReplies.reply(error.refusal)
        }
        do throws(IngestRefusal) {
            guard let fix = message.fix else {
                _ = try await lookup.tracker(device: message.device, key: message.key)
                return IngestReplies.json(Array("[]".utf8))
            }
            let receipt = try await ingest.report(
                TrackerReport(device: message.device, key: message.key, position: fix.report), spent: true)
            // Only a tracker an owner let see its bucket's other items is shown them (`tracker.update`).
            guard receipt.tracker.showsItems else { return IngestReplies.json(Array("[]".utf8)) }
            let mates = (try? await lookup.bucketMates(of: receipt.tracker)) ?? []
            return IngestReplies.json(OwnTracksFriends.encode(mates))
        } catch { return IngestReplies.reply(error) }
    }
}
