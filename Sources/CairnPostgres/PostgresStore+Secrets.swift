// Secrets every node must hold alike: a media URL signed by one node is fetched through the balancer from any
// other, so the key that signs it lives in the shared database, not in a node's data directory. The first node to
// start creates it; an insert that loses the race reads the winner's.
public import CairnCrypto

extension PostgresStore {
    /// The secret named `name`, created from `random` (`length` bytes) by the first node that asks.
    public func sharedSecret(name: String, length: Int, random: any RandomSource) throws -> [UInt8] {
        let candidate = random.bytes(length)
        return try pool.write { db in
            try db.execute(
                "INSERT INTO secrets (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
                [name, PostgresBytes(candidate)])
            let stored: [UInt8] = try db.scalar("SELECT value FROM secrets WHERE name = ?", [name])!
            return stored
        }
    }
}
