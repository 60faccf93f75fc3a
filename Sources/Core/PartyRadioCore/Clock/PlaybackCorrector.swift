/// Keeps a player on the station position: a seek when it is far off, a gentle speed nudge
/// proportional to the error when it is close, normal speed again once it is within a millisecond
/// or two. Pure: the caller reads the player and the clock and applies the decision.
///
/// The error is `(player position − output latency) − station position`: positive means the
/// speakers are ahead. A nudge of speed `1 − error/τ` makes the error decay exponentially with time
/// constant τ (`correctionTimeNs`). A seek takes time to take effect; the corrector waits for it to
/// settle, then learns how far behind the player landed and seeks that much further next time.
///
/// A nudge starts only on an error that held for a while: the median of the last
/// `confirmReadings` errors at speed 1 must be past `nudgeStartNs`. What the player reports is
/// not what the speakers play: through PulseAudio, mpv's `audio-pts` steps by a millisecond or
/// more for half a second at a time and drifts back over seconds (the sound server's latency
/// estimate), while the speaker itself does not move (scripts/bench-speaker.py `TRACE=1`,
/// docs/BENCHMARKS.md). Nudging on such a reading moves the speaker by the phantom error.
public struct PlaybackCorrector: Sendable {
    public struct Configuration: Hashable, Sendable {
        /// Errors beyond this are fixed by seeking.
        public var seekThresholdNs: Int64 = 40 * Nanos.perMillisecond
        /// At normal speed, errors below this are left alone (hysteresis against speed churn;
        /// audio-pts is steady to ~15 µs, so 0.2 ms is well clear of its noise). Two listeners
        /// may each sit this far off in opposite directions: at 1 ms, measured at the speakers
        /// (scripts/bench-speaker.py), pairs were up to 2.6 ms apart (p99); at 0.2 ms they settle
        /// within about 0.05 ms of each other.
        public var nudgeStartNs: Int64 = 200_000
        /// While nudging, errors below this return the speed to exactly 1.
        public var settledNs: Int64 = 50_000
        /// The nudge never changes the speed by more than this fraction (0.04 = ±4 %).
        public var maxSpeedDeviation: Double = 0.04
        /// Time constant of the nudge: the error shrinks by e every this long. Half a second
        /// takes a 20 ms hiccup back under 3 ms within a second, at speeds that still sound right.
        public var correctionTimeNs: Int64 = 500 * Nanos.perMillisecond
        /// After a start or seek, player positions are not trusted for this long.
        public var seekSettleNs: Int64 = 150 * Nanos.perMillisecond
        /// The learnt seek lead stays within 0…this.
        public var maxSeekLeadNs: Int64 = 500 * Nanos.perMillisecond
        /// At speed 1, a nudge starts only once this many errors have been measured since the last
        /// seek, start or nudge and their median is past `nudgeStartNs` (1: on the first reading).
        /// 15 readings at the player's 100 ms ticks: a reading off for less than 0.75 s in 1.5 s
        /// moves nothing.
        public var confirmReadings: Int = 15

        public init() {}
    }

    /// What the player should do now.
    public struct Decision: Hashable, Sendable {
        /// Seek to this position (ns), if set.
        public var seekToNs: Int64?
        /// The playback speed to run at (1 = normal); apply it if it differs from the current one.
        public var speed: Double
        /// The measured error (ns, positive = ahead), nil while a seek settles.
        public var errorNs: Int64?
    }

    public var configuration: Configuration
    /// The speed last decided.
    public private(set) var speed: Double = 1
    /// How far ahead of the station position a seek aims, to cover the player's restart time.
    public private(set) var seekLeadNs: Int64 = 0
    private var lastSeekAt: Int64?
    private var checkSeekLanding = false
    /// The errors measured at speed 1 since the last seek, start or nudge, newest last.
    private var recentErrors: [Int64] = []

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Forgets the nudge and the settling seek (new track, pause, resume). Keeps the learnt seek lead.
    public mutating func reset() {
        speed = 1
        lastSeekAt = nil
        checkSeekLanding = false
        recentErrors.removeAll(keepingCapacity: true)
    }

    /// Tells the corrector that the player was just started or seeked by someone else at `now`
    /// (for example a `loadfile` with a start position), so it lets the player settle first.
    /// - Parameter learnLanding: whether the first error after settling measures the player's
    ///   restart delay (true for seeks and loads aimed at the station position; false for a resume).
    public mutating func noteSeek(at now: Int64, learnLanding: Bool = true) {
        speed = 1
        lastSeekAt = now
        checkSeekLanding = learnLanding
        recentErrors.removeAll(keepingCapacity: true)
    }

    /// Decides what to do, given where the station is and where the player is at local instant `now`.
    /// - Parameters:
    ///   - stationPositionNs: where the station is at `now` (from the playback anchor and the DJ clock).
    ///   - playerPositionNs: the position the player reports at `now`.
    ///   - outputLatencyNs: how long the player's output takes to reach the speakers, beyond what its
    ///     position already accounts for.
    public mutating func update(
        stationPositionNs: Int64, playerPositionNs: Int64, outputLatencyNs: Int64 = 0, now: Int64
    ) -> Decision {
        if let lastSeekAt, now &- lastSeekAt < configuration.seekSettleNs {
            return Decision(seekToNs: nil, speed: speed, errorNs: nil)
        }
        let error = (playerPositionNs &- outputLatencyNs) &- stationPositionNs
        if checkSeekLanding {
            // Landing behind (negative error) means the seek needs more lead.
            seekLeadNs = min(configuration.maxSeekLeadNs, max(0, seekLeadNs &- error))
            checkSeekLanding = false
        }
        if error.magnitude > UInt64(configuration.seekThresholdNs) {
            let target = max(0, stationPositionNs &+ outputLatencyNs &+ seekLeadNs)
            noteSeek(at: now)
            return Decision(seekToNs: target, speed: 1, errorNs: error)
        }
        if speed != 1 {
            if error.magnitude < UInt64(configuration.settledNs) {
                speed = 1  // settled: the next nudge needs a fresh run of readings at speed 1
            } else {
                speed = nudgeSpeed(error)
            }
            return Decision(seekToNs: nil, speed: speed, errorNs: error)
        }
        recentErrors.append(error)
        let needed = max(1, configuration.confirmReadings)
        if recentErrors.count > needed { recentErrors.removeFirst(recentErrors.count - needed) }
        guard recentErrors.count == needed else { return Decision(seekToNs: nil, speed: 1, errorNs: error) }
        let held = Self.median(recentErrors)
        if held.magnitude >= UInt64(configuration.nudgeStartNs) {
            speed = nudgeSpeed(held)
            recentErrors.removeAll(keepingCapacity: true)
        }
        return Decision(seekToNs: nil, speed: speed, errorNs: error)
    }

    /// The speed that takes `error` back with the time constant, clamped, in 0.01 % steps.
    private func nudgeSpeed(_ error: Int64) -> Double {
        let proposed = 1 - Double(error) / Double(configuration.correctionTimeNs)
        let limit = configuration.maxSpeedDeviation
        let clamped = min(1 + limit, max(1 - limit, proposed))
        return (clamped * 10_000).rounded() / 10_000  // 0.01 % steps: no churn on noise
    }

    /// The middle of `values` (the lower middle for an even count).
    static func median(_ values: [Int64]) -> Int64 {
        let sorted = values.sorted()
        return sorted[(sorted.count - 1) / 2]
    }
}
