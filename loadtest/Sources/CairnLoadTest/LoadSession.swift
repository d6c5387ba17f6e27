import CairnSeed
// The run's state machine, shared by both transports: it paces connections (the ramp), decides when measuring
// starts and ends, says which user must report next, matches deliveries with sends, keeps the counters and
// histograms, prints the progress line and builds the report. It owns no socket: a transport (libwebsockets for
// Cairn, libmosquitto for Mosquitto) calls it from its one event-loop thread and does what it asks.
public import Foundation
import Glibc

/// What a transport must do for the session.
public protocol LoadTransport: AnyObject {
    /// Starts connecting user `user`; returns false if the attempt failed at once.
    func connect(user: Int) -> Bool
    /// User `user` (ready) has a report due: arrange for `LoadSession.writeReport` to be called for it soon.
    func reportDue(user: Int)
}

/// Where a run is.
public enum RunPhase: String, Sendable {
    /// Connecting users.
    case ramp
    /// Reporting and measuring.
    case measure
    /// Reading what is still in flight.
    case drain
    /// Over.
    case done
}

/// The state of one run (single-threaded: only the transport's loop thread touches it).
public final class LoadSession {
    /// Connection state of one user.
    public enum UserState: UInt8 {
        case idle, connecting, open, ready, closed, failed
    }

    /// The workload.
    public private(set) var workload: Workload
    /// The configuration.
    public let configuration: LoadConfiguration
    /// Counts so far.
    public private(set) var counters = RunCounters()
    /// Current phase.
    public private(set) var phase: RunPhase = .ramp
    /// How the run ended (set when `phase` becomes `.done`).
    public private(set) var outcome: RunOutcome = .completed
    /// Why it ended that way.
    public private(set) var outcomeMessage = "the measured window ran to its end"

    /// Per-user state.
    public private(set) var states: [UserState]
    /// Whether a report is waiting to be written, per user.
    public private(set) var reportPending: [Bool]
    private var connectStart: [UInt64]
    private var lastTs: [Int64]
    private var lastMove: [UInt64]
    private var indexOfID: [Int64: Int32] = [:]
    private var sendLog: SendLog
    private var schedule: ReportSchedule
    private var latency = LatencyHistogram()
    /// Latency by `DeliveryPath` (index: its position in `DeliveryPath.allCases`), and the deliveries expected on it.
    private var pathLatency = [LatencyHistogram](repeating: LatencyHistogram(), count: DeliveryPath.allCases.count)
    private var pathExpected = [Int](repeating: 0, count: DeliveryPath.allCases.count)
    private var secondLatency = LatencyHistogram()
    private var connectTime = LatencyHistogram()
    private var seconds: [SecondSample] = []

    private let startNs: UInt64
    private let deadlineNs: UInt64
    private var nextConnect = 0
    private var pendingConnects = 0
    private var lastAttemptNs: UInt64 = 0
    private var consecutiveFailures = 0
    private var live = 0
    private var openNotReady = 0
    private var windowStartNs: UInt64 = 0
    private var windowEndNs: UInt64 = 0
    private var drainEndNs: UInt64 = 0
    private var nextProgressNs: UInt64
    private var lastProgress = (sends: 0, deliveries: 0)
    /// Readings of each server pid (in `configuration.serverPIDs` order) before the ramp and when the window began.
    private var serverStart: [ProcessSample?] = []
    private var serverWindowStart: [ProcessSample?] = []
    /// This process's CPU seconds when the window began and when it ended.
    private var ownWindowStartCpu = 0.0
    private var ownWindowEndCpu: Double?
    private var serverAtLoad: [ProcessSample?] = []
    /// The machine's stolen time when the window began and ended, and when the current second began (with when).
    private var stolenAtWindowStart: StolenTime?
    private var stolenAtWindowEnd: StolenTime?
    private var stolenAtSecondStart: StolenTime?
    private var secondStartNs: UInt64 = 0
    private var readyAtLoad = 0
    private let output: (String) -> Void

