// The service thread's door and identity, made before the server so the layers the server drives can be built
// with them: the scheduler that brings results back onto the loop, and the confinement the service thread claims
// while it serves. The composition hands both to the handler and the same object to the server.
public import CairnLoop

/// The job queue and the confinement of one transport's service thread.
public final class ServiceLoop: Sendable {
    /// The thread that owns live state: claimed by the service thread while it serves.
    public let confinement: LoopConfinement
    let jobs: LoopJobQueue

    /// Creates an unclaimed loop; a `TransportServer` made with it runs it.
    public init() {
        confinement = LoopConfinement(name: "the transport's service thread")
        jobs = LoopJobQueue(confinement: confinement)
    }

    /// Runs jobs on the service thread; safe from any thread.
    public var scheduler: any LoopScheduler { jobs }
}
