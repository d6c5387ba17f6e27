// The close-code policy and the back-off arithmetic.
import XCTest

@testable import CairnKit

final class ReconnectPolicyTests: XCTestCase {
    func testTerminalCloseCodesAreThoseThatReconnectingCannotFix() {
        for code: UInt16 in [1009, 4500, 4503, 4508, 4999] {
            XCTAssertTrue(ReconnectPolicy.isTerminal(closeCode: code), "\(code)")
        }
        for code: UInt16 in [1000, 1001, 1006, 4001, 4002, 4429, 4000] {
            XCTAssertFalse(ReconnectPolicy.isTerminal(closeCode: code), "\(code)")
        }
        XCTAssertTrue(ReconnectPolicy.endsSession(closeCode: 4500))
        XCTAssertTrue(ReconnectPolicy.endsSession(closeCode: 4503))
        XCTAssertFalse(ReconnectPolicy.endsSession(closeCode: 4508))
    }

    func testDelayDoublesPerAttemptWithJitterBetweenHalfAndAllOfIt() {
        let policy = ReconnectPolicy()
        XCTAssertEqual(policy.delay(attempt: 0, closeCode: 1006, random: 0), .milliseconds(250))
        XCTAssertEqual(policy.delay(attempt: 0, closeCode: 1006, random: 0.5), .milliseconds(375))
        XCTAssertEqual(policy.delay(attempt: 1, closeCode: 1006, random: 0), .milliseconds(500))
        XCTAssertEqual(policy.delay(attempt: 3, closeCode: 1001, random: 0), .seconds(2))
    }

    func testDelayIsCappedAtTheMaximum() {
        let policy = ReconnectPolicy()
        XCTAssertEqual(policy.delay(attempt: 20, closeCode: 1006, random: 0), .seconds(15))
        XCTAssertEqual(policy.delay(attempt: 30, closeCode: 1006, random: 0.5), .milliseconds(22_500))
    }

    func testRateLimitCloseWaitsAtLeastThePause() {
        let policy = ReconnectPolicy()
        XCTAssertEqual(policy.delay(attempt: 0, closeCode: 4429, random: 0), .seconds(30))
        let short = ReconnectPolicy(rateLimitPause: .seconds(1))
        XCTAssertEqual(short.delay(attempt: 0, closeCode: 4429, random: 0), .seconds(1))
    }
}
