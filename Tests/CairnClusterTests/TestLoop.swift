// A libev loop owned by the test's thread, standing in for the hub's service loop: the link's connections and
// timers run on it, and `spin` turns it until a condition holds or a deadline passes (a 10 ms ticker keeps each
// turn short, so the condition is checked often).
import CLws
import CairnLoop
import Foundation

@testable import CairnCluster

final class TestLoop {
    let loop: UnsafeMutableRawPointer
    let confinement = LoopConfinement(name: "the test's loop")
    private var ticker: LoopTimer?

    init() {
        loop = cairn_ev_loop_new()!
        confinement.claim()
        ticker = LoopTimer(loop: loop) {}
        ticker?.start(after: 0.01, repeat: 0.01)
    }

    /// Turns the loop until `condition` is true; false if `timeout` seconds pass first.
    @discardableResult
    func spin(timeout: Double = 10, until condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            if Date() >= deadline { return false }
            _ = cairn_ev_run_once(loop)
        }
        return true
    }

    /// Turns the loop for `seconds`.
    func run(for seconds: Double) {
        let deadline = Date().addingTimeInterval(seconds)
        spin(timeout: seconds + 1) { Date() >= deadline }
    }

    deinit {
        ticker = nil
        cairn_ev_loop_destroy(loop)
        confinement.release()
    }
}