    /// A session for `workload`; `output` receives progress lines (default: stderr).
    public init(
        workload: Workload, configuration: LoadConfiguration,
        output: @escaping (String) -> Void = { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }
    ) {
        self.workload = workload
        self.configuration = configuration
        self.output = output
        let n = workload.count
        states = [UserState](repeating: .idle, count: n)
        reportPending = [Bool](repeating: false, count: n)
        connectStart = [UInt64](repeating: 0, count: n)
        lastTs = [Int64](repeating: 0, count: n)
        lastMove = [UInt64](repeating: 0, count: n)
        for (i, id) in workload.ids.enumerated() { indexOfID[id] = Int32(i) }
        sendLog = SendLog(users: n)
        schedule = ReportSchedule(phases: workload.phases, rate: configuration.rate, duration: configuration.duration)
        startNs = LoadClock.monotonicNanoseconds()
        let rampSeconds = Double(n) / configuration.rampPerSecond
        let budget = rampSeconds + configuration.readyTimeout + configuration.duration + configuration.drain + 30
        deadlineNs = startNs + UInt64(budget * 1e9)
        nextProgressNs = startNs + 1_000_000_000
        serverStart = configuration.serverPIDs.map { ServerProcessStats.sample(pid: $0) }
    }

    /// The index of the user with `id`, if it is part of the workload.
    public func index(ofUser id: Int64) -> Int? { indexOfID[id].map(Int.init) }

    /// Whether the run is over.
    public var isFinished: Bool { phase == .done }

    /// Nanoseconds from `earlier` to `later`, zero if `earlier` was read after `later` (instants taken inside one
    /// tick can be newer than the tick's own `now`).
    static func since(_ earlier: UInt64, _ later: UInt64) -> UInt64 { later > earlier ? later - earlier : 0 }

    /// Nanoseconds until the session next needs a tick (for the transport's poll timeout), at most 1 ms.
    public var nextTickNanoseconds: UInt64 { 1_000_000 }

    // MARK: Driving

    /// Advances the run: starts due connections, moves between phases, asks for due reports, prints progress.
    public func tick(_ transport: some LoadTransport) {
        guard phase != .done else { return }
        let now = LoadClock.monotonicNanoseconds()
        if now >= deadlineNs {
            finish(
                .timedOut,
                "the run did not settle before its deadline (\(states.filter { $0 == .connecting }.count) "
                    + "still connecting)",
                now: now)
            return
        }
        switch phase {
        case .ramp:
            startDueConnections(transport, now: now)
            if nextConnect == workload.count && pendingConnects == 0 {
                let settled = openNotReady == 0
                let waited = Double(Self.since(lastAttemptNs, now)) / 1e9 >= configuration.readyTimeout
                if settled || waited {
                    if counters.ready == 0 || live == 0 {
                        abortForLostServer(now: now)
                        return
                    }
                    beginWindow(now: now)
                }
            }
        case .measure:
            let t = Double(Self.since(windowStartNs, now)) / 1e9
            schedule.due(upTo: t) { user in
                guard states[user] == .ready else { return }
                if !reportPending[user] {
                    reportPending[user] = true
                    transport.reportDue(user: user)
                }
            }
            if schedule.nextDue == nil && t >= configuration.duration {
                windowEndNs = now
                ownWindowEndCpu = Self.ownCpuSeconds()
                stolenAtWindowEnd = StolenTime.sample()
                sampleServerAtLoad()
                phase = .drain
                drainEndNs = now + UInt64(configuration.drain * 1e9)
            }
        case .drain:
            if now >= drainEndNs { finish(.completed, "the measured window ran to its end", now: now) }
        case .done:
            return
        }
        if phase != .done && live == 0 && counters.connectAttempts > 0 && pendingConnects == 0 {
            let rampStuck = phase == .ramp && nextConnect < workload.count && consecutiveFailures < 3
            if !rampStuck { abortForLostServer(now: now) }
        }
        if now >= nextProgressNs {
            nextProgressNs += 1_000_000_000
            if configuration.progress { output(progressLine(now: now)) }
        }
    }

