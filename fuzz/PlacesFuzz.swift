// libFuzzer entry point for the place-file parsers (built by run-places.sh together with the pure files of
// Sources/CairnApp/PlaceImport as one module). Every input is parsed as CSV and as GeoJSON. Whatever the input,
// each place read must have a non-empty name and coordinates in range, and each problem a line within the input
// and a reason; a place's line must lie within the input too. Anything else traps.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let lines = 1 + bytes.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
    for parsed in [PlaceCSV.parse(bytes), PlaceGeoJSON.parse(bytes)] {
        for place in parsed.places {
            precondition(!place.name.isEmpty, "a place without a name")
            precondition(place.lat >= -90 && place.lat <= 90 && place.lon >= -180 && place.lon <= 180, "out of range")
            precondition(place.line >= 1 && place.line <= lines, "a place's line outside the input")
        }
        for problem in parsed.problems {
            precondition(!problem.reason.isEmpty, "a problem without a reason")
            precondition(problem.line >= 0 && problem.line <= lines, "a problem's line outside the input")
        }
    }
    return 0
}
