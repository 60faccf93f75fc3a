import PartyRadioCore

/// Everything a node does to play along: its view of the DJ clock, the player that follows
/// the station, and the `--trace` it writes. The DJ and the listener share it.
final class PlaybackSession {
    let djClock: DJClock
    private let follower: PlaybackFollower
    private let trace: TraceWriter?
    private let role: String
    private let clock: NodeClock
    private var snapshot: StateSnapshot?
    private var lastTickNs: Int64 = 0

    static let tickIntervalNs = Nanos.ms(100)
    /// While a start is being prepared, so the player is unpaused as soon as it is ready.
    static let fastTickIntervalNs = Nanos.ms(10)

    init(role: String, options: PlaybackOptions, clock: NodeClock, inbox: Inbox<NodeInput>) throws(NodeError) {
        self.role = role
        self.clock = clock
        djClock = DJClock(isDJ: role == "dj")
        follower = try PlaybackFollower(options: options, clock: clock, djClock: djClock, inbox: inbox)
        trace = try options.tracePath.map { path throws(NodeError) in try TraceWriter(path: path) }
    }

    /// The station's state changed (or a periodic snapshot arrived).
    func follow(_ new: StateSnapshot) {
        snapshot = new
        follower.follow(new)
    }

    /// The player reported an error: it will be retried.
    func playerFailed() { follower.playerFailed() }

    /// Where the station is at local instant `local`, by this node's estimate of the DJ clock.
    func stationPosition(atLocal local: Int64) -> Int64? {
        guard let snapshot, let dj = djClock.djTime(local: local) else { return nil }
        return snapshot.anchor.position(
            atDJTime: dj, durationNs: snapshot.nowPlaying.map { Int64($0.durationMs) * Nanos.perMillisecond })
    }

    /// Corrects the player and writes the trace when they are due; call from the node's loop.
    func step() {
        let now = clock.now()
        if now - lastTickNs >= (follower.wantsFastTicks ? Self.fastTickIntervalNs : Self.tickIntervalNs) {
            lastTickNs = now
            follower.tick()
        }
        guard let trace, trace.isDue(now) else { return }
        let real = NodeClock.realTimeNs()
        let local = clock.localTime(atRealTime: real)
        let estimate = djClock.sync.estimate
        trace.write(
            role: role, trueTimeNs: real, localTimeNs: local, djTimeNs: djClock.djTime(local: local), snapshot: snapshot,
            playerPositionNs: follower.playerPosition(atLocal: local), latencyNs: follower.outputLatencyNs,
            offsetNs: role == "dj" ? 0 : estimate.map { $0.offset(atLocal: local) },
            driftPPM: role == "dj" ? 0 : estimate?.driftPPM)
    }

    func shutdown() { follower.shutdown() }
}
