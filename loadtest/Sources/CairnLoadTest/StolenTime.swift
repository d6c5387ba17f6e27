// Time the hypervisor took from this machine's CPUs: the steal column of /proc/stat. On a virtual machine a
// second in which the host ran something else on the server's core is a slow second for reasons no server controls.
// The same build at the same rate read p99 39 ms in one run and 154 ms in the next, and the second run's slow
// seconds were those in which 8–21% of CPU 0 was stolen, so every report says how much was. Zero on bare metal and
// where the kernel does not account steal.
import Foundation

/// Steal ticks per CPU, read from /proc/stat.
public struct StolenTime: Sendable, Equatable {
    /// Ticks stolen from each CPU since boot, in CPU order (cpu0, cpu1, ...).
    public var ticks: [UInt64]

    public init(ticks: [UInt64]) {
        self.ticks = ticks
    }

    /// This machine's counters now, or nil where /proc/stat cannot be read.
    public static func sample(proc: String = "/proc") -> StolenTime? {
        guard let stat = try? String(contentsOfFile: "\(proc)/stat", encoding: .utf8) else { return nil }
        return parse(stat)
    }

    /// The per-CPU lines of a /proc/stat text (`cpuN user nice system idle iowait irq softirq steal ...`); nil when
    /// it has none, or one without a steal field (kernels before 2.6.11).
    public static func parse(_ stat: String) -> StolenTime? {
        var ticks: [UInt64] = []
        for line in stat.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let name = fields.first, name.hasPrefix("cpu"), name.count > 3 else { continue }
            guard fields.count > 8, let steal = UInt64(fields[8]) else { return nil }
            ticks.append(steal)
        }
        return ticks.isEmpty ? nil : StolenTime(ticks: ticks)
    }

    /// The share (0...1) of `seconds` stolen from each CPU between `earlier` and this sample; empty when the two do
    /// not count the same CPUs.
    public func shares(since earlier: StolenTime, seconds: Double, ticksPerSecond: Double = Self.ticksPerSecond)
        -> [Double]
    {
        guard earlier.ticks.count == ticks.count, seconds > 0 else { return [] }
        return zip(earlier.ticks, ticks).map { before, now in
            min(1, Double(now >= before ? now - before : 0) / ticksPerSecond / seconds)
        }
    }

    /// USER_HZ, the unit of /proc/stat.
    public static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
}
