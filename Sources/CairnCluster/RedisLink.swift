// A node's link to Redis: two async connections on the hub's own libev loop, one for commands and one for
// pub/sub (a subscribed connection may send nothing but (UN)SUBSCRIBE), each reconnecting by itself with
// exponential back-off and jitter on an ev_timer. The link is "up" while both are; it remembers its subscriptions
// and subscribes again after a reconnect, and counts how often it came back. Everything, callbacks included,
// runs on the loop thread that owns live state; entry points assert it. Redis being away is a state, not an
// error: commands then fail at once with `.unavailable` and the hub keeps serving its own connections. What must
// wait for Redis to hold this node's subscriptions (an arrival other nodes answer on those channels) goes through
// `afterSubscriptions` (`SubscriptionBarrier`: confirmations counted on the pub/sub connection). With a seal
// (`MessageSeal`: every node of a cluster holds its key), every payload published is sealed and every message heard
// is opened before any handler sees it; one whose tag does not verify is counted and dropped unread.
public import CairnLoop

/// Commands and pub/sub to one Redis server over two reconnecting connections on the hub's loop.
public final class RedisLink {
    /// The server.
    public let endpoint: RedisEndpoint
    private let confinement: LoopConfinement
    private let commands: RedisConnection
    private let pubsub: RedisConnection
    private var channels: [String: (([UInt8]) -> Void)] = [:]
    private var confirmations: [String: () -> Void] = [:]
    /// Actions waiting for Redis to confirm the subscriptions sent before them (`afterSubscriptions`).
    private let barrier = SubscriptionBarrier()
    private var stateObservers: [(Bool) -> Void] = []
    private var wasEverUp = false
    /// True once Redis answered on the current commands connection.
    private var answered = false
    /// Heartbeat: a PING on the commands connection every `heartbeatSeconds`; `missedLimit` unanswered in a row
    /// mean the server or the path is gone without a word, and both connections are dropped and reconnected.
    private let heartbeatSeconds: Double
    private let missedLimit = 3
    private var heartbeat: LoopTimer?
    private var pingInFlight = false
    private var missed = 0
    /// The pub/sub connection's heartbeat: every beat the commands connection publishes on this link's own channel,
    /// which the pub/sub connection subscribes. A subscribed connection cannot PING through hiredis 0.14 (the reply
    /// has no callback to go to), and a silently dead one would let the node miss every message while it looks up;
    /// `missedLimit` beats without the echo drop both connections like unanswered PINGs do.
    let echoChannel: String
    private var echoConfirmed = false
    private var echoesMissed = 0
    private let loop: UnsafeMutableRawPointer
    /// Seals what is published and opens what is heard; nil: payloads travel as they are.
    private let seal: MessageSeal?

    /// Messages heard whose seal did not verify (dropped unread).
    public private(set) var refusedCount: UInt64 = 0
    /// Called with the channel of each message refused (on the loop).
    public var refused: ((String) -> Void)?

    /// True while both connections are established.
    public private(set) var isUp = false
    /// Times the link came back up after having been down (the first connection is not counted).
    public private(set) var reconnects: UInt64 = 0
    /// Why the last connection attempt or connection failed, if it did.
    public var lastError: String? { commands.lastError ?? pubsub.lastError }

