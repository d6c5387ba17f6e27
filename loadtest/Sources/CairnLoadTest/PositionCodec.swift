// The few bytes the load tester writes and reads on the hot path, without Foundation's JSON (about 15 µs per
// message here, which would make the tester, not the server, the bottleneck). Writing: one `pos` request with
// seven decimals (about 1 cm). Reading: only what matching needs — an event's kind, `user` and `ts`, a reply's `id`
// and `ok` — found by key, so the server may order or add fields as it likes.

/// Writes position reports.
public enum PositionWriter {
    /// Writes `{"op":"pos","lat":…,"lon":…,"ts":…}` at `out` and returns its length (at most 96 bytes, 128 with
    /// an owner). With an `owner`, `"user":…` follows `"op"`: a pub/sub peer passes the bytes on as they are, so they
    /// must name their sender, as Cairn's `pos` event does.
    public static func write(
        lat: Double, lon: Double, ts: Int64, owner: Int64? = nil, to out: UnsafeMutablePointer<UInt8>
    ) -> Int {
        var n = 0
        func put(_ s: StaticString) {
            s.withUTF8Buffer { b in
                for c in b {
                    out[n] = c
                    n += 1
                }
            }
        }
        func putInt(_ value: Int64) {
            var v = value
            if v < 0 {
                out[n] = UInt8(ascii: "-")
                n += 1
                v = -v
            }
            var digits:
                (
                    UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                    UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
                ) =
                    (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            var count = 0
            withUnsafeMutableBytes(of: &digits) { d in
                repeat {
                    d[count] = UInt8(ascii: "0") + UInt8(v % 10)
                    v /= 10
                    count += 1
                } while v > 0
                while count > 0 {
                    count -= 1
                    out[n] = d[count]
                    n += 1
                }
            }
        }
        func putFixed7(_ value: Double) {
            var scaled = Int64((value * 10_000_000).rounded())
            if scaled < 0 {
                out[n] = UInt8(ascii: "-")
                n += 1
                scaled = -scaled
            }
            putInt(scaled / 10_000_000)
            out[n] = UInt8(ascii: ".")
            n += 1
            var fraction = scaled % 10_000_000
            var divisor: Int64 = 1_000_000
            for _ in 0..<7 {
                out[n] = UInt8(ascii: "0") + UInt8(fraction / divisor)
                n += 1
                fraction %= divisor
                divisor /= 10
            }
        }
        put("{\"op\":\"pos\",")
        if let owner {
            put("\"user\":")
            putInt(owner)
            put(",")
        }
        put("\"lat\":")
        putFixed7(lat)
        put(",\"lon\":")
        putFixed7(lon)
        put(",\"ts\":")
        putInt(ts)
        put("}")
        return n
    }
}

/// What one line from a server means to the load tester.
public enum ServerLine: Equatable, Sendable {
    /// `{"ev":"pos","user":U,…,"ts":T}`: a friend's position.
    case position(user: Int64, ts: Int64)
    /// A reply `{"id":N,"ok":…}`.
    case reply(id: Int64, ok: Bool)
    /// `{"ev":"error",…}`.
    case error
    /// Any other event (presence, friend events, …).
    case other
}

/// Reads server lines by key.
public enum ServerLineScanner {
    /// Classifies one JSON line.
    public static func classify(_ line: UnsafeRawBufferPointer) -> ServerLine {
        if contains(line, "\"ev\":\"pos\"") {
            guard let user = integer(after: "\"user\":", in: line), let ts = integer(after: "\"ts\":", in: line)
            else { return .other }
            return .position(user: user, ts: ts)
        }
        if let id = integer(after: "\"id\":", in: line), !contains(line, "\"ev\":") {
            return .reply(id: id, ok: !contains(line, "\"ok\":false"))
        }
        if contains(line, "\"ev\":\"error\"") { return .error }
        return .other
    }

    /// Calls `body` for each non-empty `\n`-separated line of a message.
    public static func forEachLine(_ message: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Void) {
        var start = 0
        for i in 0...message.count {
            if i == message.count || message[i] == 0x0A {
                if i > start { body(UnsafeRawBufferPointer(rebasing: message[start..<i])) }
                start = i + 1
            }
        }
    }

    /// The integer right after the first occurrence of `key`, or nil.
    public static func integer(after key: StaticString, in line: UnsafeRawBufferPointer) -> Int64? {
        guard var i = find(key, in: line) else { return nil }
        while i < line.count && line[i] == 0x20 { i += 1 }
        var negative = false
        if i < line.count && line[i] == UInt8(ascii: "-") {
            negative = true
            i += 1
        }
        var value: Int64 = 0
        var digits = 0
        while i < line.count, line[i] >= 0x30, line[i] <= 0x39, digits < 18 {
            value = value * 10 + Int64(line[i] - 0x30)
            i += 1
            digits += 1
        }
        guard digits > 0 else { return nil }
        return negative ? -value : value
    }

    /// Whether `line` contains `needle`.
    public static func contains(_ line: UnsafeRawBufferPointer, _ needle: StaticString) -> Bool {
        find(needle, in: line) != nil
    }

    /// The index just past the first occurrence of `needle`, or nil.
    static func find(_ needle: StaticString, in line: UnsafeRawBufferPointer) -> Int? {
        needle.withUTF8Buffer { n -> Int? in
            guard n.count > 0, line.count >= n.count else { return nil }
            let first = n[0]
            var i = 0
            let last = line.count - n.count
            while i <= last {
                if line[i] == first {
                    var j = 1
                    while j < n.count && line[i + j] == n[j] { j += 1 }
                    if j == n.count { return i + n.count }
                }
                i += 1
            }
            return nil
        }
    }
}
