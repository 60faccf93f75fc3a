import Foundation
import PartyRadioCore
import PartyRadioMedia

/// Carries out the machine's player commands on libmpv and keeps the player on the station
/// position between them (the `SyncController`'s corrections), and writes `--trace`.
///
/// Owned by the node's thread: the runtime calls it; mpv's event thread only pushes a failure
/// into the node's inbox.
final class PlayerDriver {
    private let sync: SyncController?
    private let trace: TraceWriter?
    private let clock: NodeClock
    private let role: String
    private let inbox: Inbox<NodeInput>
    /// Where the station is, as the machine last said.
    private(set) var view: StationClockView?
    private var playing = false
    /// The local volume last asked for (0–100).
    private var volume = 100
    private var lastTick = LocalTime(ns: 0)
    /// A listener's media cache (nil for the DJ, which plays its own files, and with `--no-audio`).
    private let cache: MediaCache?
    /// A load waiting for its file to be in the cache.
    private var pending: (track: Track, paused: Bool, since: LocalTime)?
    /// The track last loaded, and what plays next (what the cache fetches ahead).
    private var current: Track?
    private var upNext: QueueList?
    /// The last track ``stationPlays(_:)`` was told of.
    private var announced: String?

    /// How long a load waits for the cache before the player streams the URL itself. Long: the
    /// download retries and resumes by itself, and on a link so lossy that it is slow, mpv's one
    /// stream (competing with it) would only starve.
    static let cacheWaitNs = Nanos.seconds(12)
    /// How many of the tracks that play next are fetched ahead.
    static let prefetchCount = 2

    static let tickIntervalNs = Nanos.ms(100)
    /// While a start is being prepared, so the player is unpaused as soon as it is ready.
    static let fastTickIntervalNs = Nanos.ms(10)

    /// A machine with no sound card gets mpv's null output straight away, instead of ALSA and
    /// PipeWire filling the terminal with their complaints on the way to the same fallback.
    static var hasSoundDevice: Bool {
        FileManager.default.fileExists(atPath: "/dev/snd") || ProcessInfo.processInfo.environment["PULSE_SERVER"] != nil
    }

    /// - Parameter cacheDirectory: where a listener keeps the tracks it fetches ahead (nil: the player
    ///   streams every URL itself).
    init(
        role: String, options: PlaybackOptions, clock: NodeClock, inbox: Inbox<NodeInput>, cacheDirectory: URL? = nil
    ) throws(NodeError) {
        self.role = role
        self.clock = clock
        self.inbox = inbox
        trace = try options.tracePath.map { path throws(NodeError) in try TraceWriter(path: path) }
        guard !options.noAudio else {
            sync = nil
            cache = nil
            return
        }
        // PARTYRADIO_MEDIA_CACHE=0 streams as before (for comparisons: scripts/bench-lossy.py).
        if let cacheDirectory, ProcessInfo.processInfo.environment["PARTYRADIO_MEDIA_CACHE"] != "0" {
            // A private station's media needs proof of its code, the cache's fetches as mpv's.
            cache = try? MediaCache(
                directory: cacheDirectory, headers: options.mediaProof.map { [(MediaServer.proofHeader, $0)] } ?? [])
            if cache == nil { Log.debug(.player, "no media cache in \(cacheDirectory.path): streaming") }
        } else {
            cache = nil
        }
        let audio: Player.Options.AudioOutput =
            options.audioDriver.map { $0 == "null" ? .none : .driver($0) } ?? (Self.hasSoundDevice ? .automatic : .none)
        do throws(PlayerError) {
            // No pitch correction: scaletempo, inserted whenever the speed is not 1, shifts audio-pts by
            // tens of milliseconds and turns every nudge into an oscillation. Resampling does not.
            let player = try Player(
                options: Player.Options(
                    audio: audio, pitchCorrection: false,
                    extraOptions: options.mediaProof.map {
                        ["http-header-fields": "\(MediaServer.proofHeader): \($0)"]
                    } ?? [:]),
                clock: clock.nanoClock)
            sync = SyncController(player: player, clock: clock.nanoClock)
            let events = player.events
            // mpv's events arrive on its event thread as a stream; this task only forwards failures.
            Task.detached { [inbox] in
                for await event in events {
                    if case .endOfFile(.error(let message)) = event { inbox.push(.playerFailed(message)) }
                }
            }
        } catch {
            // Without libmpv another audio driver would not help: only the fix, and how to play nothing.
            let message =
                error.libraryMissing
                ? "\(error), or use --no-audio."
                : "The audio player could not start (\(error)); use --no-audio or --audio-driver null."
            throw NodeError(.player, message, cause: error)
        }
    }

    /// Whether this node plays at all (false with `--no-audio`).
    var playsAudio: Bool { sync != nil }

    func follow(_ view: StationClockView) { self.view = view }