    /// A link to `endpoint` on the libev loop `loop` (an opaque `struct ev_loop *`), owned by `confinement`'s
    /// thread. `random` gives fractions in [0, 1) for the back-off's jitter; the link's own heartbeat channel is
    /// named under `channelPrefix`; `seal` seals and opens every payload but the heartbeat's. Nothing connects
    /// before `start`.
    public init(
        endpoint: RedisEndpoint, loop: UnsafeMutableRawPointer, confinement: LoopConfinement,
        backoff: ReconnectBackoff = ReconnectBackoff(), heartbeatSeconds: Double = 2, channelPrefix: String = "cairn",
        seal: MessageSeal? = nil, random: @escaping () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.endpoint = endpoint
        self.seal = seal
        // Under the cluster's prefix, so Redis ACLs that grant the prefix's channels grant this one too.
        echoChannel = channelPrefix + ":link-echo:" + String(UInt64.random(in: 1...UInt64.max), radix: 16)
        self.loop = loop
        self.heartbeatSeconds = heartbeatSeconds
        self.confinement = confinement
        commands = RedisConnection(
            name: "commands", endpoint: endpoint, loop: loop, backoff: backoff, random: random)
        pubsub = RedisConnection(name: "pubsub", endpoint: endpoint, loop: loop, backoff: backoff, random: random)
        for connection in [commands, pubsub] {
            connection.onUp = { [unowned self] in self.connectionChanged() }
            connection.onDown = { [unowned self] in self.connectionChanged() }
        }
        // A TCP connection is not an answer (the kernel accepts for a frozen server): the commands connection counts
        // as up once Redis has answered a PING on it.
        commands.onUp = { [unowned self] in
            self.commands.send([Array("PING".utf8)]) { [weak self] reply in
                guard let self, case .success = reply else { return }
                self.answered = true
                self.connectionChanged()
            }
        }
        commands.onDown = { [unowned self] in
            self.answered = false
            // The link is down as a whole: the pub/sub connection goes too, so that coming back always means
            // subscribing again (and being confirmed again), whichever connection was lost.
            self.pubsub.drop(because: "the commands connection was lost")
            self.connectionChanged()
        }
        pubsub.onUp = { [unowned self] in
            self.barrier.connected()
            let channels = self.channels.keys.sorted()
            if self.pubsub.subscribe(channels) { self.barrier.subscribed(channels.count) }
            self.connectionChanged()
        }
        pubsub.onDown = { [unowned self] in
            self.barrier.lost()  // the subscriptions are redone after the reconnect
            self.echoConfirmed = false
            self.echoesMissed = 0
            self.connectionChanged()
        }
        pubsub.onMessage = { [unowned self] channel, payload in self.heard(payload, on: channel) }
        channels[echoChannel] = { [unowned self] _ in self.echoesMissed = 0 }
        confirmations[echoChannel] = { [unowned self] in self.echoConfirmed = true }
        pubsub.onSubscribed = { [unowned self] channel in
            if self.channels[channel] != nil { self.confirmations[channel]?() }  // else unsubscribed since asked
            self.barrier.confirmation()  // counted either way: Redis confirms every SUBSCRIBE it received
        }
    }

    /// Calls `observer(up)` on the loop whenever the link goes up or down.
    public func observeState(_ observer: @escaping (Bool) -> Void) {
        confinement.assertOnLoop()
        stateObservers.append(observer)
    }

    /// Starts connecting; the link keeps reconnecting until `stop`.
    public func start() {
        confinement.assertOnLoop()
        commands.start()
        pubsub.start()
        if heartbeat == nil {
            let heartbeat = LoopTimer(loop: loop) { [unowned self] in self.beat() }
            heartbeat.start(after: heartbeatSeconds, repeat: heartbeatSeconds)
            self.heartbeat = heartbeat
        }
    }

    /// Closes both connections; pending commands fail with `.disconnected`. Call on the loop before it is destroyed.
    /// With `flush`, commands already sent are written out first (shutdown: the loop will not turn again).
    public func stop(flush: Bool = false) {
        confinement.assertOnLoop()
        heartbeat?.stop()
        heartbeat = nil
        commands.stop(flush: flush)
        pubsub.stop()
        answered = false
        isUp = false
        barrier.lost()
    }

    /// Sends a command; `done` (optional) receives the reply, `.unavailable` at once while the link is down, or
    /// `.disconnected` if the connection is lost first. Commands on one link are answered in the order sent.
    public func command(_ arguments: [String], _ done: ((Result<RedisValue, RedisError>) -> Void)? = nil) {
        confinement.assertOnLoop()
        commands.send(arguments.map { Array($0.utf8) }, done)
    }

    /// Sends a command whose arguments are bytes.
    public func command(bytes arguments: [[UInt8]], _ done: ((Result<RedisValue, RedisError>) -> Void)? = nil) {
        confinement.assertOnLoop()
        commands.send(arguments, done)
    }

