import PartyRadioCore
import Synchronization

/// What one synchronisation step saw and did, for traces and status lines.
public struct SyncStatus: Hashable, Sendable {
    /// Local instant of the measurement.
    public var atLocalNs: Int64
    /// Where the player was (nil: nothing playing or position unknown).
    public var playerPositionNs: Int64?
    /// Where the station was at the same instant (nil: not playing).
    public var stationPositionNs: Int64?
    /// Player (at the speakers) minus station, when measured.
    public var errorNs: Int64?
    /// The speed now in force.
    public var speed: Double
    /// Whether this step started a re-alignment (a paused seek to a point ahead).
    public var seekedToNs: Int64?
}

/// Keeps a `Player` on the station position.
///
/// Starting (a new track, a resume, a correction too large to nudge) is done the precise way:
/// the player is loaded or seeked *paused* to a point a little ahead of the station, and
/// unpaused by a timer at the very instant the station reaches that point (``StartPlanner``),
/// so it starts within a fraction of a millisecond instead of however long mpv takes to
/// restart. Small errors after that are nudged away with the speed (``PlaybackCorrector``).
/// Call ``tick(stationPositionAt:)`` every ``readingIntervalNs`` while the station plays (every
/// 10–20 ms while ``isPreparing``).
///
/// Threads: the caller's thread (or threads) runs every public method; the controller's one
/// ``PreciseTimer`` thread, created with it and ended by ``shutdown()`` or deinit, runs nothing but
/// the timed unpause. They meet only under `state`'s lock, which covers both the timed unpause with
/// its generation check and every pause, stop, load or seek of the player with the generation bump
/// that comes with it: so once ``pause()``, ``stop()``, ``load(_:stationPositionAt:)`` or
/// ``resume(stationPositionAt:)`` has returned, no start armed before it can let the player go.
public final class SyncController: Sendable {
    public let player: Player
    private let clock: any NanoClock
    private let state: Mutex<State>
    private let startTimer: PreciseTimer

    private struct State {
        var corrector: PlaybackCorrector
        /// A paused start in progress.
        var preparing: Preparing?
        /// Bumped by every prepare, pause and stop, so a stale start (timer or tick) does nothing.
        var generation = 0
        /// How long the last load and the last seek took to get ready (their leads are learnt apart:
        /// opening a file and its output takes longer than seeking in it).
        var lastLoadReadyNs: Int64?
        var lastSeekReadyNs: Int64?
    }

    private struct Preparing {
        var targetNs: Int64
        var requestedAt: Int64
        /// A load (the file opens), not a seek in the open file.
        var isLoad: Bool
        /// Whether its ready time teaches the next load's lead: not for a file still arriving
        /// (``Player/streamProtocol``), whose load waits for bytes, not for mpv. Learnt from one
        /// that waited 2.1 s, the next track's load was aimed 3 s ahead: 3 s without sound at the
        /// track change.
        var learnsLoadLead: Bool
        /// The player's playback-restart count before the load or seek was issued.
        var restartsBefore: Int
        /// The local instant the unpause is armed for, once the player is ready.
        var startAt: Int64?
    }

    public init(
        player: Player, configuration: PlaybackCorrector.Configuration = .init(), clock: any NanoClock = RealtimeClock()
    ) {
        self.player = player
        self.clock = clock
        state = Mutex(State(corrector: PlaybackCorrector(configuration: configuration)))
        startTimer = PreciseTimer(name: "partyradio-sync", clock: clock)
    }

    /// True while a paused start is in progress (the caller should tick often, every ~20 ms).
    public var isPreparing: Bool { state.withLock { $0.preparing != nil } }

    /// How long the next ``tick(stationPositionAt:)`` may wait, as the corrector asks: 100 ms while
    /// anything may need correcting soon, 500 ms while the player sits settled at speed 1 (each tick
    /// is a round trip to mpv's core thread). See ``PlaybackCorrector/readingIntervalNs``.
    public var readingIntervalNs: Int64 { state.withLock { $0.corrector.readingIntervalNs } }

    /// The local instant the prepared player will be unpaused at, once it is ready and armed.
    public var pendingStartNs: Int64? { state.withLock { $0.preparing?.startAt } }

    /// Loads `source` paused just ahead of the station; a later tick starts it on time.
    /// - Parameter stationPositionAt: where the station is at a local instant.
    public func load(_ source: String, stationPositionAt: (Int64) -> Int64) throws(PlayerError) {
        try prepare(source: source, stationPositionAt: stationPositionAt)
    }

