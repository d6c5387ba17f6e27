import CairnErrorCodes
// A store error that says the database is away (unreachable, or it did not answer in time) rather than that the
// request went wrong. The domain answers such a failure `unavailable` instead of `internal`, so a client can tell
// "try again shortly" from a fault; the store engines mark their errors with it, the domain knows no engine.

/// An error a store throws; `isOutage` is true when the database could not be reached or did not answer in time.
public protocol StorageOutage: Error {
    /// True when the database was away (nothing to do with the request).
    var isOutage: Bool { get }
}

extension DomainError {
    /// The refusal for a store call that failed with `error`: `unavailable` when the database was away, otherwise
    /// `storageFailure` (`internal`). The detail is logged by the caller, never sent.
    public static func storage(_ error: any Error) -> DomainError {
        if let error = error as? DomainError { return error }
        if let outage = error as? any StorageOutage, outage.isOutage { return storageUnavailable }
        return storageFailure
    }

    /// The refusal for a store that could not be reached or did not answer in time.
    public static let storageUnavailable = DomainError(
        .unavailable, "the database is not answering; the request was not applied, try again shortly")
}