    /// Publishes `payload` on `channel`, sealed if the link has a seal (dropped with `.unavailable` while the link
    /// is down).
    public func publish(
        _ channel: String, _ payload: [UInt8], _ done: ((Result<RedisValue, RedisError>) -> Void)? = nil
    ) {
        let bytes = seal?.sealed(payload, channel: channel) ?? payload
        command(bytes: [Array("PUBLISH".utf8), Array(channel.utf8), bytes], done)
    }

    /// A message on a subscribed channel: opened (the heartbeat's echo carries nothing and is not sealed), then
    /// handed to the channel's handler; one that does not open is counted and dropped.
    private func heard(_ payload: [UInt8], on channel: String) {
        guard let handler = channels[channel] else { return }
        guard let seal, channel != echoChannel else { return handler(payload) }
        guard let opened = seal.opened(payload, channel: channel) else {
            refusedCount &+= 1
            refused?(channel)
            return
        }
        handler(opened)
    }

    /// Delivers every message on `channel` to `handler` (on the loop), now and after every reconnect.
    /// `subscribed`, if given, runs each time Redis confirms the subscription (the first time and after every
    /// reconnect): from then on, every message published on the channel reaches `handler` while the link holds.
    public func subscribe(
        _ channel: String, _ handler: @escaping ([UInt8]) -> Void, subscribed: (() -> Void)? = nil
    ) {
        confinement.assertOnLoop()
        let isNew = channels[channel] == nil
        channels[channel] = handler
        confirmations[channel] = subscribed
        if isNew, pubsub.subscribe([channel]) { barrier.subscribed(1) }
    }

    /// Runs `action(true)` on the loop once Redis has confirmed every SUBSCRIBE this link sent so far (channels
    /// unsubscribed since included: Redis confirms them all), so that what is published from then on, by any node,
    /// on those channels reaches this node; actions run in the order asked. While the pub/sub connection is down,
    /// `action(false)` runs at once, and the actions still held when it is lost (or the link stops) run so then: the
    /// subscriptions exist again only after the reconnect, whose own SUBSCRIBE the next actions wait for.
    public func afterSubscriptions(_ action: @escaping (_ confirmed: Bool) -> Void) {
        confinement.assertOnLoop()
        barrier.after(action)
    }

    /// Actions waiting in `afterSubscriptions` (for tests and the stats).
    public var heldUntilSubscribed: Int { barrier.heldCount }

    /// Stops delivering `channel`.
    public func unsubscribe(_ channel: String) {
        confinement.assertOnLoop()
        guard channels.removeValue(forKey: channel) != nil else { return }
        confirmations[channel] = nil
        pubsub.unsubscribe([channel])
    }

    private func beat() {
        guard commands.isUp else {
            pingInFlight = false
            missed = 0
            return
        }
        if pingInFlight {
            missed += 1
            guard missed >= missedLimit else { return }
            pingInFlight = false
            missed = 0
            let reason = "no answer to PING for \(Double(missedLimit) * heartbeatSeconds) s"
            commands.drop(because: reason)
            pubsub.drop(because: reason)
            return
        }
        pingInFlight = true
        commands.send([Array("PING".utf8)]) { [weak self] _ in
            self?.pingInFlight = false
            self?.missed = 0
        }
        guard pubsub.isUp, echoConfirmed else { return }
        if echoesMissed >= missedLimit {
            echoesMissed = 0
            let reason = "pub/sub heard none of its last \(missedLimit) heartbeats"
            commands.drop(because: reason)
            pubsub.drop(because: reason)
            return
        }
        echoesMissed += 1
        commands.send([Array("PUBLISH".utf8), Array(echoChannel.utf8), []], nil)
    }

    /// Stops the echo's subscription on the server while the connection stays up: the state of a pub/sub
    /// connection that died without a word (for tests).
    func silenceEchoForTesting() { pubsub.unsubscribe([echoChannel]) }

    private func connectionChanged() {
        let up = commands.isUp && answered && pubsub.isUp
        guard up != isUp else { return }
        isUp = up
        if up {
            if wasEverUp { reconnects += 1 }
            wasEverUp = true
        }
        for observer in stateObservers { observer(up) }
    }
}