    private func startDueConnections(_ transport: some LoadTransport, now: UInt64) {
        let interval = 1e9 / configuration.rampPerSecond
        while nextConnect < workload.count && pendingConnects < configuration.maxPendingConnects
            && Double(Self.since(startNs, now)) >= Double(nextConnect) * interval
        {
            let user = nextConnect
            nextConnect += 1
            counters.connectAttempts += 1
            states[user] = .connecting
            connectStart[user] = LoadClock.monotonicNanoseconds()
            lastAttemptNs = connectStart[user]
            pendingConnects += 1
            live += 1
            if !transport.connect(user: user) { connectFailed(user: user) }
        }
    }

    /// Ends the run at once with `outcome` (e.g. the transport could not start).
    public func abort(_ outcome: RunOutcome, _ message: String) {
        guard phase != .done else { return }
        finish(outcome, message, now: LoadClock.monotonicNanoseconds())
    }

    private func beginWindow(now: UInt64) {
        phase = .measure
        windowStartNs = now
        ownWindowStartCpu = Self.ownCpuSeconds()
        serverWindowStart = configuration.serverPIDs.map { ServerProcessStats.sample(pid: $0) }
        stolenAtWindowStart = StolenTime.sample()
        stolenAtSecondStart = stolenAtWindowStart
        secondStartNs = now
    }

    private func abortForLostServer(now: UInt64) {
        if counters.connected == 0 {
            finish(
                .unreachable,
                "could not connect to \(configuration.server.rawValue) at "
                    + "\(configuration.address) (\(counters.connectFailures) attempts failed)",
                now: now)
        } else {
            finish(
                .serverClosed,
                "the server closed all \(counters.connected) connections during the \(phase.rawValue) "
                    + "phase", now: now)
        }
    }

    private func finish(_ outcome: RunOutcome, _ message: String, now: UInt64) {
        if phase == .measure {
            windowEndNs = now
            ownWindowEndCpu = Self.ownCpuSeconds()
            stolenAtWindowEnd = StolenTime.sample()
            sampleServerAtLoad()
        }
        if windowEndNs == 0 { windowEndNs = windowStartNs }
        self.outcome = outcome
        outcomeMessage = message
        phase = .done
        closeSecond()
    }

    private func sampleServerAtLoad() {
        guard !configuration.serverPIDs.isEmpty else { return }
        serverAtLoad = configuration.serverPIDs.map { ServerProcessStats.sample(pid: $0) }
        readyAtLoad = states.reduce(0) { $0 + ($1 == .ready ? 1 : 0) }
    }

    // MARK: Events from the transport

    /// The connection of `user` is established.
    public func established(user: Int) {
        guard states[user] == .connecting else { return }
        states[user] = .open
        openNotReady += 1
        pendingConnects -= 1
        consecutiveFailures = 0
        counters.connected += 1
        connectTime.record(nanoseconds: LoadClock.monotonicNanoseconds() - connectStart[user])
    }

    /// `user` now receives its friends' positions (watching, or subscribed).
    public func ready(user: Int) {
        guard states[user] == .open else { return }
        states[user] = .ready
        openNotReady -= 1
        counters.ready += 1
        lastMove[user] = LoadClock.monotonicNanoseconds()
    }

    /// The connection attempt of `user` failed.
    public func connectFailed(user: Int) {
        guard states[user] == .connecting else { return }
        states[user] = .failed
        pendingConnects -= 1
        live -= 1
        consecutiveFailures += 1
        counters.connectFailures += 1
    }

    /// The established connection of `user` closed; `code` is the close code the server sent, if any.
    public func closed(user: Int, code: Int?) {
        if states[user] == .connecting {
            connectFailed(user: user)
            return
        }
        guard states[user] == .open || states[user] == .ready else { return }
        if states[user] == .open { openNotReady -= 1 }
        states[user] = .closed
        reportPending[user] = false
        live -= 1
        if phase != .done { counters.disconnects += 1 }
        if let code { counters.closeCodes[String(code), default: 0] += 1 }
    }