    /// Loads `source` paused at `startNs` (the station is paused), cancelling any start in progress
    /// under the same lock as ``pause()``, so no timed start armed before can unpause it.
    public func loadPaused(_ source: String, startNs: Int64) throws(PlayerError) {
        try state.withLock { state throws(PlayerError) in
            cancelStart(&state)
            try player.load(source, startNs: startNs, paused: true)
        }
    }

    /// Starts again from a pause (or after the caller moved the station): a paused seek ahead,
    /// then an unpause on time.
    public func resume(stationPositionAt: (Int64) -> Int64) throws(PlayerError) {
        try prepare(source: nil, stationPositionAt: stationPositionAt)
    }

    /// Pauses now and cancels any start in progress: once this returns, the player stays paused.
    public func pause() throws(PlayerError) {
        try state.withLock { state throws(PlayerError) in
            cancelStart(&state)
            try player.setPaused(true)
        }
    }

    /// Stops playback and cancels any start in progress.
    public func stop() throws(PlayerError) {
        try state.withLock { state throws(PlayerError) in
            cancelStart(&state)
            try player.stop()
        }
    }

    /// Cancels any start in progress, ends the start thread and shuts the player down. Idempotent.
    public func shutdown() {
        state.withLock { cancelStart(&$0) }
        startTimer.shutdown()
        player.shutdown()
    }

    /// Forgets the nudge state and lets the player settle before the next correction.
    public func reset() {
        let now = clock.now()
        state.withLock {
            $0.corrector.reset()
            $0.corrector.noteSeek(at: now, learnLanding: false)
        }
    }

    /// Bumps the generation, so that no start armed before runs, and forgets the start in progress.
    /// Called with the lock held, before the caller's own player command.
    private func cancelStart(_ state: inout State) {
        state.generation += 1
        state.preparing = nil
        startTimer.cancel()
    }

    /// Loads or seeks the player, paused, a little ahead of the station, for a timed start.
    /// - Parameter generation: when a tick starts again, the generation it saw: if a pause, stop or
    ///   prepare came since, this one is stale and does nothing.
    private func prepare(
        source: String?, stationPositionAt: (Int64) -> Int64, ifStill generation: Int? = nil
    ) throws(PlayerError) {
        let now = clock.now()
        let lead = state.withLock {
            source != nil
                ? StartPlanner.loadLead(lastReadyNs: $0.lastLoadReadyNs)
                : StartPlanner.seekLead(lastReadyNs: $0.lastSeekReadyNs)
        }
        let target = max(0, stationPositionAt(now + lead) + player.outputLatencyNs)
        let restarts = player.playbackRestartCount
        try state.withLock { state throws(PlayerError) in
            if let generation, state.generation != generation { return }
            cancelStart(&state)
            state.preparing = Preparing(
                targetNs: target, requestedAt: now, isLoad: source != nil,
                learnsLoadLead: source.map { !$0.hasPrefix(Player.streamProtocol + "://") } ?? false,
                restartsBefore: restarts)
            state.corrector.reset()
            if let source {
                try player.load(source, startNs: target, paused: true)
            } else {
                try player.setPaused(true)
                try player.seek(toNs: target)
            }
            try player.setSpeed(1)
        }
    }

    /// Measures the player against the station and corrects it; arms the start of a prepared player.
    @discardableResult
    public func tick(stationPositionAt: (Int64) -> Int64) -> SyncStatus {
        let now = clock.now()
        let (preparing, generation) = state.withLock { ($0.preparing, $0.generation) }
        if let preparing {
            return tickPreparing(preparing, generation: generation, now: now, stationPositionAt: stationPositionAt)
        }
        guard let position = player.position() else { return SyncStatus(atLocalNs: now, speed: 1) }
        let station = stationPositionAt(position.sampledAtNs)
        let latency = player.outputLatencyNs
        let decision = state.withLock {
            $0.corrector.update(
                stationPositionNs: station, playerPositionNs: position.positionNs, outputLatencyNs: latency,
                now: position.sampledAtNs)
        }
        let error = decision.errorNs ?? (position.positionNs - latency - station)
        if decision.seekToNs != nil, player.isWaitingForBytes {
            // mpv waits for bytes of a file still arriving: a seek now lands where they are not
            // either (within mpv's read-through, it reads on through the same gap), starts into
            // nothing and is seen behind again a tick later. Seen under loss: four seeks 240 ms
            // apart, each restarting mpv. It plays on, or re-joins with one seek, once they are there.
            state.withLock { $0.corrector.reset() }
            Log.debug(.player, "off by \(error / 1000) us, waiting for bytes: no seek")
            return SyncStatus(
                atLocalNs: position.sampledAtNs, playerPositionNs: position.positionNs, stationPositionNs: station,
                errorNs: error, speed: position.speed)
        }
        if Log.isEnabled, error.magnitude > Nanos.ms(2) || decision.seekToNs != nil {
            let seeking = decision.seekToNs != nil ? ", seeking" : ""
            let at = position.positionNs / Nanos.perMillisecond
            Log.debug(.player, "off by \(error / 1000) us at \(at) ms\(seeking); \(mpvState)")
        }
        if decision.seekToNs != nil {
            // Too far off to nudge: start again, precisely.
            try? prepare(source: nil, stationPositionAt: stationPositionAt, ifStill: generation)
            return SyncStatus(
                atLocalNs: position.sampledAtNs, playerPositionNs: position.positionNs, stationPositionNs: station,
                errorNs: error, speed: 1, seekedToNs: state.withLock { $0.preparing?.targetNs })
        }
        if decision.speed != position.speed { try? player.setSpeed(decision.speed) }
        return SyncStatus(
            atLocalNs: position.sampledAtNs, playerPositionNs: position.positionNs, stationPositionNs: station,
            errorNs: error, speed: decision.speed)
    }

