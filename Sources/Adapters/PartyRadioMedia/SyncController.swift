import Glibc
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
/// Call ``tick(stationPositionAt:)`` every 20–100 ms while the station plays.
public final class SyncController: Sendable {
    public let player: Player
    private let clock: any NanoClock
    private let state: Mutex<State>

    private struct State {
        var corrector: PlaybackCorrector
        /// A paused start in progress.
        var preparing: Preparing?
        /// Bumped by every prepare, pause and stop, so a stale start timer does nothing.
        var generation = 0
        var lastReadyNs: Int64?
    }

    private struct Preparing {
        var targetNs: Int64
        var requestedAt: Int64
        /// The player's playback-restart count before the load or seek was issued.
        var restartsBefore: Int
        /// The local instant the unpause is armed for, once the player is ready.
        var startAt: Int64?
    }

    public init(player: Player, configuration: PlaybackCorrector.Configuration = .init(), clock: any NanoClock = RealtimeClock()) {
        self.player = player
        self.clock = clock
        state = Mutex(State(corrector: PlaybackCorrector(configuration: configuration)))
    }

    /// True while a paused start is in progress (the caller should tick often, every ~20 ms).
    public var isPreparing: Bool { state.withLock { $0.preparing != nil } }

    /// Loads `source` paused just ahead of the station; a later tick starts it on time.
    /// - Parameter stationPositionAt: where the station is at a local instant.
    public func load(_ source: String, stationPositionAt: (Int64) -> Int64) throws(PlayerError) {
        try prepare(source: source, stationPositionAt: stationPositionAt)
    }

    /// Starts again from a pause (or after the caller moved the station): a paused seek ahead,
    /// then an unpause on time.
    public func resume(stationPositionAt: (Int64) -> Int64) throws(PlayerError) {
        try prepare(source: nil, stationPositionAt: stationPositionAt)
    }

    /// Pauses now and cancels any start in progress.
    public func pause() throws(PlayerError) {
        state.withLock {
            $0.generation += 1
            $0.preparing = nil
        }
        try player.setPaused(true)
    }

    /// Stops playback and cancels any start in progress.
    public func stop() throws(PlayerError) {
        state.withLock {
            $0.generation += 1
            $0.preparing = nil
        }
        try player.stop()
    }

    /// Forgets the nudge state and lets the player settle before the next correction.
    public func reset() {
        let now = clock.now()
        state.withLock {
            $0.corrector.reset()
            $0.corrector.noteSeek(at: now, learnLanding: false)
        }
    }

    private func prepare(source: String?, stationPositionAt: (Int64) -> Int64) throws(PlayerError) {
        let now = clock.now()
        let lead = StartPlanner.lead(lastReadyNs: state.withLock { $0.lastReadyNs })
        let target = max(0, stationPositionAt(now + lead) + player.outputLatencyNs)
        let restarts = player.playbackRestartCount
        state.withLock {
            $0.generation += 1
            $0.preparing = Preparing(targetNs: target, requestedAt: now, restartsBefore: restarts)
            $0.corrector.reset()
        }
        if let source {
            try player.load(source, startNs: target, paused: true)
        } else {
            try player.setPaused(true)
            try player.seek(toNs: target)
        }
        try player.setSpeed(1)
    }

    /// Measures the player against the station and corrects it; arms the start of a prepared player.
    @discardableResult
    public func tick(stationPositionAt: (Int64) -> Int64) -> SyncStatus {
        let now = clock.now()
        if let preparing = state.withLock({ $0.preparing }) {
            return tickPreparing(preparing, now: now, stationPositionAt: stationPositionAt)
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
        if decision.seekToNs != nil {
            // Too far off to nudge: start again, precisely.
            try? prepare(source: nil, stationPositionAt: stationPositionAt)
            return SyncStatus(
                atLocalNs: position.sampledAtNs, playerPositionNs: position.positionNs, stationPositionNs: station,
                errorNs: error, speed: 1, seekedToNs: state.withLock { $0.preparing?.targetNs })
        }
        if decision.speed != position.speed { try? player.setSpeed(decision.speed) }
        return SyncStatus(
            atLocalNs: position.sampledAtNs, playerPositionNs: position.positionNs, stationPositionNs: station,
            errorNs: error, speed: decision.speed)
    }

    private func tickPreparing(_ preparing: Preparing, now: Int64, stationPositionAt: (Int64) -> Int64) -> SyncStatus {
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
        guard let position, landed(position) else {
            // Lost: try again. But no position at all means the source is still opening (over HTTP
            // on a lossy network TCP backs off for seconds), and a seek now would only make it open
            // another connection and start over: give that longer.
            if now - preparing.requestedAt > (position == nil ? 10 : 3) * Nanos.perSecond {
                try? prepare(source: nil, stationPositionAt: stationPositionAt)
            }
            return idle
        }
        let latency = player.outputLatencyNs
        let startAt = StartPlanner.instant(
            reaching: preparing.targetNs - latency, from: now, stationPositionAt: stationPositionAt)
        let ready = now - preparing.requestedAt
        let generation: Int = state.withLock {
            $0.lastReadyNs = ready
            $0.preparing?.startAt = startAt
            return $0.generation
        }
        if startAt <= now + Nanos.ms(1) {
            // Too late for this target: prepare again with the longer lead just learnt.
            try? prepare(source: nil, stationPositionAt: stationPositionAt)
            return idle
        }
        armStart(at: startAt, generation: generation)
        return idle
    }

    /// Unpauses at local instant `startAt` on a thread of its own (sleep, then a short spin for
    /// the last millisecond), unless another prepare, pause or stop came first.
    private func armStart(at startAt: Int64, generation: Int) {
        let clock = self.clock
        Thread.detachNewThread { [self] in
            let sleepNs = startAt - Nanos.ms(1) - clock.now()
            if sleepNs > 0 {
                var request = timespec(tv_sec: Int(sleepNs / Nanos.perSecond), tv_nsec: Int(sleepNs % Nanos.perSecond))
                var remaining = timespec()
                while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
            }
            while clock.now() < startAt {}
            let current = state.withLock { $0.generation == generation }
            guard current else { return }
            try? player.setPaused(false)
            state.withLock {
                guard $0.generation == generation else { return }
                $0.preparing = nil
                $0.corrector.reset()
                $0.corrector.noteSeek(at: startAt, learnLanding: false)
            }
        }
    }
}

import Foundation