    func execute(_ command: PlayerCommand) {
        if case .volume(let level) = command {  // needs no station: the DJ may set it before anything plays
            volume = level
            try? sync?.player.setVolume(level)
            return
        }
        guard let sync, let view else { return }
        Log.debug(.player, "\(command)")
        let position = stationPosition(view)
        do {
            switch command {
            case .load(let track, let paused):
                // Loads and resumes come only once the DJ clock is known (the planner sees to it).
                guard view.stationPosition(at: clock.now()) != nil else { return }
                current = track
                pending = nil
                if let cache, MediaCache.handles(track.source) {
                    cache.request(track.source, now: true)
                    prefetch()
                    if case .ready(let path) = cache.status(of: track.source) {
                        try load(track, from: path, paused: paused)
                    } else {
                        // Not here yet: the old track stops (it is no longer the station's), and
                        // step() loads this one as soon as its file is complete.
                        try sync.stop()
                        playing = false
                        pending = (track, paused, clock.now())
                    }
                } else {
                    try load(track, from: track.source, paused: paused)
                }
            case .pause:
                if pending != nil { pending?.paused = true }
                try sync.pause()
                playing = false
            case .resume:
                guard view.stationPosition(at: clock.now()) != nil else { return }
                if pending != nil {
                    pending?.paused = false
                    return
                }
                try sync.resume(stationPositionAt: position)
                playing = true
            case .stop:
                pending = nil
                try sync.stop()
                playing = false
            case .volume(let level):
                try sync.player.setVolume(level)
            }
        } catch {
            if case .load = command { inbox.push(.playerFailed("\(error)")) }
            Log.debug(.player, "\(command) failed: \(error)")
        }
    }

    /// Loads `track` from `source` (its URL or the cache's file) at the station position.
    private func load(_ track: Track, from source: String, paused: Bool) throws(PlayerError) {
        guard let sync, let view else { return }
        if paused {
            try sync.loadPaused(source, startNs: stationPosition(view)(clock.now().ns))
        } else {
            try sync.load(source, stationPositionAt: stationPosition(view))
        }
        playing = !paused
    }

    /// The station plays `track` (a listener's `.state` report): its file is fetched at once, while
    /// the clock is still being synchronised, before the planner asks for the load.
    func stationPlays(_ track: Track) {
        guard let cache, announced != track.id else { return }
        announced = track.id
        cache.request(track.source, now: true)
    }

    /// What plays next changed (a listener's `.upNext` report): fetch it ahead.
    func upNextChanged(_ list: QueueList) {
        upNext = list
        prefetch()
    }

    /// Asks the cache for the next tracks of the DJ's library (a catalog track's URL is not
    /// known before it plays).
    private func prefetch() {
        guard let cache, let current, let upNext else { return }
        let next = upNext.entries.filter { !$0.awaitingApproval && $0.trackID != current.id }
            .prefix(Self.prefetchCount)
        for entry in next {
            if let url = MediaCachePlan.source(ofLocalTrack: entry.trackID, after: current) {
                cache.request(url, now: false)
            }
        }
    }

    /// Loads a pending track once its file is in the cache, or streams its URL when the cache
    /// failed or took too long.
    private func loadPendingIfReady() {
        guard let (track, paused, since) = pending, let cache, let view,
            view.stationPosition(at: clock.now()) != nil
        else { return }
        let source: String
        switch cache.status(of: track.source) {
        case .ready(let path): source = path
        case .failed(let reason):
            Log.debug(.player, "cache failed (\(reason)): streaming \(track.source)")
            source = track.source
        case .fetching, .absent:
            guard clock.now() - since >= Self.cacheWaitNs else { return }
            Log.debug(.player, "cache too slow: streaming \(track.source)")
            source = track.source
        }
        pending = nil
        do { try load(track, from: source, paused: paused) } catch {
            inbox.push(.playerFailed("\(error)"))
        }
    }

    /// When ``step()`` next has work.
    var nextWakeup: LocalTime? {
        var wakeups: [LocalTime] = []
        if pending != nil { wakeups.append(clock.now() + Self.fastTickIntervalNs) }
        if let sync, playing {
            wakeups.append(lastTick + (sync.isPreparing ? Self.fastTickIntervalNs : Self.tickIntervalNs))
        }
        if let trace { wakeups.append(LocalTime(ns: trace.nextDueNs)) }
        return wakeups.min()
    }

    /// Corrects the player and writes the trace when they are due.
    func step() {
        if pending != nil { loadPendingIfReady() }
        let now = clock.now()
        // No corrections against a guessed clock: while the estimate is lost (the DJ's clock
        // stepped), the player plays on untouched until it is back.
        if let sync, playing, let view, view.stationPosition(at: now) != nil,
            now - lastTick >= (sync.isPreparing ? Self.fastTickIntervalNs : Self.tickIntervalNs)
        {
            lastTick = now
            sync.tick(stationPositionAt: stationPosition(view))
        }
        guard let trace, trace.isDue(now.ns) else { return }
        let real = NodeClock.realTimeNs()
        let local = clock.localTime(atRealTime: real)
        let estimate = view?.estimate
        trace.write(
            role: role, trueTimeNs: real, localTimeNs: local.ns, djTimeNs: view?.djTime(at: local)?.ns, view: view,
            playerPositionNs: playerPosition(at: local), latencyNs: sync?.player.outputLatencyNs ?? 0,
            offsetNs: role == "dj" ? 0 : estimate.map { $0.offset(at: local) },
            driftPPM: role == "dj" ? 0 : estimate?.driftPPM)
    }

    func shutdown() { sync?.shutdown() }

    /// Where the player is at local instant `local`, if it is playing.
    private func playerPosition(at local: LocalTime) -> Int64? {
        guard let sync, !sync.isPreparing, let position = sync.player.position() else { return nil }
        return playing ? position.position(at: local.ns) : position.positionNs
    }

    /// The station position at a raw local instant, as the media adapter asks for it. Only
    /// called while the view has a DJ clock (see ``execute(_:)`` and ``step()``); without one it
    /// answers the anchor's own position rather than guess.
    private func stationPosition(_ view: StationClockView) -> (Int64) -> Int64 {
        { local in view.stationPosition(at: LocalTime(ns: local)) ?? view.anchor.positionNs }
    }
}
