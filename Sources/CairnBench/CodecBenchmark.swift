// The wire codec benchmark: one ~100-byte position request decoded into a struct and re-encoded as the pos
// event the hub fans out, once with CairnWire (Message + JSONWriter, reused across operations as the server
// reuses them per connection) and once with Foundation's JSONDecoder/JSONEncoder and Codable structs (decoder
// and encoder reused too, so the comparison is fair). Rounds alternate between the two codecs so machine noise
// hits both alike; the median of the rounds is reported, and the ratio is the result.

import CairnWire
import Foundation

/// The position request every operation decodes.
let positionRequest =
    #"{"op":"pos","lat":37.7749295,"lon":-122.4194155,"acc":5.0,"spd":1.4,"hdg":270.0,"bat":81,"ts":1763740000000}"#

/// A decoded position, as a handler would hold it.
struct Position {
    var lat: Double
    var lon: Double
    var acc: Double?
    var alt: Double?
    var spd: Double?
    var hdg: Double?
    var bat: Int64?
    var ts: Int64?
}

/// The request as a Codable struct, for the Foundation side.
struct PositionRequest: Codable {
    var op: String
    var id: Int64?
    var lat: Double
    var lon: Double
    var acc: Double?
    var alt: Double?
    var spd: Double?
    var hdg: Double?
    var bat: Int64?
    var ts: Int64?
}

/// The pos event as a Codable struct, for the Foundation side.
struct PositionEvent: Codable {
    var ev = "pos"
    var user: Int64
    var lat: Double
    var lon: Double
    var acc: Double?
    var alt: Double?
    var spd: Double?
    var hdg: Double?
    var bat: Int64?
    var ts: Int64?
}

struct BenchmarkError: Error, CustomStringConvertible {
    var description: String
}

/// `cairn-bench codec`: see the file comment.
struct CodecBenchmark {
    var rounds = 9
    var iterations: Int?
    var only: String?

    init(arguments: [String]) throws {
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { throw BenchmarkError(description: "\(flag) needs a value") }
            switch flag {
            case "--rounds": rounds = try Self.positive(value, flag)
            case "--iterations": iterations = try Self.positive(value, flag)
            case "--only":
                guard value == "cairn" || value == "foundation" else {
                    throw BenchmarkError(description: "--only takes cairn or foundation")
                }
                only = value
            default: throw BenchmarkError(description: "unknown option \(flag)")
            }
        }
    }

    private static func positive(_ text: String, _ flag: String) throws -> Int {
        guard let value = Int(text), value > 0 else {
            throw BenchmarkError(description: "\(flag) needs a positive integer")
        }
        return value
    }

    func run() throws {
        var cairn = CairnCodec()
        var foundation = FoundationCodec()
        try verify(&cairn, &foundation)

        if let only {
            // Fixed work for allocation counting: exactly `iterations` operations, nothing else per iteration.
            let count = iterations ?? 100_000
            var checksum = 0
            if only == "cairn" {
                for _ in 0..<count { checksum &+= try cairn.roundTrip() }
            } else {
                for _ in 0..<count { checksum &+= try foundation.roundTrip() }
            }
            print("\(only): \(count) operations, checksum \(checksum)")
            return
        }

        let cairnIterations = iterations ?? 200_000
        let foundationIterations = max(1, cairnIterations / 20)
        // Warm up both (page in code, grow buffers) before measuring.
        _ = try measure(cairnIterations / 10) { try cairn.roundTrip() }
        _ = try measure(foundationIterations / 10) { try foundation.roundTrip() }

        var cairnRounds: [Double] = []
        var foundationRounds: [Double] = []
        var decodeRounds: ([Double], [Double]) = ([], [])
        var encodeRounds: ([Double], [Double]) = ([], [])
        for round in 0..<rounds {
            // Alternate which codec goes first, so drift in machine load does not favour one.
            if round % 2 == 0 {
                cairnRounds.append(try measure(cairnIterations) { try cairn.roundTrip() })
                foundationRounds.append(try measure(foundationIterations) { try foundation.roundTrip() })
            } else {
                foundationRounds.append(try measure(foundationIterations) { try foundation.roundTrip() })
                cairnRounds.append(try measure(cairnIterations) { try cairn.roundTrip() })
            }
            decodeRounds.0.append(try measure(cairnIterations) { try cairn.decode() })
            decodeRounds.1.append(try measure(foundationIterations) { try foundation.decode() })
            encodeRounds.0.append(try measure(cairnIterations) { cairn.encode() })
            encodeRounds.1.append(try measure(foundationIterations) { try foundation.encode() })
        }

        let c = median(cairnRounds)
        let f = median(foundationRounds)
        let ratios = zip(foundationRounds, cairnRounds).map { $0 / $1 }
        print("wire codec: decode+encode of one \(positionRequest.utf8.count)-byte position message")
        print(
            "rounds: \(rounds) (alternating), iterations per round: cairn \(cairnIterations), foundation "
                + "\(foundationIterations)"
        )
        print("")
        print(pad("", 22) + pad("CairnWire ns/op", 18) + pad("Foundation ns/op", 18) + "ratio")
        row("decode + encode", c, f)
        row("decode only", median(decodeRounds.0), median(decodeRounds.1))
        row("encode only", median(encodeRounds.0), median(encodeRounds.1))
        print("")
        print("decode+encode per round, cairn ns/op: \(cairnRounds.map { fmt($0) }.joined(separator: " "))")
        print("decode+encode per round, foundation ns/op: \(foundationRounds.map { fmt($0) }.joined(separator: " "))")
        print(
            "median of per-round ratios: \(fmt(median(ratios), 1))x (min \(fmt(ratios.min()!, 1))x, max "
                + "\(fmt(ratios.max()!, 1))x)"
        )
    }

    private func row(_ name: String, _ cairn: Double, _ foundation: Double) {
        print(pad(name, 22) + pad(fmt(cairn), 18) + pad(fmt(foundation), 18) + "\(fmt(foundation / cairn, 1))x")
    }

    /// Sample outputs must agree before anything is timed.
    private func verify(_ cairn: inout CairnCodec, _ foundation: inout FoundationCodec) throws {
        _ = try cairn.roundTrip()
        _ = try foundation.roundTrip()
        let mine = try JSONSerialization.jsonObject(with: Data(cairn.writer.bytes)) as? NSDictionary
        let theirs = try JSONSerialization.jsonObject(with: foundation.encoded) as? NSDictionary
        guard let mine, let theirs, mine == theirs else {
            let ours = String(decoding: cairn.writer.bytes, as: UTF8.self)
            let foundations = String(decoding: foundation.encoded, as: UTF8.self)
            throw BenchmarkError(description: "outputs differ:\n\(ours)\n\(foundations)")
        }
    }
}

