// Reading an OsmAnd / Traccar Client request (the protocol `OsmAndEndpoint` serves): a query string or a form body
// (`id=123456&timestamp=1609459200&lat=48.8&lon=2.3&speed=0&bearing=0&altitude=30&accuracy=10&batt=85`), or Traccar
// Client's JSON body (version 9 on). Pure: request fields in, a `ParsedReport` or an `IngestProblem` out, so the fuzz
// target compiles it without the domain.
//
// Units as the apps send them: `speed` in knots (converted to m/s), `bearing` or `heading` in degrees, `altitude` and
// `accuracy` in metres, `batt` in percent, `timestamp` as epoch seconds, epoch milliseconds or ISO 8601. The device
// id is `id` (or `deviceid`), the key `key`; or both as HTTP Basic (user: device id, password: key). `valid=false`
// (a device without a satellite fix, as Traccar reads it) marks the fix for the ingest's `invalid` filter.
#if canImport(CairnWire)  // the fuzz targets compile these files and CairnWire as one module
import CairnWire
#endif

enum OsmAndRequest {
    /// The report in a request, or why it is refused (credentials are checked only for being present).
    static func parse(
        method: String, query: String?, contentType: String?, authorization: String?, body: [UInt8]
    ) throws(IngestProblem) -> ParsedReport {
        var params = FormFields(query ?? "")
        var json: IngestFix?
        let hasBody = method == "POST" && !body.isEmpty
        if hasBody {
            let type = contentType?.lowercased() ?? "application/x-www-form-urlencoded"
            if type.hasPrefix("application/json") {
                let (device, position) = try traccarJSON(body)
                if let device { params.merge(FormFields("id=" + device.percentEscaped)) }
                json = position
            } else if !type.hasPrefix("application/x-www-form-urlencoded") && !type.hasPrefix("text/plain") {
                throw .malformed("send the report as a query string, a form body or JSON")
            }
        }
        if hasBody, json == nil {
            guard let text = String(validating: body, as: UTF8.self) else { throw .malformed("the body is not UTF-8") }
            params.merge(FormFields(text))
        }
        var device = params["id"] ?? params["deviceid"]
        var key = params["key"]
        if let basic = authorization.flatMap(BasicCredentials.init) {
            if let named = device, named != basic.user { throw .badCredentials }
            device = basic.user
            key = basic.password
        }
        guard let device, !device.isEmpty, let key, !key.isEmpty else { throw .badCredentials }
        let fix: IngestFix
        if let json { fix = json } else { fix = try position(params) }
        return ParsedReport(device: device, key: key, fixes: [fix])
    }

    /// The position fields, converted to the contract's units.
    static func position(_ params: FormFields) throws(IngestProblem) -> IngestFix {
        typealias N = IngestNumbers
        let lat: Double
        let lon: Double
        if let la = params["lat"], let lo = params["lon"] {
            lat = try N.number("lat", la)
            lon = try N.number("lon", lo)
        } else if let location = params["location"] {
            let parts = location.split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count == 2 else { throw .malformed("parameter 'location' must be 'lat,lon'") }
            lat = try N.number("location", String(parts[0]))
            lon = try N.number("location", String(parts[1]))
        } else {
            throw .malformed("missing 'lat' and 'lon' (or 'location=lat,lon')")
        }
        var fix = IngestFix(lat: lat, lon: lon)
        fix.spd = try params["speed"].map { s throws(IngestProblem) in try N.number("speed", s) * N.knot }
        if let raw = params["bearing"] ?? params["heading"] {
            fix.hdg = N.heading(try N.number(params["bearing"] != nil ? "bearing" : "heading", raw))
        }
        fix.alt = try params["altitude"].map { s throws(IngestProblem) in try N.number("altitude", s) }
        fix.acc = try params["accuracy"].map { s throws(IngestProblem) in try N.number("accuracy", s) }
        fix.bat = try params["batt"].map { s throws(IngestProblem) in try N.number("batt", s) }
        fix.ts = try params["timestamp"].map { s throws(IngestProblem) in try N.timestamp(s) }
        if let valid = params["valid"] {
            switch valid.lowercased() {
            case "true", "1": break
            case "false", "0": fix.markedInvalid = true
            default: throw .malformed("parameter 'valid' must be true or false")
            }
        }
        return fix
    }

    /// Traccar Client's JSON (version 9 on): `{"location": {"timestamp": ISO 8601, "coords": {"latitude",
    /// "longitude", "accuracy", "speed" (m/s), "heading", "altitude"}, "battery": {"level": 0...1}}, "device_id"}`.
    /// The SDK writes -1 for an unknown speed, heading or battery level: those are left out.
    static func traccarJSON(_ body: [UInt8]) throws(IngestProblem) -> (String?, IngestFix) {
        do { return try readTraccarJSON(body) } catch let problem as IngestProblem {
            throw problem
        } catch let wire as WireError {
            throw .malformed("the JSON body is not a Traccar Client report: \(wire.message)")
        } catch { throw .malformed("the JSON body is not a Traccar Client report") }
    }

    private static func readTraccarJSON(_ body: [UInt8]) throws -> (String?, IngestFix) {
        var message = Message()
        try message.parse(body)
        let device = try message.string("device_id")
        guard let location = try message.object("location"), let coords = try location.object("coords") else {
            throw IngestProblem.malformed("missing 'location.coords'")
        }
        guard let lat = try coords.double("latitude"), let lon = try coords.double("longitude") else {
            throw IngestProblem.malformed("missing 'location.coords.latitude' and 'longitude'")
        }
        var fix = IngestFix(lat: lat, lon: lon)
        fix.acc = try coords.double("accuracy")
        fix.alt = try coords.double("altitude")
        fix.spd = try coords.double("speed").flatMap { $0 < 0 ? nil : $0 }
        fix.hdg = try coords.double("heading").flatMap { $0 < 0 ? nil : IngestNumbers.heading($0) }
        fix.bat = try location.object("battery")?.double("level").flatMap { $0 < 0 ? nil : $0 * 100 }
        if let time = try location.string("timestamp") {
            guard let ms = ISO8601.milliseconds(time) else {
                throw IngestProblem.malformed("'location.timestamp' must be ISO 8601")
            }
            fix.ts = ms
        }
        return (device, fix)
    }
}