    /// Moves `user` to now and writes its report (at most 96 bytes) at `out`; returns the length, or 0 if nothing
    /// is due. Record the send instant as late as possible: call this right before the bytes are handed to the socket.
    public func writeReport(user: Int, to out: UnsafeMutablePointer<UInt8>) -> Int {
        guard reportPending[user], states[user] == .ready, phase == .measure || phase == .drain else {
            reportPending[user] = false
            return 0
        }
        reportPending[user] = false
        let now = LoadClock.monotonicNanoseconds()
        workload.movers[user].advance(by: Double(Self.since(lastMove[user], now)) / 1e9)
        lastMove[user] = now
        let ts = max(LoadClock.wallMilliseconds(), lastTs[user] + 1)
        lastTs[user] = ts
        let point = workload.movers[user].coordinate(in: workload.plan.box)
        let owner = configuration.server == .nchan ? workload.ids[user] : nil
        let length = PositionWriter.write(lat: point.lat, lon: point.lon, ts: ts, owner: owner, to: out)
        sendLog.record(user: user, ts: ts, instant: now)
        var watchers = 0
        for f in workload.friends[user] where states[Int(f)] == .ready {
            watchers += 1
            pathExpected[Self.slot(configuration.path(from: user, to: Int(f)))] += 1
        }
        counters.positionsSent += 1
        counters.expectedDeliveries += watchers
        counters.messagesSent += 1
        counters.bytesSent += length
        let b = bin(now)
        seconds[b].sends += 1
        return length
    }

    /// Counts a request other than a report (watch, subscribe) of `bytes` bytes.
    public func sentControl(bytes: Int) {
        counters.messagesSent += 1
        counters.bytesSent += bytes
    }

    /// Counts one frame (or packet) of `bytes` payload bytes read from the server.
    public func receivedFrame(bytes: Int) {
        counters.framesReceived += 1
        counters.bytesReceived += bytes
    }

    /// Counts one message read (an event or a reply).
    public func receivedMessage() { counters.messagesReceived += 1 }

    /// Counts an error reply or event.
    public func receivedError() { counters.errors += 1 }

    /// `watcher` received the position of user `owner` (an id) stamped `ts`.
    public func delivered(to watcher: Int, owner: Int64, ts: Int64) {
        let now = LoadClock.monotonicNanoseconds()
        guard let index = indexOfID[owner], let sent = sendLog.instant(user: Int(index), ts: ts), now >= sent else {
            counters.unmatched += 1
            return
        }
        counters.deliveries += 1
        latency.record(nanoseconds: now - sent)
        pathLatency[Self.slot(configuration.path(from: Int(index), to: watcher))].record(nanoseconds: now - sent)
        secondLatency.record(nanoseconds: now - sent)
        let b = bin(now)
        seconds[b].deliveries += 1
    }

    /// The index of `path` in the per-path arrays.
    static func slot(_ path: DeliveryPath) -> Int { path == .sameNode ? 0 : 1 }

    // MARK: Seconds and progress

    private func bin(_ now: UInt64) -> Int {
        let second = windowStartNs == 0 || now < windowStartNs ? 0 : Int((now - windowStartNs) / 1_000_000_000)
        if seconds.isEmpty { seconds.append(SecondSample(second: 0, sends: 0, deliveries: 0, p99: 0)) }
        while seconds[seconds.count - 1].second < second {
            closeSecond()
            seconds.append(SecondSample(second: seconds[seconds.count - 1].second + 1, sends: 0, deliveries: 0, p99: 0))
        }
        return seconds.count - 1
    }

    private func closeSecond() {
        guard !seconds.isEmpty else { return }
        seconds[seconds.count - 1].p99 = secondLatency.milliseconds(atPercentile: 99)
        if let earlier = stolenAtSecondStart, let later = StolenTime.sample() {
            let now = LoadClock.monotonicNanoseconds()
            let elapsed = Double(Self.since(secondStartNs, now)) / 1e9
            seconds[seconds.count - 1].stolen = later.shares(since: earlier, seconds: elapsed)
            stolenAtSecondStart = later
            secondStartNs = now
        }
        secondLatency.reset()
    }