    /// mpv's cache and buffering state, for the debug log.
    private var mpvState: String {
        let names = [
            "cache", "paused-for-cache", "demuxer-cache-duration", "cache-buffering-state", "core-idle",
            "demuxer-readahead-secs",
        ]
        return names.map { "\($0)=\(player.stringProperty($0) ?? "-")" }.joined(separator: " ")
    }

    private func tickPreparing(
        _ preparing: Preparing, generation: Int, now: Int64, stationPositionAt: (Int64) -> Int64
    ) -> SyncStatus {
        let idle = SyncStatus(atLocalNs: now, stationPositionNs: stationPositionAt(now), speed: 1)
        guard preparing.startAt == nil else { return idle }
        // Ready once the paused player reports the target position (a seek may still show the old one)…
        // or once the seek has finished and reports a little before it: after the player has played,
        // mpv (0.35, ao=null) reports a paused exact seek as landed where the output's stale buffer
        // began (~185 ms early) until unpaused, though it then plays from the target exactly.
        let landed = { (position: PlayerPosition) -> Bool in
            let early = preparing.targetNs - position.positionNs
            if early.magnitude < 10_000_000 { return true }
            return self.player.playbackRestartCount > preparing.restartsBefore && (0..<Nanos.ms(500)).contains(early)
        }
        let position = player.position()
        // A paused seek into bytes not there yet reports the target at once; it is ready only once
        // mpv has them (or it would start into nothing).
        guard let position, landed(position), !player.isWaitingForBytes else {
            // Lost: try again. But no position at all means the source is still opening (over HTTP
            // on a lossy network TCP backs off for seconds), and a seek now would only make it open
            // another connection and start over: give that longer.
            if now - preparing.requestedAt > (position == nil ? 10 : 3) * Nanos.perSecond {
                try? prepare(source: nil, stationPositionAt: stationPositionAt, ifStill: generation)
            }
            return idle
        }
        let latency = player.outputLatencyNs
        let startAt = StartPlanner.instant(
            reaching: preparing.targetNs - latency, from: now, stationPositionAt: stationPositionAt)
        let ready = now - preparing.requestedAt
        let tooLate = startAt <= now + Nanos.ms(1)
        Log.debug(
            .player,
            "ready at \(preparing.targetNs / Nanos.perMillisecond) ms after \(ready / Nanos.perMillisecond) ms; "
                + (tooLate ? "too late, preparing again" : "starts in \((startAt - now) / Nanos.perMillisecond) ms"))
        let current: Bool = state.withLock {
            guard $0.generation == generation else { return false }
            if preparing.isLoad {
                if preparing.learnsLoadLead { $0.lastLoadReadyNs = ready }
            } else {
                $0.lastSeekReadyNs = ready
            }
            $0.preparing?.startAt = startAt
            if !tooLate {
                startTimer.arm(at: startAt) { [weak self] in self?.start(generation: generation, at: startAt) }
            }
            return true
        }
        if current && tooLate {
            // Too late for this target (or a first load, opened where the station was): seek ahead
            // in the open file by the seek lead, now that the load's time is known.
            try? prepare(source: nil, stationPositionAt: stationPositionAt, ifStill: generation)
        }
        return idle
    }

    /// The timed unpause, on the start thread: under the lock, so that it either happens before a
    /// pause, stop or prepare (which then undoes it) or, its generation gone, not at all.
    private func start(generation: Int, at startAt: Int64) {
        state.withLock {
            guard $0.generation == generation else { return }
            try? player.setPaused(false)
            $0.preparing = nil
            $0.corrector.reset()
            $0.corrector.noteSeek(at: startAt, learnLanding: false)
        }
    }
}
