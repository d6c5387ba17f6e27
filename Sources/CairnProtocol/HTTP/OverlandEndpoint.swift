public import CairnLoop
// `/v1/ingest/overland`: the Overland GPS tracker, on the hub's port. The app queues points and POSTs them in batches
// (up to 1,000, about 600 bytes each) with `Authorization: Bearer KEY`, deleting a batch from the phone only when the
// answer is `{"result":"ok"}`. So that answer is given only once `TrackerIngest` committed the batch, and a batch is
// stored whole or not at all: a malformed point refuses it with 400 naming the point, and nothing is applied.
//
// The key alone names the tracker (it is what Overland users configure; the app's `device_id` is often empty), found
// by its digest (`TrackerLookup`), before a byte of the body is read; the request spends one of the tracker's budget
// then (`TrackerIngest.spend`). `current`, the phone's newest point sent beside a long queue, is stored with the batch
// when the batch has room under `TrackerIngest.batchLimit`. An empty `locations` is answered ok. Refusals as for
// every ingest format (`IngestReplies`), challenging with Bearer.
public import CairnTrackers

/// The HTTP service for Overland batches.
public struct OverlandEndpoint: HTTPService {
    /// Where it is mounted.
    public static let path = "/v1/ingest/overland"
    /// The largest batch accepted: 1,000 points of about 600 bytes, with room to spare.
    public static let maxBodyBytes = 1 << 20
    private static let challenge = #"Bearer realm="cairn""#
    private let ingest: TrackerIngest
    private let lookup: TrackerLookup

    /// Creates the endpoint over the hub's ingest and tracker lookup.
    public init(ingest: TrackerIngest, lookup: TrackerLookup) {
        self.ingest = ingest
        self.lookup = lookup
    }

    /// A batch is read only for a known, active tracker's key, within the tracker's request budget.
    public func admit(_ request: HTTPRequest) async -> HTTPReply? {
        guard request.method == "POST" else { return IngestReplies.methodNotAllowed("POST") }
        guard let key = OverlandRequest.bearer(request.authorization) else {
            ingest.refused(.badCredentials)
            return IngestReplies.reply(.badCredentials, challenge: Self.challenge)
        }
        do throws(IngestRefusal) { try ingest.spend(try await lookup.tracker(key: key)) } catch {
            return IngestReplies.reply(error, challenge: Self.challenge)
        }
        return nil
    }

    /// Reads, authenticates and stores one batch.
    public func handle(_ request: HTTPRequest) async -> HTTPReply {
        guard request.method == "POST" else { return IngestReplies.methodNotAllowed("POST") }
        let batch: OverlandBatch
        do throws(IngestProblem) {
            batch = try OverlandRequest.parse(authorization: request.authorization, body: request.body)
        } catch {
            ingest.refused(error.refusal)
            return IngestReplies.reply(error.refusal, challenge: Self.challenge)
        }
        do throws(IngestRefusal) {
            let tracker = try await lookup.tracker(key: batch.key)
            var positions = batch.fixes.map(\.report)
            // `current` usually repeats the batch's newest point; a repeat would only count as a duplicate.
            if let current = batch.current, positions.count < TrackerIngest.batchLimit,
                !batch.fixes.contains(where: { $0.ts == current.ts })
            {
                positions.append(current.report)
            }
            if !positions.isEmpty {
                try await ingest.report(
                    TrackerReport(device: tracker.device, key: batch.key, positions: positions), spent: true)
            }
            return IngestReplies.json(Array(#"{"result":"ok"}"#.utf8))
        } catch { return IngestReplies.reply(error, challenge: Self.challenge) }
    }
}
