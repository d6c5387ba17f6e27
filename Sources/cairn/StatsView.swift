// The text `cairn stats` draws for one `stats` event: a fixed layout of labelled figures, grouped as the event
// groups them, with human units (k/M, KiB/MiB, ms). Missing or null figures show as "-".
import CairnClient
import Foundation

enum StatsView {
    static func render(_ e: [String: Any], endpoint: WebSocketEndpoint) -> String {
        func group(_ name: String) -> [String: Any] { e[name] as? [String: Any] ?? [:] }
        let c = group("connections")
        let t = group("traffic")
        let f = group("fanout")
        let l = group("loop")
        let live = group("live")
        let store = group("store")
        let p = group("process")
        let snap = e["snapshot"] as? [String: Any]
        var out: [String] = []
        let scheme = endpoint.secure ? "wss" : "ws"
        out.append("cairn stats — \(scheme)://\(endpoint.host):\(endpoint.port)   up \(duration(p["uptime_s"]))")
        out.append("")
        out.append(
            row(
                "connections",
                "\(int(c["total"])) open, \(int(c["authenticated"])) authenticated, "
                    + "\(int(c["watching"])) watching, \(int(c["stats"])) on stats"))
        out.append(row("messages/s", "in \(count(t["messages_in_per_s"]))   out \(count(t["messages_out_per_s"]))"))
        out.append(row("bytes/s", "in \(bytes(t["bytes_in_per_s"]))   out \(bytes(t["bytes_out_per_s"]))"))
        out.append(
            row(
                "fan-out",
                "p50 \(ms(f["latency_p50_ms"]))   p99 \(ms(f["latency_p99_ms"]))   "
                    + "\(int(f["deliveries"])) delivered, \(int(f["pending_coalesced"])) pending"))
        out.append(row("event loop", "lag p99 \(ms(l["lag_p99_ms"]))   max \(ms(l["lag_max_ms"]))"))
        out.append(row("live", "\(int(live["positions"])) positions, \(int(live["relics"])) relics"))
        if let snap {
            out.append(
                row(
                    "last snapshot",
                    "\(duration(snap["age_s"])) ago, \(int(snap["rows"])) rows in "
                        + "\(int(snap["duration_ms"])) ms"))
        } else {
            out.append(row("last snapshot", "none yet"))
        }
        out.append(
            row(
                "store queue",
                "\(int(store["operations_in_flight"])) in flight, "
                    + "\(int(store["pending_rows"])) rows waiting"))
        out.append(row("memory", "\(bytes(p["resident_bytes"])) resident"))
        return out.joined(separator: "\n")
    }

    static func row(_ label: String, _ value: String) -> String {
        label.padding(toLength: 15, withPad: " ", startingAt: 0) + value
    }

    static func number(_ v: Any?) -> Double? { (v as? NSNumber)?.doubleValue }

    static func int(_ v: Any?) -> String { number(v).map { String(Int64($0)) } ?? "-" }

    static func count(_ v: Any?) -> String {
        guard let n = number(v) else { return "-" }
        if n >= 1_000_000 { return String(format: "%.1fM", n / 1_000_000) }
        if n >= 10_000 { return String(format: "%.1fk", n / 1_000) }
        return String(format: "%.0f", n)
    }

    static func bytes(_ v: Any?) -> String {
        guard let n = number(v) else { return "-" }
        let kib = 1024.0
        let mib = kib * 1024
        let gib = mib * 1024
        if n >= gib { return String(format: "%.1f GiB", n / gib) }
        if n >= mib { return String(format: "%.1f MiB", n / mib) }
        if n >= kib { return String(format: "%.1f KiB", n / kib) }
        return String(format: "%.0f B", n)
    }

    static func ms(_ v: Any?) -> String { number(v).map { String(format: "%.3f ms", $0) } ?? "-" }

    static func duration(_ v: Any?) -> String {
        guard let s = number(v) else { return "-" }
        if s < 60 { return String(format: "%.1f s", s) }
        let total = Int(s)
        if total < 3600 { return "\(total / 60)m\(total % 60)s" }
        return "\(total / 3600)h\((total % 3600) / 60)m"
    }
}
