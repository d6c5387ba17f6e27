// Reading an OwnTracks request in HTTP mode (the protocol `OwnTracksEndpoint` serves): the app POSTs each message it
// would publish over MQTT, as JSON, with HTTP Basic credentials (user: device id, password: key). Only `_type:
// "location"` carries a position: `lat`, `lon`, `tst` (epoch seconds) and the optional `acc` (m), `alt` (m), `vel`
// (km/h, converted to m/s), `cog` (degrees) and `batt` (percent). Every other `_type` (transition, waypoint, lwt, card,
// status, encrypted, ...) and an empty body (the app posts one when a friend is deleted) carry none and are read as
// "nothing to store". Pure: request fields in, plain values out, so the fuzz target compiles it without the domain.
//
// The app also sends `X-Limit-U` / `X-Limit-D` (user and device names, for the OwnTracks Recorder) and `tid`/`topic`
// in the body; the hub identifies the device by its Basic credentials alone and ignores them.
#if canImport(CairnWire)  // the fuzz targets compile these files and CairnWire as one module
import CairnWire
#endif

/// One OwnTracks message, read.
struct OwnTracksMessage: Equatable, Sendable {
    var device: String
    var key: String
    /// The position of a `location` message; nil for every other message.
    var fix: IngestFix?
}

enum OwnTracksRequest {
    /// Limits for a message: cards carry a base64 picture, so strings may be as long as the body.
    static func limits(maxBodyBytes: Int) -> WireLimits {
        var limits = WireLimits()
        limits.maxFields = 256
        limits.maxStringBytes = maxBodyBytes
        return limits
    }

    /// The message in a request, or why it is refused (credentials are checked only for being present).
    static func parse(authorization: String?, body: [UInt8], limits: WireLimits) throws(IngestProblem)
        -> OwnTracksMessage
    {
        guard let basic = authorization.flatMap(BasicCredentials.init), !basic.user.isEmpty, !basic.password.isEmpty
        else { throw .badCredentials }
        var message = OwnTracksMessage(device: basic.user, key: basic.password, fix: nil)
        guard body.contains(where: { $0 != 32 && $0 != 9 && $0 != 10 && $0 != 13 }) else { return message }
        do { message.fix = try location(body, limits: limits) } catch let problem as IngestProblem {
            throw problem
        } catch let wire as WireError {
            throw .malformed("the body is not an OwnTracks message: \(wire.message)")
        } catch { throw .malformed("the body is not an OwnTracks message") }
        return message
    }

    /// The position of a `location` message; nil for any other `_type`.
    private static func location(_ body: [UInt8], limits: WireLimits) throws -> IngestFix? {
        var message = Message(limits: limits)
        try message.parse(body)
        guard let type = try message.string("_type") else { throw IngestProblem.malformed("missing '_type'") }
        guard type == "location" else { return nil }
        guard let lat = try message.double("lat"), let lon = try message.double("lon") else {
            throw IngestProblem.malformed("missing 'lat' and 'lon'")
        }
        guard let tst = try message.double("tst") else { throw IngestProblem.malformed("missing 'tst'") }
        var fix = IngestFix(lat: lat, lon: lon)
        fix.ts = try IngestNumbers.epochSeconds("tst", tst)
        // iOS leaves out, and some versions send -1 for, what the phone does not know.
        fix.acc = try message.double("acc").flatMap { $0 < 0 ? nil : $0 }
        fix.alt = try message.double("alt")
        fix.spd = try message.double("vel").flatMap { $0 < 0 ? nil : $0 * IngestNumbers.kmh }
        fix.hdg = try message.double("cog").flatMap { $0 < 0 ? nil : IngestNumbers.heading($0) }
        fix.bat = try message.double("batt").flatMap { $0 < 0 ? nil : $0 }
        return fix
    }
}
