// libFuzzer entry points for the HTTP ingest parsers (built by run-ingest.sh together with Sources/CairnWire/*.swift
// and Sources/CairnProtocol/Ingest/*.swift as one module; one binary per format, chosen with -D OSMAND, OWNTRACKS or
// OVERLAND). Each feeds the bytes to the parser exactly as the endpoint does and checks what comes back: a refusal
// is either "bad credentials" or "malformed" with a reason; an accepted report has credentials, finite coordinates
// and the units' invariants (speeds and accuracies not negative where the parser drops unknowns, times in ms). The
// shared pieces are checked on the same bytes: percent-escaping round-trips through FormFields, a time that reads as
// ISO 8601 reads the same through `IngestNumbers.timestamp`, base64 never traps.

#if OSMAND
/// OsmAnd / Traccar Client. The first byte picks the method and Content-Type; the rest is
/// `query \n authorization \n body` (missing parts are absent).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    checkShared(bytes)
    guard let selector = bytes.first else { return 0 }
    let parts = bytes.dropFirst().split(separator: 10, maxSplits: 2, omittingEmptySubsequences: false)
    let query = parts.count > 0 ? String(decoding: parts[0], as: UTF8.self) : nil
    let authorization = parts.count > 1 ? String(decoding: parts[1], as: UTF8.self) : nil
    let body = parts.count > 2 ? Array(parts[2]) : []
    let types: [String?] = [
        nil, "application/x-www-form-urlencoded", "application/json", "text/plain", "application/xml",
        "application/json; charset=utf-8",
    ]
    let method = selector & 1 == 0 ? "GET" : "POST"
    let type = types[Int(selector >> 1) % types.count]
    do {
        let report = try OsmAndRequest.parse(
            method: method, query: query, contentType: type, authorization: authorization, body: body)
        if report.device.isEmpty || report.key.isEmpty { fatalError("accepted without credentials") }
        if report.fixes.count != 1 { fatalError("\(report.fixes.count) fixes") }
        checkFix(report.fixes[0])
        if let basic = authorization.flatMap(BasicCredentials.init), basic.user != report.device {
            fatalError("Basic user \(basic.user) but device \(report.device)")
        }
    } catch { checkProblem(error) }
    return 0
}
#endif

#if OWNTRACKS
/// OwnTracks HTTP mode. The first byte picks the credentials; the rest is the body.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    checkShared(bytes)
    guard let selector = bytes.first else { return 0 }
    let auths: [String?] = [
        "Basic cGhvbmUtMTpzM2NyZXQ=", nil, "Basic Og==", "Bearer x", "basic   cGhvbmUtMTpzM2NyZXQ=",
    ]
    let authorization = auths[Int(selector) % auths.count]
    do {
        let message = try OwnTracksRequest.parse(
            authorization: authorization, body: Array(bytes.dropFirst()), limits: ownTracksLimits)
        if message.device.isEmpty || message.key.isEmpty { fatalError("accepted without credentials") }
        if let fix = message.fix {
            checkFix(fix)
            guard let ts = fix.ts, ts >= 0 else { fatalError("a location without tst") }
            for value in [fix.acc, fix.spd, fix.hdg, fix.bat] { if let value, value < 0 { fatalError("negative") } }
        }
    } catch { checkProblem(error) }
    return 0
}

private let ownTracksLimits = OwnTracksRequest.limits(maxBodyBytes: 1 << 18)
#endif

#if OVERLAND
/// Overland. The whole input is the body, sent with a Bearer key.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    checkShared(bytes)
    do {
        let batch = try OverlandRequest.parse(authorization: "Bearer k", body: bytes)
        if batch.key != "k" { fatalError("key \(batch.key)") }
        for fix in batch.fixes + (batch.current.map { [$0] } ?? []) {
            checkFix(fix)
            if fix.ts == nil { fatalError("a point without a timestamp") }
            for value in [fix.acc, fix.spd, fix.hdg, fix.bat] { if let value, value < 0 { fatalError("negative") } }
        }
        // The batch's points are the elements of `locations`, one for one.
        var message = Message(limits: OverlandRequest.limits)
        try message.parse(bytes)
        let points = try message.objects("locations") ?? []
        if points.count != batch.fixes.count { fatalError("\(points.count) points, \(batch.fixes.count) fixes") }
    } catch let problem as IngestProblem {
        checkProblem(problem)
    } catch { fatalError("re-reading an accepted batch failed: \(error)") }
    return 0
}
#endif

/// A position that came out of a parser.
func checkFix(_ fix: IngestFix) {
    if !fix.lat.isFinite || !fix.lon.isFinite { fatalError("coordinates \(fix.lat), \(fix.lon)") }
    for value in [fix.acc, fix.alt, fix.spd, fix.hdg, fix.bat] {
        if let value, !value.isFinite { fatalError("a field is \(value)") }
    }
    if let hdg = fix.hdg, hdg == 360 { fatalError("360 degrees was not read as 0") }
}

/// A refusal: bad credentials, or malformed with a reason.
func checkProblem(_ problem: IngestProblem) {
    if case .malformed(let reason) = problem, reason.isEmpty { fatalError("malformed without a reason") }
}

/// The pieces every parser shares, on the same bytes.
func checkShared(_ bytes: [UInt8]) {
    guard let text = String(validating: bytes, as: UTF8.self) else {
        _ = BasicCredentials.base64(Substring(String(decoding: bytes, as: UTF8.self)))
        return
    }
    // Any text survives a form field: escaped, then decoded, it is itself.
    let fields = FormFields("a=" + text.percentEscaped + "&b=1")
    if fields["a"] != text { fatalError("percent round trip of \(Array(text.utf8))") }
    _ = FormFields(text)
    _ = BasicCredentials("Basic " + text)
    _ = BasicCredentials.base64(Substring(text))
    if let ms = ISO8601.milliseconds(text) {
        // Whatever ISO 8601 accepts, the timestamp reader accepts as the same instant (unless it is all digits).
        if let read = try? IngestNumbers.timestamp(text), read != ms, !text.utf8.allSatisfy({ (48...57).contains($0) })
        {
            fatalError("ISO \(ms) but timestamp \(read) for \(text)")
        }
    }
    do { _ = try IngestNumbers.timestamp(text) } catch { checkProblem(error) }
    do { _ = try IngestNumbers.number("n", text) } catch { checkProblem(error) }
}
