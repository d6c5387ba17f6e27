// The barrier on its own, playing Redis by hand: an action waits until as many channels were confirmed as had been
// sent when it was asked, actions run in the order asked (a later one never overtakes a held one, even when its
// own wait is over), nothing is held while the connection is down, what is held runs (told false) when the
// connection is lost, and a reconnect counts from zero.
import Testing

@testable import CairnCluster

@Suite(.timeLimit(.minutes(5))) struct SubscriptionBarrierTests {
    @Test func anActionWaitsForEveryConfirmationOfTheSubscribesSentBeforeIt() {
        let barrier = SubscriptionBarrier()
        barrier.connected()
        var ran: [String] = []
        barrier.after { ran.append("nothing sent: \($0)") }  // nothing to wait for: at once
        #expect(ran == ["nothing sent: true"])
        barrier.subscribed(2)  // one SUBSCRIBE naming two channels
        barrier.after { ran.append("first: \($0)") }
        barrier.subscribed(1)
        barrier.after { ran.append("second: \($0)") }
        #expect(ran.count == 1 && barrier.heldCount == 2)
        barrier.confirmation()
        #expect(ran.count == 1, "one of two channels confirmed")
        barrier.confirmation()
        #expect(ran.last == "first: true" && barrier.heldCount == 1)
        barrier.confirmation()
        #expect(ran.last == "second: true" && barrier.heldCount == 0)
        barrier.after { ran.append("after: \($0)") }  // all confirmed: at once
        #expect(ran.last == "after: true")
    }

    @Test func aLaterActionNeverOvertakesAHeldOne() {
        let barrier = SubscriptionBarrier()
        barrier.connected()
        var ran: [String] = []
        barrier.subscribed(1)
        barrier.after { _ in ran.append("+7") }  // an arrival, held
        barrier.after { _ in ran.append("-7") }  // its leave, asked with nothing more sent: still after it
        #expect(ran.isEmpty && barrier.heldCount == 2)
        barrier.confirmation()
        #expect(ran == ["+7", "-7"])
    }

    @Test func nothingIsHeldWhileDisconnectedAndWhatIsHeldRunsUnconfirmedWhenTheConnectionGoes() {
        let barrier = SubscriptionBarrier()
        var ran: [String] = []
        barrier.after { ran.append("before connecting: \($0)") }
        #expect(ran == ["before connecting: false"])
        barrier.connected()
        barrier.subscribed(3)
        barrier.after { ran.append("a: \($0)") }
        barrier.after { ran.append("b: \($0)") }
        barrier.confirmation()
        barrier.lost()
        #expect(ran == ["before connecting: false", "a: false", "b: false"] && barrier.heldCount == 0)
        barrier.confirmation()  // a late reply of the old connection changes nothing
        barrier.after { ran.append("down: \($0)") }
        #expect(ran.last == "down: false")
        // The reconnect counts afresh: its own SUBSCRIBE (every channel again) is what the next actions wait for.
        barrier.connected()
        barrier.subscribed(2)
        barrier.after { ran.append("c: \($0)") }
        barrier.confirmation()
        #expect(ran.last == "down: false")
        barrier.confirmation()
        #expect(ran.last == "c: true")
    }
}
