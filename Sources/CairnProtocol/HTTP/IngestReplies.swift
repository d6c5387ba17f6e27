// What the three ingest endpoints (OsmAnd, OwnTracks, Overland) share around their parsers: a parsed position becomes
// the domain's `PositionReport`, a parsing problem the domain's `IngestRefusal`, and every refusal the same answer —
// 400 with the reason, 401 with a `WWW-Authenticate` challenge in the scheme the app speaks, 403 for an inactive
// tracker or one whose owners are all suspended, 429 with `Retry-After` (whole seconds, rounded up) when the tracker
// reports faster than its budget, 503 with `Retry-After` when the store failed, 405 for a method the endpoint does
// not take. Every refusal's body is JSON, `{"error":"<one line>"}`, as the transport's own refusals (411, 413, 429
// for too many connections, 503 while shutting down) and the media API's are, so a client reads one format. An
// unknown device and a known one with a wrong key get the same 401, word for word: the answer never says whether a
// device id is taken.
import CairnLiveMap
import CairnLoop
import CairnTrackers
import CairnWire

enum IngestReplies {
    /// The answer to a refusal; `challenge` is the `WWW-Authenticate` value sent with a 401.
    static func reply(_ refusal: IngestRefusal, challenge: String = #"Basic realm="cairn""#) -> HTTPReply {
        switch refusal {
        case .malformed(let reason): text(400, reason)
        case .badCredentials: text(401, "unknown device or wrong key", headers: [("WWW-Authenticate", challenge)])
        case .inactive: text(403, "this tracker is not active")
        case .suspended: text(403, "suspended: every owner of this tracker's bucket is suspended")
        case .unavailable: text(503, "could not store the report; retry", headers: [("Retry-After", "5")])
        case .rateLimited(let ms):
            text(429, "too many reports from this tracker; slow down", headers: [("Retry-After", seconds(ms))])
        }
    }

    /// A wait in ms as `Retry-After` wants it: whole seconds, rounded up, at least 1.
    static func seconds(_ ms: Int64) -> String {
        "\(max(1, (ms + 999) / 1000))"
    }

    /// 405, naming the methods the endpoint takes.
    static func methodNotAllowed(_ allow: String) -> HTTPReply {
        text(405, "method not allowed", headers: [("Allow", allow)])
    }

    /// A refusal: `{"error": message}`.
    static func text(_ status: Int, _ message: String, headers: [(name: String, value: String)] = []) -> HTTPReply {
        var w = JSONWriter(capacity: 64 + message.utf8.count)
        w.beginObject()
        w.key("error")
        w.string(message)
        w.endObject()
        return HTTPReply(
            status: status, contentType: "application/json",
            headers: headers + [("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff")],
            body: .bytes(w.bytes))
    }

    /// A 200 with a JSON body.
    static func json(_ body: [UInt8]) -> HTTPReply {
        HTTPReply(
            status: 200, contentType: "application/json", headers: [("Cache-Control", "no-store")], body: .bytes(body))
    }
}

extension IngestProblem {
    /// The domain's refusal for it.
    var refusal: IngestRefusal {
        switch self {
        case .malformed(let reason): .malformed(reason)
        case .badCredentials: .badCredentials
        }
    }
}

extension IngestFix {
    /// The position, for the domain to check and store.
    var report: PositionReport {
        PositionReport(lat: lat, lon: lon, acc: acc, alt: alt, spd: spd, hdg: hdg, bat: bat, ts: ts)
    }
}
