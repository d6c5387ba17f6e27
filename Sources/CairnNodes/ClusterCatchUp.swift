// Keeping a node's memory current with the shared store while it may have missed control messages, and failing closed
// when it cannot. Pub/sub does not replay: from start until its first subscription is confirmed, and from a lost link
// until the next one, the node reads friendships, requests and rules (`Social.resync`), the live relics
// (`Relics.resync`), admins' settings (`AdminSettings.reread`) and alerted items (`Trackers.resyncAlerts`) from the
// store every second (or every half `fenceMs`, if that is shorter), and once more after each confirmed subscription;
// then it is caught up (every later change arrives as a message). While it is not, it delivers positions only while
// its last good read began less than `fenceMs` ago (`LiveMap.fencedAfter`): a hide committed elsewhere is
// answered no sooner than `fenceMs` (the ack deadline) after its commit, so a node still delivering has read the store
// after that commit. A node cut off from both Redis and the store stops delivering positions rather than serve rules
// it cannot check. Caught up, it still reads every `sweepSeconds`: a backstop for any change whose message never went
// out (a node that crashed between its commit and its publish).
import CairnAdmin
import CairnCluster
import CairnCore
import CairnHub
import CairnLiveMap
import CairnLoop
import CairnRelics
import CairnSocial
import CairnTrackers
import Logging

/// The catch-up reads and the position fence of one node on a shared store.
final class ClusterCatchUp {
    private let hub: Hub
    private let logger: Logger
    private let fenceMs: Int64
    /// Seconds between reads while catching up.
    private let interval: Double
    /// Seconds between reads once caught up.
    static let sweepSeconds = 30.0
    private var timer: LoopTimer?
    private var caughtUp = false
    /// When both control subscriptions were last confirmed (.max: not since the link dropped).
    private var subscribedAt = Int64.max
    /// When the last read that succeeded began (the store was loaded at start just before this exists).
    private var lastGoodRead: Int64

    /// Starts catching up on `loop`: reads every second until the first subscription's read succeeds.
    init(hub: Hub, loop: UnsafeMutableRawPointer, fenceMs: Int64, logger: Logger) {
        self.hub = hub
        self.logger = logger
        self.fenceMs = fenceMs
        interval = min(1, Double(fenceMs) / 2000)
        lastGoodRead = hub.clock.now()
        fence(after: lastGoodRead + fenceMs)
        let timer = LoopTimer(loop: loop) { [unowned self] in self.read(self.caughtUp ? "sweep" : "catching up") }
        timer.start(after: interval, repeat: interval)
        self.timer = timer
    }

    /// Both control subscriptions are confirmed: one more read, begun now, catches the node up.
    func subscribed() {
        subscribedAt = hub.clock.now()
        read("subscribed")
    }

    /// The link dropped: messages may be missed from now on; read at once and every second, fence from the last
    /// good read.
    func linkLost() {
        caughtUp = false
        subscribedAt = .max
        fence(after: lastGoodRead + fenceMs)
        timer?.start(after: 0, repeat: interval)
    }

    /// Stops reading and lifts the fence (the node is stopping).
    func stop() {
        timer?.stop()
        timer = nil
        fence(after: .max)
    }

    /// After `time` the node delivers and shows no position at all (.max: no fence).
    private func fence(after time: Int64) {
        hub.confinement.assertOnLoop()
        hub.liveMap.fencedAfter = time
    }

    private func read(_ why: String) {
        let started = hub.clock.now()
        hub.relics.resync { [logger] result in
            switch result {
            case .success(let changed) where changed.added + changed.removed > 0:
                logger.info("cluster: resync (\(why)) added \(changed.added) relics, removed \(changed.removed)")
            case .success: break
            case .failure(let error): logger.warning("cluster: relic resync (\(why)) failed: \(error.message)")
            }
        }
        hub.settings.reread { [logger] result in
            switch result {
            case .success(let changed) where changed > 0:
                logger.info("cluster: resync (\(why)) put \(changed) changed settings in force")
            case .success: break
            case .failure(let error): logger.warning("cluster: settings resync (\(why)) failed: \(error.message)")
            }
        }
        hub.trackers.resyncAlerts { [logger] result in
            switch result {
            case .success(let changed) where changed > 0:
                logger.info("cluster: resync (\(why)) changed the alert state of \(changed) items")
            case .success: break
            case .failure(let error): logger.warning("cluster: item alert resync (\(why)) failed: \(error.message)")
            }
        }
        hub.social.resync { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let counts):
                lastGoodRead = max(lastGoodRead, started)
                let took = hub.clock.now() - started
                if took * 2 > fenceMs {
                    logger.warning("cluster: reading the store took \(took) ms, over half cluster.ack_timeout")
                }
                if started >= subscribedAt {
                    if !caughtUp { timer?.start(after: Self.sweepSeconds, repeat: Self.sweepSeconds) }
                    caughtUp = true
                    fence(after: .max)
                } else if !caughtUp {
                    fence(after: lastGoodRead + fenceMs)
                }
                if counts.total > 0 {
                    logger.info("cluster: resync (\(why)) applied \(counts.total) changes: \(counts)")
                }
            case .failure(let error):
                logger.warning("cluster: resync (\(why)) could not read the store: \(error.message)")
            }
        }
    }
}
