// A generated account for bulk loading (`insertFixtures` of either store: `cairn seed`, benchmarks), with the digest
// of the token handed to the load tester. A plain value in the domain so that both stores take the same rows
// (CairnPostgres does not import CairnStore), as `FixturePicture` is. Not used by the hub.

/// A generated account with its token digest.
public struct FixtureUser: Sendable {
    /// Login name.
    public var username: String
    /// Display name.
    public var name: String
    /// SHA-256 of the token handed to the load tester.
    public var tokenHash: [UInt8]

    /// Creates the value.
    public init(username: String, name: String, tokenHash: [UInt8]) {
        self.username = username
        self.name = name
        self.tokenHash = tokenHash
    }
}
