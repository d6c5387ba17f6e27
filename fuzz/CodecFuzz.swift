// libFuzzer entry point for the wire codec (built by run.sh together with Sources/CairnWire/*.swift as one
// module, so it may use internal members). Every input is split with FrameLines and each line, plus the whole
// input, is parsed with a reused Message and with a tightly limited one; on success every accessor is called
// for every key, and every value read is written back with JSONWriter and re-parsed: a value that does not come
// back identical is a codec bug and traps. Any thrown error must be a bad_request with a message. The lenient id
// reading used for errors must agree with the parser whenever the text parses.

/// Reused across inputs, so stale state from a previous (longer) input would show up.
nonisolated(unsafe) private var reused = Message()
/// Tiny limits, to drive the limit paths.
nonisolated(unsafe) private var tight: Message = {
    var limits = WireLimits()
    limits.maxDepth = 3
    limits.maxFields = 4
    limits.maxStringBytes = 16
    return Message(limits: limits)
}()
nonisolated(unsafe) private var writer = JSONWriter()
nonisolated(unsafe) private var echo = Message()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let frame = UnsafeRawBufferPointer(start: data, count: size)
    FrameLines.forEach(in: frame) { line in
        exercise(line, &reused, nesting: 0)
        exercise(line, &tight, nesting: 0)
    }
    exercise(frame, &reused, nesting: 0)
    return 0
}

private func expectBadRequest(_ error: WireError, _ context: String) {
    if error.code != .badRequest || error.message.isEmpty {
        fatalError("\(context): unexpected error \(error)")
    }
}

private func exercise(_ text: UnsafeRawBufferPointer, _ message: inout Message, nesting: Int) {
    do {
        try message.parse(text)
    } catch {
        expectBadRequest(error, "parse")
        // The id of a request that failed to parse, if readable, is a positive integer of at most 2^53.
        if let id = Message.salvageID(from: text), id < 1 || id > 1 << 53 { fatalError("salvaged id \(id)") }
        return
    }
    // A text that parses has the same id the lenient reading finds (or none it could read).
    if let salvaged = Message.salvageID(from: text), nesting == 0, salvaged != message.id {
        fatalError("salvaged id \(salvaged), parsed \(String(describing: message.id))")
    }
    exerciseFields(message, nesting: nesting)
}

private func exerciseFields(_ message: Message, nesting: Int) {
    _ = message.id
    _ = message.op
    if let op = message.op, !message.isOp(op) { fatalError("isOp(\(op)) is false") }
    let names = message.keyNames
    if Set(names).count != names.count { fatalError("duplicate keys accepted: \(names)") }
    for key in names {
        if !message.contains(key) { fatalError("contains(\(key)) is false") }
        checkKeyRoundTrip(key)
        do {
            if let value = try message.string(key) { checkString(value) }
        } catch { expectBadRequest(error, "string") }
        do {
            if let value = try message.int(key) { checkInt(value) }
        } catch { expectBadRequest(error, "int") }
        do {
            if let value = try message.double(key) { checkDouble(value) }
        } catch { expectBadRequest(error, "double") }
        do {
            if let value = try message.bool(key) { checkBool(value) }
        } catch { expectBadRequest(error, "bool") }
        do {
            if let nested = try message.object(key), nesting < 4 { exerciseFields(nested, nesting: nesting + 1) }
        } catch { expectBadRequest(error, "object") }
        do { _ = try message.requireString(key) } catch { expectBadRequest(error, "requireString") }
        do { _ = try message.requireInt(key) } catch { expectBadRequest(error, "requireInt") }
        do { _ = try message.requireDouble(key) } catch { expectBadRequest(error, "requireDouble") }
        do { _ = try message.requireBool(key) } catch { expectBadRequest(error, "requireBool") }
    }
}

/// Writes `{"v": value}` with `write`, parses it back and returns the message.
private func roundTrip(_ write: (inout JSONWriter) -> Void) -> Message {
    writer.reset()
    writer.beginObject()
    writer.key("v")
    write(&writer)
    writer.endObject()
    do {
        try echo.parse(writer.bytes)
    } catch {
        fatalError("writer output did not parse: \(error) in \(String(decoding: writer.bytes, as: UTF8.self))")
    }
    return echo
}

private func checkString(_ value: String) {
    let back = try? roundTrip { $0.string(value) }.string("v")
    if back != value { fatalError("string round trip: \(Array(value.utf8)) came back as "
        + "\(back.map { Array($0.utf8) } ?? [])") }
}

private func checkInt(_ value: Int64) {
    let back = try? roundTrip { $0.int(value) }.int("v")
    if back != value { fatalError("int round trip: \(value) came back as \(String(describing: back))") }
}

private func checkDouble(_ value: Double) {
    let back = try? roundTrip { $0.double(value) }.double("v")
    if back?.bitPattern != value.bitPattern {
        fatalError("double round trip: \(value) came back as \(String(describing: back))")
    }
}

private func checkBool(_ value: Bool) {
    let back = try? roundTrip { $0.bool(value) }.bool("v")
    if back != value { fatalError("bool round trip: \(value) came back as \(String(describing: back))") }
}

private func checkKeyRoundTrip(_ key: String) {
    writer.reset()
    writer.beginObject()
    writer.key(key)
    writer.null()
    writer.endObject()
    do {
        try writer.bytes.withUnsafeBytes { try echo.parse($0, envelope: false) }
    } catch {
        fatalError("key round trip did not parse: \(error)")
    }
    if echo.keyNames != [key] || !echo.isNull(key) { fatalError("key round trip: \(key) became \(echo.keyNames)") }
}
