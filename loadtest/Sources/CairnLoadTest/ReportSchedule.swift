// When each user reports. Every user reports once per period (1/R s) at its own phase, so the load is spread
// evenly instead of arriving in bursts; users are visited in phase order by a cursor, so finding who is due costs
// nothing per idle user. Pure: it maps seconds since the start of the measured window to (user, report) slots.

/// The reporting cadence of all users over one window.
public struct ReportSchedule: Sendable {
    /// Seconds between two reports of one user.
    public let period: Double
    /// Window length in seconds; no report is due at or after it.
    public let duration: Double
    private let order: [Int32]
    private let offsets: [Double]
    private var cycle = 0
    private var position = 0

    /// A schedule for users with the given phases (fractions of the period), at `rate` reports per second per user.
    public init(phases: [Double], rate: Double, duration: Double) {
        precondition(rate > 0 && duration >= 0)
        period = 1 / rate
        self.duration = duration
        let sorted = phases.indices.sorted { (phases[$0], $0) < (phases[$1], $1) }
        order = sorted.map { Int32($0) }
        offsets = sorted.map { phases[$0] * (1 / rate) }
    }

    /// Seconds (since the window started) at which the next slot is due, or nil when the window is over.
    public var nextDue: Double? {
        guard !order.isEmpty else { return nil }
        let t = Double(cycle) * period + offsets[position]
        return t < duration ? t : nil
    }

    /// Calls `body(user)` for every slot due at or before `now` (seconds since the window started), in time order.
    public mutating func due(upTo now: Double, _ body: (Int) -> Void) {
        while let t = nextDue, t <= now {
            body(Int(order[position]))
            position += 1
            if position == order.count {
                position = 0
                cycle += 1
            }
        }
    }

    /// How many slots the whole window holds (what a run with every user present would send).
    public var totalSlots: Int {
        var total = 0
        for offset in offsets where offset < duration {
            total += Int(((duration - offset) / period).rounded(.up))
        }
        return total
    }
}
