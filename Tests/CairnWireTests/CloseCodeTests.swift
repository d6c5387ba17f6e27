// Close codes and the contract's reconnect rule.

import CairnWire
import Testing

@Suite(.timeLimit(.minutes(5))) struct CloseCodeTests {
    @Test func rawValuesMatchTheContract() {
        #expect(CloseCode.normal.rawValue == 1000)
        #expect(CloseCode.goingAway.rawValue == 1001)
        #expect(CloseCode.messageTooBig.rawValue == 1009)
        #expect(CloseCode.outboundOverflow.rawValue == 4001)
        #expect(CloseCode.invalidToken.rawValue == 4500)
        #expect(CloseCode.suspended.rawValue == 4503)
        #expect(CloseCode.authTimeout.rawValue == 4508)
    }

    @Test func onlyGoingAwayAndThe4000To4499RangeMayReconnect() {
        #expect(CloseCode.goingAway.mayReconnect)
        #expect(CloseCode.outboundOverflow.mayReconnect)
        #expect(!CloseCode.normal.mayReconnect)
        #expect(!CloseCode.messageTooBig.mayReconnect)
        #expect(!CloseCode.invalidToken.mayReconnect)
        #expect(!CloseCode.suspended.mayReconnect)
        #expect(!CloseCode.authTimeout.mayReconnect)
    }
}
