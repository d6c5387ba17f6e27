// The server's own cost, read from /proc when it runs on this machine: CPU seconds (utime + stime from
// /proc/PID/stat) and memory (VmRSS and the peak VmHWM from /proc/PID/status). Reading /proc is cheap and needs no
// cooperation from the server, so Cairn and Mosquitto are measured the same way.
public import Foundation

/// One reading of a process's CPU time and memory.
public struct ProcessSample: Codable, Sendable, Equatable {
    /// User + system CPU seconds since the process started.
    public var cpuSeconds: Double
    /// Resident set now, KiB.
    public var rssKiB: Int
    /// Peak resident set, KiB.
    public var peakRssKiB: Int
}

/// Reads /proc for one process.
public enum ServerProcessStats {
    /// A sample of process `pid`, or nil if it is gone or unreadable.
    public static func sample(pid: Int32, proc: String = "/proc") -> ProcessSample? {
        guard let stat = try? String(contentsOfFile: "\(proc)/\(pid)/stat", encoding: .utf8),
            let status = try? String(contentsOfFile: "\(proc)/\(pid)/status", encoding: .utf8),
            let cpu = cpuSeconds(statLine: stat)
        else { return nil }
        return ProcessSample(
            cpuSeconds: cpu, rssKiB: kibField("VmRSS", in: status) ?? 0,
            peakRssKiB: kibField("VmHWM", in: status) ?? 0)
    }

    /// utime + stime of a /proc/PID/stat line, in seconds. The command name may contain spaces and parentheses,
    /// so fields are counted from the last ')'.
    public static func cpuSeconds(statLine: String, ticksPerSecond: Double = Double(sysconf(Int32(_SC_CLK_TCK))))
        -> Double?
    {
        guard let close = statLine.lastIndex(of: ")") else { return nil }
        let fields = statLine[statLine.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state); utime is field 14, stime field 15.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / ticksPerSecond
    }

    /// A `Name:   1234 kB` field of /proc/PID/status, in KiB.
    public static func kibField(_ name: String, in status: String) -> Int? {
        for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
            return Int(line.dropFirst(name.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
        }
        return nil
    }
}
