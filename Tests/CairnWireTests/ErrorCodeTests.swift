// The error codes are exactly the contract's list, and WireError's conveniences.

import CairnErrorCodes
import CairnWire
import Testing

@Suite(.timeLimit(.minutes(5))) struct ErrorCodeTests {
    @Test func codesAreExactlyTheContractList() {
        let contract = [
            "bad_request", "unauthorized", "invalid_credentials", "username_taken", "forbidden",
            "not_owner", "not_friends", "not_found", "too_far", "wrong_password", "expired",
            "rate_limited", "too_large", "suspended", "device_taken", "internal", "unavailable",
        ]
        #expect(ErrorCode.allCases.map(\.rawValue) == contract)
        #expect(ErrorCode(rawValue: "internal") == .internal)
    }

    @Test func badRequestConvenience() {
        let error = WireError.badRequest("missing field 'lat'")
        #expect(error.code == .badRequest)
        #expect(error.message == "missing field 'lat'")
        #expect(error == WireError(.badRequest, "missing field 'lat'"))
        #expect(error != WireError(.badRequest, "other"))
        #expect(error.description == "bad_request: missing field 'lat'")
    }
}
