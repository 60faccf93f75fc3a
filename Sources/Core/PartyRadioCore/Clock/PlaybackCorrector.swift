/// Keeps a player on the station position: a seek when it is far off, a gentle speed nudge
/// proportional to the error when it is close, normal speed again once it is within a millisecond
/// or two. Pure: the caller reads the player and the clock and applies the decision.
///
/// The error is `(player position − output latency) − station position`: positive means the
/// speakers are ahead. A nudge of speed `1 − error/τ` makes the error decay exponentially with time
/// constant τ (`correctionTimeNs`). A seek takes time to take effect; the corrector waits for it to
/// settle, then learns how far behind the player landed and seeks that much further next time.
///
/// A nudge starts only on an error that held for a while: at speed 1, the errors of the last
/// `confirmNs` must be past `nudgeStartNs` for more than half of that time. What the player
/// reports is not what the speakers play: through PulseAudio, mpv's `audio-pts` steps by a
/// millisecond or more for half a second at a time and drifts back over seconds (the sound
/// server's latency estimate), while the speaker itself does not move (scripts/bench-speaker.py
/// `TRACE=1`; docs/CLOCK-SYNC.md §5). Nudging on such a reading moves the speaker by the phantom error.
///
/// The confirmation is counted in time, not in readings, so that the player may read often while
/// something is happening and seldom while it sits settled (``readingIntervalNs``) without
/// changing what is confirmed: each reading stands for the time since the one before it, except
/// that an error past `nudgeStartNs` stands for no more than `readingIntervalNs` (after a long gap
/// nobody knows since when it held).
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
        /// At speed 1, a nudge starts only once errors have been measured for this long since the
        /// last seek, start or nudge and those of the last this long were past `nudgeStartNs` (on
        /// one side) for more than half of it; it starts from their median (0: on the first
        /// reading). An error that holds for less than 0.75 s in 1.5 s moves nothing; at the
        /// 100 ms readings that is the median of the last 15, as it was when counted in readings.
        public var confirmNs: Int64 = 1_500 * Nanos.perMillisecond
        /// How often to read the player while anything may need acting on soon: a start or seek
        /// settling, a nudge, an error past `nudgeStartNs`, the first `confirmNs` after a start,
        /// seek or nudge.
        public var readingIntervalNs: Int64 = 100 * Nanos.perMillisecond
        /// How often to read the player once it sits settled at speed 1: each reading is a round
        /// trip to the player's own thread, and most of them only find it where it was. An error
        /// that appears is first seen up to this much later, and then read every
        /// `readingIntervalNs` until confirmed or gone.
        public var settledReadingIntervalNs: Int64 = 500 * Nanos.perMillisecond

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
    /// The errors measured at speed 1 since the last seek, start or nudge, newest last, with the
    /// instant of each; those older than `confirmNs` are dropped.
    private var recentErrors: [Reading] = []
    /// The instant of the first reading since the last seek, start or nudge.
    private var confirmingSince: Int64?
    /// The last error measured at speed 1 since the last seek, start or nudge.
    private var lastReading: Reading?

    private struct Reading {
        var at: Int64
        var errorNs: Int64
    }

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Forgets the nudge and the settling seek (new track, pause, resume). Keeps the learnt seek lead.
    public mutating func reset() {
        speed = 1
        lastSeekAt = nil
        checkSeekLanding = false
        forgetReadings()
    }

    /// Tells the corrector that the player was just started or seeked by someone else at `now`
    /// (for example a `loadfile` with a start position), so it lets the player settle first.
    /// - Parameter learnLanding: whether the first error after settling measures the player's
    ///   restart delay (true for seeks and loads aimed at the station position; false for a resume).
    public mutating func noteSeek(at now: Int64, learnLanding: Bool = true) {
        speed = 1
        lastSeekAt = now
        checkSeekLanding = learnLanding
        forgetReadings()
    }

    /// How long the player may wait before its next reading: `settledReadingIntervalNs` once it
    /// sits settled at speed 1 (no start or seek settling, the first `confirmNs` of readings
    /// behind it, the last error within `nudgeStartNs`), `readingIntervalNs` otherwise.
    public var readingIntervalNs: Int64 {
        guard speed == 1, let confirmingSince, let last = lastReading,
            last.errorNs.magnitude < UInt64(configuration.nudgeStartNs),
            last.at &- confirmingSince &+ configuration.readingIntervalNs >= configuration.confirmNs
        else { return configuration.readingIntervalNs }
        return max(configuration.readingIntervalNs, configuration.settledReadingIntervalNs)
    }

    private mutating func forgetReadings() {
        recentErrors.removeAll(keepingCapacity: true)
        confirmingSince = nil
        lastReading = nil
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
                forgetReadings()
            } else {
                speed = nudgeSpeed(error)
            }
            return Decision(seekToNs: nil, speed: speed, errorNs: error)
        }
        if let held = confirm(error, at: now) {
            speed = nudgeSpeed(held)
            forgetReadings()
        }
        return Decision(seekToNs: nil, speed: speed, errorNs: error)
    }

    /// Adds a reading at speed 1; returns the error to nudge from, once one held for more than
    /// half of the last `confirmNs` (and readings cover that long since the last seek, start or nudge).
    private mutating func confirm(_ error: Int64, at now: Int64) -> Int64? {
        let window = max(0, configuration.confirmNs)
        let start = configuration.nudgeStartNs
        let first = confirmingSince ?? now
        confirmingSince = first
        lastReading = Reading(at: now, errorNs: error)
        if window == 0 { return error.magnitude >= UInt64(start) ? error : nil }
        recentErrors.append(Reading(at: now, errorNs: error))
        let windowStart = now &- window
        // Kept: the readings of the window, and the one before it (it bounds the oldest one's time).
        if let firstInside = recentErrors.firstIndex(where: { $0.at > windowStart }), firstInside > 1 {
            recentErrors.removeFirst(firstInside - 1)
        }
        guard now &- first &+ configuration.readingIntervalNs >= window else { return nil }
        var weighted: [(errorNs: Int64, weight: Int64)] = []
        var ahead: Int64 = 0
        var behind: Int64 = 0
        for (index, reading) in recentErrors.enumerated() where reading.at > windowStart {
            let previous = index > 0 ? recentErrors[index - 1].at : reading.at &- configuration.readingIntervalNs
            var weight = reading.at &- max(previous, windowStart)
            if reading.errorNs.magnitude >= UInt64(start) { weight = min(weight, configuration.readingIntervalNs) }
            weighted.append((reading.errorNs, weight))
            if reading.errorNs >= start { ahead &+= weight }
            if reading.errorNs <= -start { behind &+= weight }
        }
        guard ahead > window / 2 || behind > window / 2 else { return nil }
        return Self.weightedMedian(weighted)
    }

    /// The speed that takes `error` back with the time constant, clamped, in 0.01 % steps.
    private func nudgeSpeed(_ error: Int64) -> Double {
        let proposed = 1 - Double(error) / Double(configuration.correctionTimeNs)
        let limit = configuration.maxSpeedDeviation
        let clamped = min(1 + limit, max(1 - limit, proposed))
        return (clamped * 10_000).rounded() / 10_000  // 0.01 % steps: no churn on noise
    }

    /// The value at which the weights, added up in the values' order, reach half their sum (for
    /// equal weights the middle, the lower middle for an even count).
    static func weightedMedian(_ values: [(errorNs: Int64, weight: Int64)]) -> Int64 {
        let sorted = values.sorted { $0.errorNs < $1.errorNs }
        let total = sorted.reduce(Int64(0)) { $0 &+ $1.weight }
        var sum: Int64 = 0
        for value in sorted {
            sum &+= value.weight
            if 2 * sum >= total { return value.errorNs }
        }
        return sorted.last?.errorNs ?? 0
    }
}
