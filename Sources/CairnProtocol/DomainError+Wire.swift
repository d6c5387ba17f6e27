// The domain refuses with `DomainError`; the wire speaks `WireError`. Both carry the one list of codes
// (CairnErrorCodes), so a refusal reads on the wire exactly as the domain worded it.
import CairnCore
import CairnWire

extension DomainError {
    /// The same refusal as the wire writes it.
    var wire: WireError {
        var error = WireError(code, message)
        error.details = details.map { WireError.Detail($0.name, $0.value) }
        return error
    }
}

extension SessionEnd {
    /// The WebSocket close code and reason for a session the domain ended.
    var close: (code: CloseCode, reason: String) {
        switch self {
        case .authenticationTimeout: return (.authTimeout, "authentication timeout")
        case .invalidToken: return (.invalidToken, "invalid token")
        case .tokenRevoked: return (.invalidToken, "token revoked")
        case .checkFailed: return (.tryAgainLater, "could not check the token; retry")
        case .tooManyConnections: return (.tooManyRequests, "too many connections from this address")
        case .suspended: return (.suspended, "account suspended")
        }
    }
}
