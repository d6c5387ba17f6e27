// Reading an Overland request (the protocol `OverlandEndpoint` serves): `Authorization: Bearer KEY` and a batch,
// `{"locations": [GeoJSON Feature, ...], "current"?: Feature, "trip"?: {...}}`, each Feature a Point at
// `[lon, lat]` with `properties`: `timestamp` (ISO 8601), `altitude` (m), `speed` (m/s), `horizontal_accuracy` (m),
// `course` (degrees), `battery_level` (0...1, converted to percent); -1 (unknown) leaves a field out. The whole
// batch is read or none of it: the first malformed point refuses the request, named by its place in the batch.
// `device_id` is not read: the key alone names the tracker. Pure: request fields in, plain values out, so the fuzz
// target compiles it without the domain.
#if canImport(CairnWire)  // the fuzz targets compile these files and CairnWire as one module
import CairnWire
#endif

/// One Overland batch, read.
struct OverlandBatch: Equatable, Sendable {
    var key: String
    /// The points of `locations`, in the order sent.
    var fixes: [IngestFix]
    /// `current`: the newest point on the phone, sent apart from the batch when the phone's queue is long.
    var current: IngestFix?
}

enum OverlandRequest {
    /// Limits for a batch: many points, each small.
    static let limits: WireLimits = {
        var limits = WireLimits()
        limits.maxFields = 256
        return limits
    }()

    /// The key of `Authorization: Bearer KEY`, or nil.
    static func bearer(_ authorization: String?) -> String? {
        guard let authorization else { return nil }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let key = parts[1].drop { $0 == " " }
        return key.isEmpty ? nil : String(key)
    }

    /// The most points a batch may carry (the ingest's batch limit; Overland's largest batch setting is 1,000).
    static let maxPoints = 1000

    /// The batch in a request, or why it is refused (the key is checked only for being present).
    static func parse(authorization: String?, body: [UInt8]) throws(IngestProblem) -> OverlandBatch {
        guard let key = bearer(authorization) else { throw .badCredentials }
        var message = Message(limits: limits)
        do { try message.parse(body) } catch {
            throw .malformed("the body is not an Overland batch: \(error.message)")
        }
        let points: [Message]
        do {
            guard let found = try message.objects("locations", limit: maxPoints) else {
                throw IngestProblem.malformed("missing 'locations'")
            }
            points = found
        } catch let problem as IngestProblem {
            throw problem
        } catch let wire as WireError {
            throw .malformed("'locations' must be an array of GeoJSON points: \(wire.message)")
        } catch { throw .malformed("'locations' must be an array of GeoJSON points") }
        var batch = OverlandBatch(key: key, fixes: [], current: nil)
        batch.fixes.reserveCapacity(points.count)
        for (n, point) in points.enumerated() {
            batch.fixes.append(try fix(point, "point \(n + 1)"))
        }
        let current: Message?
        do { current = try message.object("current") } catch {
            throw .malformed("'current' must be a GeoJSON point")
        }
        if let current { batch.current = try fix(current, "'current'") }
        return batch
    }

    /// One point, or a refusal naming it.
    static func fix(_ point: Message, _ name: String) throws(IngestProblem) -> IngestFix {
        do { return try readFix(point) } catch let problem as IngestProblem {
            guard case .malformed(let reason) = problem else { throw problem }
            throw .malformed("\(name): \(reason)")
        } catch let wire as WireError {
            throw .malformed("\(name): \(wire.message)")
        } catch { throw .malformed("\(name) is not a GeoJSON point") }
    }

    private static func readFix(_ point: Message) throws -> IngestFix {
        if let type = try point.string("type"), type != "Feature" {
            throw IngestProblem.malformed("'type' must be \"Feature\"")
        }
        guard let geometry = try point.object("geometry") else { throw IngestProblem.malformed("missing 'geometry'") }
        guard try geometry.string("type") == "Point" else {
            throw IngestProblem.malformed("'geometry.type' must be \"Point\"")
        }
        guard let coordinates = try geometry.doubles("coordinates"), coordinates.count == 2 || coordinates.count == 3
        else { throw IngestProblem.malformed("'geometry.coordinates' must be [longitude, latitude]") }
        var fix = IngestFix(lat: coordinates[1], lon: coordinates[0])
        guard let properties = try point.object("properties") else {
            throw IngestProblem.malformed("missing 'properties'")
        }
        guard let time = try properties.string("timestamp") else {
            throw IngestProblem.malformed("missing 'properties.timestamp'")
        }
        fix.ts = try IngestNumbers.timestamp(time, name: "properties.timestamp")
        func known(_ key: String) throws -> Double? { try properties.double(key).flatMap { $0 < 0 ? nil : $0 } }
        fix.alt = try properties.double("altitude")
        fix.spd = try known("speed")
        fix.acc = try known("horizontal_accuracy")
        fix.hdg = try known("course").map(IngestNumbers.heading)
        fix.bat = try known("battery_level").map { $0 * 100 }
        return fix
    }
}
