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
    /// Whether this step seeked.
    public var seekedToNs: Int64?
}

/// Keeps a `Player` on the station position by applying `PlaybackCorrector` decisions. Call
/// `tick` periodically (every 100–250 ms) while the station plays.
public final class SyncController: Sendable {
    public let player: Player
    private let corrector: Mutex<PlaybackCorrector>
    private let clock: any NanoClock

    public init(player: Player, configuration: PlaybackCorrector.Configuration = .init(), clock: any NanoClock = RealtimeClock()) {
        self.player = player
        self.corrector = Mutex(PlaybackCorrector(configuration: configuration))
        self.clock = clock
    }

    /// The seek lead learnt so far (how long the player takes to restart after a seek or load).
    public var seekLeadNs: Int64 { corrector.withLock { $0.seekLeadNs } }

    /// Loads `source` so that it starts where the station will be once the player is running.
    /// - Parameter stationPositionAt: where the station is at a local instant.
    public func load(_ source: String, stationPositionAt: (Int64) -> Int64) throws(PlayerError) {
        let now = clock.now()
        let (lead, latency) = (seekLeadNs, player.outputLatencyNs)
        try player.load(source, startNs: max(0, stationPositionAt(now) + lead + latency))
        corrector.withLock {
            $0.reset()
            $0.noteSeek(at: now)
        }
    }

    /// Forgets the nudge state and lets the player settle before the next correction (after a
    /// resume, or when the caller seeked the player itself).
    public func reset() {
        let now = clock.now()
        corrector.withLock {
            $0.reset()
            $0.noteSeek(at: now, learnLanding: false)
        }
    }

    /// Measures the player against the station and corrects it.
    /// - Parameter stationPositionAt: where the station is at a local instant.
    @discardableResult
    public func tick(stationPositionAt: (Int64) -> Int64) -> SyncStatus {
        guard let position = player.position() else {
            return SyncStatus(atLocalNs: clock.now(), speed: 1)
        }
        let station = stationPositionAt(position.sampledAtNs)
        let latency = player.outputLatencyNs
        let decision = corrector.withLock {
            $0.update(
                stationPositionNs: station, playerPositionNs: position.positionNs, outputLatencyNs: latency,
                now: position.sampledAtNs)
        }
        if let target = decision.seekToNs { try? player.seek(toNs: target) }
        if decision.speed != position.speed || decision.seekToNs != nil { try? player.setSpeed(decision.speed) }
        return SyncStatus(
            atLocalNs: position.sampledAtNs, playerPositionNs: position.positionNs, stationPositionNs: station,
            errorNs: decision.errorNs ?? (position.positionNs - latency - station), speed: decision.speed,
            seekedToNs: decision.seekToNs)
    }
}
