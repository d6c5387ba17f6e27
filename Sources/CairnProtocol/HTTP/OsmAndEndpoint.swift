// `/v1/ingest/osmand` over plain HTTP on the hub's port: the OsmAnd protocol as OsmAnd's online tracking and Traccar
// Client send it (`GET /?id=123456&timestamp=1609459200&lat=48.8&lon=2.3&speed=0&bearing=0&altitude=30&accuracy=10
// &batt=85`), as a query string or a form body, and Traccar Client's JSON body (version 9 on). This file only reads
// the request — parameters, units, credentials — into a `TrackerReport`; `TrackerIngest` authenticates, checks and
// commits it. Answers: 200 with an empty body once stored; 400 with the reason for a malformed report; 401 for missing
// or bad credentials; 403 for an inactive tracker; 503 when the store failed. Nothing is applied unless the answer is
// 200.
//
// Units as the apps send them: `speed` in knots (converted to m/s), `bearing` or `heading` in degrees, `altitude` and
// `accuracy` in metres, `batt` in percent, `timestamp` as epoch seconds, epoch milliseconds or ISO 8601. The device
// id is `id` (or `deviceid`), the key `key`; or both as HTTP Basic (user: device id, password: key).
import CairnDomain
import CairnLoop
import CairnWire

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
            return Self.text(405, "method not allowed\n", headers: [("Allow", "GET, POST")])
        }
        let report: TrackerReport
        switch Self.parse(request) {
        case .success(let parsed): report = parsed
        case .failure(let refusal): return Self.reply(refusal)
        }
        do {
            try await ingest.report(report)
            return HTTPReply(status: 200, contentType: "text/plain; charset=utf-8", body: .bytes([]))
        } catch { return Self.reply(error) }
    }

    // MARK: Reading the request

    /// The report in a request, or why it is refused (credentials are checked only for being present).
    static func parse(_ request: HTTPRequest) -> Result<TrackerReport, IngestRefusal> {
        var params = FormFields(request.query ?? "")
        var json: PositionReport?
        if request.method == "POST", !request.body.isEmpty {
            let type = request.contentType?.lowercased() ?? "application/x-www-form-urlencoded"
            if type.hasPrefix("application/json") {
                do throws(IngestRefusal) {
                    let (device, position) = try traccarJSON(request.body)
                    if let device { params.merge(FormFields("id=" + device.percentEscaped)) }
                    json = position
                } catch { return .failure(error) }
            } else if !type.hasPrefix("application/x-www-form-urlencoded") && !type.hasPrefix("text/plain") {
                return .failure(.malformed("send the report as a query string, a form body or JSON"))
            }
        }
        if request.method == "POST", !request.body.isEmpty, json == nil {
            guard let body = String(validating: request.body, as: UTF8.self) else {
                return .failure(.malformed("the body is not UTF-8"))
            }
            params.merge(FormFields(body))
        }
        var device = params["id"] ?? params["deviceid"]
        var key = params["key"]
        if let basic = request.authorization.flatMap(BasicCredentials.init) {
            if let named = device, named != basic.user { return .failure(.badCredentials) }
            device = basic.user
            key = basic.password
        }
        guard let device, !device.isEmpty, let key, !key.isEmpty else { return .failure(.badCredentials) }
        do throws(IngestRefusal) {
            let found: PositionReport
            if let json { found = json } else { found = try position(params) }
            return .success(TrackerReport(device: device, key: key, position: found))
        } catch { return .failure(error) }
    }

    /// The position fields, converted to the contract's units.
    static func position(_ params: FormFields) throws(IngestRefusal) -> PositionReport {
        let lat: Double
        let lon: Double
        if let la = params["lat"], let lo = params["lon"] {
            lat = try number("lat", la)
            lon = try number("lon", lo)
        } else if let location = params["location"] {
            let parts = location.split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count == 2 else { throw .malformed("parameter 'location' must be 'lat,lon'") }
            lat = try number("location", String(parts[0]))
            lon = try number("location", String(parts[1]))
        } else {
            throw .malformed("missing 'lat' and 'lon' (or 'location=lat,lon')")
        }
        var report = PositionReport(lat: lat, lon: lon)
        report.spd = try params["speed"].map { s throws(IngestRefusal) in try number("speed", s) * knot }
        if let raw = params["bearing"] ?? params["heading"] {
            let degrees = try number(params["bearing"] != nil ? "bearing" : "heading", raw)
            report.hdg = degrees == 360 ? 0 : degrees
        }
        report.alt = try params["altitude"].map { s throws(IngestRefusal) in try number("altitude", s) }
        report.acc = try params["accuracy"].map { s throws(IngestRefusal) in try number("accuracy", s) }
        report.bat = try params["batt"].map { s throws(IngestRefusal) in try number("batt", s) }
        report.ts = try params["timestamp"].map { s throws(IngestRefusal) in try timestamp(s) }
        return report
    }

    /// Traccar Client's JSON (version 9 on): `{"location": {"timestamp": ISO 8601, "coords": {"latitude",
    /// "longitude", "accuracy", "speed" (m/s), "heading", "altitude"}, "battery": {"level": 0...1}}, "device_id"}`.
    /// The SDK writes -1 for an unknown speed, heading or battery level: those are left out.
    static func traccarJSON(_ body: [UInt8]) throws(IngestRefusal) -> (String?, PositionReport) {
        do { return try readTraccarJSON(body) } catch let refusal as IngestRefusal {
            throw refusal
        } catch let wire as WireError {
            throw .malformed("the JSON body is not a Traccar Client report: \(wire.message)")
        } catch { throw .malformed("the JSON body is not a Traccar Client report") }
    }

    private static func readTraccarJSON(_ body: [UInt8]) throws -> (String?, PositionReport) {
        var message = Message()
        try message.parse(body)
        let device = try message.string("device_id")
        guard let location = try message.object("location"), let coords = try location.object("coords") else {
            throw IngestRefusal.malformed("missing 'location.coords'")
        }
        guard let lat = try coords.double("latitude"), let lon = try coords.double("longitude") else {
            throw IngestRefusal.malformed("missing 'location.coords.latitude' and 'longitude'")
        }
        var report = PositionReport(lat: lat, lon: lon)
        report.acc = try coords.double("accuracy")
        report.alt = try coords.double("altitude")
        report.spd = try coords.double("speed").flatMap { $0 < 0 ? nil : $0 }
        report.hdg = try coords.double("heading").flatMap { $0 < 0 ? nil : ($0 == 360 ? 0 : $0) }
        report.bat = try location.object("battery")?.double("level").flatMap { $0 < 0 ? nil : $0 * 100 }
        if let time = try location.string("timestamp") {
            guard let ms = ISO8601.milliseconds(time) else {
                throw IngestRefusal.malformed("'location.timestamp' must be ISO 8601")
            }
            report.ts = ms
        }
        return (device, report)
    }

    /// Metres per second in a knot.
    static let knot = 1852.0 / 3600.0

    static func number(_ name: String, _ text: String) throws(IngestRefusal) -> Double {
        let allowed = text.utf8.allSatisfy { c in
            (48...57).contains(c) || c == 46 || c == 45 || c == 43 || c == 101 || c == 69
        }
        guard allowed, let value = Double(text), value.isFinite else {
            throw .malformed("parameter '\(name)' must be a number")
        }
        return value
    }

    /// Milliseconds since the epoch from epoch seconds (below 10^10), epoch milliseconds, or ISO 8601.
    static func timestamp(_ text: String) throws(IngestRefusal) -> Int64 {
        if !text.isEmpty, text.utf8.allSatisfy({ (48...57).contains($0) || $0 == 46 }),
            let value = Double(text), value.isFinite
        {
            guard value < 1e15 else { throw .malformed("parameter 'timestamp' is out of range") }
            return value < 1e10 ? Int64((value * 1000).rounded()) : Int64(value.rounded())
        }
        guard let ms = ISO8601.milliseconds(text) else {
            throw .malformed("parameter 'timestamp' must be epoch seconds, epoch milliseconds or ISO 8601")
        }
        return ms
    }

    // MARK: Replies

    static func reply(_ refusal: IngestRefusal) -> HTTPReply {
        switch refusal {
        case .malformed(let reason): return text(400, reason + "\n")
        case .badCredentials:
            return text(
                401, "unknown device or wrong key\n", headers: [("WWW-Authenticate", #"Basic realm="cairn""#)])
        case .inactive: return text(403, "this tracker is not active\n")
        case .unavailable: return text(503, "could not store the report; retry\n", headers: [("Retry-After", "5")])
        }
    }

    private static func text(_ status: Int, _ body: String, headers: [(name: String, value: String)] = [])
        -> HTTPReply
    {
        HTTPReply(
            status: status, contentType: "text/plain; charset=utf-8",
            headers: headers + [("X-Content-Type-Options", "nosniff")], body: .bytes(Array(body.utf8)))
    }
}
