// scrypt is slow on purpose, so it must never run on the event loop. This runs it on a small pool of serial
// dispatch queues (one per core by default): concurrency is bounded, so a burst of logins queues up instead of
// spawning threads, and each call suspends its caller until the hash is done. Each hash runs below the event loop's
// priority (`BackgroundPriority.whileLowered`), so a burst of logins cannot hold up deliveries on a shared core.
import CairnCore
public import CairnCrypto
import Dispatch
import Synchronization

/// Runs password hashing and verification off the caller's thread on a bounded pool.
public final class PasswordHasher: Sendable {
    private let queues: [DispatchQueue]
    private let next = Atomic<Int>(0)
    /// The parameters new hashes are made with.
    public let parameters: ScryptParameters
    private let random: any RandomSource
    /// A record to verify against when a username does not exist, so that a miss costs as much as a wrong password.
    private let decoy: PasswordHash

    /// Creates a pool of `workers` serial queues.
    public init(parameters: ScryptParameters = .standard, workers: Int = 2, random: some RandomSource) {
        precondition(parameters.isValid, "invalid scrypt parameters")
        self.parameters = parameters
        self.random = random
        self.queues = (0..<max(1, workers)).map { DispatchQueue(label: "cairn.hasher.\($0)", qos: .userInitiated) }
        self.decoy = PasswordHash.make(password: "decoy-password", parameters: parameters, random: random)
    }

    /// Hashes `password` with a fresh salt and returns the encoded record.
    public func hash(_ password: String) async -> String {
        let parameters = self.parameters
        let random = self.random
        return await run { PasswordHash.make(password: password, parameters: parameters, random: random).encoded }
    }

    /// Verifies `password` against an encoded record; a nil or unreadable record costs a decoy verification and fails.
    public func verify(_ password: String, against encoded: String?) async -> Bool {
        let decoy = self.decoy
        return await run {
            guard let encoded, let record = PasswordHash(encoded: encoded) else {
                _ = decoy.verify(password)
                return false
            }
            return record.verify(password)
        }
    }

    private func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
        let queue = queues[index % queues.count]
        return await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: BackgroundPriority.whileLowered { work() }) }
        }
    }
}