/// Nanoseconds per call of `body`, over `count` calls.
@inline(never)
func measure(_ count: Int, _ body: () throws -> Int) throws -> Double {
    var checksum = 0
    let start = ContinuousClock.now
    for _ in 0..<count { checksum &+= try body() }
    let elapsed = ContinuousClock.now - start
    blackHole(checksum)
    let (seconds, attoseconds) = elapsed.components
    return (Double(seconds) * 1e9 + Double(attoseconds) / 1e9) / Double(count)
}

@inline(never)
func blackHole(_ value: Int) {
    if value == 0x5EED_CAFE { print("") }
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    let mid = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

func fmt(_ value: Double, _ decimals: Int = 0) -> String {
    String(format: "%.\(decimals)f", value)
}

func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
}

/// CairnWire: a reused Message and JSONWriter, as a connection holds them.
struct CairnCodec {
    let input = Array(positionRequest.utf8)
    var message = Message()
    var writer = JSONWriter()
    var position = Position(lat: 0, lon: 0)

    /// Parses the request and reads it into `position`.
    @inline(never)
    mutating func decode() throws -> Int {
        try input.withUnsafeBytes { try message.parse($0) }
        guard message.isOp("pos") else { throw BenchmarkError(description: "op") }
        position = Position(
            lat: try message.requireDouble("lat"),
            lon: try message.requireDouble("lon"),
            acc: try message.double("acc"),
            alt: try message.double("alt"),
            spd: try message.double("spd"),
            hdg: try message.double("hdg"),
            bat: try message.int("bat"),
            ts: try message.int("ts"))
        return Int(position.lat)
    }

    /// Writes the pos event for `position`.
    @inline(never)
    mutating func encode() -> Int {
        let p = position
        writer.reset()
        Envelope.event("pos", into: &writer) { w in
            w.field("user", Int64(42))
            w.field("lat", p.lat)
            w.field("lon", p.lon)
            w.field("acc", p.acc)
            w.field("alt", p.alt)
            w.field("spd", p.spd)
            w.field("hdg", p.hdg)
            w.field("bat", p.bat)
            w.field("ts", p.ts)
        }
        return writer.bytes.count
    }

    mutating func roundTrip() throws -> Int {
        try decode() &+ encode()
    }
}

/// Foundation: a reused JSONDecoder and JSONEncoder with Codable structs.
struct FoundationCodec {
    let input = Data(positionRequest.utf8)
    let decoder = JSONDecoder()
    let encoder = JSONEncoder()
    var request = PositionRequest(op: "", lat: 0, lon: 0)
    var encoded = Data()

    @inline(never)
    mutating func decode() throws -> Int {
        request = try decoder.decode(PositionRequest.self, from: input)
        guard request.op == "pos" else { throw BenchmarkError(description: "op") }
        return Int(request.lat)
    }

    @inline(never)
    mutating func encode() throws -> Int {
        let r = request
        encoded = try encoder.encode(
            PositionEvent(
                user: 42, lat: r.lat, lon: r.lon, acc: r.acc, alt: r.alt, spd: r.spd, hdg: r.hdg, bat: r.bat, ts: r.ts))
        return encoded.count
    }

    mutating func roundTrip() throws -> Int {
        try decode() &+ encode()
    }
}