    private func progressLine(now: UInt64) -> String {
        let elapsed = Double(Self.since(startNs, now)) / 1e9
        let sends = counters.positionsSent - lastProgress.sends
        let deliveries = counters.deliveries - lastProgress.deliveries
        lastProgress = (counters.positionsSent, counters.deliveries)
        return String(
            format:
                "[%6.1fs] %-7@ conn %d/%d ready %d | sent/s %d deliv/s %d | p99 %.2f ms (run %.2f) | err %d "
                + "drop %d fail %d",
            elapsed, phase.rawValue as NSString, live, workload.count, counters.ready, sends, deliveries,
            secondLatency.milliseconds(atPercentile: 99), latency.milliseconds(atPercentile: 99),
            counters.errors, counters.disconnects, counters.connectFailures)
    }

    // MARK: Report

    /// The report (call once the run is finished).
    public func report() -> LoadReport {
        let window = windowEndNs > windowStartNs ? Double(windowEndNs - windowStartNs) / 1e9 : 0
        let plan = workload.plan
        let setup = LoadReport.Setup(
            server: configuration.server, address: configuration.address, users: workload.count,
            friendsPerUser: plan.friends, friendships: workload.friendships, graph: plan.shape.rawValue,
            seed: plan.seed,
            rateHz: configuration.rate, durationSeconds: configuration.duration,
            rampPerSecond: configuration.rampPerSecond,
            modes: plan.modes.description, box: plan.box,
            sourceAddresses: configuration.sourceAddressCount(users: workload.count))
        var serverCosts: [LoadReport.ServerCost] = []
        for (i, pid) in configuration.serverPIDs.enumerated() {
            guard let start = serverStart[i] else { continue }
            let end = (serverAtLoad.isEmpty ? nil : serverAtLoad[i]) ?? ServerProcessStats.sample(pid: pid) ?? start
            let windowStart = serverWindowStart.isEmpty ? nil : serverWindowStart[i]
            let grown = Double(max(0, end.rssKiB - start.rssKiB)) * 1024
            // Users ready per node: a node's memory grows with its own share of the users.
            let readyHere = configuration.serverPIDs.count == 1 ? readyAtLoad : readyAtLoad / configuration.nodeCount
            serverCosts.append(
                .init(
                    pid: pid, cpuSeconds: end.cpuSeconds - start.cpuSeconds,
                    windowCpuSeconds: windowStart.map { end.cpuSeconds - $0.cpuSeconds } ?? 0,
                    peakRssKiB: end.peakRssKiB, baselineRssKiB: start.rssKiB, loadedRssKiB: end.rssKiB,
                    bytesPerUser: readyHere > 0 ? grown / Double(readyHere) : 0))
        }
        let paths = DeliveryPath.allCases.map { path in
            let slot = Self.slot(path)
            let summary = pathLatency[slot].summary
            return LoadReport.PathFigures(
                path: path, deliveries: Int(summary.count), expectedDeliveries: pathExpected[slot],
                deliveredShare: pathExpected[slot] > 0 ? Double(summary.count) / Double(pathExpected[slot]) : 1,
                latency: summary)
        }
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let cpu = Self.ownCpuSeconds()
        let c = counters
        return LoadReport(
            outcome: outcome, message: outcomeMessage, setup: setup, windowSeconds: window, counters: c,
            sendsPerSecond: window > 0 ? Double(c.positionsSent) / window : 0,
            deliveriesPerSecond: window > 0 ? Double(c.deliveries) / window : 0,
            deliveredShare: c.expectedDeliveries > 0 ? Double(c.deliveries) / Double(c.expectedDeliveries) : 1,
            latency: latency.summary, connectTime: connectTime.summary, perSecond: seconds,
            serverCost: serverCosts.count == 1 ? serverCosts[0] : nil,
            serverCosts: serverCosts, ports: configuration.ports, byPath: paths,
            stolen: stolenAtWindowStart.flatMap { start in
                stolenAtWindowEnd.map { $0.shares(since: start, seconds: window) }
            },
            clientCost: .init(
                cpuSeconds: cpu, windowCpuSeconds: ownWindowEndCpu.map { $0 - ownWindowStartCpu } ?? 0,
                peakRssKiB: Int(usage.ru_maxrss)))
    }

    /// User plus system CPU seconds of this process so far.
    static func ownCpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }
}
