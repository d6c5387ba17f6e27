// The file `cairn seed --out` writes: every generated user with its id, bearer token and friends' ids. The load
// tester reads it to log each simulated user in and to know whom it watches; Mosquitto runs use the same graph.
import Foundation

/// The tokens file written by `cairn seed`.
public struct TokensFile: Codable, Sendable {
    /// One seeded account.
    public struct Account: Codable, Sendable {
        /// User id on the server.
        public var id: Int64
        /// Username.
        public var username: String
        /// Bearer token.
        public var token: String
        /// Friends' user ids.
        public var friends: [Int64]

        /// Creates an account entry.
        public init(id: Int64, username: String, token: String, friends: [Int64]) {
            self.id = id
            self.username = username
            self.token = token
            self.friends = friends
        }
    }

    /// Graph shape the file was generated with.
    public var shape: String
    /// Friends per user asked for.
    public var friendsPerUser: Int
    /// Graph seed.
    public var seed: UInt64
    /// Every account.
    public var users: [Account]

    /// Creates a file's contents.
    public init(shape: String, friendsPerUser: Int, seed: UInt64, users: [Account]) {
        self.shape = shape
        self.friendsPerUser = friendsPerUser
        self.seed = seed
        self.users = users
    }

    /// Reads and decodes a tokens file.
    public static func load(path: String) throws -> TokensFile {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return try JSONDecoder().decode(TokensFile.self, from: data)
    }
}
