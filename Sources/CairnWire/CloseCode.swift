// WebSocket close codes the hub sends (spec "Close codes"). The split that matters to clients is whether they
// may reconnect, so that rule lives here, next to the numbers, rather than in every client and test.

/// A WebSocket close status code the hub sends, with the contract's reconnect rule.
public enum CloseCode: UInt16, Sendable {
    /// 1000: the session ended normally.
    case normal = 1000
    /// 1001: the server is going away (restart or shutdown); the client should reconnect.
    case goingAway = 1001
    /// 1009: an inbound frame was larger than the configured limit.
    case messageTooBig = 1009
    /// 4001: the client fell too far behind reading; it may reconnect.
    case outboundOverflow = 4001
    /// 4002: the server could not check the client's credentials just now (e.g. storage trouble); retry later.
    case tryAgainLater = 4002
    /// 4429: the client kept sending requests faster than allowed after being told `rate_limited`; it may
    /// reconnect later.
    case tooManyRequests = 4429
    /// 4500: the token is invalid or revoked; do not reconnect with it.
    case invalidToken = 4500
    /// 4503: the account is suspended.
    case suspended = 4503
    /// 4508: the connection did not authenticate in time.
    case authTimeout = 4508

    /// Whether a client may reconnect after this close: 1001 and 4000–4499 yes; 4500–4999, 1000 and 1009 no.
    public var mayReconnect: Bool {
        switch rawValue {
        case 1001: return true
        case 4000..<4500: return true
        default: return false
        }
    }
}
