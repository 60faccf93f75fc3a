import Foundation
import PartyRadioCore
import PartyRadioMedia

/// Keeps this node's player on the station: loads the now-playing source at the station
/// position, pauses and resumes with it, and lets the `SyncController` correct the rest.
///
/// The station position at a local instant comes from the last snapshot's anchor and the
/// node's ``DJClock``, which is its own clock on the DJ itself.
final class PlaybackFollower {
    private let sync: SyncController?
    private let clock: NodeClock
    private let djClock: DJClock
    private var snapshot: StateSnapshot?
    /// The track and source the player has loaded (nil: nothing).
    private var loaded: (id: String, source: String)?
    private var playerPaused = false
    private var lastLoadAttemptNs: Int64 = 0
    /// Events from the player's thread, handed to the node's loop.
    private let inbox: Inbox<NodeInput>

    static let retryAfterErrorNs = Nanos.seconds(1)

    /// A machine with no sound card gets mpv's null output straight away, instead of ALSA and
    /// PipeWire filling the terminal with their complaints on the way to the same fallback.
    static var hasSoundDevice: Bool {
        FileManager.default.fileExists(atPath: "/dev/snd") || ProcessInfo.processInfo.environment["PULSE_SERVER"] != nil
    }

    init(options: PlaybackOptions, clock: NodeClock, djClock: DJClock, inbox: Inbox<NodeInput>) throws(NodeError) {
        self.clock = clock
        self.djClock = djClock
        self.inbox = inbox
        guard !options.noAudio else {
            sync = nil
            return
        }
        let audio: Player.Options.AudioOutput = options.audioDriver.map { $0 == "null" ? .none : .driver($0) }
            ?? (Self.hasSoundDevice ? .automatic : .none)
        do {
            // No pitch correction: scaletempo, inserted whenever the speed is not 1, shifts audio-pts by
            // tens of milliseconds and turns every nudge into an oscillation. Resampling does not.
            let player = try Player(options: Player.Options(audio: audio, pitchCorrection: false), clock: clock)
            sync = SyncController(player: player, clock: clock)
            let events = player.events
            Task.detached { [inbox] in
                for await event in events {
                    if case .endOfFile(.error(let message)) = event { inbox.push(.playerError(message)) }
                }
            }
        } catch {
            throw NodeError("The audio player could not start (\(error)); use --no-audio or --audio-driver null.")
        }
    }

    var isPlaying: Bool { sync != nil && loaded != nil && !playerPaused }

    /// True while the player is being started and wants ticks every ~20 ms.
    var wantsFastTicks: Bool { sync?.isPreparing ?? false }

    /// The player could not play the source: forget it, so that the next tick tries again.
    func playerFailed() { loaded = nil }

    /// Follows a new snapshot. `djTime` is nil while the DJ clock is not yet known.
    func follow(_ new: StateSnapshot) {
        let old = snapshot
        snapshot = new
        guard let sync else { return }
        guard let track = new.nowPlaying else {
            if loaded != nil { try? sync.stop() }
            loaded = nil
            return
        }
        guard djClock.djTime(local: clock.now()) != nil else { return }  // the first tick after sync loads it
        if loaded?.id != track.id || loaded?.source != track.source {
            load(track)
        } else if new.anchor.isPaused != playerPaused || (old.map { $0.anchor != new.anchor } ?? false) {
            // Paused, resumed or moved: pause, or start again precisely from the new anchor.
            playerPaused = new.anchor.isPaused
            if playerPaused {
                try? sync.pause()
            } else {
                try? sync.resume(stationPositionAt: stationPosition(new))
            }
        }
    }

    /// One correction step; call every 100 ms or so. Returns what it measured.
    @discardableResult
    func tick() -> SyncStatus? {
        guard let sync, let snapshot, let track = snapshot.nowPlaying, djClock.djTime(local: clock.now()) != nil else {
            return nil
        }
        if loaded == nil {
            guard clock.now() - lastLoadAttemptNs > Self.retryAfterErrorNs else { return nil }
            load(track)
        }
        guard !playerPaused else { return nil }
        return sync.tick(stationPositionAt: stationPosition(snapshot))
    }

    /// Where the player is at local instant `local`, if it is playing.
    func playerPosition(atLocal local: Int64) -> Int64? {
        guard let sync, loaded != nil, !sync.isPreparing, let position = sync.player.position() else { return nil }
        return playerPaused ? position.positionNs : position.position(at: local)
    }

    /// The output latency the player accounts for.
    var outputLatencyNs: Int64 { sync?.player.outputLatencyNs ?? 0 }

    func shutdown() { sync?.player.shutdown() }

    private func load(_ track: Track) {
        guard let sync, let snapshot else { return }
        lastLoadAttemptNs = clock.now()
        do {
            if snapshot.anchor.isPaused {
                let position = stationPosition(snapshot)(clock.now())
                try sync.player.load(track.source, startNs: position, paused: true)
            } else {
                try sync.load(track.source, stationPositionAt: stationPosition(snapshot))
            }
            loaded = (track.id, track.source)
            playerPaused = snapshot.anchor.isPaused
        } catch {
            loaded = nil
            inbox.push(.playerError("\(error)"))
        }
    }

    private func stationPosition(_ snapshot: StateSnapshot) -> (Int64) -> Int64 {
        let anchor = snapshot.anchor
        let duration = snapshot.nowPlaying.map { Int64($0.durationMs) * Nanos.perMillisecond }
        let djClock = self.djClock
        return { local in anchor.position(atDJTime: djClock.djTime(local: local) ?? local, durationNs: duration) }
    }
}
